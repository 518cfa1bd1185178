"""Shared bits of the bench scripts: machine facts, medians, a plain table, an open-loop sender."""
from __future__ import annotations

import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("TRIAGEBOT_BENCH_DATA",
                          str(Path(__file__).resolve().parents[2] / "shared" / "data" / "issues.jsonl")))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    versions = []
    for pkg in ("torch", "onnxruntime", "faiss-cpu", "sentence-transformers", "numpy", "flask"):
        try:
            versions.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            pass
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}; "
            f"{'; '.join(versions)}; load average at start {load}")


def median(values: Sequence[float]) -> float:
    return round(statistics.median(values), 2) if values else float("nan")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def run_json(args: Sequence[str], env: dict[str, str] | None = None, timeout: float = 900) -> Any:
    """Run a child Python (fresh process: fair load times) and parse its last stdout line."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                         env=env, cwd=env["PYTHONPATH"])  # cwd first on sys.path for -c
    if out.returncode != 0:
        raise RuntimeError(f"{args} failed: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def rss_mb(pid: int | None = None) -> float:
    status = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    return round(kb / 1024, 1)


def open_loop(port: int, requests: Sequence[tuple[bytes, dict[str, str]]], rate: float,
              senders: int) -> tuple[Any, Counter[str], float]:
    """POST each (body, headers) to 127.0.0.1:``port``/webhook, request i due at start + i/rate
    (open loop: a slow server does not slow the arrivals). Returns the latency of each request in
    ms from its due moment (numpy array), the answers counted by status (or exception name), and
    the wall time."""
    import numpy as np

    lat = np.full(len(requests), np.nan)
    statuses: Counter[str] = Counter()
    start = time.perf_counter() + 0.2
    cursor, lock = iter(range(len(requests))), threading.Lock()

    def sender() -> None:
        while True:
            with lock:
                i = next(cursor, None)
            if i is None:
                return
            due = start + i / rate
            time.sleep(max(0.0, due - time.perf_counter()))
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                conn.request("POST", "/webhook", body=requests[i][0], headers=requests[i][1])
                resp = conn.getresponse()
                resp.read()
                status = str(resp.status)
            except OSError as exc:
                status = type(exc).__name__
            finally:
                conn.close()
            with lock:
                statuses[status] += 1
            lat[i] = (time.perf_counter() - due) * 1000

    threads = [threading.Thread(target=sender) for _ in range(senders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return lat, statuses, time.perf_counter() - start
