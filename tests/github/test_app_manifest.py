"""The App's permissions and events have one owner (``github.app_manifest``): the manifest the
setup flow posts, the installation token's request and ``deploy/app-manifest.json`` all say the
same; GitHub's web address is derived from the API's, Enterprise Server included."""
from __future__ import annotations

import json
from pathlib import Path

from triagebot.github import app_manifest
from triagebot.github.client import TOKEN_PERMISSIONS

ROOT = Path(__file__).resolve().parents[2]


def test_the_deploy_manifest_asks_for_what_the_bot_needs() -> None:
    shipped = json.loads((ROOT / "deploy" / "app-manifest.json").read_text())
    assert shipped["default_permissions"] == app_manifest.PERMISSIONS == TOKEN_PERMISSIONS
    assert shipped["default_events"] == list(app_manifest.EVENTS)
    made = app_manifest.manifest("bot", "https://bot.example.org/", "http://127.0.0.1:3000/callback")
    assert made["hook_attributes"] == {"url": "https://bot.example.org/webhook", "active": True}
    assert {k: made[k] for k in ("default_permissions", "default_events", "public")} == {
        k: shipped[k] for k in ("default_permissions", "default_events", "public")}


def test_missing_grants_are_named_and_a_higher_level_counts() -> None:
    assert app_manifest.missing_permissions({"issues": "admin", "metadata": "read", "contents": "write"}) == []
    assert app_manifest.missing_permissions({"issues": "read"}) == ["issues: write", "metadata: read",
                                                                    "contents: read"]
    assert app_manifest.missing_events(["issues", "repository"]) == ["issue_comment"]


def test_web_address_of_github_and_of_an_enterprise_server() -> None:
    assert app_manifest.web_url("https://api.github.com/") == "https://github.com"
    assert app_manifest.web_url("https://ghe.corp.example/api/v3") == "https://ghe.corp.example"
    assert app_manifest.web_url("http://127.0.0.1:8123") == "http://127.0.0.1:8123"
