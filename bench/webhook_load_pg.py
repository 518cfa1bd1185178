"""Webhook acknowledgements with PostgreSQL as the store (issue #13): signed issues.opened
deliveries at a fixed rate, open loop, on loopback, into ``triagebot serve`` backed by a
throwaway PostgreSQL; reports the ack latency, every non-2xx answer and the most database
sessions the server held at once (sampled from pg_stat_activity every 20 ms).

    (. scripts/pg-throwaway.sh; .venv/bin/python bench/webhook_load_pg.py --rate 300 --seconds 20;
     eval "$PG_STOP")

Scenarios: the receiver alone (the real ``python -m triagebot serve --workers 0``), and ``serve``
with 2 embedded worker threads draining the jobs meanwhile (GitHub replaced by an in-memory port
and the model by a fixed answer, as in bench/webhook_load.py, so the database is what is
measured). Each run gets a fresh schema and its own application_name, so only this server's
sessions are counted. ``TRIAGEBOT_BENCH_ROOT`` points the server at another checkout (to
measure a "before")."""
from __future__ import annotations

import argparse
import http.client
import os
import subprocess
import sys
import threading
import time
import uuid

import numpy as np
from webhook_load import SECRET, _free_port, deliveries

from _common import ROOT, machine, open_loop, table

SAMPLE_S = 0.02


def _pg() -> object:
    import psycopg

    return psycopg


def fresh_schema(url: str) -> tuple[str, str]:
    """(the server's URL: a new schema and application_name, that name)."""
    name = f"tb_bench_{uuid.uuid4().hex[:8]}"
    with _pg().connect(url, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute(f"CREATE SCHEMA {name}")
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options=-csearch_path%3D{name}&application_name={name}", name


def drop_schema(url: str, name: str) -> None:
    with _pg().connect(url, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute(f"DROP SCHEMA {name} CASCADE")


class SessionSampler:
    """The most sessions with our application_name seen at once, while it runs."""

    def __init__(self, url: str, name: str) -> None:
        self.url, self.name, self.peak = url, name, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with _pg().connect(self.url, autocommit=True) as conn:  # type: ignore[attr-defined]
            while not self._stop.wait(SAMPLE_S):
                count = conn.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE "
                                     "application_name = %s", (self.name,)).fetchone()[0]
                self.peak = max(self.peak, int(count))

    def __enter__(self) -> SessionSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def start_server(db: str, port: int, workers: int, pool: int) -> subprocess.Popen:  # type: ignore[type-arg]
    import tempfile

    code = os.environ.get("TRIAGEBOT_BENCH_ROOT", str(ROOT))
    env = {**os.environ, "PYTHONPATH": code, "TRIAGEBOT_LOG_LEVEL": "ERROR",
           "TRIAGEBOT_DATA_DIR": tempfile.mkdtemp(prefix="triagebot-bench-data-"),
           "TRIAGEBOT_WEBHOOK_SECRET": SECRET, "TRIAGEBOT_DB": db,
           "TRIAGEBOT_DB_POOL_SIZE": str(pool), "TRIAGEBOT_WORKERS": str(workers),
           "TRIAGEBOT_RECONCILE_INTERVAL": "0"}
    if workers == 0:  # the real command
        args = ["-m", "triagebot", "serve", "--port", str(port), "--workers", "0"]
    else:  # serve() with GitHub and the model replaced (bench/webhook_load.py's child)
        args = [__file__, "--serve", str(port), db, str(workers), str(pool)]
    proc = subprocess.Popen([sys.executable, *args], env=env, cwd=code,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = time.perf_counter()
    while not _healthy(port):
        if proc.poll() is not None or time.perf_counter() - started > 120:
            raise RuntimeError("server did not start")
        time.sleep(0.1)
    return proc


def _healthy(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/healthz")
        return conn.getresponse().status == 200
    except OSError:
        return False


def load(port: int, requests: list[tuple[bytes, dict[str, str]]], rate: float,
         senders: int = 48) -> dict:
    """Open loop: request i is due at start + i/rate; latency from that moment to the answer."""
    lat, statuses, wall = open_loop(port, requests, rate, senders)
    return {"n": len(requests), "statuses": dict(statuses), "rps": round(len(requests) / wall, 1),
            "p50": float(np.nanpercentile(lat, 50)), "p99": float(np.nanpercentile(lat, 99)),
            "max": float(np.nanmax(lat))}


def sqlite_scenario(rate: float, seconds: float) -> list:
    """The same receiver on SQLite at the same moment: what the machine allows, for comparison."""
    import tempfile

    port = _free_port()
    proc = start_server(f"{tempfile.mkdtemp(prefix='triagebot-bench-')}/q.sqlite3", port, 0, 1)
    try:
        result = load(port, deliveries(int(rate * seconds)), rate)
    finally:
        proc.terminate()  # our own child, by pid
        proc.wait(20)
    ok = sum(v for k, v in result["statuses"].items() if k in ("200", "202"))
    bad = {k: v for k, v in result["statuses"].items() if k not in ("200", "202")}
    return ["receiver only, SQLite (for comparison)", "-", result["n"], result["rps"],
            round(result["p50"], 1), round(result["p99"], 1), round(result["max"], 1),
            f"{ok}/{result['n']}", ", ".join(f"{k}: {v}" for k, v in sorted(bad.items())) or "none",
            "-", "-"]


def scenario(url: str, workers: int, pool: int, rate: float, seconds: float) -> list:
    db, name = fresh_schema(url)
    port = _free_port()
    proc = start_server(db, port, workers, pool)
    try:
        requests = deliveries(int(rate * seconds))
        with SessionSampler(url, name) as sampler:
            result = load(port, requests, rate)
            time.sleep(0.5)
        with _pg().connect(db, autocommit=True) as conn:  # type: ignore[attr-defined]
            jobs = conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
    finally:
        proc.terminate()  # our own child, by pid
        proc.wait(20)
        drop_schema(url, name)
    ok = sum(v for k, v in result["statuses"].items() if k in ("200", "202"))
    bad = {k: v for k, v in result["statuses"].items() if k not in ("200", "202")}
    where = "receiver only (`triagebot serve --workers 0`)" if workers == 0 else \
        f"`serve` + {workers} worker threads (fixed engine, in-memory GitHub)"
    return [where, pool, result["n"], result["rps"], round(result["p50"], 1),
            round(result["p99"], 1), round(result["max"], 1), f"{ok}/{result['n']}",
            ", ".join(f"{k}: {v}" for k, v in sorted(bad.items())) or "none", jobs, sampler.peak]


def serve_with_workers(port: int, db: str, workers: int, pool: int) -> None:
    """The child for the worker scenario: what ``triagebot serve`` runs, GitHub and model fixed."""
    from webhook_load import _wiring

    from triagebot.service import wiring

    settings, overrides = _wiring(db, "fixed")
    settings = settings.model_copy(update={"db_pool_size": pool, "reconcile_interval": 0})
    wiring.serve(settings, "127.0.0.1", port, workers=workers, **overrides)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", nargs=4, metavar=("PORT", "DB", "WORKERS", "POOL"))
    parser.add_argument("--db", default=os.environ.get("TRIAGEBOT_TEST_POSTGRES_URL", ""),
                        help="PostgreSQL URL (default TRIAGEBOT_TEST_POSTGRES_URL)")
    parser.add_argument("--rate", type=float, default=300.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--pool", type=int, default=10)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--sqlite", action="store_true", help="also the receiver on SQLite")
    args = parser.parse_args()
    if args.serve:
        serve_with_workers(int(args.serve[0]), args.serve[1], int(args.serve[2]), int(args.serve[3]))
        return
    if not args.db:
        sys.exit("webhook_load_pg: give --db postgresql://... or run under scripts/pg-throwaway.sh")
    print(machine())
    rows = [scenario(args.db, workers, args.pool, args.rate, args.seconds) for workers in args.workers]
    if args.sqlite:
        rows.append(sqlite_scenario(args.rate, args.seconds))
    print(table(["scenario", "pool", "requests", "req/s sent", "ack p50 ms", "ack p99 ms",
                 "ack max ms", "2xx", "other answers", "jobs stored", "max DB sessions"], rows))


if __name__ == "__main__":
    main()
