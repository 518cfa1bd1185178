"""The same store and queue on PostgreSQL. Runs when TRIAGEBOT_TEST_POSTGRES_URL names a throwaway
database (CI: initdb + pg_ctl on 127.0.0.1), and psycopg is installed; skipped otherwise."""
from __future__ import annotations

import os
import uuid

import pytest

from support.service import fixed_triage
from triagebot.store.queue import JobSpec, Queue

URL = os.environ.get("TRIAGEBOT_TEST_POSTGRES_URL", "")
pytestmark = pytest.mark.skipif(not URL, reason="TRIAGEBOT_TEST_POSTGRES_URL not set")


@pytest.fixture
def db():
    psycopg = pytest.importorskip("psycopg")
    from triagebot.store.db import Database

    schema = f"t_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in URL else "?"
    database = Database(f"{URL}{sep}options=-csearch_path%3D{schema}")
    yield database
    database.close()
    with psycopg.connect(URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_store_and_queue_on_postgres(db) -> None:
    from triagebot.store.records import Store

    store = Store(db)
    assert store.record_delivery("d", "issues", "opened") and not store.record_delivery("d", "issues", None)
    triage = fixed_triage().model_copy(update={"repo": "o/r", "number": 1})
    store.save_triage(triage, "alice", 5)
    store.save_triage(triage, "alice", 6)
    assert store.get_triage("o/r", 1).comment_id == 6
    clock = [1000.0]
    queue = Queue(db, max_attempts=2, lease_s=10, clock=lambda: clock[0])
    spec = JobSpec(kind="triage", dedupe_key="triage:o/r#1", repo="o/r", number=1)
    assert queue.enqueue(spec) is not None and queue.enqueue(spec) is None
    job = queue.claim()
    assert job and queue.claim() is None
    clock[0] += 11
    job = queue.claim()
    assert job.attempts == 2 and queue.fail(job, "boom") == "dead"
    assert queue.accept("d2", "issues", "opened", [spec]) and not queue.accept("d2", "issues", "opened", [spec])
