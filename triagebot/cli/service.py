"""CLI commands of the GitHub App service: ``serve``, ``worker``, ``reconcile``, ``requeue``. They
get the settings ``cli.main`` read from the environment, once, before the command ran. ``serve``
and ``worker`` refuse to start without a usable App id and key, then run ``triagebot doctor``'s
checks in the background (``cli.doctor.start_up_checks``)."""
from __future__ import annotations

import argparse
from pathlib import Path

from triagebot.cli import doctor
from triagebot.cli.errors import UserError
from triagebot.github.client import app_client
from triagebot.service import wiring
from triagebot.service.housekeeping import redeliver_failed
from triagebot.settings import ConfigError, Settings
from triagebot.store.db import Database
from triagebot.store.queue import Queue


def register(sub) -> None:  # type: ignore[no-untyped-def]
    serve = sub.add_parser("serve", help="run the webhook receiver with embedded workers")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--workers", type=int, default=None, help="worker threads (default TRIAGEBOT_WORKERS)")
    serve.set_defaults(func=cmd_serve)
    worker = sub.add_parser("worker", help="run queue workers only (the web tier runs under gunicorn); "
                            "with TRIAGEBOT_QUEUE_URL, one RQ worker per process")
    worker.add_argument("--workers", type=int, default=None, help="worker threads (ignored with Redis)")
    worker.set_defaults(func=cmd_worker)
    reconcile = sub.add_parser("reconcile", help="redeliver webhook deliveries that failed (last 3 days)")
    reconcile.add_argument("--dry-run", action="store_true", help="list them, redeliver nothing")
    reconcile.set_defaults(func=cmd_reconcile)
    requeue = sub.add_parser("requeue", help="put dead-lettered jobs back in the queue "
                             "(`triagebot report` lists them)")
    requeue.add_argument("job_ids", nargs="*", type=int, metavar="JOB_ID", help="dead jobs to re-queue")
    requeue.add_argument("--all", action="store_true", help="re-queue every dead job")
    requeue.add_argument("--db", default=None, help="database (default: TRIAGEBOT_DB)")
    requeue.set_defaults(func=cmd_requeue)


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    count = settings.workers if args.workers is None else args.workers
    doctor.start_up_checks(settings, receiver=True, worker=count > 0)
    wiring.serve(settings, host=args.host, port=args.port, workers=args.workers)
    return 0


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    doctor.start_up_checks(settings, receiver=False)
    wiring.work(settings, count=args.workers)
    return 0


def cmd_reconcile(args: argparse.Namespace, settings: Settings) -> int:
    """GitHub does not redeliver failed deliveries by itself; this does, within its 3-day window."""
    if not (settings.app_id and settings.private_key.get_secret_value()):
        raise ConfigError("reconcile needs TRIAGEBOT_APP_ID and TRIAGEBOT_PRIVATE_KEY(_PATH)")
    failed = redeliver_failed(app_client(settings), dry_run=args.dry_run)
    for delivery in failed:
        print(f"{'would redeliver' if args.dry_run else 'redelivered'} {delivery.id} "
              f"({delivery.event}, {delivery.guid})")
    print(f"{len(failed)} failed deliveries")
    return 0


def database_url(given: str | None, settings: Settings) -> str:
    """The service's database (``--db``, else TRIAGEBOT_DB); a SQLite file must already exist,
    so a typo never creates an empty database that reports nothing."""
    db = given or settings.db
    if "://" not in db and not Path(db).is_file():
        raise UserError(f"no database at {db} (give --db or set TRIAGEBOT_DB)")
    return db


def dead_letter_lines(queue: Queue, limit: int = 20) -> list[str]:
    """Dead-lettered jobs for ``triagebot report``: how many, the newest ``limit`` with their
    last error, and how to re-queue them."""
    dead = queue.jobs("dead")
    if not dead:
        return ["dead letters: 0"]
    lines = [f"dead letters: {len(dead)} (re-queue: triagebot requeue --all, or by JOB_ID)"]
    for job in dead[-limit:]:
        where = f"{job.repo}#{job.number}" if job.repo else f"installation {job.installation_id}"
        error = " ".join((job.last_error or "").split())[:160]
        lines.append(f"  job {job.id}: {job.kind} {where}, {job.attempts} attempts: {error}")
    return lines


def cmd_requeue(args: argparse.Namespace, settings: Settings) -> int:
    """Dead letters are kept with their last error; once the cause is gone they can run again."""
    if args.all == bool(args.job_ids):
        raise UserError("requeue: give JOB_ID... or --all (not both)")
    queue = Queue(Database(database_url(args.db, settings)))
    outcome = queue.requeue(None if args.all else args.job_ids)
    for job_id in outcome["superseded"]:
        print(f"job {job_id}: cancelled, a queued job for the same issue will do its work")
    print(f"requeued {len(outcome['requeued'])} dead jobs"
          + (f": {', '.join(map(str, outcome['requeued']))}" if outcome["requeued"] else ""))
    if outcome["not_dead"]:
        raise UserError(f"not dead letters (left as they are): {', '.join(map(str, outcome['not_dead']))}")
    return 0
