"""Memory soak of ``triagebot serve``: post N issues.opened deliveries at a steady rate while the
embedded workers drain them; sample the server's resident memory throughout.

    .venv/bin/python bench/soak.py [--jobs 10000] [--rate 200] [--engine fixed|real]

Bounded: gives up after --timeout seconds. "fixed" isolates the service (receiver, SQLite queue,
handlers, rendering) from the model; "real" uses the seed index and the configured embedder."""
from __future__ import annotations

import argparse
import sys
import threading
import time

from webhook_load import Server, deliveries, load

from _common import machine, table


def soak(engine: str, jobs: int, rate: float, timeout: float, workers: int = 2) -> dict:
    server = Server(engine, workers)
    samples: list[tuple[float, int, float]] = []  # (seconds, jobs done, RSS MB)
    posted = [0]
    try:
        idle = server.rss()
        start = time.perf_counter()
        sender = threading.Thread(target=lambda: posted.__setitem__(0, load(
            server.port, deliveries(jobs), rate)["ok"]))
        sender.start()
        while True:
            time.sleep(1.0)
            elapsed = time.perf_counter() - start
            depth = server.depth()
            sent = min(jobs, int(elapsed * rate))
            samples.append((elapsed, max(0, sent - depth), server.rss()))
            if (not sender.is_alive() and depth == 0) or elapsed > timeout:
                break
        sender.join()
        done = posted[0] - server.depth()
        return {"engine": engine, "jobs": jobs, "done": done, "seconds": round(elapsed, 1),
                "idle": idle, "samples": samples}
    finally:
        server.stop()


def at_fraction(samples: list[tuple[float, int, float]], total: int, fraction: float) -> float:
    """RSS at the first sample where at least ``fraction`` of the jobs were done."""
    return next((rss for _, done, rss in samples if done >= fraction * total), samples[-1][2])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--engine", default="fixed")
    parser.add_argument("--timeout", type=float, default=240.0)
    args = parser.parse_args()
    print(machine())
    r = soak(args.engine, args.jobs, args.rate, args.timeout)
    marks = [0.1, 0.25, 0.5, 0.75, 1.0]
    rss = [at_fraction(r["samples"], args.jobs, f) for f in marks]
    print(f"  {r['done']}/{args.jobs} jobs done in {r['seconds']} s", file=sys.stderr)
    print(table(["engine", "jobs done", "seconds", "RSS idle MB"]
                + [f"RSS at {int(f * 100)}% MB" for f in marks] + ["growth 10%->100% MB"],
                [[r["engine"], f"{r['done']}/{args.jobs}", r["seconds"], r["idle"], *rss,
                  round(rss[-1] - rss[0], 1)]]))


if __name__ == "__main__":
    main()
