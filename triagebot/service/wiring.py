"""Process wiring for ``triagebot serve`` / ``triagebot worker`` and gunicorn. Everything here runs
when called, never at import: settings are passed in (or read once by the gunicorn factory)."""
from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask
from werkzeug.serving import make_server

from triagebot.github import client as github
from triagebot.github.ratelimit import QuotaTracker, WritePacer
from triagebot.learning.live import LiveEngine, correct_by_command, make_indexer
from triagebot.learning.shared import SharedIndex, start_listener, start_trainer
from triagebot.learning.visibility import IndexKeeper
from triagebot.logs import emit, setup
from triagebot.service import housekeeping, rq_transport
from triagebot.service import jobs as handlers
from triagebot.service.app import create_app
from triagebot.service.assembly import build_engine, prepare_index, renderer, shared_index
from triagebot.service.jobs import Deps
from triagebot.service.worker import Worker, WorkerThread, start_threads, stop_workers
from triagebot.settings import DEFAULT_ENV_FILE, Settings
from triagebot.store.db import Database
from triagebot.store.queue import Queue
from triagebot.store.records import Store
from triagebot.store.write_ledger import DbLedger

log = logging.getLogger("triagebot.service.wiring")


def open_store(settings: Settings) -> Store:
    """The process's store: PostgreSQL sessions come from one pool of ``db_pool_size``, so build
    it once per process and share it (the receiver and the embedded workers of ``serve`` do)."""
    return Store(Database(settings.db, pool_size=settings.db_pool_size))


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


def load_engine(settings: Settings) -> LiveEngine:
    """The service's engine: ``assembly.build_engine`` (the one the CLI uses too) over the live
    index in the data directory, seeded from the shipped index on first start (or, with
    ``Settings.index_in_database``, over the database's index: ``load_shared_engine``)."""
    if settings.index_in_database:
        return load_shared_engine(settings, open_store(settings))
    return build_engine(settings, prepare_index(settings))


def load_shared_engine(settings: Settings, store: Store) -> LiveEngine:
    """The engine over the database's index (every process sees every change), seeded from the
    shipped index on first start."""
    return build_engine(settings, shared=shared_index(settings, store.db))


def build_deps(settings: Settings, store: Store, **overrides: Any) -> Deps:
    """Real parts by default; tests and the CLI pass ``engine=``, ``port_for=``, ``indexer=``."""
    quota = overrides.pop("quota", None) or QuotaTracker()
    engine = overrides.pop("engine", None) or (
        load_shared_engine(settings, store) if settings.index_in_database else load_engine(settings))
    _share_llm_state(engine, store)
    port_for = overrides.pop("port_for", None) or github_port_factory(settings, store, quota)
    render = overrides.pop("render", None) or renderer(settings, engine)
    indexer = overrides.pop("indexer", None) or _indexer(engine, store)
    refresh = overrides.pop("refresh", None) or getattr(engine, "refresh", None) or (lambda: None)
    overrides.setdefault("keeper", _keeper(engine))
    overrides.setdefault("correct", _corrector(engine))
    overrides.setdefault("forget_llm", getattr(getattr(engine, "refiner", None), "forget", None))
    overrides.setdefault("llm_private_repos", settings.llm_private_repos)
    return Deps(store=store, port_for=port_for, engine=engine, bot_login=settings.bot_login,
                render=render, indexer=indexer, paused=quota.resume_in, refresh=refresh, **overrides)


def _share_llm_state(engine: Any, store: Store) -> None:
    """The LLM's answer cache and hourly budget live in the service's database, shared by every
    worker process on every machine (per installation, as the README says), not in one process."""
    keep = getattr(getattr(engine, "refiner", None), "keep_state_in", None)
    if callable(keep):
        keep(store.db)


def _keeper(engine: Any) -> Any:
    """Visibility changes and uninstalls reach the index through the engine's index (``learning``
    owns how); an engine without one (a test fake) has nothing to keep current."""
    return IndexKeeper(engine) if hasattr(engine, "index") else None


def _indexer(engine: Any, store: Store) -> Any:
    """Closed-as-completed issues join the index (the learning module owns how); only a live
    engine, which follows the index directory, can take them."""
    return make_indexer(engine, store) if isinstance(engine, LiveEngine) else None


def _corrector(engine: Any) -> Any:
    """Commands' corrections reach the index of a live engine (and, through the database, every
    other process's); a test fake has none."""
    if not isinstance(engine, LiveEngine):
        return None

    def correct(repo: str, number: int, dimension: str, new_id: str) -> bool:
        return correct_by_command(engine, repo, number, dimension, new_id)

    return correct


def start_learning(settings: Settings, deps: Deps, stop: threading.Event) -> threading.Thread | None:
    """The trainer of a process whose engine keeps its index in the database: every worker
    process runs one, and the database lease lets one at a time refit (never a job)."""
    live = getattr(deps.engine, "live", None)
    if not isinstance(live, SharedIndex):
        return None
    start_listener(live, stop)  # PostgreSQL: changes are applied as they commit, not at the next job
    return start_trainer(live, settings.retrain_interval, stop)


def make_worker(settings: Settings, deps: Deps, **kwargs: Any) -> Worker:
    queue = Queue(deps.store.db, max_attempts=settings.max_attempts, lease_s=settings.job_lease)
    return Worker(queue, lambda job: handlers.run(deps, job), **kwargs)


def run_workers(settings: Settings, count: int, stop: threading.Event | None = None,
                store: Store | None = None, **overrides: Any) -> list[WorkerThread]:
    """Start ``count`` worker threads (``triagebot worker`` or embedded in ``serve``)."""
    store = store or open_store(settings)
    deps = build_deps(settings, store, **overrides)
    stop = stop or threading.Event()
    housekeeping.start(store, _app_client_factory(settings), settings.reconcile_interval, stop)
    start_learning(settings, deps, stop)
    return start_threads(lambda: make_worker(settings, deps), count, stop)


def _app_client_factory(settings: Settings) -> Callable[[], Any] | None:
    """Reconciling needs the App's own credentials; without them only the purge runs."""
    if not (settings.app_id and settings.private_key.get_secret_value()):
        return None

    def make() -> Any:
        return github.app_client(settings)

    return make


@contextmanager
def stop_signals(on_stop: Callable[[], None]) -> Iterator[None]:
    """SIGTERM (``docker stop``, systemd) and SIGINT call ``on_stop`` instead of killing the
    process mid-job; the previous handlers come back afterwards. Signals can only be caught on
    the main thread: elsewhere (a test running the loop in a thread) nothing is installed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda _signum, _frame: on_stop())
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8080,
          workers: int | None = None, stop: threading.Event | None = None,
          **overrides: Any) -> None:
    """Development server: werkzeug plus embedded worker threads. Use gunicorn in production.

    The listener answers at once: the receiver needs no model, so the engine (``build_engine``
    over the live index, through ``run_workers``) loads in the background and the workers start
    when it is ready (a restart used to refuse webhooks for the 1-30 s the model took to load;
    GitHub does not retry them). ``/healthz`` says ``index_loaded: false`` meanwhile. SIGTERM
    (or ``stop``) closes the listener, lets the workers finish their jobs (``stop_grace``) and
    hands back what is still running."""
    setup()
    settings.require_serving()
    stop = stop or threading.Event()
    store = open_store(settings)  # one pool for the receiver and the workers
    count = settings.workers if workers is None else workers
    threads: list[WorkerThread] = []
    loaded, failed = threading.Event(), []
    index_loaded = loaded.is_set if count > 0 else None
    server = make_server(host, port, create_wsgi(settings, store, index_loaded), threaded=True)

    def load_then_work() -> None:
        try:
            threads.extend(run_workers(settings, count, stop, store=store, **overrides))
            loaded.set()
            emit(log, "engine loaded; workers started", workers=count)
        except Exception as exc:  # noqa: BLE001 - reported, then the server stops and re-raises
            failed.append(exc)
            emit(log, "engine failed to load", logging.ERROR, error=f"{type(exc).__name__}: {exc}")
            stop.set()

    def shut_down_on_stop() -> None:  # shutdown() must not run on serve_forever's thread
        stop.wait()
        server.shutdown()

    threading.Thread(target=shut_down_on_stop, name="triagebot-shutdown", daemon=True).start()
    try:
        with stop_signals(stop.set):
            if count > 0:  # a receiver-only process (workers elsewhere) never loads the model
                threading.Thread(target=load_then_work, name="triagebot-engine", daemon=True).start()
            emit(log, "listening", host=host, port=server.server_port)
            server.serve_forever()
    finally:
        stop.set()
        stop_workers(threads, stop, settings.stop_grace)
    if failed:
        raise failed[0]


def create_wsgi(settings: Settings, store: Store | None = None,
                index_loaded: Callable[[], bool] | None = None) -> Flask:
    """The web tier does not load the engine; healthz reports whether the index is on disk (or,
    in ``serve``, whether the embedded workers' engine is loaded)."""
    store = store or open_store(settings)
    if settings.index_in_database:  # the review page reads and corrects the database's index
        live = shared_index(settings, store.db)
        return create_app(settings, store=store, queue=rq_transport.web_queue(settings, store.db),
                          index_loaded=index_loaded or (lambda: bool(live.store.meta())), live=live)
    index = prepare_index(settings)  # the review page reads and corrects it
    return create_app(settings, store=store, queue=rq_transport.web_queue(settings, store.db),
                      index_loaded=index_loaded or index.is_dir)


def wsgi() -> Flask:
    """gunicorn entry point (``triagebot.service.wiring:wsgi()``): reads the environment (and
    ``.env`` in the working directory) once, here."""
    setup()
    return create_wsgi(Settings.from_env(env_file=DEFAULT_ENV_FILE))


def work(settings: Settings, count: int | None = None, **overrides: Any) -> None:
    """``triagebot worker``: worker threads only (the web tier runs under gunicorn); blocks until
    interrupted. With TRIAGEBOT_QUEUE_URL: one RQ worker woken through Redis (see rq_transport)."""
    setup()
    if settings.queue_url:
        _ = rq_transport.transport_for(settings).rq  # a bad URL or missing rq fails before the engine loads
        deps = build_deps(settings, open_store(settings), **overrides)
        start_learning(settings, deps, threading.Event())
        rq_transport.work(settings, make_worker(settings, deps))
        return
    stop = threading.Event()
    threads: list[WorkerThread] = []
    try:
        with stop_signals(stop.set):  # before the first claim: a stop never kills a job
            threads = run_workers(settings, settings.workers if count is None else max(1, count),
                                  stop, **overrides)
            while not stop.wait(1.0) and any(thread.is_alive() for thread in threads):
                pass
    finally:
        stop_workers(threads, stop, settings.stop_grace)


def run_rq_job(job_id: int) -> str:
    """RQ entry point: claim job ``job_id`` in the database and run it like the polling worker.
    A plain ``rq worker`` process has no bound worker yet: it builds one from the environment."""
    worker = rq_transport.bound_worker()
    if worker is None:
        settings = Settings.from_env(env_file=DEFAULT_ENV_FILE)
        worker = make_worker(settings, build_deps(settings, open_store(settings)))
        rq_transport.bind(worker)
    job = worker.run_once(int(job_id))
    return "not claimable (done, cancelled or leased elsewhere)" if job is None else "ran"
