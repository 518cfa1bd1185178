"""CLI commands of the GitHub App service: ``serve``, ``worker``, ``reconcile``. They get the
settings ``cli.main`` read from the environment, once, before the command ran."""
from __future__ import annotations

import argparse

from triagebot.github.client import app_client
from triagebot.service import wiring
from triagebot.service.housekeeping import redeliver_failed
from triagebot.settings import ConfigError, Settings


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


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    wiring.serve(settings, host=args.host, port=args.port, workers=args.workers)
    return 0


def cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
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
