"""A durable job queue on the store's ``jobs`` table.

Jobs survive restarts; a claim holds a lease, so a job whose worker died (kill -9) is claimable
again once the lease expires. Pending jobs are deduplicated by key (one queued triage per issue).
Failures of the job itself back off exponentially and dead-letter after N attempts. Waiting on
GitHub (an outage, a rate limit) is not the job's fault: ``wait`` puts it back without spending an
attempt, with a capped backoff, for at least ``WAIT_DEADLINE_S`` from its first wait; only then does
it dead-letter. Dead letters stay in the table and ``requeue`` puts them back."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from triagebot.store.db import Database

LEASE_S = 60.0  # default claim lease (TRIAGEBOT_JOB_LEASE); a running job's worker renews it
BACKOFF_BASE_S = 30.0
BACKOFF_CAP_S = 3600.0
WAIT_BASE_S = 30.0  # waiting on GitHub: 30 s doubling ...
WAIT_CAP_S = 900.0  # ... to 15 min, so a job notices within 15 min that an outage is over
WAIT_DEADLINE_S = 24 * 3600.0  # a job waits out GitHub for at least this long, then dead-letters
CANCEL = "cancel"  # a pseudo-kind: cancels the issue's queued triage jobs instead of enqueuing
REPLAY_WINDOW_S = 8 * 24 * 3600  # as long as delivery ids are kept (store.DELIVERY_TTL_S)


class ReplayedBody(Exception):
    """A new delivery id carrying a body already delivered within the replay window: a captured,
    validly signed delivery sent again. GitHub's own redeliveries keep their delivery id."""


class JobSpec(BaseModel):
    """A job to enqueue: what the router produces from one delivery."""

    kind: str
    payload: dict[str, Any] = Field(default_factory=dict)
    dedupe_key: str | None = None
    installation_id: int | None = None
    repo: str | None = None
    number: int | None = None
    # Who may see the repository, from the delivery (``domain.visibility.Access`` as a dict): the
    # model consent of a triage and the visibility of an indexed item depend on it.
    access: dict[str, Any] | None = None


class Job(JobSpec):
    id: int
    status: str
    attempts: int
    last_error: str | None = None
    delivery_id: str | None = None
    waits: int = 0  # times it was put back while waiting on GitHub (no attempt spent)
    waiting_since: float | None = None  # first such wait; the wait deadline counts from here


# Ready = due (queued and due, or running with an expired lease) AND no other job with the same
# dedupe key holds a live lease: the unique index only dedupes *queued* jobs, so without this a
# second triage of one issue could run beside the first and both would post a comment.
# The two ways of being due are asked separately, each walking its own index in order and
# stopping at the first free job: one query with OR gathered and sorted every due job, ~100 ms
# a claim (under the write lock) at 100,000 queued.
DUE = ("status = 'queued' AND run_after <= ?", "status = 'running' AND lease_until <= ?")
FREE = ("NOT EXISTS (SELECT 1 FROM jobs live WHERE live.dedupe_key = jobs.dedupe_key "
        "AND live.status = 'running' AND live.lease_until > ? AND live.id <> jobs.id)")
COLUMNS = ("id, kind, payload, dedupe_key, installation_id, repo, number, status, attempts, "
           "last_error, delivery_id, waits, waiting_since, access")


def _job(row: tuple[Any, ...]) -> Job:
    keys = [c.strip() for c in COLUMNS.split(",")]
    data = dict(zip(keys, row))
    data["payload"] = json.loads(data["payload"])
    data["access"] = json.loads(data["access"]) if data["access"] else None
    return Job(**data)


def backoff(attempts: int, retry_after: float | None = None) -> float:
    """Seconds before the next try: 30 s doubling, capped at 1 h, never sooner than GitHub asks."""
    delay = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** max(0, attempts - 1))
    return max(delay, retry_after or 0.0)


def wait_backoff(waits: int, retry_after: float | None = None) -> float:
    """Seconds before looking at GitHub again after the ``waits``-th wait: 30 s doubling, capped
    at 15 min (an outage's end is noticed soon), never sooner than GitHub asks."""
    delay = min(WAIT_CAP_S, WAIT_BASE_S * 2 ** max(0, waits - 1))
    return max(delay, retry_after or 0.0)


class Queue:
    def __init__(self, db: Database, *, max_attempts: int = 5, lease_s: float = LEASE_S,
                 wait_deadline_s: float = WAIT_DEADLINE_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.db, self.max_attempts, self.lease_s, self.clock = db, max_attempts, lease_s, clock
        self.wait_deadline_s = wait_deadline_s

    def enqueue(self, spec: JobSpec, delivery_id: str | None = None, delay: float = 0.0) -> int | None:
        """Insert a queued job; returns None when an identical one is already queued."""
        now = self.clock()
        sql = ("INSERT INTO jobs (kind, payload, dedupe_key, status, attempts, run_after, "
               "installation_id, repo, number, delivery_id, created_at, updated_at, access) "
               "VALUES (?,?,?,'queued',0,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING")
        args = (spec.kind, json.dumps(spec.payload), spec.dedupe_key, now + delay,
                spec.installation_id, spec.repo, spec.number, delivery_id, now, now,
                json.dumps(spec.access) if spec.access is not None else None)
        return self.db.insert_id(sql, args)

    def accept(self, delivery_id: str, event: str, action: str | None, specs: list[JobSpec],
               body_hash: str | None = None) -> bool:
        """Record a delivery and enqueue its jobs atomically; False for a redelivery (no jobs).

        With ``body_hash`` (SHA-256 of the raw body), a new delivery id whose body was seen within
        ``REPLAY_WINDOW_S`` raises ``ReplayedBody`` and records nothing: checked inside the same
        transaction, after taking a lock on the hash, so concurrent replays cannot slip past each
        other.

        Not serialized with the workers on PostgreSQL (the receiver must not queue on one lock):
        it only inserts rows and cancels queued jobs, so the workers' own transitions guard
        against it (``claim`` updates only the state it read, ``_back_to_queue`` yields to a
        twin inserted at the same moment). Only deliveries of the same body wait on each other."""
        with self.db.transaction(serialized=False):
            if body_hash:
                self.db.lock(f"delivery-body:{body_hash}")
            now = self.clock()
            if self.db.query("SELECT 1 FROM deliveries WHERE delivery_id = ?", (delivery_id,)):
                return False
            if body_hash and self.db.query(
                    "SELECT 1 FROM deliveries WHERE body_hash = ? AND received_at >= ?",
                    (body_hash, now - REPLAY_WINDOW_S)):
                raise ReplayedBody(f"body {body_hash[:12]} already delivered")
            sql = ("INSERT INTO deliveries (delivery_id, event, action, received_at, body_hash) "
                   "VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING")
            if self.db.execute(sql, (delivery_id, event, action, now, body_hash)) != 1:
                return False
            for spec in specs:
                if spec.kind == CANCEL:
                    self.cancel_issue(spec.repo or "", spec.number or 0)
                else:
                    self.enqueue(spec, delivery_id)
        return True

    def claim(self, job_id: int | None = None) -> Job | None:
        """Take the oldest ready job (queued and due, or running with an expired lease); with
        ``job_id``, that job only if it is ready (a Redis-woken worker claims what it was sent)."""
        with self.db.transaction():
            now = self.clock()
            only, args = (" AND id = ?", (job_id,)) if job_id is not None else ("", ())
            rows = self._ready_rows(COLUMNS, now, only, args, limit=1)
            if not rows:
                return None
            job = _job(rows[0])
            if self.db.execute("UPDATE jobs SET status = 'running', attempts = attempts + 1, "
                               "lease_until = ?, updated_at = ? WHERE id = ? AND status = ?",
                               (now + self.lease_s, now, job.id, job.status)) != 1:
                return None  # cancelled by a delivery a moment ago
        return job.model_copy(update={"status": "running", "attempts": job.attempts + 1})

    def renew(self, job: Job) -> bool:
        """Extend a running job's lease (the worker's heartbeat), so a short lease bounds how
        long a crashed worker's job waits without cutting off a long job. Only this claim is
        renewed: a job re-claimed by another worker (after an expired lease) is left alone."""
        now = self.clock()
        return self.db.execute("UPDATE jobs SET lease_until = ?, updated_at = ? WHERE id = ? AND "
                               "status = 'running' AND attempts = ?",
                               (now + self.lease_s, now, job.id, job.attempts)) == 1

    def release(self, job: Job, note: str = "released by a stopping worker") -> bool:
        """Hand a running job back at once, attempt refunded (a stop is not the job's failure),
        so another worker takes it now instead of after the lease (a queued twin of it takes
        over instead: the job is cancelled as superseded)."""
        now = self.clock()
        with self.db.transaction():
            return self._back_to_queue(
                job, "run_after = ?, lease_until = NULL, attempts = CASE WHEN attempts > 0 THEN "
                "attempts - 1 ELSE 0 END, last_error = ?, updated_at = ?", (now, note, now), note,
                guard=" AND status = 'running' AND attempts = ?", guard_args=(job.attempts,)) is not None

    def ready(self, delivery_id: str | None = None, limit: int = 500) -> list[tuple[int, int]]:
        """(id, attempts) of the jobs a worker could claim now, oldest first: what the Redis
        transport pushes after a delivery (``delivery_id``) and on every sweep."""
        now = self.clock()
        only, args = (" AND delivery_id = ?", (delivery_id,)) if delivery_id else ("", ())
        rows = self._ready_rows("id, attempts", now, only, args, limit=limit)
        return [(int(r[0]), int(r[1])) for r in rows]

    def _ready_rows(self, columns: str, now: float, only: str, args: tuple[Any, ...],
                    limit: int) -> list[tuple[Any, ...]]:
        """``columns`` of the first ``limit`` ready jobs by (run_after, id); ``columns`` starts
        with id. One indexed query per way of being due, merged here."""
        rows: list[tuple[Any, ...]] = []
        for due in DUE:
            rows += self.db.query(f"SELECT {columns}, run_after FROM jobs WHERE {due} AND {FREE}"
                                  f"{only} ORDER BY run_after, id LIMIT {int(limit)}",
                                  (now, now, *args))
        rows.sort(key=lambda row: (row[-1], row[0]))
        return [row[:-1] for row in rows[:limit]]

    def complete(self, job: Job, note: str | None = None) -> None:
        self._set(job.id, "done", note)

    def fail(self, job: Job, error: str, retry_after: float | None = None) -> str:
        """Back off, or dead-letter once attempts are spent; returns the new status."""
        if job.attempts >= self.max_attempts:
            self._set(job.id, "dead", error)
            return "dead"
        with self.db.transaction():
            run_after = self.clock() + backoff(job.attempts, retry_after)
            return self._back_to_queue(job, "run_after = ?, lease_until = NULL, last_error = ?, "
                                       "updated_at = ?", (run_after, error[:2000], self.clock()),
                                       error) or "queued"

    def wait(self, job: Job, error: str, retry_after: float | None = None) -> str:
        """GitHub is down or limiting us: put the job back without spending an attempt, after a
        capped backoff (never sooner than ``retry_after``). Once it has waited ``wait_deadline_s``
        since its first wait it dead-letters (``requeue`` can revive it). Returns the new status."""
        now = self.clock()
        since = job.waiting_since if job.waiting_since is not None else now
        if now - since >= self.wait_deadline_s:
            hours = (now - since) / 3600
            self._set(job.id, "dead", f"gave up after waiting {hours:.1f} h on GitHub: {error}")
            return "dead"
        with self.db.transaction():
            run_after = now + wait_backoff(job.waits + 1, retry_after)
            return self._back_to_queue(
                job, "run_after = ?, lease_until = NULL, attempts = CASE WHEN attempts > 0 THEN "
                "attempts - 1 ELSE 0 END, waits = waits + 1, waiting_since = ?, last_error = ?, "
                "updated_at = ?", (run_after, since, error[:2000], now), error) or "queued"

    def defer(self, job: Job, delay: float, note: str) -> None:
        """Put a claimed job back for ``delay`` seconds without spending an attempt (a paused
        installation is not the job's fault, so it must never dead-letter because of it). A newer
        identical job already queued will do the work: this one is cancelled (re-queuing it would
        break the one-queued-job-per-key index)."""
        with self.db.transaction():
            self._back_to_queue(job, "run_after = ?, lease_until = NULL, attempts = CASE WHEN "
                                "attempts > 0 THEN attempts - 1 ELSE 0 END, last_error = ?, "
                                "updated_at = ?", (self.clock() + delay, note[:2000], self.clock()),
                                note)

    def _back_to_queue(self, job: Job, assignments: str, args: tuple[Any, ...], note: str,
                       guard: str = "", guard_args: tuple[Any, ...] = ()) -> str | None:
        """Inside a transaction: set the job back to 'queued' (plus ``assignments``), or cancel
        it as superseded when a queued twin will do its work: one already there, or one the
        receiver inserts at this very moment (it takes no lock on PostgreSQL), which shows as a
        violation of the one-queued-job-per-key index. Returns the new status, None when
        ``guard`` matched no row."""
        if not self._queued_twin(job):
            try:
                with self.db.transaction():  # a savepoint: the violation undoes only this
                    rows = self.db.execute(f"UPDATE jobs SET status = 'queued', {assignments} "
                                           f"WHERE id = ?{guard}", (*args, job.id, *guard_args))
                return "queued" if rows else None
            except self.db.integrity_error:
                pass
        rows = self.db.execute(f"UPDATE jobs SET status = 'cancelled', lease_until = NULL, "
                               f"last_error = ?, updated_at = ? WHERE id = ?{guard}",
                               (f"superseded after: {note}"[:2000], self.clock(), job.id, *guard_args))
        return "cancelled" if rows else None

    def _queued_twin(self, job: Job) -> bool:
        if not job.dedupe_key:
            return False
        return bool(self.db.query("SELECT 1 FROM jobs WHERE dedupe_key = ? AND status = 'queued' "
                                  "AND id <> ?", (job.dedupe_key, job.id)))

    def cancel_issue(self, repo: str, number: int, kinds: tuple[str, ...] = ("triage",)) -> int:
        """Cancel queued jobs for an issue that was closed, deleted or transferred."""
        marks = ",".join("?" for _ in kinds)
        return self.db.execute(
            f"UPDATE jobs SET status = 'cancelled', updated_at = ? WHERE repo = ? AND number = ? "
            f"AND status = 'queued' AND kind IN ({marks})", (self.clock(), repo, number, *kinds))

    def _set(self, job_id: int, status: str, error: str | None) -> None:
        self.db.execute("UPDATE jobs SET status = ?, last_error = COALESCE(?, last_error), "
                        "lease_until = NULL, updated_at = ? WHERE id = ?",
                        (status, error[:2000] if error else None, self.clock(), job_id))

    def depth(self) -> int:
        return self.db.query("SELECT COUNT(*) FROM jobs WHERE status IN ('queued', 'running')")[0][0]

    def dead_count(self) -> int:
        return self.db.query("SELECT COUNT(*) FROM jobs WHERE status = 'dead'")[0][0]

    def requeue(self, job_ids: list[int] | None = None) -> dict[str, list[int]]:
        """Put dead letters back (all of them, or ``job_ids``) as fresh jobs: attempts, waits and
        the wait deadline start over, due now. A dead job whose issue already has a queued twin is
        cancelled instead (the twin does the work). Returns ids by outcome: ``requeued``,
        ``superseded`` and ``not_dead`` (unknown ids, or jobs that are not dead letters)."""
        out: dict[str, list[int]] = {"requeued": [], "superseded": [], "not_dead": []}
        with self.db.transaction():
            dead = {job.id: job for job in self.jobs("dead")}
            for job_id in (sorted(dead) if job_ids is None else job_ids):
                job = dead.pop(job_id, None)
                if job is None:
                    out["not_dead"].append(job_id)
                    continue
                now = self.clock()
                status = self._back_to_queue(job, "run_after = ?, attempts = 0, waits = 0, "
                                             "waiting_since = NULL, lease_until = NULL, "
                                             "updated_at = ?", (now, now), "re-queued")
                out["requeued" if status == "queued" else "superseded"].append(job.id)
        return out

    def jobs(self, status: str | None = None) -> list[Job]:
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        return [_job(r) for r in self.db.query(f"SELECT {COLUMNS} FROM jobs {where} ORDER BY id", args)]
