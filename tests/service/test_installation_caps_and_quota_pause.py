"""RELIABILITY 25 and 27 through the real PyGithub port against the fake GitHub on 127.0.0.1:
in-flight caps per installation, the queue pausing an installation whose quota is low, and the
number of GitHub calls one triaged issue costs."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.clock import FakeClock
from support.github import INSTALLATION, api_requests, settings
from support.github_fake import FakeGitHub, Recorded, Response
from support.service import FakeEngine, Rig
from triagebot.github.client import MAX_IN_FLIGHT, installation_port
from triagebot.github.ratelimit import QuotaTracker, WritePacer
from triagebot.store.queue import JobSpec
from triagebot.store.records import Store


class SlowGitHub(FakeGitHub):
    """Holds every request a little and records how many were in flight at once."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.gauge = threading.Lock()
        self.now_total = self.now_writes = self.peak_total = self.peak_writes = 0

    def handle(self, rec: Recorded) -> Response:
        write = rec.method not in ("GET", "HEAD") and not rec.path.startswith("/app/")
        with self.gauge:
            self.now_total += 1
            self.now_writes += write
            self.peak_total = max(self.peak_total, self.now_total)
            self.peak_writes = max(self.peak_writes, self.now_writes)
        try:
            time.sleep(0.03)
            return super().handle(rec)
        finally:
            with self.gauge:
                self.now_total -= 1
                self.now_writes -= write


@pytest.fixture
def slow(clock: FakeClock, rsa_pair: tuple[str, str]) -> Iterator[SlowGitHub]:
    server = SlowGitHub(clock=clock, app_public_key=rsa_pair[1])
    server.start()
    server.add_label("o/r", "bug")
    yield server
    server.stop()


def test_in_flight_capped_at_ten_in_total_and_one_write(slow: SlowGitHub, clock: FakeClock,
                                                        rsa_pair: tuple[str, str]) -> None:
    """RELIABILITY 25: 30 worker threads share one installation's port."""
    port = installation_port(settings(slow, rsa_pair), INSTALLATION, clock=clock, sleep=clock.sleep)
    slow.add_issue("o/r", 1, "t")
    port.get_issue("o/r", 1)  # mint the token first, so only API calls overlap
    calls = [lambda: port.get_issue("o/r", 1)] * 24 + [lambda: port.create_comment("o/r", 1, "x")] * 6
    threads = [threading.Thread(target=call) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    port.close()
    assert len(slow.comments("o/r", 1)) == 6
    assert slow.peak_writes == 1
    assert 2 <= slow.peak_total <= MAX_IN_FLIGHT == 10


class PortRig(Rig):
    """The shared rig over the real PyGithub port to the fake GitHub server, with the quota
    tracker wired into both the port and the jobs (as ``triagebot serve`` wires them)."""

    def __init__(self, tmp_path: Path, fake: FakeGitHub, clock: FakeClock,
                 rsa_pair: tuple[str, str]) -> None:
        self.fake = fake
        self.quota = QuotaTracker(clock=clock)
        self.pygithub = installation_port(settings(fake, rsa_pair), INSTALLATION, clock=clock,
                                          sleep=clock.sleep, quota=self.quota,
                                          pacer=WritePacer(clock=clock, sleep=clock.sleep))
        super().__init__(tmp_path, self.pygithub, clock, max_attempts=2, indexer=None,
                         paused=self.quota.resume_in, author_limit=100)

    def open_issue(self, number: int) -> None:
        self.fake.add_issue("o/r", number, "NCCL timeout", "RuntimeError: NCCL watchdog timeout")
        spec = JobSpec(kind="triage", payload={"reason": "opened"}, dedupe_key=f"triage:o/r#{number}",
                       installation_id=INSTALLATION, repo="o/r", number=number)
        self.queue.enqueue(spec)


@pytest.fixture
def rig(tmp_path: Path, fake: FakeGitHub, clock: FakeClock, rsa_pair: tuple[str, str]) -> Iterator[PortRig]:
    r = PortRig(tmp_path, fake, clock, rsa_pair)
    yield r
    r.pygithub.close()


def test_low_quota_pauses_the_installation_without_spending_attempts(rig: PortRig) -> None:
    """RELIABILITY 27: x-ratelimit-remaining under 10% -> later jobs wait for the reset; they
    are neither failed nor dead-lettered (max_attempts is 2 and they are deferred 4 times)."""
    reset = int(rig.clock.now) + 900
    rig.fake.rate_headers = {"x-ratelimit-remaining": "499", "x-ratelimit-limit": "5000",
                             "x-ratelimit-reset": str(reset)}
    rig.open_issue(1)
    rig.open_issue(2)
    rig.worker.drain()  # issue 1 is triaged and sees the low quota; issue 2 is deferred
    assert len(rig.fake.comments("o/r", 1)) == 1 and rig.fake.comments("o/r", 2) == []
    assert rig.worker.drain() == 0  # not due before the reset
    for _ in range(3):  # each time it is due the quota is still low: deferred again, no request
        rig.clock.now = reset
        reset += 900
        rig.quota.observe(INSTALLATION, 100, 5000, reset)
        before = len(rig.fake.requests)
        assert rig.worker.drain() == 1 and len(rig.fake.requests) == before
    [waiting] = rig.queue.jobs("queued")
    assert waiting.attempts == 0 and "paused" in (waiting.last_error or "")
    rig.fake.rate_headers = {"x-ratelimit-remaining": "4999", "x-ratelimit-limit": "5000",
                             "x-ratelimit-reset": str(reset + 3600)}
    rig.clock.now = reset + 1
    rig.worker.drain()
    assert len(rig.fake.comments("o/r", 2)) == 1 and len(rig.queue.jobs("done")) == 2


def test_other_installations_and_github_free_jobs_are_not_paused(rig: PortRig) -> None:
    rig.quota.observe(INSTALLATION, 10, 5000, rig.clock.now + 600)
    rig.queue.enqueue(JobSpec(kind="feedback", installation_id=INSTALLATION, repo="o/r", number=1,
                              payload={"label": "bug", "action": "labeled", "who": "m"}))
    rig.queue.enqueue(JobSpec(kind="triage", installation_id=INSTALLATION + 1, repo="o/r",
                              number=3, payload={"reason": "opened"}))
    rig.fake.add_issue("o/r", 3, "t", "b")
    rig.worker.drain()
    assert len(rig.queue.jobs("done")) == 2 and len(rig.fake.comments("o/r", 3)) == 1


def test_server_wires_the_quota_into_the_jobs(tmp_path: Path) -> None:
    from triagebot.service import wiring as server
    from triagebot.settings import Settings

    quota = QuotaTracker()
    st = Settings(db=str(tmp_path / "s.sqlite3"))
    deps = server.build_deps(st, Store(st.db), quota=quota, engine=FakeEngine(),
                             port_for=lambda _i: None, render=lambda t: "x")
    assert deps.paused == quota.resume_in


def test_calls_per_triaged_issue_within_budget(rig: PortRig) -> None:
    """RELIABILITY 27: a triaged issue costs 4 calls (fetch issue, list comments, comment, add
    labels); the repo's config file and label list are read once per 5 minutes per repository."""
    rig.fake.add_label("o/r", "triage: needs-review")
    per_issue = []
    for number in range(1, 6):
        rig.open_issue(number)
        before = len(api_requests(rig.fake))
        rig.worker.drain()
        per_issue.append(api_requests(rig.fake)[before:])
        assert len(rig.fake.comments("o/r", number)) == 1
    first, rest = per_issue[0], per_issue[1:]
    repo_reads = [("GET", "/repos/o/r/contents/.github/triagebot.yml"), ("GET", "/repos/o/r/labels")]
    assert [c for c in first if c not in repo_reads] == [
        ("GET", "/repos/o/r/issues/1"), ("GET", "/repos/o/r/issues/1/comments"),
        ("POST", "/repos/o/r/issues/1/comments"), ("POST", "/repos/o/r/issues/1/labels")]
    for calls in rest:
        assert [m for m, _ in calls] == ["GET", "GET", "POST", "POST"], calls
        assert not set(calls) & set(repo_reads)
    assert sum(map(len, per_issue)) / len(per_issue) <= 5
    rig.clock.now += 301  # the repo's config and labels are re-read after 5 minutes
    rig.open_issue(9)
    before = len(api_requests(rig.fake))
    rig.worker.drain()
    assert set(repo_reads) <= set(api_requests(rig.fake)[before:])
