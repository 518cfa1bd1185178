"""Worker loop: claim a job, run it, record the outcome. Waiting on GitHub (5xx, network errors,
rate limits) spends no attempt: the job waits it out for up to a day, GitHub's own waits winning
over our backoff; a gone issue is a finished job, not a failure; anything else backs off and
dead-letters after the attempt budget.

A claim holds a short lease (TRIAGEBOT_JOB_LEASE, 60 s by default) that a heartbeat renews while
the job runs, so a worker killed with -9 delays its job by at most one lease, and a long job is
never taken over by a second worker. On SIGTERM the workers finish their current job within the
grace period (TRIAGEBOT_STOP_GRACE) or hand it back at once (``stop_workers``)."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from triagebot.github.errors import NotFound, QuotaPaused, RateLimited, TransientError, WritesPaced
from triagebot.logs import emit
from triagebot.store.queue import Job, Queue

log = logging.getLogger("triagebot.service.worker")
Runner = Callable[[Job], str]
MAX_RENEW_S = 600.0  # a job still running after this is taken as hung: its lease may lapse


class Worker:
    def __init__(self, queue: Queue, runner: Runner, *, poll_s: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.queue, self.runner, self.poll_s, self.sleep = queue, runner, poll_s, sleep
        self.current: Job | None = None  # the job being run now (renewed; released on a stop)

    def run_once(self, job_id: int | None = None) -> Job | None:
        """Claim and run at most one job (``job_id``: that one); returns it (None when nothing
        was ready)."""
        job = self.queue.claim(job_id)
        if job is None:
            return None
        started = time.monotonic()
        self.current = job
        try:
            with self._heartbeat(job):
                status, outcome = self._run(job)
        finally:
            self.current = None
        emit(log, "job", job=job.id, kind=job.kind, repo=job.repo, number=job.number,
             delivery=job.delivery_id, attempt=job.attempts, status=status, outcome=outcome,
             ms=round((time.monotonic() - started) * 1000))
        return job

    def _run(self, job: Job) -> tuple[str, str]:
        try:
            outcome = self.runner(job)
        except (QuotaPaused, WritesPaced) as exc:  # waiting for a budget is no failed attempt
            note = f"paused: {exc} (resume in {exc.retry_after:.0f}s)"
            self.queue.defer(job, exc.retry_after, note)
            return "deferred", note
        except RateLimited as exc:  # GitHub says when: wait that long, spend no attempt
            error = f"RateLimited: {exc} (retry after {exc.retry_after:.0f}s)"
            return self.queue.wait(job, error, exc.retry_after), error
        except TransientError as exc:  # GitHub is down or unreachable: wait it out
            error = f"TransientError: {exc}"
            return self.queue.wait(job, error), error
        except NotFound as exc:
            self.queue.complete(job, f"skipped: not found ({exc})")
            return "done", "skipped: not found"
        except Exception as exc:  # noqa: BLE001 - any job failure is retried, then dead-lettered
            error = f"{type(exc).__name__}: {exc}"
            return self.queue.fail(job, error), error
        self.queue.complete(job, outcome)
        return "done", outcome

    @contextmanager
    def _heartbeat(self, job: Job) -> Iterator[None]:
        """While the job runs, a daemon thread renews its lease every third of the lease (for at
        most MAX_RENEW_S: a hung job must not hold its issue forever)."""
        done, until = threading.Event(), time.monotonic() + MAX_RENEW_S

        def beat() -> None:
            while not done.wait(max(0.05, self.queue.lease_s / 3)):
                if time.monotonic() > until:
                    emit(log, "job runs too long; lease left to lapse", logging.WARNING, job=job.id)
                    return
                try:
                    self.queue.renew(job)
                except Exception as exc:  # noqa: BLE001 - the database blinked: next beat retries
                    emit(log, "lease renewal failed", logging.WARNING, job=job.id,
                         error=f"{type(exc).__name__}: {exc}")

        threading.Thread(target=beat, name=f"triagebot-heartbeat-{job.id}", daemon=True).start()
        try:
            yield
        finally:
            done.set()

    def drain(self, limit: int = 10_000) -> int:
        """Run ready jobs until none is ready (tests and one-shot runs)."""
        count = 0
        while count < limit and self.run_once() is not None:
            count += 1
        return count

    def run_forever(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                ran = self.run_once()
            except Exception as exc:  # noqa: BLE001 - e.g. database locked: keep the thread alive
                emit(log, "worker error", logging.ERROR, error=f"{type(exc).__name__}: {exc}")
                ran = None
            if ran is None:
                stop.wait(self.poll_s)


class WorkerThread(threading.Thread):
    """A thread running one Worker's loop; keeps the Worker so a stop can release its job."""

    def __init__(self, worker: Worker, stop: threading.Event, name: str) -> None:
        super().__init__(target=worker.run_forever, args=(stop,), name=name, daemon=True)
        self.worker = worker


def start_threads(make_worker: Callable[[], Worker], count: int,
                  stop: threading.Event) -> list[WorkerThread]:
    """Embedded worker threads for ``serve``; each gets its own Worker (own DB connection)."""
    threads = [WorkerThread(make_worker(), stop, f"triagebot-worker-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    return threads


def stop_workers(threads: Sequence[threading.Thread], stop: threading.Event, grace_s: float) -> list[int]:
    """Graceful stop: no new claims; each worker may finish its current job within ``grace_s``;
    a job still running then is released (queued again, attempt refunded), so another worker
    takes it now rather than after its lease. Returns the released job ids."""
    stop.set()
    deadline = time.monotonic() + grace_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    released = []
    for thread in threads:
        worker = getattr(thread, "worker", None)
        if worker is None or not thread.is_alive():
            continue
        job = worker.current
        if job is not None and worker.queue.release(job):
            released.append(job.id)
    emit(log, "workers stopped", finished=sum(not t.is_alive() for t in threads),
         released=released)
    return released
