"""A durable job queue on the store's ``jobs`` table.

Jobs survive restarts; a claim holds a lease, so a job whose worker died (kill -9) is claimable
again once the lease expires. Pending jobs are deduplicated by key (one queued triage per issue).
Failures back off exponentially, honouring GitHub's own wait, and dead-letter after N attempts."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from triagebot.store.db import Database

LEASE_S = 300.0
BACKOFF_BASE_S = 30.0
BACKOFF_CAP_S = 3600.0
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


# Ready = due (queued and due, or running with an expired lease) AND no other job with the same
# dedupe key holds a live lease: the unique index only dedupes *queued* jobs, so without this a
# second triage of one issue could run beside the first and both would post a comment.
READY = ("((status = 'queued' AND run_after <= ?) "
         "OR (status = 'running' AND lease_until <= ?)) "
         "AND NOT EXISTS (SELECT 1 FROM jobs live WHERE live.dedupe_key = jobs.dedupe_key "
         "AND live.status = 'running' AND live.lease_until > ? AND live.id <> jobs.id)")
COLUMNS = ("id, kind, payload, dedupe_key, installation_id, repo, number, status, attempts, "
           "last_error, delivery_id, access")


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


class Queue:
    def __init__(self, db: Database, *, max_attempts: int = 5, lease_s: float = LEASE_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.db, self.max_attempts, self.lease_s, self.clock = db, max_attempts, lease_s, clock

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
        transaction, so concurrent replays cannot slip past each other."""
        with self.db.transaction():
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
            rows = self.db.query(f"SELECT {COLUMNS} FROM jobs WHERE {READY}{only} "
                                 "ORDER BY run_after, id LIMIT 1", (now, now, now, *args))
            if not rows:
                return None
            job = _job(rows[0])
            self.db.execute("UPDATE jobs SET status = 'running', attempts = attempts + 1, "
                            "lease_until = ?, updated_at = ? WHERE id = ?",
                            (now + self.lease_s, now, job.id))
        return job.model_copy(update={"status": "running", "attempts": job.attempts + 1})

    def ready(self, delivery_id: str | None = None, limit: int = 500) -> list[tuple[int, int]]:
        """(id, attempts) of the jobs a worker could claim now, oldest first: what the Redis
        transport pushes after a delivery (``delivery_id``) and on every sweep."""
        now = self.clock()
        only, args = (" AND delivery_id = ?", (delivery_id,)) if delivery_id else ("", ())
        rows = self.db.query(f"SELECT id, attempts FROM jobs WHERE {READY}{only} "
                             f"ORDER BY run_after, id LIMIT {int(limit)}", (now, now, now, *args))
        return [(int(r[0]), int(r[1])) for r in rows]

    def complete(self, job: Job, note: str | None = None) -> None:
        self._set(job.id, "done", note)

    def fail(self, job: Job, error: str, retry_after: float | None = None) -> str:
        """Back off, or dead-letter once attempts are spent; returns the new status."""
        if job.attempts >= self.max_attempts:
            self._set(job.id, "dead", error)
            return "dead"
        with self.db.transaction():
            if self._queued_twin(job):  # a newer identical job will do the work
                self._set(job.id, "cancelled", f"superseded after: {error}")
                return "cancelled"
            run_after = self.clock() + backoff(job.attempts, retry_after)
            self.db.execute("UPDATE jobs SET status = 'queued', run_after = ?, lease_until = NULL, "
                            "last_error = ?, updated_at = ? WHERE id = ?",
                            (run_after, error[:2000], self.clock(), job.id))
        return "queued"

    def defer(self, job: Job, delay: float, note: str) -> None:
        """Put a claimed job back for ``delay`` seconds without spending an attempt (a paused
        installation is not the job's fault, so it must never dead-letter because of it). A newer
        identical job already queued will do the work: this one is cancelled (re-queuing it would
        break the one-queued-job-per-key index)."""
        with self.db.transaction():
            if self._queued_twin(job):
                self._set(job.id, "cancelled", f"superseded after: {note}")
                return
            self.db.execute("UPDATE jobs SET status = 'queued', run_after = ?, lease_until = NULL, "
                            "attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, "
                            "last_error = ?, updated_at = ? WHERE id = ?",
                            (self.clock() + delay, note[:2000], self.clock(), job.id))

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

    def jobs(self, status: str | None = None) -> list[Job]:
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        return [_job(r) for r in self.db.query(f"SELECT {COLUMNS} FROM jobs {where} ORDER BY id", args)]
