"""Embedding throughput per backend: issues/s when every issue fills the 256-token window, issues/s
on the real dev set, one-query latency, model load time, and cosine to the torch vectors.

    .venv/bin/python bench/ingest.py [--runs 3] [--backends torch,onnx,onnx-int8]

Each backend runs in a fresh process (fair load times); figures are medians over --runs."""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from _common import DATA, machine, median, run_json, table

FULL, QUERIES = 96, 40


def texts() -> tuple[list[str], list[str]]:
    """Dev-set signal texts, and long texts made of them that fill the 256-token window."""
    from triagebot.engine.dataset import read_labelled
    from triagebot.text import signal as text

    records = read_labelled(DATA)
    signals = [text.signal_text(r.title, r.body) or "empty issue" for r in records]
    words = " ".join(signals).split()
    full = [" ".join(words[i * 97:i * 97 + 400]) for i in range(FULL)]  # 400 words > 256 tokens
    return signals, full


def child(backend: str, runs: int) -> dict:
    from triagebot.engine.embed import default_embedder

    signals, full = texts()
    start = time.perf_counter()
    embedder = default_embedder(backend)
    load_s = time.perf_counter() - start
    out = {"backend": backend, "load_s": load_s, "full": [], "dev": [], "query_ms": []}
    for _ in range(runs):
        for key, batch in (("full", full), ("dev", signals)):
            embedder._cache.clear()  # measure embedding, not the content-hash cache
            t = time.perf_counter()
            vectors = embedder.encode(batch)
            out[key].append(len(batch) / (time.perf_counter() - t))
        embedder._cache.clear()
        lat = []
        for s in signals[:QUERIES]:
            t = time.perf_counter()
            embedder.encode([s])
            lat.append((time.perf_counter() - t) * 1000)
        out["query_ms"].append(float(np.median(lat)))
    np.save(f"/tmp/triagebot-bench-{backend}.npy", embedder.encode(signals))
    del vectors
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backends", default="torch,onnx,onnx-int8")
    parser.add_argument("--child", default="")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.runs)))
        return
    print(machine())
    rows, ref = [], None
    for backend in args.backends.split(","):
        r = run_json([__file__, "--child", backend, "--runs", str(args.runs)])
        vectors = np.load(f"/tmp/triagebot-bench-{backend}.npy")
        ref = vectors if backend == "torch" else ref
        cos = (vectors * ref).sum(axis=1) if ref is not None else np.array([np.nan])
        rows.append([backend, median(r["full"]), median(r["dev"]), median(r["query_ms"]),
                     round(r["load_s"], 2), f"{cos.min():.4f}", f"{cos.mean():.4f}"])
        print(f"  {backend}: done", file=sys.stderr)
    print(table(["backend", "issues/s @256 tokens", "issues/s dev set", "1 query ms",
                 "load s", "cos min vs torch", "cos mean"], rows))


if __name__ == "__main__":
    main()
