"""End to end, all real parts but GitHub: ``triagebot serve`` as a subprocess with the real model and
the shipped seed index, a signed ``issues.opened`` delivery sent with curl, PyGithub talking to the
local fake GitHub. Expect exactly one comment (also after redeliveries) and the review label."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.github_fake import FakeGitHub
from support.service import healthy
from triagebot.comment.render import MARKER

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SECRET = "e2e-secret-value"
REPO = "octo-org/deepspeed-fork"
BODY = (ROOT / "examples" / "nccl_timeout.md").read_text().split("\n", 1)[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def github(rsa_pair: tuple[str, str]) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(app_public_key=rsa_pair[1])
    fake.start()
    fake.add_label(REPO, "triage: needs-review", "bug")
    fake.add_issue(REPO, 1, title="NCCL watchdog timeout in allreduce with ZeRO-3 on 2 nodes", body=BODY)
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def server(github: FakeGitHub, rsa_pair: tuple[str, str], tmp_path_factory) -> Iterator[str]:  # type: ignore[no-untyped-def]
    port = _free_port()
    env = {**os.environ, "TRIAGEBOT_WEBHOOK_SECRET": SECRET, "TRIAGEBOT_APP_ID": "4242",
           "TRIAGEBOT_PRIVATE_KEY": rsa_pair[0], "TRIAGEBOT_GITHUB_API_URL": github.base_url,
           "TRIAGEBOT_DB": str(tmp_path_factory.mktemp("db") / "t.sqlite3"),
           "TRIAGEBOT_INDEX": str(ROOT / "index"), "TRIAGEBOT_WORKERS": "1", "HF_HUB_OFFLINE": "1"}
    for var in ("TRIAGEBOT_LLM_BASE_URL", "TRIAGEBOT_LLM_MODEL", "TRIAGEBOT_ADMIN_TOKEN"):
        env.pop(var, None)
    proc = subprocess.Popen([sys.executable, "-m", "triagebot", "serve", "--port", str(port)],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait(lambda: healthy(base), 60, proc)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr:
            proc.stderr.close()




def _wait(condition, seconds: float, proc: subprocess.Popen | None = None) -> None:  # type: ignore[no-untyped-def, type-arg]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        time.sleep(0.25)
    pytest.fail("timed out waiting")


def _payload() -> bytes:
    issue = {"number": 1, "title": "NCCL watchdog timeout", "body": BODY, "state": "open",
             "user": {"login": "alice", "type": "User"}, "labels": [],
             "html_url": f"https://github.com/{REPO}/issues/1", "author_association": "NONE"}
    return json.dumps({
        "action": "opened", "issue": issue, "installation": {"id": 99},
        "repository": {"full_name": REPO, "name": REPO.split("/")[1],
                       "owner": {"login": REPO.split("/")[0]}},
        "sender": {"login": "alice", "type": "User"},
    }).encode()


def _curl(base: str, body: bytes, delivery: str, signed: bytes | None = None) -> str:
    signed = body if signed is None else signed
    signature = "sha256=" + hmac.new(SECRET.encode(), signed, hashlib.sha256).hexdigest()
    out = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", base + "/webhook",
         "-H", "Content-Type: application/json", "-H", "X-GitHub-Event: issues",
         "-H", f"X-GitHub-Delivery: {delivery}", "-H", f"X-Hub-Signature-256: {signature}",
         "--data-binary", "@-"], input=body, capture_output=True, check=True)
    return out.stdout.decode()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
def test_signed_delivery_sent_with_curl_gives_exactly_one_comment(server: str, github: FakeGitHub) -> None:
    body = _payload()
    assert _curl(server, body, "e2e-1") in ("200", "202")
    _wait(lambda: len(github.comments(REPO, 1)) == 1, 90)
    for delivery in ("e2e-1", "e2e-1", "e2e-2"):  # redeliveries and a second delivery
        assert _curl(server, body, delivery) in ("200", "202")
    time.sleep(3)
    [comment] = github.comments(REPO, 1)
    assert comment["body"].startswith(MARKER)
    assert "@" not in comment["body"].replace("＠", "")
    assert "triage: needs-review" in github.labels_of(REPO, 1), "\n".join(str(x) for x in [
        (r.method, r.path, r.status) for r in github.requests])
    assert _curl(server, body[:-1] + b" ", "e2e-3", signed=body) == "401"  # one byte changed
