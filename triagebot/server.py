"""Process wiring for ``triagebot serve`` / ``triagebot worker`` and gunicorn. Everything here runs
when called, never at import: settings are passed in (or read once by the gunicorn factory)."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

from flask import Flask

from triagebot import handlers
from triagebot.config import Settings
from triagebot.handlers import Deps
from triagebot.logs import setup
from triagebot.queue import Queue
from triagebot.store import Store
from triagebot.worker import Worker, start_threads


def github_port_factory(settings: Settings) -> Callable[[int | None], Any]:
    """installation id -> GitHubPort. The single place that reaches into github.py (lead: adapt
    this call to the function github.py exposes)."""
    from triagebot import github

    return github.port_factory(settings)


def load_engine(settings: Settings) -> Any:
    from triagebot.triage import Engine

    return Engine.load(settings.index)


def build_deps(settings: Settings, store: Store, **overrides: Any) -> Deps:
    """Real parts by default; tests and the CLI pass ``engine=``, ``port_for=``, ``indexer=``."""
    engine = overrides.pop("engine", None) or load_engine(settings)
    port_for = overrides.pop("port_for", None) or github_port_factory(settings)
    return Deps(store=store, port_for=port_for, engine=engine, bot_login=settings.bot_login,
                **overrides)


def make_worker(settings: Settings, deps: Deps, **kwargs: Any) -> Worker:
    queue = Queue(deps.store.db, max_attempts=settings.max_attempts)
    return Worker(queue, lambda job: handlers.run(deps, job), **kwargs)


def run_workers(settings: Settings, count: int, stop: threading.Event | None = None,
                **overrides: Any) -> list[threading.Thread]:
    """Start ``count`` worker threads (``triagebot worker`` or embedded in ``serve``)."""
    store = Store(settings.db)
    deps = build_deps(settings, store, **overrides)
    stop = stop or threading.Event()
    return start_threads(lambda: make_worker(settings, deps), count, stop)


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8080,
          workers: int | None = None, **overrides: Any) -> None:
    """Development server: werkzeug plus embedded worker threads. Use gunicorn in production."""
    from werkzeug.serving import run_simple

    setup()
    settings.require_serving()
    stop = threading.Event()
    count = settings.workers if workers is None else workers
    run_workers(settings, count, stop, **overrides)
    try:
        run_simple(host, port, create_wsgi(settings), threaded=True)
    finally:
        stop.set()


def create_wsgi(settings: Settings) -> Flask:
    """The web tier does not load the engine; healthz reports whether the index is on disk."""
    from triagebot.app import create_app

    return create_app(settings, store=Store(settings.db),
                      index_loaded=lambda: Path(settings.index).is_dir())


def wsgi() -> Flask:
    """gunicorn entry point (``triagebot.server:wsgi()``): reads the environment once, here."""
    setup()
    return create_wsgi(Settings.from_env())


def work(settings: Settings, count: int | None = None, **overrides: Any) -> None:
    """``triagebot worker``: worker threads only (the web tier runs under gunicorn); blocks until
    interrupted."""
    setup()
    stop = threading.Event()
    threads = run_workers(settings, settings.workers if count is None else max(1, count), stop,
                          **overrides)
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(1.0)
    except KeyboardInterrupt:
        stop.set()
