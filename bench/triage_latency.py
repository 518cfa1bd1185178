"""Offline end-to-end triage latency per embedder backend (``triagebot.cli.bench.bench_triage``, what
``triagebot bench triage`` runs).

    .venv/bin/python bench/triage_latency.py [--runs 3] [--limit 300] [--index DIR]

Each run is a fresh process: load the seed index, warm up, triage --limit dev issues once each.
Runs of the configurations are interleaved (A B C A B C ...) so that load from other jobs on the
machine falls on all of them alike. ``--before DIR`` adds a row for an older checkout of the
project (e.g. ``git archive <commit> | tar -x -C DIR``; copy triagebot/bench.py into it), run
the same way. The table shows medians over runs of p50/p95/p99, throughput, engine load and the
mean time per stage."""
from __future__ import annotations

import argparse

from _common import DATA, ROOT, machine, median, run_json, table


def _one(args: argparse.Namespace, env: dict[str, str]) -> dict:
    code = ("import json, sys; from pathlib import Path; from triagebot.cli.bench import bench_triage;"
            "from triagebot.engine.dataset import read_labelled;"
            "print(json.dumps(bench_triage(Path(sys.argv[1]), read_labelled(sys.argv[2])[:int(sys.argv[3])])))")
    return run_json(["-c", code, args.index, str(DATA), str(args.limit)], env=env)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--index", default=str(ROOT / "index"))
    parser.add_argument("--backends", default="torch,onnx,onnx-int8")
    parser.add_argument("--before", default="", help="an older checkout to measure too")
    args = parser.parse_args()
    print(machine())
    configs = [(b, {"TRIAGEBOT_EMBEDDER": b}) for b in args.backends.split(",")]
    if args.before:
        configs.insert(0, ("before (torch, old code)", {"PYTHONPATH": args.before}))
    results: dict[str, list[dict]] = {name: [] for name, _ in configs}
    for _ in range(args.runs):
        for name, env in configs:
            results[name].append(_one(args, env))
    rows = []
    for name, runs in results.items():
        stage = {k: median([r["mean_ms_by_stage"][k] for r in runs]) for k in runs[0]["mean_ms_by_stage"]}
        rows.append([name, runs[0]["n"]] + [median([r[k] for r in runs]) for k in
                    ("p50_ms", "p95_ms", "p99_ms", "issues_per_s", "load_s")]
                    + [" / ".join(f"{v:.1f}" for v in stage.values())])
    print(table(["backend", "n", "p50 ms", "p95 ms", "p99 ms", "issues/s", "engine load s",
                 "mean ms embed / search / other"], rows))


if __name__ == "__main__":
    main()
