"""IssueIndex at scale on synthetic vectors: build, search latency and recall, incremental adds and
replacements, memory per million, save and load time.

    .venv/bin/python bench/index_scale.py [--sizes 10000,1000000] [--queries 300]

Vectors are clustered (5,000 random centres plus noise, normalised), like embeddings of issues
about a limited set of topics; queries are noisy copies of stored vectors (the near-duplicate case
triage cares about) and fresh draws from the clusters. Recall@10 is against exact search."""
from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time

import faiss
import numpy as np

from _common import machine, rss_mb, table

DIM = 384


def clustered(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, DIM), np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        x = centres[rng.integers(0, len(centres), m)] + 0.04 * rng.standard_normal((m, DIM), np.float32)
        out[start:start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def items(start: int, n: int) -> list:
    from triagebot.domain.models import IndexedIssue, Labels

    labels = Labels(stage="S4", symptom="4.1")
    return [IndexedIssue(repo="bench/repo", number=i, url=f"https://github.com/bench/repo/issues/{i}",
                         title=f"synthetic issue {i}", labels=labels) for i in range(start, start + n)]


def exact_top(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    scores = queries @ vectors.T
    return np.argsort(-scores, axis=1)[:, :k]


def run(n: int, n_queries: int) -> list:
    from triagebot.engine.index import IssueIndex

    rng = np.random.default_rng(0)
    centres = rng.standard_normal((5000, DIM)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    vectors = clustered(n, rng, centres)
    gc.collect()
    base = rss_mb()
    meta = items(0, n)
    t = time.perf_counter()
    index = IssueIndex("bench", DIM, 0)
    index.add(meta, vectors, np.zeros((n, 0), np.float32))
    build_s = time.perf_counter() - t
    del meta
    gc.collect()
    mem = rss_mb() - base  # metadata + the index's vectors + faiss + key dict
    near = vectors[rng.integers(0, n, n_queries // 2)] + 0.03 * rng.standard_normal((n_queries // 2, DIM), np.float32)
    fresh = clustered(n_queries - len(near), rng, centres)
    queries = np.vstack([near, fresh])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    lat, found = [], []
    for q in queries:
        t = time.perf_counter()
        hits = index.search(q, 10)
        lat.append((time.perf_counter() - t) * 1000)
        found.append([r for r, _ in hits])
    flat = faiss.IndexFlatIP(DIM)  # before: the exact index the project used at every size
    flat.add(vectors)
    flat_ms = []
    for q in queries[:30]:
        t = time.perf_counter()
        flat.search(q.reshape(1, -1), 10)
        flat_ms.append((time.perf_counter() - t) * 1000)
    del flat
    truth = exact_top(vectors, queries[:100], 10)
    recall = np.mean([len(set(f) & set(tr)) / 10 for f, tr in zip(found[:100], truth)])
    extra, extra_meta, add_ms = clustered(1000, rng, centres), items(n, 1000), []
    for i in range(1000):  # one at a time, as the webhook's index jobs add them
        t = time.perf_counter()
        index.add(extra_meta[i:i + 1], extra[i:i + 1], np.zeros((1, 0), np.float32))
        add_ms.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    index.add(items(0, 100), clustered(100, rng, centres), np.zeros((100, 0), np.float32))
    replace_ms = (time.perf_counter() - t) * 1000 / 100
    faiss_mb = len(faiss.serialize_index(index._faiss.index)) / 2**20 if index._faiss.kind != "flat" else 0.0
    assert len(index) == n + 1000
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        index.save(folder)
        save_s = time.perf_counter() - t
        kind = index._faiss.kind
        del index, vectors
        gc.collect()
        t = time.perf_counter()
        loaded = IssueIndex.load(folder)
        load_s = time.perf_counter() - t
        t = time.perf_counter()
        for q in queries[:50]:
            loaded.search(q, 10)
        after_load_ms = (time.perf_counter() - t) * 1000 / 50
    a = np.asarray(lat)
    return [f"{n:,}", kind, round(build_s, 1), round(float(np.median(flat_ms)), 2),
            round(float(np.percentile(a, 50)), 2),
            round(float(np.percentile(a, 99)), 2), round(float(recall), 3),
            f"{np.median(add_ms):.2f} / {np.mean(add_ms):.2f}", round(replace_ms, 3),
            round(mem * 1e6 / n, 0), round(faiss_mb * 1e6 / n, 0), round(save_s, 1), round(load_s, 1),
            round(after_load_ms, 2)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,1000000")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    print(machine())
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        rows.append(run(n, args.queries))
        print(f"  {n}: done", file=sys.stderr)
    print(table(["rows", "search", "build s", "before: flat p50 ms", "search p50 ms", "search p99 ms", "recall@10",
                 "add 1 issue ms p50 / mean", "replace ms/issue", "RSS MB per 1M rows (all)",
                 "of which faiss MB per 1M", "save s", "load s",
                 "search after load ms"], rows))


if __name__ == "__main__":
    main()
