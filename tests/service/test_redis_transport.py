"""The Redis + RQ transport against a real redis-server (Debian package) started here on a free
127.0.0.1 port: signed deliveries through the real WSGI app, job ids pushed to Redis, an RQ
SimpleWorker (burst mode, in this process) running them through the real handlers with the fake
GitHub port. Skipped, with the reason, when redis-server or rq is not installed."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.clock import FakeClock
from support.service import BOT, SECRET, FakeEngine, RecordingPort, encode, issue_payload, live_server, post
from triagebot.github.errors import Forbidden, RateLimited
from triagebot.service import jobs as handlers
from triagebot.service import wiring as server
from triagebot.service.jobs import Deps
from triagebot.service.rq_transport import RedisQueue, Sweeper, Transport, transport_for, web_queue, work
from triagebot.service.worker import Worker
from triagebot.settings import ConfigError, Settings
from triagebot.store.queue import Queue
from triagebot.store.records import Store

REDIS_SERVER = shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if REDIS_SERVER is None:
        pytest.skip("redis-server not installed (Debian: apt-get install -y redis-server)")
    pytest.importorskip("rq", reason="rq not installed (pip install 'triagebot[redis]')")
    import redis

    port, workdir = _free_port(), tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(workdir)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        _wait_for_ping(redis.Redis.from_url(url), proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def _wait_for_ping(client, proc: subprocess.Popen) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if client.ping():
                return
        except Exception:  # noqa: BLE001 - not listening yet
            time.sleep(0.05)
    raise RuntimeError(f"redis-server did not answer PING (exit code {proc.poll()})")


@pytest.fixture
def env(redis_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Settings on a fresh SQLite file and an empty Redis; rq's signal handlers are undone."""
    import redis

    redis.Redis.from_url(redis_url).flushall()
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    settings = Settings(webhook_secret=SECRET, db=str(tmp_path / "a.db"), queue_url=redis_url,
                        app_slug="triagebot", data_dir=tmp_path / "data")
    gh = RecordingPort()
    gh.add_issue("org/repo", 7)
    yield settings, gh
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def worker_clock() -> FakeClock:
    return FakeClock(time.time() + 60)  # ahead of the web tier's real clock: its jobs are due


def make_worker(settings: Settings, gh: RecordingPort, clock: FakeClock | None = None,
                max_attempts: int = 5) -> Worker:
    now = clock or time.time  # one clock for the queue and the store (installation pauses)
    store = Store(settings.db, clock=now)
    deps = Deps(store=store, port_for=lambda _i: gh, engine=FakeEngine(), bot_login=BOT, clock=now)
    queue = Queue(store.db, max_attempts=max_attempts, clock=now)
    return Worker(queue, lambda job: handlers.run(deps, job))


def rq_count(settings: Settings) -> int:
    return transport_for(settings).rq.count


def deliver(settings: Settings, delivery: str | None = None) -> int:
    with live_server(server.create_wsgi(settings)) as addr:
        return post(addr, encode(issue_payload("opened")), delivery=delivery)[0]


def test_delivery_is_pushed_and_an_rq_worker_posts_exactly_one_comment(env) -> None:
    settings, gh = env
    assert deliver(settings, "d-1") == 202
    assert deliver(settings, "d-1") == 200  # redelivery: no second job, no second push
    queue = Queue(Store(settings.db).db)
    assert [(j.kind, j.status) for j in queue.jobs()] == [("triage", "queued")]
    assert rq_count(settings) == 1
    work(settings, server.make_worker(settings, server.build_deps(
        settings, Store(settings.db), engine=FakeEngine(), port_for=lambda _i: gh)), burst=True)
    [job] = queue.jobs()
    assert job.status == "done" and job.attempts == 1
    assert len(gh.bot_comments("org/repo", 7)) == 1
    redis = transport_for(settings).rq.connection
    assert rq_count(settings) == 0 and redis.keys("rq:job:*") == []  # result_ttl=0: nothing kept


def test_rate_limited_job_is_rescheduled_by_the_sweeper_then_completes(env) -> None:
    settings, gh = env
    clock = worker_clock()
    worker = make_worker(settings, gh, clock)
    gh.fail["get_issue"] = [RateLimited("secondary limit", retry_after=120)]
    assert deliver(settings) == 202
    work(settings, worker, burst=True)
    [job] = worker.queue.jobs()  # waiting on GitHub spends no attempt (issue #13)
    assert (job.status, job.attempts) == ("queued", 0) and "RateLimited" in (job.last_error or "")
    assert gh.bot_comments("org/repo", 7) == [] and rq_count(settings) == 0
    sweeper = Sweeper(worker.queue, transport_for(settings))
    clock.now += 100
    assert sweeper.sweep() == 0  # GitHub's wait is not over: nothing to push
    clock.now += 30
    work(settings, worker, burst=True)  # sweeps first, then runs the pushed attempt
    [job] = worker.queue.jobs()
    assert (job.status, job.attempts) == ("done", 1)
    assert len(gh.bot_comments("org/repo", 7)) == 1


def test_job_is_dead_lettered_after_max_attempts_and_never_pushed_again(env) -> None:
    settings, gh = env
    clock = worker_clock()
    worker = make_worker(settings, gh, clock, max_attempts=2)
    # a failure of the job itself (a 5xx only waits, issue #13: test_github_outages_lose_nothing)
    gh.fail["get_issue"] = [Forbidden("403 resource not accessible"), Forbidden("403 again")]
    assert deliver(settings) == 202
    work(settings, worker, burst=True)
    clock.now += 3600
    work(settings, worker, burst=True)
    [job] = worker.queue.jobs("dead")
    assert job.attempts == 2 and "403 again" in (job.last_error or "")
    assert Sweeper(worker.queue, transport_for(settings)).sweep() == 0
    assert gh.bot_comments("org/repo", 7) == [] and rq_count(settings) == 0


def test_expired_lease_of_a_dead_worker_is_swept_and_finished_once(env) -> None:
    settings, gh = env
    clock = worker_clock()
    worker = make_worker(settings, gh, clock)
    assert deliver(settings) == 202
    assert worker.queue.claim() is not None  # a worker took it, then died (kill -9)
    transport_for(settings).rq.empty()
    work(settings, worker, burst=True)
    assert worker.queue.jobs()[0].status == "running"  # leased: not pushed, not run
    clock.now += worker.queue.lease_s + 1
    work(settings, worker, burst=True)
    [job] = worker.queue.jobs()
    assert (job.status, job.attempts) == ("done", 2)
    assert len(gh.bot_comments("org/repo", 7)) == 1


def test_duplicate_pushes_run_the_job_once(env) -> None:
    settings, gh = env
    worker = make_worker(settings, gh)
    assert deliver(settings) == 202
    [job] = worker.queue.jobs()
    transport = transport_for(settings)
    assert transport.push(job.id, 0) is False  # this attempt is already in Redis
    transport.rq.enqueue("triagebot.service.wiring.run_rq_job", job.id, result_ttl=60)  # a racing sweeper
    work(settings, worker, burst=True)
    assert worker.queue.jobs()[0].attempts == 1
    assert len(gh.bot_comments("org/repo", 7)) == 1


def test_redis_down_still_acks_and_the_sweeper_pushes_later(env, tmp_path: Path) -> None:
    settings, gh = env
    down = settings.model_copy(update={"queue_url": f"redis://127.0.0.1:{_free_port()}/0"})
    assert deliver(down) == 202  # durable in the database; GitHub gets its 2xx
    assert rq_count(settings) == 0
    worker = make_worker(settings, gh)
    work(settings, worker, burst=True)
    assert worker.queue.jobs()[0].status == "done"
    assert len(gh.bot_comments("org/repo", 7)) == 1


def test_unset_queue_url_keeps_the_plain_database_queue(tmp_path: Path) -> None:
    settings = Settings(webhook_secret=SECRET, db=str(tmp_path / "a.db"))
    queue = web_queue(settings, Store(settings.db).db)
    assert type(queue) is Queue and queue.max_attempts == settings.max_attempts
    redis_settings = settings.model_copy(update={"queue_url": "redis://127.0.0.1:1/0"})
    assert isinstance(web_queue(redis_settings, Store(settings.db).db), RedisQueue)


@pytest.mark.parametrize("url", ["http://:hunter2@localhost:6379", "localhost:6379", "amqp://x"])
def test_malformed_queue_url_is_one_clear_config_error(url: str) -> None:
    with pytest.raises(ConfigError, match="TRIAGEBOT_QUEUE_URL") as err:
        Transport(url, lease_s=300)
    assert "hunter2" not in str(err.value) and "\n" not in str(err.value)


def test_triagebot_worker_with_queue_url_runs_the_rq_path(env, monkeypatch) -> None:
    """``triagebot worker``'s wiring (server.work) picks the RQ worker when the URL is set."""
    import logging

    from triagebot.service import rq_transport as rq_queue

    settings, gh = env
    assert deliver(settings) == 202
    real_work = rq_queue.work
    monkeypatch.setattr(rq_queue, "work", lambda s, w: real_work(s, w, burst=True))
    root = logging.getLogger("triagebot")
    saved = (root.handlers[:], root.propagate, root.level)
    try:
        server.work(settings, engine=FakeEngine(), port_for=lambda _i: gh)
    finally:  # setup() configured production logging; give pytest its logger back
        root.handlers[:], root.propagate = saved[0], saved[1]
        root.setLevel(saved[2])
    assert len(gh.bot_comments("org/repo", 7)) == 1


def test_plain_rq_worker_builds_its_worker_from_the_environment(env, monkeypatch) -> None:
    """``rq worker -w rq.worker.SimpleWorker``: run_rq_job has no bound worker and reads the env."""
    from triagebot.service import rq_transport as rq_queue

    settings, gh = env
    assert deliver(settings) == 202
    monkeypatch.setenv("TRIAGEBOT_DB", settings.db)
    monkeypatch.setattr(server, "build_deps", lambda s, store: Deps(
        store=store, port_for=lambda _i: gh, engine=FakeEngine(), bot_login=BOT))
    monkeypatch.setattr(rq_queue, "_bound", {})
    [job] = Queue(Store(settings.db).db).jobs()
    assert server.run_rq_job(job.id) == "ran"
    assert server.run_rq_job(job.id).startswith("not claimable")
    assert len(gh.bot_comments("org/repo", 7)) == 1


def test_missing_rq_is_one_clear_config_error(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "rq", None)
    with pytest.raises(ConfigError, match=r"pip install 'triagebot\[redis\]'"):
        Transport("redis://127.0.0.1:1/0", lease_s=300).push(1, 0)


PG_URL = os.environ.get("TRIAGEBOT_TEST_POSTGRES_URL", "")


@pytest.mark.skipif(not PG_URL, reason="TRIAGEBOT_TEST_POSTGRES_URL not set")
def test_redis_transport_with_state_in_postgres(env) -> None:
    """The scaled-out shape: deliveries and jobs in PostgreSQL, Redis waking the RQ worker."""
    psycopg = pytest.importorskip("psycopg")
    settings, gh = env
    schema = f"r_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in PG_URL else "?"
    settings = settings.model_copy(update={"db": f"{PG_URL}{sep}options=-csearch_path%3D{schema}"})
    try:
        clock = worker_clock()
        worker = make_worker(settings, gh, clock)
        gh.fail["get_issue"] = [RateLimited("secondary limit", retry_after=60)]
        assert deliver(settings, "pg-1") == 202 and deliver(settings, "pg-1") == 200
        work(settings, worker, burst=True)
        clock.now += 61
        work(settings, worker, burst=True)
        [job] = worker.queue.jobs()  # the rate limit spent no attempt (issue #13)
        assert (job.status, job.attempts) == ("done", 1)
        assert len(gh.bot_comments("org/repo", 7)) == 1
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
