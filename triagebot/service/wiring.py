"""Process wiring for ``triagebot serve`` / ``triagebot worker`` and gunicorn. Everything here runs
when called, never at import: settings are passed in (or read once by the gunicorn factory)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask
from werkzeug.serving import run_simple

from triagebot.github import client as github
from triagebot.github.ratelimit import QuotaTracker, WritePacer
from triagebot.learning.live import LiveEngine, make_indexer
from triagebot.learning.visibility import IndexKeeper
from triagebot.logs import setup
from triagebot.service import housekeeping, rq_transport
from triagebot.service import jobs as handlers
from triagebot.service.app import create_app
from triagebot.service.assembly import build_engine, renderer
from triagebot.service.jobs import Deps
from triagebot.service.worker import Worker, start_threads
from triagebot.settings import Settings
from triagebot.store.queue import Queue
from triagebot.store.records import Store
from triagebot.store.write_ledger import DbLedger


def github_port_factory(settings: Settings, store: Store,
                        quota: Any = None) -> Callable[[int | None], Any]:
    """installation id -> GitHubPort. Writes of every worker process are paced through one ledger
    in the database (RELIABILITY 24, 29); one quota tracker per process watches the primary limit
    (the caller passes it so jobs can consult it before calling GitHub, RELIABILITY 27)."""
    pacer, quota = WritePacer(DbLedger(store.db)), quota or QuotaTracker()
    ports: dict[int | None, Any] = {}

    def port_for(installation_id: int | None) -> Any:
        if installation_id is None:
            raise ValueError("delivery carries no installation id")
        if installation_id not in ports:
            ports[installation_id] = github.installation_port(
                settings, installation_id, pacer=pacer, quota=quota)
        return ports[installation_id]

    return port_for


def build_deps(settings: Settings, store: Store, **overrides: Any) -> Deps:
    """Real parts by default; tests and the CLI pass ``engine=``, ``port_for=``, ``indexer=``."""
    quota = overrides.pop("quota", None) or QuotaTracker()
    engine = overrides.pop("engine", None) or build_engine(settings)
    port_for = overrides.pop("port_for", None) or github_port_factory(settings, store, quota)
    render = overrides.pop("render", None) or renderer(settings, engine)
    indexer = overrides.pop("indexer", None) or _indexer(engine, store)
    refresh = overrides.pop("refresh", None) or getattr(engine, "refresh", None) or (lambda: None)
    overrides.setdefault("keeper", _keeper(engine))
    overrides.setdefault("forget_llm", getattr(getattr(engine, "refiner", None), "forget", None))
    overrides.setdefault("llm_private_repos", settings.llm_private_repos)
    return Deps(store=store, port_for=port_for, engine=engine, bot_login=settings.bot_login,
                render=render, indexer=indexer, paused=quota.resume_in, refresh=refresh, **overrides)


def _keeper(engine: Any) -> Any:
    """Visibility changes and uninstalls reach the index through the engine's index (``learning``
    owns how); an engine without one (a test fake) has nothing to keep current."""
    return IndexKeeper(engine) if hasattr(engine, "index") else None


def _indexer(engine: Any, store: Store) -> Any:
    """Closed-as-completed issues join the index (the learning module owns how); only a live
    engine, which follows the index directory, can take them."""
    return make_indexer(engine, store) if isinstance(engine, LiveEngine) else None


def make_worker(settings: Settings, deps: Deps, **kwargs: Any) -> Worker:
    queue = Queue(deps.store.db, max_attempts=settings.max_attempts)
    return Worker(queue, lambda job: handlers.run(deps, job), **kwargs)


def run_workers(settings: Settings, count: int, stop: threading.Event | None = None,
                **overrides: Any) -> list[threading.Thread]:
    """Start ``count`` worker threads (``triagebot worker`` or embedded in ``serve``)."""
    store = Store(settings.db)
    deps = build_deps(settings, store, **overrides)
    stop = stop or threading.Event()
    housekeeping.start(store, _app_client_factory(settings), settings.reconcile_interval, stop)
    return start_threads(lambda: make_worker(settings, deps), count, stop)


def _app_client_factory(settings: Settings) -> Callable[[], Any] | None:
    """Reconciling needs the App's own credentials; without them only the purge runs."""
    if not (settings.app_id and settings.private_key.get_secret_value()):
        return None

    def make() -> Any:
        return github.app_client(settings)

    return make


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8080,
          workers: int | None = None, **overrides: Any) -> None:
    """Development server: werkzeug plus embedded worker threads. Use gunicorn in production."""
    setup()
    settings.require_serving()
    stop = threading.Event()
    count = settings.workers if workers is None else workers
    if count > 0:  # a receiver-only process (workers elsewhere) never loads the model
        run_workers(settings, count, stop, **overrides)
    try:
        run_simple(host, port, create_wsgi(settings), threaded=True)
    finally:
        stop.set()


def create_wsgi(settings: Settings) -> Flask:
    """The web tier does not load the engine; healthz reports whether the index is on disk."""
    store = Store(settings.db)
    return create_app(settings, store=store, queue=rq_transport.web_queue(settings, store.db),
                      index_loaded=lambda: Path(settings.index).is_dir())


def wsgi() -> Flask:
    """gunicorn entry point (``triagebot.service.wiring:wsgi()``): reads the environment once, here."""
    setup()
    return create_wsgi(Settings.from_env())


def work(settings: Settings, count: int | None = None, **overrides: Any) -> None:
    """``triagebot worker``: worker threads only (the web tier runs under gunicorn); blocks until
    interrupted. With TRIAGEBOT_QUEUE_URL: one RQ worker woken through Redis (see rq_transport)."""
    setup()
    if settings.queue_url:
        _ = rq_transport.transport_for(settings).rq  # a bad URL or missing rq fails before the engine loads
        deps = build_deps(settings, Store(settings.db), **overrides)
        rq_transport.work(settings, make_worker(settings, deps))
        return
    stop = threading.Event()
    threads = run_workers(settings, settings.workers if count is None else max(1, count), stop,
                          **overrides)
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(1.0)
    except KeyboardInterrupt:
        stop.set()


def run_rq_job(job_id: int) -> str:
    """RQ entry point: claim job ``job_id`` in the database and run it like the polling worker.
    A plain ``rq worker`` process has no bound worker yet: it builds one from the environment."""
    worker = rq_transport.bound_worker()
    if worker is None:
        settings = Settings.from_env()
        worker = make_worker(settings, build_deps(settings, Store(settings.db)))
        rq_transport.bind(worker)
    job = worker.run_once(int(job_id))
    return "not claimable (done, cancelled or leased elsewhere)" if job is None else "ran"
