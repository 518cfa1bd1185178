"""Regression tests for the queue fixes: one triage per issue at a time (a job is not ready while
a job with its dedupe key holds a live lease), ``/triage`` re-runs share that key, and ``defer``
with a newer identical job queued cancels instead of breaking the unique index."""
from __future__ import annotations

from pathlib import Path

from support.clock import FakeClock
from support.service import BOT, Rig, command, issue_payload
from triagebot.service import jobs as handlers
from triagebot.service.routing import route
from triagebot.store.db import Database
from triagebot.store.queue import JobSpec, Queue

SPEC = JobSpec(kind="triage", payload={"reason": "opened"}, dedupe_key="triage:org/repo#7",
               installation_id=42, repo="org/repo", number=7)


def make_queue(tmp_path: Path) -> tuple[Queue, FakeClock]:
    clock = FakeClock(1_000_000.0)
    return Queue(Database(tmp_path / "q.sqlite3"), lease_s=300.0, clock=clock), clock


def test_twin_is_not_claimable_while_first_holds_live_lease(tmp_path: Path) -> None:
    queue, clock = make_queue(tmp_path)
    first = queue.enqueue(SPEC)
    assert queue.claim().id == first
    second = queue.enqueue(SPEC.model_copy(update={"payload": {"reason": "edited"}}))
    assert second is not None and second != first
    assert queue.claim() is None and queue.claim(second) is None  # polling and RQ-woken workers
    assert queue.ready() == []  # the RQ sweeper does not push it either
    clock.now += 301  # the first worker died: its expired lease is reclaimed, the twin still waits
    assert queue.claim().id == first and queue.claim() is None


def test_twin_runs_once_the_first_job_finishes(tmp_path: Path) -> None:
    queue, _ = make_queue(tmp_path)
    queue.enqueue(SPEC)
    job = queue.claim()
    second = queue.enqueue(SPEC)
    other = queue.enqueue(SPEC.model_copy(update={"dedupe_key": "triage:org/repo#8", "number": 8}))
    assert [j for j, _ in queue.ready()] == [other]  # other issues are not held up
    queue.complete(job)
    assert [j for j, _ in queue.ready()] == [second, other]
    assert queue.claim().id == second


def test_concurrent_edited_triage_posts_one_comment(tmp_path: Path) -> None:
    """Worker A is mid-triage when an ``edited`` delivery arrives; worker B must not run it."""
    rig = Rig(tmp_path)
    rig.deliver("issues", issue_payload("opened"))
    running = rig.queue.claim()  # worker A has claimed it and not yet posted
    rig.deliver("issues", issue_payload("edited", changes={"body": {"from": "old"}}))
    assert rig.drain() == 0  # worker B finds nothing it may run
    handlers.run(rig.deps, running)
    rig.queue.complete(running)
    assert rig.drain() == 1
    assert len(rig.gh.bot_comments("org/repo", 7)) == 1
    assert [c[0] for c in rig.gh.writes].count("create_comment") == 1


def test_rerun_command_is_a_triage_job_with_the_issue_key(tmp_path: Path) -> None:
    [spec] = route("issue_comment", command("/triage"), BOT)
    assert (spec.kind, spec.dedupe_key, spec.payload) == ("triage", "triage:org/repo#7",
                                                          {"reason": "command"})
    rig = Rig(tmp_path)
    rig.deliver("issues", issue_payload("opened"))
    running = rig.queue.claim()
    rig.deliver("issue_comment", command("/triage rerun"))
    assert rig.drain() == 0  # the re-run waits for the triage in flight
    handlers.run(rig.deps, running)
    rig.queue.complete(running)
    assert rig.drain() == 1
    assert [c[0] for c in rig.gh.writes if c[0].endswith("comment")] == ["create_comment",
                                                                        "edit_comment"]


def test_defer_with_queued_twin_cancels_instead_of_integrity_error(tmp_path: Path) -> None:
    queue, _ = make_queue(tmp_path)
    queue.enqueue(SPEC)
    job = queue.claim()
    twin = queue.enqueue(SPEC)
    queue.defer(job, 60.0, "paused: quota low")  # raised sqlite3.IntegrityError before the fix
    assert [j.id for j in queue.jobs("cancelled")] == [job.id]
    assert [j.id for j in queue.jobs("queued")] == [twin]


def test_defer_without_twin_requeues_without_spending_an_attempt(tmp_path: Path) -> None:
    queue, clock = make_queue(tmp_path)
    queue.enqueue(SPEC)
    job = queue.claim()
    queue.defer(job, 60.0, "paused")
    [queued] = queue.jobs("queued")
    assert queued.id == job.id and queued.attempts == 0 and queue.claim() is None
    clock.now += 60
    assert queue.claim().id == job.id
