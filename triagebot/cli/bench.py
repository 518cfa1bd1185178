"""``triagebot bench triage``: per-issue latency of the offline pipeline, once warm.

Each issue is triaged once, in a process that has already loaded the model and index and
triaged a few warm-up issues (so the first call's lazy set-ups are not counted). Time is split
into embedding, search and the rest (classifier, rules, evidence, assembly) by wrapping the
engine's embedder and index, so a regression points at its stage."""
from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from triagebot.engine.dataset import read_labelled
from triagebot.engine.triage import Engine
from triagebot.settings import Settings

WARMUP = 5
STAGES = ("embed", "search")


def register(sub: Any) -> None:
    bench = sub.add_parser("bench", help="measure performance").add_subparsers(metavar="WHAT")
    triage = bench.add_parser("triage", help="per-issue triage latency (p50/p95/p99) and throughput")
    triage.add_argument("--index", type=Path, default=None, help="index directory (default: seed)")
    triage.add_argument("--data", required=True, type=Path, help="issues, one JSON a line")
    triage.add_argument("--limit", type=int, default=0, help="measure at most this many issues")
    triage.add_argument("--json", action="store_true", help="print one JSON object")
    triage.set_defaults(func=cmd_bench_triage)


class _Clock:
    """Accumulates seconds spent inside wrapped callables, per stage."""

    def __init__(self) -> None:
        self.spent = dict.fromkeys(STAGES, 0.0)

    def wrap(self, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[stage] += time.perf_counter() - start
        return timed


def cmd_bench_triage(args: argparse.Namespace, settings: Settings) -> int:
    records = read_labelled(args.data)
    records = records[: args.limit] if args.limit else records
    result = bench_triage(args.index or settings.cli_index, records)
    print(json.dumps(result) if args.json else format_result(result))
    return 0


def bench_triage(index_dir: Path, issues: list[Any]) -> dict[str, Any]:
    """Load once, warm up, then time ``Engine.triage`` per issue."""
    start = time.perf_counter()
    engine = Engine.load(index_dir)
    load_s = time.perf_counter() - start
    for issue in issues[:WARMUP]:
        engine.triage(issue.model_copy(update={"title": "warm-up " + issue.title}))
    clock = _Clock()
    engine.embedder.encode = clock.wrap("embed", engine.embedder.encode)  # type: ignore[method-assign]
    engine.index.search = clock.wrap("search", engine.index.search)  # type: ignore[method-assign]
    total, per_issue = time.perf_counter(), []
    for issue in issues:
        began = time.perf_counter()
        engine.triage(issue)
        per_issue.append((time.perf_counter() - began) * 1000)
    wall = time.perf_counter() - total
    return summarise(per_issue, wall, load_s, clock.spent, engine.embedder.name)


def summarise(ms: list[float], wall: float, load_s: float, spent: dict[str, float],
              embedder: str) -> dict[str, Any]:
    a = np.asarray(ms) if ms else np.zeros(1)
    per = {k: round(v * 1000 / max(1, len(ms)), 2) for k, v in spent.items()}
    per["other"] = round(float(a.mean()) - sum(per.values()), 2)
    return {
        "n": len(ms), "embedder": embedder, "load_s": round(load_s, 2),
        "p50_ms": round(float(np.percentile(a, 50)), 2), "p95_ms": round(float(np.percentile(a, 95)), 2),
        "p99_ms": round(float(np.percentile(a, 99)), 2), "max_ms": round(float(a.max()), 2),
        "mean_ms": round(float(a.mean()), 2), "issues_per_s": round(len(ms) / wall, 1) if wall else 0.0,
        "mean_ms_by_stage": per,
    }


def format_result(r: dict[str, Any]) -> str:
    stages = "  ".join(f"{k} {v:.1f}" for k, v in r["mean_ms_by_stage"].items())
    return (f"{r['n']} issues, embedder {r['embedder']}, engine load {r['load_s']:.2f} s\n"
            f"latency ms: p50 {r['p50_ms']:.1f}  p95 {r['p95_ms']:.1f}  p99 {r['p99_ms']:.1f}  "
            f"max {r['max_ms']:.1f}  (mean by stage: {stages})\n"
            f"throughput: {r['issues_per_s']:.1f} issues/s")
