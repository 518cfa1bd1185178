"""Regression tests: a write whose pacer slot is far away is refused before anything is sent or
booked (``WritesPaced``, a ``RateLimited``), and the worker puts the job back without spending an
attempt, instead of sleeping past the job's lease."""
from __future__ import annotations

from pathlib import Path

import pytest

from support.clock import FakeClock
from support.github import INSTALLATION, api_requests, settings
from support.github_fake import FakeGitHub
from triagebot.github.client import MAX_PACED_WAIT, installation_port
from triagebot.github.errors import RateLimited, WritesPaced
from triagebot.github.ratelimit import WritePacer
from triagebot.service.worker import Worker
from triagebot.store.queue import LEASE_S, JobSpec, Queue
from triagebot.store.records import Store


def flooded_pacer(clock: FakeClock) -> WritePacer:
    """450 writes in the last 45 minutes: the hourly budget frees a slot only in 15 minutes."""
    pacer = WritePacer(clock=clock, sleep=clock.sleep)
    for i in range(450):
        pacer.ledger.record(INSTALLATION, clock.now - 2700 + i * 6)
    return pacer


def test_far_pacer_slot_raises_rate_limited_without_writing(
        fake: FakeGitHub, clock: FakeClock, rsa_pair: tuple[str, str]) -> None:
    assert MAX_PACED_WAIT < LEASE_S / 5
    pacer = flooded_pacer(clock)
    port = installation_port(settings(fake, rsa_pair), INSTALLATION, clock=clock,
                             sleep=clock.sleep, pacer=pacer)
    fake.add_issue("o/r", 1, "t")
    booked = len(pacer.ledger.recent(INSTALLATION, 0.0))
    with pytest.raises(RateLimited) as caught:
        port.create_comment("o/r", 1, "a")
    port.close()
    assert isinstance(caught.value, WritesPaced) and caught.value.retry_after > MAX_PACED_WAIT
    assert clock.sleeps == []  # never blocked
    assert len(pacer.ledger.recent(INSTALLATION, 0.0)) == booked  # no slot booked
    assert ("POST", "/repos/o/r/issues/1/comments") not in api_requests(fake)


def test_near_pacer_slot_still_waits_and_writes(
        fake: FakeGitHub, clock: FakeClock, rsa_pair: tuple[str, str]) -> None:
    pacer = WritePacer(clock=clock, sleep=clock.sleep)
    pacer.ledger.record(INSTALLATION, clock.now)
    port = installation_port(settings(fake, rsa_pair), INSTALLATION, clock=clock,
                             sleep=clock.sleep, pacer=pacer)
    fake.add_issue("o/r", 1, "t")
    port.create_comment("o/r", 1, "a")
    port.close()
    assert clock.sleeps == [1.0] and len(fake.comments("o/r", 1)) == 1


def test_paced_job_is_deferred_without_spending_an_attempt(tmp_path: Path) -> None:
    now = [1_000_000.0]
    store = Store(tmp_path / "p.sqlite3", clock=lambda: now[0])
    queue = Queue(store.db, max_attempts=1, clock=lambda: now[0])
    queue.enqueue(JobSpec(kind="triage", dedupe_key="triage:o/r#1", repo="o/r", number=1))

    def runner(_job: object) -> str:
        raise WritesPaced("busy", retry_after=900.0)

    worker = Worker(queue, runner)
    assert worker.drain() == 1
    [job] = queue.jobs("queued")
    assert job.attempts == 0 and queue.claim() is None  # back in the queue, not dead
    now[0] += 900
    assert queue.claim().id == job.id
