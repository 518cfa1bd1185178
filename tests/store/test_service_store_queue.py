"""The SQLite store, the durable queue (dedupe, leases, backoff, dead letters) and write pacing,
on real database files in tmp_path with a fake clock."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from support.clock import FakeClock
from support.service import fixed_triage
from triagebot.github.ratelimit import WriteBudget, WritePacer
from triagebot.store import write_ledger as pacing
from triagebot.store.db import MIGRATIONS, Database
from triagebot.store.queue import CANCEL, JobSpec, Queue, backoff
from triagebot.store.records import DELIVERY_TTL_S, Feedback, Store


@pytest.fixture
def clock() -> FakeClock:
    """This module's expectations were written from 1,000,000 s (the root's ``clock`` starts later)."""
    return FakeClock(1_000_000.0)


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Store:
    return Store(tmp_path / "t.sqlite3", clock=clock)


@pytest.fixture
def queue(store: Store, clock: FakeClock) -> Queue:
    return Queue(store.db, max_attempts=3, lease_s=60, clock=clock)


def spec(number: int = 1, kind: str = "triage") -> JobSpec:
    return JobSpec(kind=kind, payload={"reason": "opened"}, dedupe_key=f"{kind}:o/r#{number}",
                   installation_id=1, repo="o/r", number=number)


def test_migrations_are_numbered_idempotent_and_wal(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    Database(path)
    db = Database(path)  # second open applies nothing twice
    assert db.query("SELECT version FROM schema_version") == [(n,) for n in range(1, len(MIGRATIONS) + 1)]
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_deliveries_dedupe_and_ttl_purge(store: Store, clock: FakeClock) -> None:
    assert store.record_delivery("d1", "issues", "opened")
    assert not store.record_delivery("d1", "issues", "opened")
    clock.now += 7 * 24 * 3600  # still inside the ≥ 7-day window
    assert store.purge_deliveries() == 0
    clock.now += DELIVERY_TTL_S
    assert store.purge_deliveries() == 1 and store.delivery_count() == 0
    assert DELIVERY_TTL_S >= 7 * 24 * 3600


def test_triage_comment_feedback_installation_round_trip(store: Store) -> None:
    triage = fixed_triage().model_copy(update={"repo": "o/r", "number": 3})
    store.save_triage(triage, "alice", 99)
    store.save_triage(triage, "alice", 100)
    got = store.get_triage("o/r", 3)
    assert got and got.comment_id == 100 and got.triage.stage.id == "S4"
    store.remember_comment("o/r", 3, 100)
    assert store.comment_id("o/r", 3) == 100 and store.comment_id("o/r", 4) is None
    store.add_feedback(Feedback(repo="o/r", number=3, dimension="stage", old_id="S4", new_id="S2",
                                who="bob", source="page"))
    assert [f.new_id for f in store.feedback("o/r", 3)] == ["S2"]
    store.set_installation(5, "org", True)
    store.set_repos(5, ["org/a", "org/b"], [])
    store.set_repos(5, [], ["org/a"])
    assert store.enabled_repos(5) == ["org/b"]
    store.set_installation(5, "org", False)
    assert store.enabled_repos(5) == [] and store.installation_active(5) is False


def test_same_issue_queued_twice_is_one_job(queue: Queue) -> None:
    assert queue.enqueue(spec()) is not None
    assert queue.enqueue(spec()) is None
    assert queue.enqueue(spec(2)) is not None
    assert len(queue.jobs("queued")) == 2


def test_same_delivery_five_times_is_one_job(queue: Queue) -> None:
    results = [queue.accept("abc", "issues", "labeled", [spec(kind="feedback")]) for _ in range(5)]
    assert results == [True, False, False, False, False]
    assert len(queue.jobs()) == 1


def test_running_job_does_not_block_a_new_one(queue: Queue) -> None:
    queue.enqueue(spec())
    job = queue.claim()
    assert job and job.attempts == 1
    assert queue.enqueue(spec()) is not None  # the issue changed while the first was running


def test_expired_lease_makes_job_claimable_again(queue: Queue, clock: FakeClock) -> None:
    queue.enqueue(spec())
    first = queue.claim()
    assert first and queue.claim() is None
    clock.now += 61
    again = queue.claim()
    assert again and again.id == first.id and again.attempts == 2


def test_backoff_honours_retry_after_then_dead_letters(queue: Queue, clock: FakeClock) -> None:
    queue.enqueue(spec())
    job = queue.claim()
    assert queue.fail(job, "RateLimited", retry_after=600) == "queued"
    clock.now += 599
    assert queue.claim() is None
    clock.now += 1
    job = queue.claim()
    assert queue.fail(job, "boom") == "queued"
    clock.now += backoff(2)
    job = queue.claim()
    assert job.attempts == 3 and queue.fail(job, "last error") == "dead"
    dead = queue.jobs("dead")
    assert len(dead) == 1 and dead[0].last_error == "last error"
    assert queue.depth() == 0


def test_backoff_grows_and_is_capped() -> None:
    assert [backoff(n) for n in (1, 2, 3)] == [30, 60, 120]
    assert backoff(30) == 3600 and backoff(1, retry_after=900) == 900


def test_failed_job_with_newer_twin_is_superseded(queue: Queue) -> None:
    queue.enqueue(spec())
    job = queue.claim()
    queue.enqueue(spec())
    assert queue.fail(job, "boom") == "cancelled"
    assert len(queue.jobs("queued")) == 1


def test_cancel_pseudo_job_cancels_queued_triage(queue: Queue) -> None:
    queue.enqueue(spec())
    cancel = JobSpec(kind=CANCEL, repo="o/r", number=1)
    assert queue.accept("d-close", "issues", "closed", [cancel])
    assert queue.jobs("queued") == [] and len(queue.jobs("cancelled")) == 1


def test_pacer_shares_budget_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    a = pacing.DbLedger(Database(path))
    b = pacing.DbLedger(Database(path))  # a second "process"
    waits = [ledger.book(1, 0.0, WriteBudget()) for ledger in (a, b, a, b)]
    assert waits == [0.0, 1.0, 2.0, 3.0]
    assert b.book(2, 0.0, WriteBudget()) == 0.0  # another installation has its own budget
    slots = sorted(a.recent(1, -1))
    assert len(slots) == 4 and all(y - x >= 1.0 for x, y in zip(slots, slots[1:]))


def test_pacer_sixty_per_minute(tmp_path: Path) -> None:
    clock, slept = FakeClock(0.0), []
    pacer = WritePacer(pacing.DbLedger(Database(tmp_path / "p.sqlite3")), clock=clock,
                       sleep=slept.append)
    waits = [pacer.acquire(1) for _ in range(61)]
    assert waits[59] == 59.0 and waits[60] == 60.0
    slots = pacer.ledger.recent(1, -1)
    in_any_minute = max(sum(1 for s in slots if t <= s < t + 60) for t in slots)
    assert in_any_minute <= 60
