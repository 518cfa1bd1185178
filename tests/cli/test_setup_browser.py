"""``triagebot setup`` end to end in a real headless Chromium against the fake GitHub: the local
page posts the App manifest, the fake's "Create GitHub App" page sends the browser back with a
code, the code is exchanged, and the ``.env`` written (mode 0600) makes ``triagebot doctor`` pass
against the App the flow registered. Also without a browser: a forged ``state`` is refused, the
merge keeps an existing file's other lines, and an App id already there needs ``--force``."""
from __future__ import annotations

import os
import queue
import stat
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.browser import MISSING, WHY_MISSING, chrome
from support.github_fake import FakeGitHub
from triagebot.cli.app_setup import merge_env_text
from triagebot.settings import Settings, read_env_file

ROOT = Path(__file__).resolve().parents[2]
@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    fake.start()
    yield fake
    fake.stop()


def _cli(tmp_path: Path, github: FakeGitHub, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRIAGEBOT_")}
    env.update(PYTHONPATH=str(ROOT), TRIAGEBOT_GITHUB_API_URL=github.base_url)
    return subprocess.Popen([sys.executable, "-m", "triagebot", *args], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _setup(tmp_path: Path, github: FakeGitHub, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``triagebot setup``; returns the process and the local page's address it printed."""
    proc = _cli(tmp_path, github, "setup", "--url", "https://bot.example.org", "--port", "0", *extra)
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True)  # type: ignore[union-attr]
    reader.start()
    first = lines.get(timeout=60)
    assert first.startswith("Open http://127.0.0.1:"), first
    proc.reader = reader  # type: ignore[attr-defined]
    proc.lines = lines  # type: ignore[attr-defined]
    return proc, first.split()[1]


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Wait for ``setup`` to end; (the rest of its stdout, its stderr), pipes closed."""
    proc.wait(timeout=30)
    proc.reader.join(timeout=10)  # type: ignore[attr-defined]
    err = proc.stderr.read()  # type: ignore[union-attr]
    for pipe in (proc.stdout, proc.stderr):
        pipe.close()  # type: ignore[union-attr]
    lines = proc.lines  # type: ignore[attr-defined]
    return "".join(lines.get() for _ in range(lines.qsize())), err


@pytest.mark.integration
@pytest.mark.skipif(MISSING, reason=WHY_MISSING)
def test_setup_registers_the_app_in_a_real_browser_and_writes_a_working_env(tmp_path: Path,
                                                                             github: FakeGitHub) -> None:
    pytest.importorskip("selenium.webdriver", reason="needs pip selenium")
    from selenium.webdriver.common.by import By

    (tmp_path / ".env").write_text("# mine\nTRIAGEBOT_DB=kept.sqlite3\n")
    proc, page = _setup(tmp_path, github, "--org", "octo-org", "--name", "DDP Triage")
    with chrome(1200, 1000) as driver:
        driver.get(page)
        assert "https://bot.example.org/webhook" in driver.find_element(By.TAG_NAME, "body").text
        driver.find_element(By.ID, "register").click()
        assert driver.find_element(By.ID, "app-name").text == "DDP Triage"  # GitHub's page now
        driver.find_element(By.ID, "create").click()
        done = driver.find_element(By.ID, "done").text
        assert "is registered" in done
        install = driver.find_element(By.ID, "install").get_attribute("href")
        if os.environ.get("TRIAGEBOT_ARTIFACTS"):
            driver.save_screenshot(str(Path(os.environ["TRIAGEBOT_ARTIFACTS"]) / "setup-done.png"))
    out, err = _finish(proc)
    assert proc.returncode == 0, err
    [manifest] = github.manifests
    assert manifest["_org"] == "octo-org"
    assert manifest["hook_attributes"]["url"] == "https://bot.example.org/webhook"
    assert manifest["redirect_url"].startswith("http://127.0.0.1:") and manifest["redirect_url"].endswith("/callback")
    assert manifest["default_permissions"] == {"issues": "write", "metadata": "read", "contents": "read"}
    env_file = tmp_path / ".env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    values = read_env_file(env_file)
    assert values["TRIAGEBOT_DB"] == "kept.sqlite3" and env_file.read_text().startswith("# mine\n")
    settings = Settings.from_env({}, env_file=env_file)
    assert settings.app_id == str(github.app["id"]) and settings.app_slug == "ddp-triage"  # type: ignore[index]
    assert settings.private_key.get_secret_value().startswith("-----BEGIN PRIVATE KEY-----")
    assert len(settings.webhook_secret.get_secret_value()) >= 16
    assert len(settings.admin_token.get_secret_value()) >= 16
    assert settings.github_api_url == github.base_url
    assert install == f"{github.base_url}/apps/ddp-triage/installations/new"
    assert f"next: install the App on the repositories to triage: {install}" in out
    # the App the flow registered now authenticates with the key written, end to end
    github.add_installation(11, "octo-org", ["octo-org/trainer"])
    doctor = _cli(tmp_path, github, "doctor")
    out, err = doctor.communicate(timeout=60)
    assert doctor.returncode == 0, out + err
    assert "✓ GitHub App: authenticated as ddp-triage" in out


def test_setup_refuses_an_answer_with_a_forged_state_and_a_used_code(tmp_path: Path, github: FakeGitHub) -> None:
    proc, page = _setup(tmp_path, github)
    try:
        with urllib.request.urlopen(page, timeout=10) as answer:
            html = answer.read().decode()
        assert "name='manifest'" in html and f"action='{github.base_url}/settings/apps/new?state=" in html
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(page + "callback?code=abc&state=forged", timeout=10)
        assert refused.value.code == 400
        refused.value.close()
        state = html.split("state=", 1)[1].split("'", 1)[0]
        with pytest.raises(urllib.error.HTTPError) as bad_code:  # a code GitHub never issued
            urllib.request.urlopen(page + f"callback?code=unknown&state={state}", timeout=10)
        assert bad_code.value.code == 502
        bad_code.value.close()
        assert not (tmp_path / ".env").exists() and proc.poll() is None  # still waiting for a good one
    finally:
        proc.terminate()
        _finish(proc)


def test_setup_keeps_an_existing_app_unless_forced(tmp_path: Path, github: FakeGitHub) -> None:
    (tmp_path / ".env").write_text("TRIAGEBOT_APP_ID=17\n")
    proc = _cli(tmp_path, github, "setup", "--url", "https://bot.example.org", "--port", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err == ("triagebot: error: .env already holds TRIAGEBOT_APP_ID=17; give --force to register "
                   "a new App and replace it\n")
    bad = _cli(tmp_path, github, "setup", "--url", "bot.example.org", "--port", "0", "--force")
    assert "--url must be the bot's public http(s) address" in bad.communicate(timeout=60)[1]


def test_merging_replaces_our_keys_in_place_and_keeps_everything_else() -> None:
    old = ('# top\nTRIAGEBOT_APP_ID=1\nTRIAGEBOT_PRIVATE_KEY="-----BEGIN\nold\n-----END"\n'
           "TRIAGEBOT_DB=x.sqlite3\n# TRIAGEBOT_APP_SLUG=commented\nTRIAGEBOT_APP_ID=2\n")
    merged = merge_env_text(old, {"TRIAGEBOT_APP_ID": "9", "TRIAGEBOT_PRIVATE_KEY": "k\ney",
                                  "TRIAGEBOT_APP_SLUG": "bot"})
    assert merged.splitlines() == ["# top", 'TRIAGEBOT_APP_ID="9"', 'TRIAGEBOT_PRIVATE_KEY="k\\ney"',
                                   "TRIAGEBOT_DB=x.sqlite3", "# TRIAGEBOT_APP_SLUG=commented", "",
                                   "# written by `triagebot setup`", 'TRIAGEBOT_APP_SLUG="bot"']
