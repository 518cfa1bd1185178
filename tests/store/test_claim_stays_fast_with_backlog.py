"""Issue #13: the SQLite claim stays fast with 100,000 jobs queued. It runs under the write lock,
so its cost is paid by every worker and by the receiver's inserts; one query with OR gathered and
sorted every due job (~100 ms a claim at 100,000 queued). Checked through the query plans of the
statements a claim actually runs (no full scan, no sort of the backlog) and their time."""
from __future__ import annotations

import statistics
import time
from pathlib import Path

from triagebot.store.db import Database
from triagebot.store.queue import JobSpec, Queue

BACKLOG = 100_000


def backlog(path: Path, now: float) -> Database:
    db = Database(path)
    rows = [("triage", "{}", f"triage:o/r#{i}", "queued", 0, now - 60 + i * 1e-4, 1, "o/r", i, now, now)
            for i in range(BACKLOG)]
    with db.transaction():
        db.conn.executemany(
            "INSERT INTO jobs (kind, payload, dedupe_key, status, attempts, run_after, "
            "installation_id, repo, number, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            rows)
    return db


def test_claim_plans_use_indexes_and_take_milliseconds_at_100k_queued(tmp_path: Path) -> None:
    now = time.time()
    db = backlog(tmp_path / "big.sqlite3", now)
    queue = Queue(db, clock=lambda: now)
    for _ in range(3):  # a few running jobs, one of them with an expired lease
        queue.claim()
    db.execute("UPDATE jobs SET lease_until = ? WHERE id = 1", (now - 1,))
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    job = queue.claim()
    db.conn.set_trace_callback(None)
    assert job is not None and job.id == 1  # the expired lease is the oldest ready job
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT") and "FROM jobs" in s]
    assert selects
    for sql in selects:
        plan = " / ".join(row[3] for row in db.query("EXPLAIN QUERY PLAN " + sql))
        assert "SCAN" not in plan, plan  # never a pass over the whole table
        # the backlog is walked in index order; only the few running jobs may be sorted
        assert "TEMP B-TREE" not in plan or "INDEX jobs_lease (status=? AND lease_until<?)" in plan, plan
    timings = []
    for _ in range(25):
        started = time.perf_counter()
        claimed = queue.claim()
        timings.append((time.perf_counter() - started) * 1000)
        assert claimed is not None
        queue.complete(claimed)
    # the query plans above are the guarantee; these bounds only catch a gross regression on a
    # loaded CI machine (speed itself is measured by bench/webhook_load.py)
    assert statistics.median(timings) < 100, timings
    started = time.perf_counter()
    assert len(queue.ready(limit=500)) == 500
    assert (time.perf_counter() - started) * 1000 < 500


def test_claim_order_and_twin_rule_are_unchanged(tmp_path: Path) -> None:
    """Oldest due first across both ways of being ready; a job whose twin holds a live lease
    waits (one run per issue)."""
    clock = [1000.0]
    queue = Queue(Database(tmp_path / "o.sqlite3"), lease_s=60, clock=lambda: clock[0])
    spec = JobSpec(kind="triage", dedupe_key="triage:o/r#1", repo="o/r", number=1)
    first = queue.enqueue(spec)
    assert queue.claim().id == first
    clock[0] += 30
    queue.enqueue(spec)  # queued twin of the running job
    other = queue.enqueue(JobSpec(kind="triage", dedupe_key="triage:o/r#2", repo="o/r", number=2))
    assert queue.claim().id == other  # the twin waits for the live lease
    clock[0] += 31  # the first job's lease expired: it is older than its twin
    assert queue.claim().id == first
    assert queue.claim() is None  # the twin waits again; the other job's lease is live
