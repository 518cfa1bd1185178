"""Issue #13: with PostgreSQL the receiver borrows sessions from a bounded pool instead of opening
one per webhook (100 requests opened 100 sessions; at 300 req/s deliveries got 500 "too many
clients"). Real HTTP with signed deliveries into the throwaway PostgreSQL; sessions are counted
in pg_stat_activity. Skipped without TRIAGEBOT_TEST_POSTGRES_URL."""
from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from support.service import SECRET, encode, issue_payload, live_server, post
from triagebot.service.app import create_app
from triagebot.settings import Settings

URL = os.environ.get("TRIAGEBOT_TEST_POSTGRES_URL", "")
pytestmark = pytest.mark.skipif(not URL, reason="TRIAGEBOT_TEST_POSTGRES_URL not set")
POOL = 4


@pytest.fixture
def pg_url() -> Iterator[tuple[str, str]]:
    """(URL of a fresh schema with its own application_name, that name)."""
    psycopg = pytest.importorskip("psycopg")
    pytest.importorskip("psycopg_pool")
    schema = f"p_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in URL else "?"
    yield f"{URL}{sep}options=-csearch_path%3D{schema}&application_name={schema}", schema
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def sessions(name: str) -> int:
    import psycopg

    with psycopg.connect(URL, autocommit=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = %s",
                            (name,)).fetchone()[0]


def test_receiver_sessions_stay_within_the_pool_under_concurrent_deliveries(
        pg_url: tuple[str, str]) -> None:
    from triagebot.service import wiring

    url, name = pg_url
    settings = Settings(webhook_secret=SECRET, db=url, db_pool_size=POOL)
    store = wiring.open_store(settings)
    seen, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            seen[0] = max(seen[0], sessions(name))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        with live_server(create_app(settings, store=store)) as addr:
            bodies = [encode(issue_payload("opened", number=n)) for n in range(1, 151)]
            with ThreadPoolExecutor(max_workers=30) as pool:
                statuses = list(pool.map(lambda body: post(addr, body)[0], bodies))
            seen[0] = max(seen[0], sessions(name))
    finally:
        done.set()
        sampler.join()
    assert statuses == [202] * 150
    assert store.db.query("SELECT COUNT(*) FROM jobs")[0][0] == 150
    assert 1 <= seen[0] <= POOL, f"{seen[0]} sessions for a pool of {POOL}"
    store.db.close()
    deadline = time.monotonic() + 10  # a closed session leaves pg_stat_activity a moment later
    while sessions(name) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sessions(name) == 0


def test_a_transaction_holds_one_session_and_nested_work_reuses_it(pg_url: tuple[str, str]) -> None:
    from triagebot.store.db import Database
    from triagebot.store.queue import JobSpec, Queue

    url, name = pg_url
    db = Database(url, pool_size=1)  # a second borrow inside the transaction would time out
    queue = Queue(db)
    spec = JobSpec(kind="triage", dedupe_key="triage:o/r#1", repo="o/r", number=1)
    assert queue.accept("d1", "issues", "opened", [spec])
    with db.transaction():
        db.execute("UPDATE jobs SET attempts = attempts + 1")
        with db.transaction():  # a savepoint on the same session
            db.execute("UPDATE jobs SET attempts = attempts + 1")
        assert db.query("SELECT attempts FROM jobs")[0][0] == 2
    assert sessions(name) == 1
    db.close()
