"""``triagebot doctor`` against the fake GitHub over real HTTP (PyGithub, App JWTs checked with
the App's public key), and ``serve`` refusing to start without the App's id or key: one line per
check, ✓ or ✗ with the fix, exit 1 on any ✗; exit 2 with one line naming the variable."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.github_fake import FakeGitHub, app_key_pair
from triagebot.cli import doctor
from triagebot.cli import main as cli
from triagebot.github.client import AppProbe
from triagebot.review.page import MIN_TOKEN_CHARS
from triagebot.settings import ENV_VARS, Settings, env_file_line

ROOT = Path(__file__).resolve().parents[2]
SECRET = "whsec-0123456789abcdef"


@pytest.fixture
def github(rsa_pair: tuple[str, str]) -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.start()
    fake.register_app(app_id=4242, slug="triagebot", public_key=rsa_pair[1])
    fake.add_installation(7, "octo-org", ["octo-org/trainer", "octo-org/kernels"])
    yield fake
    fake.stop()


def _env(github: FakeGitHub, key: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"TRIAGEBOT_APP_ID": "4242", "TRIAGEBOT_PRIVATE_KEY": key,
            "TRIAGEBOT_WEBHOOK_SECRET": SECRET, "TRIAGEBOT_GITHUB_API_URL": github.base_url,
            "TRIAGEBOT_DB": str(tmp_path / "t.sqlite3"), **extra}


def _clean_environ(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> None:
    for var in [*ENV_VARS, "TRIAGEBOT_PRIVATE_KEY_PATH"]:
        monkeypatch.delenv(var, raising=False)
    for var, value in values.items():
        monkeypatch.setenv(var, value)


def test_doctor_passes_against_a_well_configured_app(github: FakeGitHub, rsa_pair, tmp_path, monkeypatch,
                                                     capsys) -> None:
    _clean_environ(monkeypatch, _env(github, rsa_pair[0], tmp_path))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert all(line.startswith("✓") for line in lines[:-1]), out
    assert lines[-1] == "all checks passed"
    assert "✓ GitHub App: authenticated as triagebot (App id 4242, owner octo-org)" in out
    assert "✓ installation 7 (octo-org): 2 repositories: octo-org/trainer, octo-org/kernels" in out
    assert "✓ index: " in out and "✓ database: SQLite" in out
    assert not (tmp_path / "t.sqlite3").exists()  # the doctor creates nothing
    assert not github.writes()[1:] or all(r.path.endswith("/access_tokens") for r in github.writes())


def test_doctor_with_a_wrong_key_fails_with_a_line_saying_so(github: FakeGitHub, tmp_path, monkeypatch,
                                                             capsys) -> None:
    other_key, _ = app_key_pair()
    _clean_environ(monkeypatch, _env(github, other_key, tmp_path))
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    [line] = [x for x in out.splitlines() if x.startswith("✗ GitHub App")]
    assert "GitHub rejected the App's credentials (401" in line
    assert "fix: check that TRIAGEBOT_APP_ID is this App's id and TRIAGEBOT_PRIVATE_KEY" in line
    assert out.splitlines()[-1].startswith("some checks failed")


def test_doctor_names_missing_permissions_events_and_installations(github: FakeGitHub, rsa_pair,
                                                                   tmp_path) -> None:
    github.register_app(app_id=4242, slug="other-bot", permissions={"issues": "read", "metadata": "read"},
                        events=["issues"])
    github.installations.clear()
    settings = Settings.from_env(_env(github, rsa_pair[0], tmp_path))
    lines = [c.line() for c in doctor.github_checks(settings, AppProbe(settings))]
    assert any(x.startswith("✗ App slug: TRIAGEBOT_APP_SLUG is 'triagebot' but the App is 'other-bot'")
               and "fix: set TRIAGEBOT_APP_SLUG=other-bot" in x for x in lines), lines
    assert any(x.startswith("✗ permissions: missing issues: write, contents: read") for x in lines), lines
    assert any(x.startswith("✗ events: not subscribed to issue_comment, repository") for x in lines), lines
    assert any(x.startswith("✗ installations: the App is not installed on any account")
               and f"{github.base_url}/apps/other-bot/installations/new" in x for x in lines), lines


def test_doctor_flags_an_installation_that_has_not_accepted_the_permissions(github: FakeGitHub, rsa_pair,
                                                                            tmp_path) -> None:
    github.add_installation(8, "late-org", ["late-org/repo"], permissions={"issues": "write", "metadata": "read"})
    github.add_installation(9, "empty-org", [])
    github.add_installation(10, "gone-org", ["gone-org/r"], suspended=True)
    settings = Settings.from_env(_env(github, rsa_pair[0], tmp_path))
    lines = [c.line() for c in doctor.github_checks(settings, AppProbe(settings))]
    assert any(x.startswith("✗ installation 8 (late-org): no token with the permissions the bot needs (422")
               for x in lines), lines
    assert any(x.startswith("✗ installation 9 (empty-org): no repositories selected") for x in lines), lines
    assert any(x.startswith("✗ installation 10 (gone-org): suspended") for x in lines), lines
    assert any(x.startswith("✓ installation 7 (octo-org)") for x in lines), lines


def test_doctor_reports_settings_that_cannot_work_without_asking_github(tmp_path) -> None:
    settings = Settings.from_env({"TRIAGEBOT_APP_ID": "not-an-id", "TRIAGEBOT_PRIVATE_KEY": "-----BEGIN nonsense",
                                  "TRIAGEBOT_WEBHOOK_SECRET": "short", "TRIAGEBOT_ADMIN_TOKEN": "tiny",
                                  "TRIAGEBOT_DB": str(tmp_path / "t.sqlite3")})
    checks = doctor.run_checks(settings, probe_factory=lambda s: pytest.fail("GitHub was asked"))
    lines = [c.line() for c in checks]
    assert lines[0].startswith("✗ App id: TRIAGEBOT_APP_ID 'not-an-id' is neither")
    assert lines[1].startswith("✗ private key: TRIAGEBOT_PRIVATE_KEY does not parse as a PEM private key")
    assert lines[2].startswith("✗ webhook secret: TRIAGEBOT_WEBHOOK_SECRET has only 5 characters")
    assert lines[3].startswith("✗ review page: TRIAGEBOT_ADMIN_TOKEN has 4 characters")
    assert lines[4].startswith("✗ GitHub App: not asked")
    assert doctor.MIN_ADMIN_TOKEN_CHARS == MIN_TOKEN_CHARS


def test_doctor_reports_an_unreachable_github_and_a_broken_index_and_database(rsa_pair, tmp_path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    (tmp_path / "bad.sqlite3").write_bytes(b"not a database at all" * 100)
    (tmp_path / "index").mkdir()
    settings = Settings.from_env({"TRIAGEBOT_APP_ID": "1", "TRIAGEBOT_PRIVATE_KEY": rsa_pair[0],
                                  "TRIAGEBOT_WEBHOOK_SECRET": SECRET, "TRIAGEBOT_GITHUB_API_URL": closed,
                                  "TRIAGEBOT_DB": str(tmp_path / "bad.sqlite3"),
                                  "TRIAGEBOT_INDEX": str(tmp_path / "index"),
                                  "TRIAGEBOT_QUEUE_URL": "redis://127.0.0.1:1/0"})
    lines = [c.line() for c in doctor.run_checks(settings)]
    assert any(x.startswith("✗ GitHub App: GitHub unreachable") and "TRIAGEBOT_GITHUB_API_URL" in x
               for x in lines), lines
    assert any(x.startswith("✗ index: cannot load index from") for x in lines), lines
    assert any(x.startswith("✗ database: SQLite") for x in lines), lines
    assert any(x.startswith("✗ Redis:") for x in lines), lines


# -- serve ------------------------------------------------------------------------------------------

def _serve(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGEBOT_")}
    return subprocess.Popen([sys.executable, "-m", "triagebot", "serve", *args], cwd=tmp_path, text=True,
                            env={**base, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize(("missing", "named"), [("TRIAGEBOT_APP_ID", "TRIAGEBOT_APP_ID is empty"),
                                                ("TRIAGEBOT_PRIVATE_KEY", "TRIAGEBOT_PRIVATE_KEY (or "
                                                                          "TRIAGEBOT_PRIVATE_KEY_PATH) is empty")])
def test_serve_without_app_id_or_key_exits_2_with_one_line(github: FakeGitHub, rsa_pair, tmp_path,
                                                           missing: str, named: str) -> None:
    env = _env(github, rsa_pair[0], tmp_path)
    env.pop(missing)
    proc = _serve(tmp_path, env)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith(f"triagebot: error: {named}; run `triagebot setup`"), err
    assert not (tmp_path / "t.sqlite3").exists()


def test_serve_starts_from_a_dotenv_file_and_runs_the_doctors_checks(github: FakeGitHub, rsa_pair,
                                                                     tmp_path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = _env(github, rsa_pair[0], tmp_path, TRIAGEBOT_WORKERS="1",
                    TRIAGEBOT_INDEX=str(ROOT / "index"), TRIAGEBOT_RECONCILE_INTERVAL="0")
    (tmp_path / ".env").write_text("\n".join(env_file_line(k, v) for k, v in settings.items()) + "\n")
    (tmp_path / ".env").chmod(0o600)
    proc = _serve(tmp_path, {}, "--port", str(port))
    try:
        deadline = time.time() + 60
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
                    assert answer.status == 200 and json.loads(answer.read())["db"] is True
                    break
            except OSError:
                assert time.time() < deadline, "serve did not answer"
                time.sleep(0.3)
        deadline = time.time() + 30
        while not any(r.path == "/installation/repositories" for r in github.requests):
            assert time.time() < deadline, "the start-up checks did not ask GitHub"
            time.sleep(0.2)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "✓ GitHub App: authenticated as triagebot (App id 4242, owner octo-org)" in err, err
    assert "✓ installation 7 (octo-org): 2 repositories" in err
