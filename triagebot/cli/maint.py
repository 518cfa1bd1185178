"""Maintainer commands: ``index sync``, ``report`` and ``retrain`` (registered from cli.py)."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from triagebot import settings as settings_module
from triagebot.cli.errors import UserError
from triagebot.cli.service import database_url, dead_letter_lines
from triagebot.github import client as github
from triagebot.learning import live as learning
from triagebot.learning.shared import SharedIndex, export_dir, import_dir, train
from triagebot.learning.sync import Syncer, default_state_path
from triagebot.llm.client import refiner_for
from triagebot.review import data as review_data
from triagebot.review import report
from triagebot.service.assembly import build_engine, prepare_index, shared_index
from triagebot.settings import Settings
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore
from triagebot.store.queue import Queue
from triagebot.store.records import Store
from triagebot.text import sanitize

REPO_HELP = "OWNER/NAME of the repository"


def register_index_actions(index_actions: Any) -> None:
    """``index sync``: an action of the ``index`` command."""
    sync = index_actions.add_parser("sync", help="index a repository's closed issues")
    sync.add_argument("--repo", required=True, help=REPO_HELP)
    sync.add_argument("--since", default=None, help="only issues updated since DATE (YYYY-MM-DD)")
    sync.add_argument("--index", type=Path, default=None, help="index directory to update")
    sync.add_argument("--state-file", type=Path, default=None, help="resume state (default: in the index)")
    sync.add_argument("--db", default=None, help="store predicted issues here for /review")
    sync.set_defaults(func=cmd_sync)
    imp = index_actions.add_parser("import", help="load an index directory into the database")
    imp.add_argument("directory", type=Path, help="index directory (the seed format)")
    imp.add_argument("--db", default=None, help="database (default: TRIAGEBOT_DB)")
    imp.add_argument("--replace", action="store_true",
                     help="also remove indexed issues the directory does not hold")
    imp.set_defaults(func=cmd_index_import)
    exp = index_actions.add_parser("export", help="write the database's index as a directory")
    exp.add_argument("directory", type=Path, help="index directory to write")
    exp.add_argument("--db", default=None, help="database (default: TRIAGEBOT_DB)")
    exp.set_defaults(func=cmd_index_export)


def register(sub: Any) -> None:
    """``report`` and ``retrain``."""
    report = sub.add_parser("report", help="review statistics (terminal, HTML, PNG)")
    report.add_argument("--db", default=None, help="database (default: TRIAGEBOT_DB)")
    report.add_argument("--dimension", default="stage", help="dimension of the confusion matrix")
    report.add_argument("--html", type=Path, default=None, help="also write an HTML report")
    report.add_argument("--png", type=Path, default=None, help="also write the confusion matrix as PNG")
    report.set_defaults(func=cmd_report)
    retrain = sub.add_parser("retrain", help="refit the classifier on the index as it is now")
    retrain.add_argument("--index", type=Path, default=None)
    retrain.set_defaults(func=cmd_retrain)


def _index_dir(given: Path | None, settings: Settings) -> Path:
    """The index ``sync`` and ``retrain`` write: the service's live index (TRIAGEBOT_INDEX, else
    TRIAGEBOT_DATA_DIR/index seeded from the shipped one), never the package's own folder."""
    return given or prepare_index(settings)


def _since(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=timezone.utc)
    except ValueError:
        raise UserError(f"--since: {value!r} is not a date (YYYY-MM-DD)") from None


def port_for_repo(repo: str, settings: Settings) -> Any:
    """A GitHubPort for ``repo``: a configured token, else the App's installation on it."""
    return github.port_for_repo(settings, repo)


def cmd_index_import(args: argparse.Namespace, settings: Settings) -> int:
    """``index import DIR``: the directory's issues, calibration and layout into the database, as
    one change every running worker catches up on."""
    if not args.directory.is_dir():
        raise UserError(f"{args.directory}: no such index directory")
    result = import_dir(LearnedStore(Database(args.db or settings.db)), args.directory,
                        replace=args.replace)
    note = " (another embedder: the previous issues were replaced)" if result["replaced_layout"] else ""
    print(f"imported {result['imported']} issues from {args.directory}, removed {result['removed']}; "
          f"index version {result['version']}{note}")
    return 0


def cmd_index_export(args: argparse.Namespace, settings: Settings) -> int:
    """``index export DIR``: the database's index in the seed format (``index import`` reads it)."""
    store = LearnedStore(Database(database_url(args.db, settings)))
    if not store.meta():
        raise UserError("the database holds no index (triagebot index import DIR)")
    count = export_dir(SharedIndex(store), args.directory)
    print(f"exported {count} issues to {args.directory}")
    return 0


def _sync_engine(args: argparse.Namespace, settings: Settings) -> tuple[Any, Path]:
    """The engine ``index sync`` writes through and the folder of its resume state: the database's
    index when the service keeps it there (and no --index was given), else an index directory."""
    if args.index is None and settings.index_in_database:
        shared = shared_index(settings, Database(settings.db, pool_size=2))
        return build_engine(settings, use_llm=False, shared=shared), settings.data_dir
    index_dir = _index_dir(args.index, settings)
    return learning.LiveEngine.load(index_dir), index_dir


def cmd_sync(args: argparse.Namespace, settings: Settings) -> int:
    if not sanitize.valid_repo(args.repo):
        raise UserError(f"--repo: {args.repo!r} is not OWNER/NAME")
    engine, index_dir = _sync_engine(args, settings)
    store = Store(args.db) if args.db else None
    state_file = args.state_file or default_state_path(index_dir, args.repo)
    syncer = Syncer(port_for_repo(args.repo, settings), engine, args.repo, state_file, since=_since(args.since),
                    store=store, progress=lambda m: print(m, file=sys.stderr, flush=True),
                    summarize=_scoped(_summarizer(settings), args.repo),
                    llm_private_repos=settings.llm_private_repos)
    state = syncer.run()
    print(f"{args.repo}: {state.ingested} issues indexed ({state.confirmed} confirmed, "
          f"{state.predicted} predicted), {state.skipped} already known; index {index_dir}")
    return 0


def _summarizer(settings: Settings | None = None) -> Any:
    """The LLM's resolution summaries when an LLM is configured; None keeps the offline extract.
    The syncer asks only where the repository consents (``domain.visibility.llm_allowed``)."""
    llm = refiner_for((settings or settings_module.current()).llm)
    return llm.summarize_resolution if llm is not None else None


def _scoped(summarize: Any, repo: str) -> Any:
    """Cached answers scoped to ``repo``, so that removing it from the App deletes them."""
    return partial(summarize, repo=repo) if summarize is not None else None


def cmd_report(args: argparse.Namespace, settings: Settings) -> int:
    if args.dimension not in review_data.DIMENSIONS:
        raise UserError(f"--dimension must be one of {', '.join(review_data.DIMENSIONS)}")
    store = Store(database_url(args.db, settings))
    data = review_data.stats(store, args.dimension)
    print(report.text_report(data))
    print("\n".join(dead_letter_lines(Queue(store.db))))
    if args.html:
        args.html.write_text(report.html_report(data), encoding="utf-8")
        print(f"wrote {args.html}", file=sys.stderr)
    if args.png:
        report.write_png(data, args.png)
        print(f"wrote {args.png}", file=sys.stderr)
    return 0


def cmd_retrain(args: argparse.Namespace, settings: Settings) -> int:
    if args.index is None and settings.index_in_database:  # the one trainer, under its lease
        result = train(shared_index(settings, Database(settings.db, pool_size=2)), force=True)
        if not result["trained"]:
            raise UserError(f"not retrained: {result['reason']}")
        print(f"refitted on {result['issues']} issues ({result['confirmed']} confirmed, "
              f"{result['predicted']} predicted) in {result['seconds']}s; classifier version "
              f"{result['version']}: running workers take it on their next job")
        return 0
    index_dir = _index_dir(args.index, settings)
    engine = learning.LiveEngine.load(index_dir)
    result = learning.retrain(engine, index_dir)  # running workers refit on their next triage
    print(f"refitted on {result['issues']} issues ({result['confirmed']} confirmed, "
          f"{result['predicted']} predicted) in {result['seconds']}s; index {index_dir}")
    return 0
