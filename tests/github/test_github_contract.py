"""Contract test: every call the port makes, sent by PyGithub through Stoplight Prism in proxy mode
in front of the fake, validated against GitHub's official OpenAPI description (@octokit/openapi).

With ``--errors`` Prism answers 422 for a request GitHub's description rejects and 500 for a
response that violates it, so any contract drift fails here. Needs the node packages:
    mkdir -p .ci/node && npm install --no-save --prefix .ci/node @stoplight/prism-cli @octokit/openapi
Prism takes ~10-15 s to load the 13 MB description, so all checks share one Prism process."""
from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from support.github_fake import FakeGitHub
from triagebot.github.client import app_client, installation_port

pytestmark = pytest.mark.integration

NODE = Path(os.environ.get("TRIAGEBOT_NODE_DIR", Path(__file__).resolve().parents[2] / ".ci" / "node"))
PRISM = NODE / "node_modules" / ".bin" / "prism"
SPEC = NODE / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
STARTUP_LIMIT = 180.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeGitHub, str, Path]]:
    if not (PRISM.exists() and SPEC.exists()):
        pytest.skip(f"prism/@octokit/openapi not installed under {NODE} (see module docstring)")
    fake = FakeGitHub()
    fake.start()
    log = tmp_path_factory.mktemp("prism") / "prism.log"
    port = _free_port()
    with log.open("w") as out:
        proc = subprocess.Popen([str(PRISM), "proxy", str(SPEC), fake.base_url, "--errors",
                                 "-h", "127.0.0.1", "-p", str(port)], stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_listening(proc, log)
        yield fake, f"http://127.0.0.1:{port}", log
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        fake.stop()


def _wait_listening(proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT
    while "Prism is listening" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"prism did not start:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.2)


def _problems(log: Path) -> list[str]:
    return [line for line in log.read_text(errors="replace").splitlines()
            if "✖" in line or "violation" in line.lower() or "warning" in line.lower()]


def test_port_calls_match_githubs_openapi(prism: tuple[FakeGitHub, str, Path], rsa_pair: tuple[str, str]) -> None:  # noqa: F811
    fake, url, log = prism
    fake.app_public_key = rsa_pair[1]
    fake.add_label("o/r", "bug", "stage/S1")
    fake.add_issue("o/r", 1, "NCCL hang", "details", labels=("stage/S1",))
    fake.add_issue("o/r", 2, "old", state="closed", state_reason="completed")
    fake.add_issue("o/r", 3, "a PR", state="closed", pull_request=True)
    fake.add_comment("o/r", 1, "me too")
    # Prism cannot match a multi-segment {path} (x-multi-segment), so the file sits at the root.
    fake.add_file("o/r", "triagebot.yml", "enabled: true\n")
    settings = SimpleNamespace(app_id="1", private_key=rsa_pair[0], github_api_url=url)
    port = installation_port(settings, 77)
    try:
        assert port.get_issue("o/r", 1) is not None
        assert [c.body for c in port.list_comments("o/r", 1)] == ["me too"]
        cid = port.create_comment("o/r", 1, "<!-- triage-bot:v1 -->\nhello")
        port.edit_comment("o/r", cid, "<!-- triage-bot:v1 -->\nedited")
        assert port.repo_labels("o/r") == ["bug", "stage/S1"]
        port.add_labels("o/r", 1, ["bug"])
        port.remove_label("o/r", 1, "stage/S1")
        assert port.read_file("o/r", "triagebot.yml") == "enabled: true\n"
        assert [i.number for _, i in port.iter_closed_issues("o/r")] == [2]
    finally:
        port.close()
    assert _problems(log) == []
    forwarded = {(r.method, r.path) for r in fake.requests}
    assert ("POST", "/app/installations/77/access_tokens") in forwarded
    assert ("POST", "/repos/o/r/issues/1/labels") in forwarded


def test_reconcile_calls_match_githubs_openapi(prism: tuple[FakeGitHub, str, Path], rsa_pair: tuple[str, str]) -> None:  # noqa: F811
    fake, url, log = prism
    fake.app_public_key = rsa_pair[1]
    fake.add_delivery(11, "Invalid HTTP Response: 502", 502)
    fake.add_delivery(12, "OK", 200)
    app = app_client(SimpleNamespace(app_id="1", private_key=rsa_pair[0], github_api_url=url))
    assert [d.id for d in app.list_failed_deliveries()] == [11]
    app.redeliver(11)
    assert fake.redelivered == [11] and _problems(log) == []


def test_prism_rejects_what_github_would(prism: tuple[FakeGitHub, str, Path]) -> None:
    """Guards the guard: a bare label array (what PyGithub's add_to_labels sends) and a comment
    without body are outside the description, so Prism must answer 422 without forwarding."""
    import requests

    fake, url, _ = prism
    fake.add_issue("o/r", 9, "t")
    before = len(fake.requests)
    headers = {"Authorization": "token ghp_contract", "Accept": "application/vnd.github+json"}
    bare = requests.post(f"{url}/repos/o/r/issues/9/labels", json=["bug"], headers=headers, timeout=30)
    empty = requests.post(f"{url}/repos/o/r/issues/9/comments", json={}, headers=headers, timeout=30)
    assert (bare.status_code, empty.status_code) == (422, 422)
    assert len(fake.requests) == before
