"""Offline end-to-end triage latency per embedder backend, through ``triagebot bench triage``.

    /work/venv/bin/python bench/triage_latency.py [--runs 3] [--limit 300] [--index DIR]

Each run is a fresh process: load the seed index, warm up, triage --limit dev issues once each.
The table shows medians over runs of p50/p95/p99, throughput, engine load and the stage split."""
from __future__ import annotations

import argparse

from _common import DATA, ROOT, machine, median, run_json, table


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--index", default=str(ROOT / "index"))
    parser.add_argument("--backends", default="torch,onnx,onnx-int8")
    args = parser.parse_args()
    print(machine())
    rows = []
    for backend in args.backends.split(","):
        runs = [run_json(["-m", "triagebot.cli", "bench", "triage", "--index", args.index,
                          "--data", str(DATA), "--limit", str(args.limit), "--json"],
                         env={"TRIAGEBOT_EMBEDDER": backend}) for _ in range(args.runs)]
        stage = {k: median([r["mean_ms_by_stage"][k] for r in runs]) for k in runs[0]["mean_ms_by_stage"]}
        rows.append([backend, runs[0]["n"]] + [median([r[k] for r in runs]) for k in
                    ("p50_ms", "p95_ms", "p99_ms", "issues_per_s", "load_s")]
                    + [" / ".join(f"{v:.1f}" for v in stage.values())])
    print(table(["backend", "n", "p50 ms", "p95 ms", "p99 ms", "issues/s", "engine load s",
                 "mean ms embed / search / other"], rows))


if __name__ == "__main__":
    main()
