"""The queue's ``wait``: waiting on GitHub (an outage, a rate limit) spends no attempt, backs off
30 s doubling to a 15-minute cap (never sooner than GitHub asks), and dead-letters only once the
job has waited 24 h since its first wait; ``requeue`` gives dead letters a fresh start."""
from __future__ import annotations

from pathlib import Path

import pytest

from support.clock import FakeClock
from triagebot.store.queue import WAIT_DEADLINE_S, JobSpec, Queue, wait_backoff
from triagebot.store.records import Store


@pytest.fixture
def queue(tmp_path: Path, clock: FakeClock) -> Queue:
    return Queue(Store(tmp_path / "w.sqlite3", clock=clock).db, max_attempts=1, clock=clock)


def spec(number: int = 1) -> JobSpec:
    return JobSpec(kind="triage", dedupe_key=f"triage:o/r#{number}", installation_id=1, repo="o/r",
                   number=number)


def test_wait_backoff_doubles_to_a_fifteen_minute_cap_and_honours_github() -> None:
    assert [wait_backoff(n) for n in (1, 2, 3, 4, 5, 6, 50)] == [30, 60, 120, 240, 480, 900, 900]
    assert wait_backoff(1, retry_after=3600) == 3600
    assert WAIT_DEADLINE_S >= 24 * 3600


def test_waiting_spends_no_attempt_even_with_a_budget_of_one(queue: Queue, clock: FakeClock) -> None:
    queue.enqueue(spec())
    for n in range(1, 30):
        job = queue.claim()
        assert job is not None and job.attempts == 1 and job.waits == n - 1
        assert queue.wait(job, "TransientError: 502") == "queued"
        assert queue.claim() is None  # not due before its backoff
        clock.now += wait_backoff(n)
    [job] = queue.jobs("queued")
    assert job.attempts == 0 and job.waits == 29


def test_wait_dead_letters_only_after_the_deadline(queue: Queue, clock: FakeClock) -> None:
    queue.enqueue(spec())
    first = clock.now
    while True:
        job = queue.claim()
        assert job is not None
        status = queue.wait(job, "RateLimited: 403", retry_after=3600)
        if status == "dead":
            break
        assert clock.now - first < WAIT_DEADLINE_S
        clock.now += 3600
    assert clock.now - first >= WAIT_DEADLINE_S
    [dead] = queue.jobs("dead")
    assert "403" in (dead.last_error or "") and queue.dead_count() == 1


def test_requeue_starts_dead_letters_over_and_supersedes_twins(queue: Queue, clock: FakeClock) -> None:
    for number in (1, 2):
        queue.enqueue(spec(number))
        job = queue.claim()
        assert queue.fail(job, "boom") == "dead"
    queue.enqueue(spec(2))  # issue 2 was delivered again meanwhile
    assert queue.requeue([1, 2, 77]) == {"requeued": [1], "superseded": [2], "not_dead": [77]}
    job = queue.claim()
    assert job is not None and job.id == 1 and job.attempts == 1 and job.waits == 0
    assert queue.dead_count() == 0 and [j.status for j in queue.jobs()] == ["running", "cancelled", "queued"]
