"""Worker loop: claim a job, run it, record the outcome. GitHub's own waits win over our backoff;
a gone issue is a finished job, not a failure; anything else backs off and eventually dead-letters."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from triagebot.github.errors import NotFound, QuotaPaused, RateLimited, WritesPaced
from triagebot.logs import emit
from triagebot.store.queue import Job, Queue

log = logging.getLogger("triagebot.service.worker")
Runner = Callable[[Job], str]


class Worker:
    def __init__(self, queue: Queue, runner: Runner, *, poll_s: float = 0.5,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.queue, self.runner, self.poll_s, self.sleep = queue, runner, poll_s, sleep

    def run_once(self, job_id: int | None = None) -> Job | None:
        """Claim and run at most one job (``job_id``: that one); returns it (None when nothing
        was ready)."""
        job = self.queue.claim(job_id)
        if job is None:
            return None
        started = time.monotonic()
        status, outcome = self._run(job)
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
        except RateLimited as exc:
            error = f"RateLimited: {exc} (retry after {exc.retry_after:.0f}s)"
            return self.queue.fail(job, error, exc.retry_after), error
        except NotFound as exc:
            self.queue.complete(job, f"skipped: not found ({exc})")
            return "done", "skipped: not found"
        except Exception as exc:  # noqa: BLE001 - any job failure is retried, then dead-lettered
            error = f"{type(exc).__name__}: {exc}"
            return self.queue.fail(job, error), error
        self.queue.complete(job, outcome)
        return "done", outcome

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


def start_threads(make_worker: Callable[[], Worker], count: int,
                  stop: threading.Event) -> list[threading.Thread]:
    """Embedded worker threads for ``serve``; each gets its own Worker (own DB connection)."""
    threads = [threading.Thread(target=make_worker().run_forever, args=(stop,),
                                name=f"triagebot-worker-{i}", daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    return threads
