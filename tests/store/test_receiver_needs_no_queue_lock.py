"""Issue #13: on PostgreSQL the receiver's ``accept`` no longer queues on the workers' advisory
lock (at 300 deliveries/s every request waited for it: acks took seconds). That is safe because
the workers' transitions guard against what ``accept`` can do at the same moment: cancel a queued
job (``claim`` then updates nothing) or insert a queued twin of a job being put back (the job is
cancelled as superseded instead of breaking the one-queued-job-per-issue index). Each race is
forced deterministically, on SQLite and, when TRIAGEBOT_TEST_POSTGRES_URL is set, PostgreSQL."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.learned import database_url
from triagebot.store.db import Database
from triagebot.store.queue import JobSpec, Queue, ReplayedBody

SPEC = JobSpec(kind="triage", dedupe_key="triage:o/r#1", repo="o/r", number=1, installation_id=1)


@pytest.fixture(params=["sqlite", "postgres"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with database_url(request.param, tmp_path) as url:
        database = Database(url)
        yield database
        database.close()


@pytest.mark.parametrize("transition", ["wait", "fail", "defer", "release", "requeue"])
def test_a_twin_accepted_while_a_job_goes_back_supersedes_it(db: Database, transition: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    queue = Queue(db, max_attempts=5)
    queue.enqueue(SPEC)
    job = queue.claim()
    if transition == "requeue":
        queue.fail(job.model_copy(update={"attempts": 5}), "boom")  # dead
    twin = queue.enqueue(SPEC)  # a delivery arrives for the same issue ...
    monkeypatch.setattr(queue, "_queued_twin", lambda _job: False)  # ... just after the check
    outcome = {"wait": lambda: queue.wait(job, "TransientError: 502"),
               "fail": lambda: queue.fail(job, "boom"),
               "defer": lambda: queue.defer(job, 60, "paused"),
               "release": lambda: queue.release(job),
               "requeue": lambda: queue.requeue([job.id])}[transition]()
    assert outcome in ("cancelled", True, None, {"requeued": [], "superseded": [job.id], "not_dead": []})
    statuses = {j.id: j.status for j in queue.jobs()}
    assert statuses == {job.id: "cancelled", twin: "queued"}


def test_a_job_cancelled_while_being_claimed_is_not_run(db: Database,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    queue = Queue(db)
    queue.enqueue(SPEC)
    found = queue._ready_rows

    def closed_meanwhile(*args, **kwargs):  # type: ignore[no-untyped-def]
        rows = found(*args, **kwargs)
        queue.cancel_issue("o/r", 1)  # the issue was closed between the SELECT and the UPDATE
        return rows

    monkeypatch.setattr(queue, "_ready_rows", closed_meanwhile)
    assert queue.claim() is None
    assert [j.status for j in queue.jobs()] == ["cancelled"]


def test_deliveries_and_workers_racing_on_one_issue_raise_nothing(db: Database) -> None:
    """Deliveries for one issue keep arriving while a worker claims its job and puts it back."""
    receiver, worker = Queue(db), Queue(db, max_attempts=10**6)
    errors: list[BaseException] = []
    stop = threading.Event()

    def deliver() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                receiver.accept(f"d-{n}", "issues", "edited", [SPEC])
            except BaseException as exc:  # noqa: BLE001 - the test reports it
                errors.append(exc)

    def work() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                job = worker.claim()
                if job is not None:
                    (worker.wait if n % 2 else worker.fail)(job, "TransientError: 502")
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

    threads = [threading.Thread(target=deliver), threading.Thread(target=work)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    stop.set()
    for thread in threads:
        thread.join(30)
    assert errors == []
    queued = [j for j in receiver.jobs("queued") if j.dedupe_key == SPEC.dedupe_key]
    assert len(queued) <= 1


def test_concurrent_replays_of_one_body_queue_one_job_without_the_queue_lock(db: Database) -> None:
    """Privacy's replay protection (issue #10) checks the body's hash inside ``accept``. Without
    the workers' lock two replays under new delivery ids could both pass that check on
    PostgreSQL; a lock on the body hash alone keeps exactly one, while other bodies go on."""
    queue = Queue(db)
    barrier = threading.Barrier(8)
    outcomes: list[str] = []

    def replay(n: int) -> None:
        barrier.wait(10)
        try:
            outcomes.append("accepted" if queue.accept(f"r-{n}", "issues", "opened", [SPEC],
                                                       body_hash="b" * 64) else "redelivery")
        except ReplayedBody:
            outcomes.append("replay")

    threads = [threading.Thread(target=replay, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["accepted"] + ["replay"] * 7
    assert len(queue.jobs()) == 1
    assert queue.accept("other", "issues", "opened", [SPEC], body_hash="c" * 64)
