"""Ingestion side by side: plain sentence-transformers fp32 (batch 32) against triagebot's embedder,
in one process, on the same texts, in interleaved rounds (issue #16).

    .venv/bin/python bench/ingest.py [--rounds 3] [--backend onnx-int8] [--triage 200] [--profile]

Two text sets: "synthetic", 600 texts of 8 to 400 words cut from the shared issues' words (a
spread of lengths up to and past the 256-token window), and "real", the signal texts of every
issue in the shared data (``signal_text(title, body)``, as ``engine.analysis`` embeds them). The
reference is ``SentenceTransformer.encode(batch_size=32)`` in fp32 with its own length sorting;
triagebot's embedder is ``default_embedder(--backend)`` with its content-hash cache cleared before
every pass. Rounds alternate reference, triagebot, reference, ... so load from other jobs falls on
both alike; the table shows the best round (least disturbed) and the median.

Besides wall-clock issues/s it prints CPU seconds per pass (process time, all threads): on a
shared machine wall time mostly measures the neighbours, CPU time far less, and the CPU-time
ratio is the closer estimate of the quiet-machine wall ratio (on a quiet machine both threads
are busy throughout). ``--profile`` adds ONNX Runtime's per-operator time on the real set (one
thread), which shows where the time goes. ``--triage N`` runs ``bench_triage`` (what
``triagebot bench triage`` runs) on the first N shared issues in a fresh process for p50/p99 warm.
The load average is printed at the start and at the end: quote ratios with it."""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence

import numpy as np

from _common import DATA, ROOT, machine, run_json, table

SYNTHETIC = 600
REF_BATCH = 32


def texts() -> dict[str, list[str]]:
    """The two text sets; deterministic, so runs on different days compare."""
    from triagebot.engine.dataset import read_labelled
    from triagebot.text import signal as text

    real = [text.signal_text(r.title, r.body) or "empty issue" for r in read_labelled(DATA)]
    words = " ".join(real).split()
    synthetic = []
    for i in range(SYNTHETIC):
        size = 8 + (i * 131) % 393  # 8..400 words, evenly spread, interleaved
        start = (i * 7919) % max(1, len(words) - size)
        synthetic.append(" ".join(words[start:start + size]))
    return {"synthetic": synthetic, "real": real}


def timed(fn: Callable[[list[str]], np.ndarray], batch: list[str]) -> tuple[float, float, np.ndarray]:
    wall, cpu = time.perf_counter(), time.process_time()
    vectors = fn(batch)
    return time.perf_counter() - wall, time.process_time() - cpu, np.asarray(vectors, dtype=np.float32)


def side_by_side(rounds: int, backend: str, threads: int) -> tuple[list[list[object]], dict[str, str]]:
    import torch
    from sentence_transformers import SentenceTransformer

    from triagebot.engine.embed import bundled_model_path, default_embedder
    from triagebot.engine.embed_onnx import OnnxEmbedder

    sets = texts()
    if threads:
        torch.set_num_threads(threads)
    reference = SentenceTransformer(bundled_model_path(), device="cpu")
    embedder = default_embedder(backend)
    if isinstance(embedder, OnnxEmbedder) and threads:
        embedder = OnnxEmbedder(embedder.variant, threads=threads)

    def plain(batch: list[str]) -> np.ndarray:
        return reference.encode(batch, batch_size=REF_BATCH, normalize_embeddings=True, convert_to_numpy=True)

    def ours(batch: list[str]) -> np.ndarray:
        embedder._cache.clear()  # type: ignore[attr-defined]  # measure embedding, not the cache
        return embedder.encode(batch)

    for fn in (plain, ours):  # warm-up: lazy inits, allocator arenas
        fn(sets["real"][:64])
    rows = []
    for name, batch in sets.items():
        runs: dict[str, list[tuple[float, float]]] = {"plain": [], "ours": []}
        vectors: dict[str, np.ndarray] = {}
        for _ in range(rounds):
            for key, fn in (("plain", plain), ("ours", ours)):
                wall, cpu, vectors[key] = timed(fn, batch)
                runs[key].append((wall, cpu))
        cos = (vectors["plain"] * vectors["ours"]).sum(axis=1)
        n = len(batch)
        best = {k: min(w for w, _ in v) for k, v in runs.items()}
        med = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
        cpu = {k: min(c for _, c in v) for k, v in runs.items()}
        rows.append([name, n, round(n / best["plain"], 1), round(n / best["ours"], 1),
                     f"{best['plain'] / best['ours']:.2f}x", f"{med['plain'] / med['ours']:.2f}x",
                     f"{cpu['plain']:.1f} / {cpu['ours']:.1f}", f"{cpu['plain'] / cpu['ours']:.2f}x",
                     f"{cos.min():.4f}", f"{cos.mean():.4f}", int((cos < 0.995).sum())])
    return rows, {"name": embedder.name}


def profile(variant: str, batch: Sequence[str]) -> list[list[object]]:
    """ONNX Runtime's own per-operator time for one pass over ``batch`` on one thread."""
    import onnxruntime as ort

    from triagebot.engine.embed_onnx import OnnxEmbedder, graph_path, session_options
    from triagebot.engine.model_files import bundled_model_path

    embedder = OnnxEmbedder(variant, threads=1)
    options = session_options(threads=1)
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "ort")
    embedder._session = ort.InferenceSession(str(graph_path(bundled_model_path(), variant)), options,
                                             providers=["CPUExecutionProvider"])
    embedder.encode(list(batch))
    trace = embedder._session.end_profiling()
    with open(trace, encoding="utf-8") as fh:
        events = json.load(fh)
    spent: collections.Counter[str] = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            spent[event["args"]["op_name"]] += event["dur"]
    total = sum(spent.values()) or 1
    return [[op, round(us / 1e6, 2), f"{100 * us / total:.1f}%"]
            for op, us in spent.most_common() if us / total > 0.002]


def triage(limit: int) -> dict:
    code = ("import json, sys; from pathlib import Path; from triagebot.cli.bench import bench_triage;"
            "from triagebot.engine.dataset import read_labelled;"
            "print(json.dumps(bench_triage(Path(sys.argv[1]), read_labelled(sys.argv[2])[:int(sys.argv[3])])))")
    return run_json(["-c", code, str(ROOT / "index"), str(DATA), str(limit)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backend", default="", help="triagebot embedder (default: the configured one)")
    parser.add_argument("--triage", type=int, default=200, help="issues for triage p50/p99 (0: skip)")
    parser.add_argument("--profile", action="store_true", help="per-operator ONNX Runtime time, real set")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads for both sides (default: torch's and triagebot's own choice)")
    parser.add_argument("--tokens-per-batch", type=int, default=0,
                        help="triagebot's ONNX batches by this padded-token budget (embed_onnx.TOKENS_PER_BATCH)")
    args = parser.parse_args()
    print(machine())
    if args.tokens_per_batch:
        from triagebot.engine import embed_onnx

        embed_onnx.TOKENS_PER_BATCH = args.tokens_per_batch
    rows, info = side_by_side(args.rounds, args.backend or "", args.threads)
    print(f"triagebot embedder: {info['name']}; reference: sentence-transformers fp32, batch {REF_BATCH}; "
          f"threads: {args.threads or 'default'}; tokens per batch: {args.tokens_per_batch or 'off (32 texts)'}")
    print(table(["texts", "n", "plain ST issues/s", "triagebot issues/s", "ratio (best wall)",
                 "ratio (median wall)", "CPU s plain / triagebot", "ratio (CPU)", "cos min vs fp32",
                 "cos mean", "n cos < 0.995"], rows))
    if args.profile and "+onnx" in str(info["name"]):
        variant = str(info["name"]).rsplit("+", 1)[-1]
        print(f"\nONNX Runtime per-operator time, {variant}, real set, one thread:")
        print(table(["operator", "s", "share"], profile(variant, texts()["real"])))
    if args.triage:
        r = triage(args.triage)
        print(f"\ntriage warm, {r['n']} issues, {r['embedder']}: p50 {r['p50_ms']} ms, p99 {r['p99_ms']} ms "
              f"(embed / search / other mean ms: {' / '.join(str(v) for v in r['mean_ms_by_stage'].values())})")
    print("load average at end " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
