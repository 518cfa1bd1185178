"""Issue #14, end to end: two ``triagebot worker`` processes (each with its own data directory and
its own in-memory index cache) against one real PostgreSQL and one real Redis, plus the receiver
(``triagebot serve --workers 0``), GitHub being the local fake spoken to through PyGithub.

Which worker runs a job is steered the way an operator could: the other one is frozen (SIGSTOP),
and two no-op RQ jobs drain any dequeue the frozen one still had pending at Redis, so the next job
can only reach the running worker. Then:

- an issue closed and indexed through worker A is a neighbour in worker B's next triage;
- a maintainer's ``/triage`` correction handled by A changes what B posts for a similar issue,
  within 5 s of the correction being recorded: B's neighbour carries the corrected labels, and the
  classifier the trainer refitted with it (here every second) changes B's comment.

Needs TRIAGEBOT_TEST_POSTGRES_URL (scripts/pg-throwaway.sh), redis-server and rq."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support.github_fake import FakeGitHub
from support.learned import PG_URL, database_url
from support.review import make_index
from support.service import healthy
from triagebot.domain.models import Triage
from triagebot.store.db import Database

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(not PG_URL, reason="TRIAGEBOT_TEST_POSTGRES_URL not set"),
              pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed")]
ROOT = Path(__file__).resolve().parents[2]
SECRET = "two-workers-secret"
REPO = "octo-org/trainer"
INSTALLATION = 99
TITLE = "allreduce hangs with an NCCL watchdog timeout"
TEXT = ("ZeRO-3 allreduce hangs with an NCCL watchdog timeout after 1800 s on 2 nodes x 8 GPUs; "
        "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4412, OpType=ALLREDUCE)")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(what: str, condition: Callable[[], Any], seconds: float,
          procs: dict[str, subprocess.Popen[bytes]] | None = None) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        for name, proc in (procs or {}).items():
            if proc.poll() is not None:
                pytest.fail(f"{name} exited while waiting for {what}")
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    pytest.importorskip("rq", reason="rq not installed (pip install 'triagebot[redis]')")
    import redis

    port = _free_port()
    proc = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(port),
                             "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)

        def pong() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        _wait("redis-server", pong, 10)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


class Cluster:
    """The receiver, workers A and B, and what the test reads of them."""

    def __init__(self, tmp_path: Path, db_url: str, redis_url: str, github: FakeGitHub,
                 private_key: str) -> None:
        self.db = Database(db_url, pool_size=2)
        self.redis_url, self.github, self.tmp = redis_url, github, tmp_path
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        seed = make_index(tmp_path / "seed")  # the hashing embedder: no model to load
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "TRIAGEBOT_WEBHOOK_SECRET": SECRET,
                    "TRIAGEBOT_APP_ID": "4242", "TRIAGEBOT_PRIVATE_KEY": private_key,
                    "TRIAGEBOT_GITHUB_API_URL": github.base_url, "TRIAGEBOT_DB": db_url,
                    "TRIAGEBOT_QUEUE_URL": redis_url, "TRIAGEBOT_INDEX": str(seed),
                    "TRIAGEBOT_INDEX_STORE": "database", "TRIAGEBOT_RECONCILE_INTERVAL": "0",
                    "TRIAGEBOT_RETRAIN_INTERVAL": "1",
                    "HF_HUB_OFFLINE": "1"}
        for var in ("TRIAGEBOT_LLM_BASE_URL", "TRIAGEBOT_LLM_MODEL", "TRIAGEBOT_ADMIN_TOKEN"):
            self.env.pop(var, None)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.logs: list[Any] = []

    def start(self, name: str, *args: str, data_dir: Path | None = None) -> None:
        env = dict(self.env)
        if data_dir is not None:
            env["TRIAGEBOT_DATA_DIR"] = str(data_dir)
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115 - closed by stop()
        self.logs.append(log)
        self.procs[name] = subprocess.Popen([sys.executable, "-m", "triagebot", *args], env=env,
                                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.send_signal(signal.SIGCONT)
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        for log in self.logs:
            log.close()

    def only(self, running: str, frozen: str) -> None:
        """Let only ``running`` take jobs: freeze ``frozen``, then push two no-op jobs so that
        a dequeue it had pending at Redis is answered by one of them (see the module doc)."""
        import redis
        from rq import Queue as RQQueue

        self.procs[running].send_signal(signal.SIGCONT)
        self.procs[frozen].send_signal(signal.SIGSTOP)
        queue = RQQueue("triagebot", connection=redis.Redis.from_url(self.redis_url))
        for _ in range(2):
            queue.enqueue("triagebot.service.wiring.run_rq_job", 10**9, result_ttl=0)
            time.sleep(0.5)

    def deliver(self, event: str, payload: dict[str, Any]) -> None:
        import urllib.request

        body = json.dumps(payload).encode()
        request = urllib.request.Request(self.base + "/webhook", data=body, method="POST", headers={
            "Content-Type": "application/json", "X-GitHub-Event": event,
            "X-GitHub-Delivery": uuid.uuid4().hex,
            "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status in (200, 202)

    def job_done(self, kind: str, number: int) -> bool:
        rows = self.db.query("SELECT status FROM jobs WHERE kind = ? AND repo = ? AND number = ?",
                             (kind, REPO, number))
        return bool(rows) and all(status == "done" for (status,) in rows)

    def stored_triage(self, number: int) -> Triage | None:
        rows = self.db.query("SELECT triage FROM triages WHERE repo = ? AND number = ?", (REPO, number))
        return Triage.model_validate_json(rows[0][0]) if rows else None

    def trained_since_change_of(self, number: int) -> bool:
        """Has the trainer refitted the classifier since issue ``number`` was last written?"""
        row = self.db.query("SELECT version FROM index_items WHERE repo = ? AND number = ?", (REPO, number))
        fitted = self.db.query("SELECT MAX(index_version) FROM index_artifacts WHERE name = 'classifier'")
        return bool(row) and (fitted[0][0] or 0) >= row[0][0]

    def indexed(self, number: int) -> dict[str, Any] | None:
        rows = self.db.query("SELECT item FROM index_items WHERE repo = ? AND number = ?", (REPO, number))
        return json.loads(rows[0][0]) if rows and rows[0][0] else None

    def workers_registered(self) -> int:
        import redis

        return int(redis.Redis.from_url(self.redis_url).scard("rq:workers"))


def payload(action: str, number: int, state: str = "open", **extra: Any) -> dict[str, Any]:
    owner, name = REPO.split("/")
    issue = {"number": number, "title": TITLE, "body": TEXT, "state": state,
             "user": {"login": "alice", "type": "User"}, "labels": [],
             "html_url": f"https://github.com/{REPO}/issues/{number}", "author_association": "NONE"}
    if state == "closed":
        issue["state_reason"] = "completed"
    return {"action": action, "issue": issue, "installation": {"id": INSTALLATION},
            "repository": {"full_name": REPO, "name": name, "private": False, "owner": {"login": owner}},
            "sender": {"login": "alice", "type": "User"}, **extra}


@pytest.fixture
def cluster(tmp_path: Path, redis_url: str, rsa_pair: tuple[str, str]) -> Iterator[Cluster]:
    github = FakeGitHub(app_public_key=rsa_pair[1])
    github.start()
    github.add_label(REPO, "triage: needs-review")
    github.add_issue(REPO, 7, title=TITLE, body=TEXT, state="closed",
                     state_reason="completed")
    for number in (8, 9):
        github.add_issue(REPO, number, title=TITLE, body=TEXT)
    with database_url("postgres", tmp_path) as db_url:
        rig = Cluster(tmp_path, db_url, redis_url, github, rsa_pair[0])
        try:
            rig.start("receiver", "serve", "--port", str(rig.port), "--workers", "0")
            _wait("the receiver", lambda: healthy(rig.base), 60, rig.procs)
            rig.start("worker-a", "worker", data_dir=tmp_path / "a")
            rig.start("worker-b", "worker", data_dir=tmp_path / "b")
            _wait("both workers", lambda: rig.workers_registered() == 2, 120, rig.procs)
            yield rig
        finally:
            rig.stop()
            rig.db.close()
            github.stop()




def test_what_worker_a_learns_is_what_worker_b_uses(cluster: Cluster) -> None:
    # an issue closed and indexed through A ...
    cluster.only("worker-a", frozen="worker-b")
    cluster.deliver("issues", payload("closed", 7, state="closed"))
    _wait("A to index #7", lambda: cluster.job_done("index_add", 7), 60, cluster.procs)
    item = cluster.indexed(7)
    assert item is not None and item["status"] == "predicted"
    # ... is a neighbour in B's next triage (B's cache was loaded before A wrote it)
    cluster.only("worker-b", frozen="worker-a")
    cluster.deliver("issues", payload("opened", 8))
    _wait("B to triage #8", lambda: cluster.job_done("triage", 8) and cluster.github.comments(REPO, 8),
          60, cluster.procs)
    first = cluster.stored_triage(8)
    assert first is not None and [s.number for s in first.similar if s.repo == REPO] == [7]
    assert f"/{REPO}/issues/7" in cluster.github.comments(REPO, 8)[0]["body"]

    # a maintainer's correction handled by A ...
    wrong = first.similar[0].labels.stage
    right = "S1" if wrong != "S1" else "S2"
    cluster.only("worker-a", frozen="worker-b")
    comment = {"body": f"/triage stage {right}", "author_association": "MEMBER",
               "user": {"login": "maint", "type": "User"}, "id": 555}
    cluster.deliver("issue_comment", payload("created", 7, state="closed", comment=comment))
    corrected = _wait("A to correct #7", lambda: (cluster.indexed(7) or {}).get("status") == "confirmed"
                      and time.monotonic(), 60, cluster.procs)
    _wait("the trainer (in A: B is frozen) to refit", lambda: cluster.trained_since_change_of(7), 5,
          cluster.procs)
    # ... changes what B posts for a similar issue, within 5 s
    cluster.only("worker-b", frozen="worker-a")
    cluster.deliver("issues", payload("opened", 9))
    _wait("B to post on #9", lambda: cluster.github.comments(REPO, 9), 30, cluster.procs)
    assert time.monotonic() - corrected <= 5.0
    second = _wait("B to store #9's triage", lambda: cluster.stored_triage(9), 10, cluster.procs)
    assert second is not None and second.similar[0].number == 7
    assert second.similar[0].labels.stage == right != wrong
    assert second.similar[0].status == "confirmed"
    # #8 and #9 are the same text: what differs in B's comment is what A's correction changed
    assert cluster.github.comments(REPO, 9)[0]["body"] != cluster.github.comments(REPO, 8)[0]["body"]
    # nothing of the index was written to either worker's disk: the database is the record
    for data_dir in (cluster.tmp / "a", cluster.tmp / "b"):
        assert not (data_dir / "index").exists()
