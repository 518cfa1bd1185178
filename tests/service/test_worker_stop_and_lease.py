"""Issue #13: a stop or a crash mid-job delays that issue's comment by at most about a minute.
Before, every claim held a fixed 5-minute lease and SIGTERM killed the worker mid-job, so its
comment came up to 420 s late. Now the lease is a setting (60 s by default) renewed by a
heartbeat while the job runs, and SIGTERM lets the job finish within TRIAGEBOT_STOP_GRACE or
hands it back at once. The crash and stop tests run the real ``triagebot worker`` wiring in
subprocesses over one SQLite file and a file-backed fake GitHub."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support.service import ROOT, SECRET, FakeEngine, RecordingPort, encode, issue_payload
from triagebot.service import wiring
from triagebot.service.jobs import Deps
from triagebot.service.worker import Worker
from triagebot.settings import Settings
from triagebot.store.db import Database
from triagebot.store.queue import JobSpec, Queue
from triagebot.store.records import Store

BOT = "triagebot[bot]"
SCRIPT = str(ROOT / "tests" / "support" / "service.py")


def test_default_lease_is_a_minute_and_the_setting_reaches_the_workers(tmp_path: Path) -> None:
    assert Settings().job_lease <= 60
    settings = Settings.from_env({"TRIAGEBOT_JOB_LEASE": "7", "TRIAGEBOT_STOP_GRACE": "3",
                                  "TRIAGEBOT_DB": str(tmp_path / "l.db")})
    assert (settings.job_lease, settings.stop_grace) == (7, 3)
    deps = Deps(store=Store(settings.db), port_for=lambda _i: None, engine=FakeEngine(),
                bot_login=BOT)
    assert wiring.make_worker(settings, deps).queue.lease_s == 7


def test_heartbeat_keeps_a_long_job_from_a_second_worker(tmp_path: Path) -> None:
    """A job running three times its 1 s lease is never claimed by a second worker meanwhile
    (a short lease without renewal would run it twice: two comments)."""
    path = tmp_path / "h.sqlite3"
    queue = Queue(Database(path), lease_s=1.0)
    queue.enqueue(JobSpec(kind="triage", dedupe_key="triage:o/r#1", repo="o/r", number=1))
    runs: list[int] = []

    def slow(job) -> str:  # type: ignore[no-untyped-def]
        runs.append(job.id)
        time.sleep(3.2)
        return "done"

    first = threading.Thread(target=Worker(queue, slow).run_once)
    first.start()
    while not runs:  # the first worker holds the claim
        time.sleep(0.01)
    other = Queue(Database(path), lease_s=1.0)  # another worker process
    stolen = []
    while first.is_alive():
        job = other.claim()
        if job is not None:
            stolen.append(job.id)
        time.sleep(0.1)
    first.join()
    assert stolen == [] and runs == [1]
    [job] = queue.jobs("done")
    assert job.attempts == 1


class Service:
    """``triagebot worker`` processes (the real wiring) over one database and fake GitHub."""

    def __init__(self, tmp_path: Path) -> None:
        self.db, self.state = str(tmp_path / "s.sqlite3"), tmp_path / "github.json"
        RecordingPort(self.state).add_issue("org/repo", 7)
        self.queue = Queue(Database(self.db))
        import json

        from triagebot.service.routing import route

        payload = json.loads(encode(issue_payload("opened")))
        assert self.queue.accept("d-1", "issues", "opened", route("issues", payload, BOT))
        self.procs: list[subprocess.Popen] = []  # type: ignore[type-arg]

    def start(self, **env: str) -> subprocess.Popen:  # type: ignore[type-arg]
        full = {**os.environ, "PYTHONPATH": str(ROOT), "TRIAGEBOT_WEBHOOK_SECRET": SECRET,
                "TRIAGEBOT_RECONCILE_INTERVAL": "0", "FAKE_BLOCK_ON": "", **env}
        proc = subprocess.Popen([sys.executable, SCRIPT, "--service", self.db, str(self.state)],
                                env=full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(proc)
        return proc

    def wait_blocked(self, proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
        blocked = Path(str(self.state) + ".blocked")
        deadline = time.monotonic() + 60
        while not blocked.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert blocked.exists(), "the worker never reached the blocking point"

    def wait_done(self, seconds: float) -> float:
        """Seconds until the job is done (fails after ``seconds``)."""
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            if [j.status for j in self.queue.jobs()] == ["done"]:
                return time.monotonic() - start
            time.sleep(0.1)
        pytest.fail(f"job not done after {seconds} s: {self.queue.jobs()}")

    def comments(self) -> int:
        return len(RecordingPort(self.state).bot_comments("org/repo", 7))

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()  # our own children, by pid
            proc.wait(10)
            if proc.stderr:
                proc.stderr.close()


@pytest.fixture
def service(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = Service(tmp_path)
    yield s
    s.close()


def test_kill_9_mid_job_delays_the_comment_by_one_lease_at_most(service: Service) -> None:
    """TRIAGEBOT_JOB_LEASE=3: the killed worker's job is taken over within the lease (it was a
    fixed 300 s before), and the comment it had posted is edited, not posted twice."""
    first = service.start(TRIAGEBOT_JOB_LEASE="3", FAKE_BLOCK_ON="create_comment")
    service.wait_blocked(first)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(10)
    service.start(TRIAGEBOT_JOB_LEASE="3")
    took = service.wait_done(60)
    assert took < 3 + 10, f"{took:.1f} s"
    [job] = service.queue.jobs()
    assert job.attempts == 2 and service.comments() == 1


def test_sigterm_lets_the_running_job_finish(service: Service) -> None:
    worker = service.start(FAKE_BLOCK_ON="create_comment", FAKE_BLOCK_S="1.5")
    service.wait_blocked(worker)
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(30) == 0
    [job] = service.queue.jobs()
    assert (job.status, job.attempts) == ("done", 1) and service.comments() == 1


def test_sigterm_hands_back_a_job_that_outlasts_the_grace(service: Service) -> None:
    """The job hangs past TRIAGEBOT_STOP_GRACE=1: the stopping worker releases it (attempt
    refunded), so the next worker takes it at once instead of after the 60 s lease."""
    worker = service.start(FAKE_BLOCK_ON="create_comment", TRIAGEBOT_STOP_GRACE="1")
    service.wait_blocked(worker)
    stopped = time.monotonic()
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(30) == 0
    assert time.monotonic() - stopped < 15
    [job] = service.queue.jobs()
    assert (job.status, job.attempts) == ("queued", 0)
    service.start()
    took = service.wait_done(60)
    assert took < 30, f"{took:.1f} s: the 60 s lease was waited out"
    assert service.comments() == 1
