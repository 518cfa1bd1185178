"""Redis + RQ as the transport that wakes workers on other machines; the database stays the queue.

Why this shape: deliveries, dedupe, attempts, leases, backoff and dead letters already live in the
``jobs`` table (SQLite or PostgreSQL), with one tested path: webhook -> ``Queue.accept`` ->
``Worker`` -> ``handlers.run`` -> GitHub. Redis only carries *which job id to look at*:

* After ``accept`` commits, ``RedisQueue`` pushes each new job id to the RQ queue ``triagebot``
  (never inside the transaction, so a worker never looks before the row is visible). If Redis is
  down the webhook still gets its 2xx: the job is durable and the sweeper pushes it later.
* An RQ worker runs ``wiring.run_rq_job(job_id)``, which claims *that* id in the database (same lease as the
  polling worker) and runs it through the same ``Worker``: RateLimited and other failures go
  through ``Queue.fail`` (backoff honouring GitHub's wait, then dead letter); NotFound completes.
  An id that is no longer claimable (done, cancelled, dead, leased elsewhere) is a no-op, so a
  duplicate push is harmless.
* Retries and crash recovery need no RQ scheduler: every worker process runs a ``Sweeper`` that
  pushes jobs that are ready in the database (backoff elapsed, or lease expired after a kill -9)
  and not already in Redis. The RQ job id is ``tb-<id>-<attempts>``, so one attempt is pushed once
  (checked with ``Job.exists``; a rare double push between two sweepers only costs a no-op run).
  Successful RQ jobs are deleted at once (``result_ttl=0``), so the key's presence means "on its
  way". Redis losing its data (no persistence) only delays jobs until the next sweep.

``triagebot worker`` (with ``TRIAGEBOT_QUEUE_URL``) runs one RQ ``SimpleWorker`` (no fork, so the
engine is loaded once) plus the sweeper per process; scale by running more processes. ``rq worker
-w rq.worker.SimpleWorker -u URL triagebot`` also works: ``run_rq_job`` then builds its worker from
the environment on first use (but without a sweeper: run ``triagebot worker`` somewhere)."""
from __future__ import annotations

import logging
import threading
from typing import Any

from triagebot.logs import emit
from triagebot.service.worker import Worker
from triagebot.settings import ConfigError, Settings
from triagebot.store.queue import JobSpec, Queue

log = logging.getLogger("triagebot.rq")
RQ_QUEUE = "triagebot"
RUN_JOB = "triagebot.service.wiring.run_rq_job"  # built there: the wiring owns the handlers
SWEEP_S = 5.0
FAILURE_TTL_S = 300  # an RQ job that crashed (database down) blocks its re-push this long
CONNECT_TIMEOUT_S = 2.0  # a blackholed Redis must not hold a webhook past GitHub's 10 s
JOB_TIMEOUT_S = 600  # RQ stops only a job that hangs: the worker's heartbeat keeps its lease
SCHEMES = ("redis://", "rediss://", "unix://")


class Transport:
    """Pushes database job ids to one RQ queue. Connects lazily, on the first push."""

    def __init__(self, url: str, *, lease_s: float, name: str = RQ_QUEUE) -> None:
        if not url.startswith(SCHEMES):
            scheme = url.split("://")[0] if "://" in url else "no scheme"  # never echo a password
            raise ConfigError(f"TRIAGEBOT_QUEUE_URL: expected redis://HOST:PORT/DB, got {scheme}")
        self.url, self.name = url, name
        self.job_timeout = max(JOB_TIMEOUT_S, int(lease_s * 0.9))
        self._rq: Any = None

    @property
    def rq(self) -> Any:
        if self._rq is None:
            self._rq = _rq_queue(self.url, self.name)
        return self._rq

    def push(self, job_id: int, attempts: int) -> bool:
        """Enqueue ``run_rq_job(job_id)`` unless this attempt is already in Redis; True if pushed."""
        queue = self.rq  # first: a missing rq package is a ConfigError, not an ImportError
        from rq.job import Job as RQJob

        rq_id = f"tb-{job_id}-{attempts}"
        if RQJob.exists(rq_id, connection=queue.connection):
            return False
        queue.enqueue(RUN_JOB, job_id, job_id=rq_id, result_ttl=0, failure_ttl=FAILURE_TTL_S,
                        job_timeout=self.job_timeout, description=f"triagebot job {job_id}")
        return True

    def close(self) -> None:
        """Drop this transport's Redis sockets (the RQ worker's pub/sub one included)."""
        if self._rq is not None:
            self._rq.connection.connection_pool.disconnect()

    def push_all(self, ready: list[tuple[int, int]]) -> int:
        return sum(self.push(job_id, attempts) for job_id, attempts in ready)


def _rq_queue(url: str, name: str) -> Any:
    try:
        from redis import Redis
        from rq import Queue as RQQueue
    except ImportError:
        raise ConfigError("TRIAGEBOT_QUEUE_URL is set but rq/redis are not installed: "
                          "pip install 'triagebot[redis]'") from None
    return RQQueue(name, connection=Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT_S))


class RedisQueue(Queue):
    """The database queue whose ``accept`` also wakes a remote worker through Redis."""

    def __init__(self, db: Any, transport: Transport, **kwargs: Any) -> None:
        super().__init__(db, **kwargs)
        self.transport = transport

    def accept(self, delivery_id: str, event: str, action: str | None, specs: list[JobSpec],
               body_hash: str | None = None) -> bool:
        fresh = super().accept(delivery_id, event, action, specs, body_hash=body_hash)
        if fresh:
            try:
                self.transport.push_all(self.ready(delivery_id=delivery_id))
            except Exception as exc:  # noqa: BLE001 - the job is durable; the sweeper pushes it
                emit(log, "redis push failed", logging.WARNING, delivery=delivery_id,
                     error=f"{type(exc).__name__}: {exc}")
        return fresh


class Sweeper:
    """Pushes jobs that became ready in the database (backoff over, lease expired) to Redis."""

    def __init__(self, queue: Queue, transport: Transport, interval_s: float = SWEEP_S) -> None:
        self.queue, self.transport, self.interval_s = queue, transport, interval_s

    def sweep(self) -> int:
        return self.transport.push_all(self.queue.ready())

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval_s):
            try:
                self.sweep()
            except Exception as exc:  # noqa: BLE001 - Redis or the database blinked: next sweep
                emit(log, "sweep failed", logging.WARNING, error=f"{type(exc).__name__}: {exc}")


# the worker side ------------------------------------------------------------------------------
_bound: dict[str, Worker] = {}


def bind(worker: Worker) -> None:
    """The Worker (queue + handlers) that ``run_rq_job`` uses in this process."""
    _bound["worker"] = worker


def bound_worker() -> Worker | None:
    """The worker ``bind`` registered in this process, if any."""
    return _bound.get("worker")


def transport_for(settings: Settings, lease_s: float | None = None) -> Transport:
    return Transport(settings.queue_url, lease_s=settings.job_lease if lease_s is None else lease_s)


def web_queue(settings: Settings, db: Any) -> Queue:
    """The queue the web tier accepts into: plain, or Redis-waking when TRIAGEBOT_QUEUE_URL is set."""
    if not settings.queue_url:
        return Queue(db, max_attempts=settings.max_attempts, lease_s=settings.job_lease)
    return RedisQueue(db, transport_for(settings), max_attempts=settings.max_attempts,
                      lease_s=settings.job_lease)


def work(settings: Settings, worker: Worker, *, burst: bool = False,
         sweep_s: float = SWEEP_S) -> None:
    """``triagebot worker`` with Redis: one RQ SimpleWorker in this (main) thread, a sweeper
    beside it. ``burst`` sweeps once and returns when the RQ queue is empty (tests, cron)."""
    from rq import SimpleWorker

    bind(worker)
    transport = transport_for(settings, worker.queue.lease_s)
    sweeper = Sweeper(worker.queue, transport, sweep_s)
    sweeper.sweep()
    stop = threading.Event()
    if not burst:
        threading.Thread(target=sweeper.run_forever, args=(stop,), name="triagebot-sweeper",
                         daemon=True).start()
    try:
        SimpleWorker([transport.rq], connection=transport.rq.connection).work(burst=burst)
    finally:
        stop.set()
        transport.close()
