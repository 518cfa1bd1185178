"""Other people's data stays theirs, end to end: ``triagebot serve`` as a subprocess (real model,
a copy of the seed index, SQLite, the review page), signed webhooks over HTTP, PyGithub against
the local fake GitHub and the LLM client against the local fake model.

A closed issue of a private repository is indexed; near-duplicates opened in another repository
of the same installation and of another installation get comments that do not carry its title,
number, repository or text, while a public control issue closed the same way *is* linked (so
nothing passes vacuously). The same holds on the review page, in ``triagebot triage`` and in the
prompts the fake model received. Then the repository is made public and private again, the
public one renamed, and the App uninstalled: the index, the database and the LLM cache follow."""
from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support.github_fake import FakeGitHub
from support.llm_fake import FakeLLM

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SECRET = "e2e-privacy-secret"
TOKEN = "privacy-review-token-0123456789"
# all three DeepSpeed forks: links across repositories stay within one framework (relevance.linkable)
PRIVATE, PUBLIC, OTHER = "acme/deepspeed-secret-fork", "acme/deepspeed-public-fork", "other/deepspeed-proj"
BODY = """ZeRO stage 3 training of a 13B model hangs in allgather after about 1200 steps on
2 nodes x 8 A100. All ranks stop at the same step, GPU utilisation stays at 100% and nothing
is logged until the NCCL watchdog fires:

[rank3]:[E ProcessGroupNCCL.cpp:1182] Watchdog caught collective operation timeout:
WorkNCCL(SeqNum=48213, OpType=_ALLGATHER_BASE, Timeout(ms)=1800000) ran for 1800412 milliseconds

deepspeed 0.14.2, torch 2.3.0+cu121, NCCL 2.20.5, flibbergrad optimizer 0.3.
"""
SECRET_TITLE = "Quasar XJ-9 cluster: ZeRO-3 allgather hangs with flibbergrad optimizer"
CONTROL_TITLE = "ZeRO-3 allgather hangs with flibbergrad optimizer on the public control cluster"
NEW_TITLE = "ZeRO-3 allgather hangs with the flibbergrad optimizer after 1200 steps"
LEAKS = (SECRET_TITLE, "XJ-9", "secret-fork", "Quasar")
# Comments shorten titles to about 50 characters: what of each title a comment shows.
CONTROL_SHOWN, SECRET_SHOWN = CONTROL_TITLE[:40], SECRET_TITLE[:40]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}")


class Rig:
    def __init__(self, base: str, github: FakeGitHub, llm: FakeLLM, tmp: Path) -> None:
        self.base, self.github, self.llm, self.tmp = base, github, llm, tmp
        self.index, self.db, self.cache = tmp / "index", tmp / "t.sqlite3", tmp / "llm.sqlite3"

    # webhooks ----------------------------------------------------------------------------------
    def send(self, event: str, payload: dict) -> int:
        body = json.dumps(payload).encode()
        signature = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        conn = http.client.HTTPConnection(self.base.split("//")[1], timeout=10)
        conn.request("POST", "/webhook", body=body, headers={
            "Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": str(uuid.uuid4()), "X-Hub-Signature-256": signature})
        status = conn.getresponse().status
        conn.close()
        return status

    def issue_event(self, action: str, repo: str, number: int, title: str, installation: int) -> None:
        state = "closed" if action == "closed" else "open"
        issue = {"number": number, "title": title, "body": BODY, "state": state,
                 "state_reason": "completed" if state == "closed" else None,
                 "user": {"login": "alice", "type": "User"}, "labels": [],
                 "html_url": f"https://github.com/{repo}/issues/{number}"}
        assert self.send("issues", {"action": action, "issue": issue, **self.where(repo, installation),
                                    "sender": {"login": "alice", "type": "User"}}) == 202

    def where(self, repo: str, installation: int) -> dict:
        owner, name = repo.split("/")
        return {"repository": {"full_name": repo, "name": name, "owner": {"login": owner},
                               "private": self.github.repo(repo).private},
                "installation": {"id": installation}}

    def close(self, repo: str, number: int, title: str, installation: int) -> None:
        self.github.add_issue(repo, number, title, BODY, state="closed", state_reason="completed")
        self.issue_event("closed", repo, number, title, installation)
        _wait(lambda: self.item(repo, number), 120, f"{repo}#{number} indexed")

    def open(self, repo: str, number: int, installation: int, title: str = NEW_TITLE) -> str:
        self.github.add_issue(repo, number, title, BODY)
        self.issue_event("opened", repo, number, title, installation)
        found = _wait(lambda: self.github.comments(repo, number), 120, f"a comment on {repo}#{number}")
        return found[0]["body"]

    # state -------------------------------------------------------------------------------------
    def items(self) -> list[dict]:
        try:
            return [json.loads(line) for line in (self.index / "meta.jsonl").read_text().splitlines()]
        except (OSError, ValueError):
            return []

    def item(self, repo: str, number: int) -> dict | None:
        return next((i for i in self.items() if (i["repo"], i["number"]) == (repo, number)), None)

    def rows(self, sql: str, *args: Any) -> int:
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            return db.execute(sql, args).fetchone()[0]

    def prompts(self) -> list[str]:
        return [m["content"] for r in self.llm.requests for m in r["messages"] if m["role"] == "user"]

    # review page ---------------------------------------------------------------------------------
    def review_page(self) -> str:
        host = self.base.split("//")[1]
        conn = http.client.HTTPConnection(host, timeout=10)
        conn.request("GET", "/review/login")
        response = conn.getresponse()
        cookie = response.headers["Set-Cookie"].split(";", 1)[0]
        csrf = re.search(r'name="csrf" value="([^"]+)"', response.read().decode()).group(1)
        conn.request("POST", "/review/login", body=f"token={TOKEN}&csrf={csrf}", headers={
            "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        response.read()
        assert response.status == 302
        cookie = response.headers["Set-Cookie"].split(";", 1)[0]
        conn.request("GET", "/review", headers={"Cookie": cookie, "Accept": "text/html"})
        page = conn.getresponse().read().decode()
        conn.close()
        return page


def _row(page: str, repo: str, number: int) -> str:
    anchor = f'id="{repo.replace("/", "-")}-{number}"'
    assert anchor in page, f"{repo}#{number} not on the review page"
    return page.split(anchor, 1)[1].split('<div class="issue"', 1)[0]


@pytest.fixture(scope="module")
def rig(rsa_pair: tuple[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("privacy")
    shutil.copytree(ROOT / "index", tmp / "index")
    github = FakeGitHub(app_public_key=rsa_pair[1])
    github.start()
    for repo in (PRIVATE, PUBLIC, OTHER):
        github.add_label(repo, "triage: needs-review")
    github.repo(PRIVATE).private = True
    with FakeLLM() as llm:
        port = _free_port()
        env = {**os.environ, "TRIAGEBOT_WEBHOOK_SECRET": SECRET, "TRIAGEBOT_APP_ID": "4242",
               "TRIAGEBOT_PRIVATE_KEY": rsa_pair[0], "TRIAGEBOT_GITHUB_API_URL": github.base_url,
               "TRIAGEBOT_DB": str(tmp / "t.sqlite3"), "TRIAGEBOT_INDEX": str(tmp / "index"),
               "TRIAGEBOT_WORKERS": "1", "TRIAGEBOT_ADMIN_TOKEN": TOKEN, "HF_HUB_OFFLINE": "1",
               "TRIAGEBOT_LLM_BASE_URL": llm.base_url, "TRIAGEBOT_LLM_MODEL": "fake",
               "TRIAGEBOT_LLM_CACHE": str(tmp / "llm.sqlite3"), "TRIAGEBOT_RECONCILE_INTERVAL": "0"}
        env.pop("TRIAGEBOT_LLM_PRIVATE_REPOS", None)  # the default: private repositories stay offline
        proc = subprocess.Popen([sys.executable, "-m", "triagebot", "serve", "--port", str(port)],
                                env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        base = f"http://127.0.0.1:{port}"
        try:
            _wait(lambda: _healthy(base, proc), 90, "triagebot serve")
            rig = Rig(base, github, llm, tmp)
            rig.send("installation", {"action": "created", "installation": {
                "id": 1, "account": {"login": "acme"}}, "repositories": [
                {"full_name": PRIVATE}, {"full_name": PUBLIC}], "sender": {"login": "acme-admin"}})
            rig.close(PRIVATE, 5, SECRET_TITLE, installation=1)
            rig.close(PUBLIC, 6, CONTROL_TITLE, installation=1)
            yield rig
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            if proc.stderr:
                proc.stderr.close()
            github.stop()


def _healthy(base: str, proc: subprocess.Popen) -> bool:  # type: ignore[type-arg]
    if proc.poll() is not None:
        pytest.fail(f"server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    try:
        conn = http.client.HTTPConnection(base.split("//")[1], timeout=2)
        conn.request("GET", "/healthz")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def test_private_issue_is_indexed_as_private(rig: Rig) -> None:
    assert rig.item(PRIVATE, 5)["visibility"] == "private"
    assert rig.item(PUBLIC, 6)["visibility"] == "public"


def test_comments_elsewhere_link_the_public_control_but_never_the_private_issue(rig: Rig) -> None:
    for repo, number, installation in ((OTHER, 7, 2), (PUBLIC, 8, 1)):
        body = rig.open(repo, number, installation)
        # Not vacuous: the public control is linked (over the length budget its title is shed,
        # render.SHED_ORDER; LEAKS holds the private repository's name, so its link would show).
        assert f"{PUBLIC}/issues/6" in body, body
        for leak in LEAKS:
            assert leak not in body, (repo, leak)
        assert not re.search(r"/issues/5(?!\d)", body)  # #5749 of the seed index is not #5
    home = rig.open(PRIVATE, 9, 1)
    assert SECRET_SHOWN in home and f"{PRIVATE}/issues/5" in home  # at home it is linked


def test_prompts_carry_the_control_but_no_private_text(rig: Rig) -> None:
    prompts = rig.prompts()
    assert any(CONTROL_TITLE in p for p in prompts)  # the control went to the model as a neighbour
    for prompt in prompts:
        for leak in LEAKS:
            assert leak not in prompt
    # the private repository's own issues (2 triaged) never went to the model: every answer is
    # cached under its repository, and none is under the private one (no operator consent)
    _wait(lambda: rig.rows("SELECT COUNT(*) FROM triages WHERE repo = ?", PRIVATE) == 2, 30,
          "both triages of the private repository stored")
    with sqlite3.connect(rig.cache) as cache:
        assert cache.execute("SELECT COUNT(*) FROM llm_cache WHERE scope = ?", (PRIVATE,)).fetchone()[0] == 0


def test_review_page_rows_show_only_what_their_repository_may_see(rig: Rig) -> None:
    page = rig.review_page()
    other = _row(page, OTHER, 7)
    assert f"{PUBLIC}#6" in other and CONTROL_TITLE in other
    for leak in LEAKS:
        assert leak not in other
    assert f"{PRIVATE}#5" in _row(page, PRIVATE, 9)


def test_cli_triage_hides_the_private_issue_from_other_repositories(rig: Rig, tmp_path: Path) -> None:
    def triage(repo: str) -> str:
        issue = tmp_path / f"{repo.replace('/', '_')}.json"
        issue.write_text(json.dumps({"repo": repo, "title": NEW_TITLE, "body": BODY}))
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        out = subprocess.run([sys.executable, "-m", "triagebot", "triage", "--index", str(rig.index),
                              str(issue)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return out.stdout

    elsewhere = triage(OTHER)
    assert CONTROL_TITLE in elsewhere
    for leak in LEAKS:
        assert leak not in elsewhere
    assert SECRET_TITLE in triage(PRIVATE)


def test_visibility_changes_follow_the_repository(rig: Rig) -> None:
    rig.github.repo(PRIVATE).private = False
    assert rig.send("repository", {"action": "publicized", **rig.where(PRIVATE, 1),
                                   "sender": {"login": "acme-admin"}}) == 202
    _wait(lambda: rig.item(PRIVATE, 5)["visibility"] == "public", 60, "publicized")
    assert f"{PRIVATE}/issues/5" in rig.open(OTHER, 10, 2)  # public now: linked elsewhere
    rig.github.repo(PRIVATE).private = True
    assert rig.send("repository", {"action": "privatized", **rig.where(PRIVATE, 1),
                                   "sender": {"login": "acme-admin"}}) == 202
    _wait(lambda: rig.item(PRIVATE, 5)["visibility"] == "private", 60, "privatized")
    body = rig.open(OTHER, 11, 2)
    assert f"{PUBLIC}/issues/6" in body and SECRET_SHOWN not in body
    assert not re.search(r"/issues/5(?!\d)", body)


def test_renamed_repository_moves_its_items(rig: Rig) -> None:
    renamed = PUBLIC + "-2"
    payload = {"action": "renamed", **rig.where(PUBLIC, 1), "sender": {"login": "acme-admin"},
               "changes": {"repository": {"name": {"from": PUBLIC.split("/")[1]}}}}
    payload["repository"] |= {"full_name": renamed, "name": renamed.split("/")[1]}
    assert rig.send("repository", payload) == 202
    _wait(lambda: rig.item(renamed, 6), 60, "renamed")
    assert rig.item(PUBLIC, 6) is None


def test_uninstall_forgets_the_installations_data(rig: Rig) -> None:
    renamed = PUBLIC + "-2"
    assert rig.rows("SELECT COUNT(*) FROM triages WHERE repo LIKE 'acme/%'") > 0
    assert rig.send("installation", {"action": "deleted", "installation": {
        "id": 1, "account": {"login": "acme"}}, "repositories": [
        {"full_name": PRIVATE}, {"full_name": renamed}], "sender": {"login": "acme-admin"}}) == 202
    _wait(lambda: rig.item(PRIVATE, 5) is None, 60, "the private item to go")
    for table in ("triages", "feedback", "comments", "jobs"):
        _wait(lambda t=table: rig.rows(f"SELECT COUNT(*) FROM {t} WHERE repo LIKE 'acme/%'") == 0,
              30, f"{table} of acme/* deleted")
    assert rig.item(renamed, 6) is not None  # a public issue stays public knowledge
    assert not any("XJ-9" in json.dumps(i) for i in rig.items())
    assert rig.rows("SELECT COUNT(*) FROM triages WHERE repo = ?", OTHER) >= 3  # others kept
    with sqlite3.connect(rig.cache) as cache:
        assert cache.execute("SELECT COUNT(*) FROM llm_cache WHERE scope LIKE 'acme/%'").fetchone()[0] == 0
        assert cache.execute("SELECT COUNT(*) FROM llm_cache WHERE scope = ?", (OTHER,)).fetchone()[0] > 0
