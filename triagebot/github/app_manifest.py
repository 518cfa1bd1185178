"""What the GitHub App must be granted, and the App manifest that asks for it.

One owner for these facts: ``triagebot setup`` posts ``manifest(...)`` to GitHub, ``triagebot
doctor`` checks a registered App against ``PERMISSIONS`` and ``EVENTS``, the installation token
asks for ``PERMISSIONS`` (``client.TOKEN_PERMISSIONS`` is the same dict), and
``deploy/app-manifest.json`` (for registering by hand) is tested to say the same.
Pure: no HTTP, no PyGithub."""
from __future__ import annotations

from typing import Any

# issues: the comment and labels; metadata: always granted; contents: read .github/triagebot.yml
PERMISSIONS = {"issues": "write", "metadata": "read", "contents": "read"}
# issues and issue_comment trigger triage and /triage commands; repository keeps visibility current
EVENTS = ("issues", "issue_comment", "repository")
DESCRIPTION = ("Triages issues of distributed deep-learning frameworks: stage, symptom, likely root "
               "cause, similar resolved issues.")
_LEVELS = {"read": 1, "write": 2, "admin": 3}


def manifest(name: str, public_url: str, redirect_url: str) -> dict[str, Any]:
    """The manifest GitHub's ``/settings/apps/new`` takes: webhooks to ``public_url/webhook``,
    back to ``redirect_url`` (the local setup page) with the code to exchange."""
    base = public_url.rstrip("/")
    return {"name": name, "url": base, "description": DESCRIPTION,
            "hook_attributes": {"url": f"{base}/webhook", "active": True},
            "redirect_url": redirect_url, "public": False,
            "default_permissions": dict(PERMISSIONS), "default_events": list(EVENTS)}


def missing_permissions(granted: dict[str, str]) -> list[str]:
    """``name: level`` for each needed permission the App lacks or holds at a lower level."""
    return [f"{name}: {level}" for name, level in PERMISSIONS.items()
            if _LEVELS.get(granted.get(name, ""), 0) < _LEVELS[level]]


def missing_events(subscribed: list[str]) -> list[str]:
    return [event for event in EVENTS if event not in subscribed]


def web_url(api_url: str) -> str:
    """GitHub's web address for its REST API root: github.com for api.github.com, ``https://HOST``
    for GitHub Enterprise Server's ``https://HOST/api/v3``; anything else (a local stand-in)
    serves both at the same root."""
    root = api_url.rstrip("/")
    if root == "https://api.github.com":
        return "https://github.com"
    return root[: -len("/api/v3")] if root.endswith("/api/v3") else root
