"""The faiss structure switches by size without changing what IssueIndex answers."""
from __future__ import annotations

import numpy as np
import pytest

from triagebot.domain.models import IndexedIssue, Labels
from triagebot.engine import ann
from triagebot.engine.index import FAISS_FILE, IssueIndex

DIM = 32
N = 6000


def clustered(n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, DIM))
    x = centres[rng.integers(0, 40, n)] + 0.35 * rng.normal(size=(n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def item(number: int, repo: str = "o/r") -> IndexedIssue:
    return IndexedIssue(repo=repo, number=number, url=f"https://github.com/{repo}/issues/{number}",
                        title=f"issue {number}", labels=Labels(stage="S1", symptom="1.1"))


def build(vectors: np.ndarray) -> IssueIndex:
    index = IssueIndex("test", DIM, 0)
    index.add([item(i) for i in range(len(vectors))], vectors, np.zeros((len(vectors), 0)))
    return index


@pytest.fixture
def small_flat_max(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann, "FLAT_MAX", 5000)


def test_flat_below_threshold_ivfpq_above(small_flat_max: None) -> None:
    assert build(clustered(4000))._faiss.kind == "flat"
    assert build(clustered(N))._faiss.kind == "ivfpq"


def test_ivfpq_recall_matches_flat(small_flat_max: None, monkeypatch: pytest.MonkeyPatch) -> None:
    vectors = clustered(N)
    approx = build(vectors)
    monkeypatch.setattr(ann, "FLAT_MAX", 10**9)
    exact = build(vectors)
    queries = clustered(50, seed=7)
    recall = np.mean([
        len({r for r, _ in approx.search(q, 10)} & {r for r, _ in exact.search(q, 10)}) / 10
        for q in queries
    ])
    assert recall >= 0.9
    row, score = approx.search(queries[0], 1)[0]
    assert score == pytest.approx(float(vectors[row] @ queries[0]), abs=1e-5)  # exact re-rank


def test_add_replace_dedupe_with_ivfpq(small_flat_max: None) -> None:
    vectors = clustered(N)
    index = build(vectors)
    target = clustered(1, seed=99)[0]
    assert index.add([item(3)], target[None], np.zeros((1, 0))) == 0  # replaced, not duplicated
    assert len(index) == N and index._faiss.ntotal == N
    assert index.search(target, 1)[0] == (3, pytest.approx(1.0, abs=1e-5))
    assert index.add([item(N + 1, "o/other")], vectors[:1], np.zeros((1, 0))) == 1  # no retrain
    assert index._faiss.ntotal == N + 1
    assert index.row_of(("o/other", N + 1)) == N
    hits = index.search(target, 5, exclude={("o/r", 3)})
    assert all(r != 3 for r, _ in hits)


def test_save_load_keeps_ivfpq(small_flat_max: None, tmp_path) -> None:  # type: ignore[no-untyped-def]
    vectors = clustered(N)
    index = build(vectors)
    index.save(tmp_path)
    assert (tmp_path / FAISS_FILE).exists()
    loaded = IssueIndex.load(tmp_path)
    assert loaded._faiss.kind == "ivfpq" and len(loaded) == N
    q = clustered(1, seed=5)[0]
    assert loaded.search(q, 5) == index.search(q, 5)
    loaded.add([item(7)], q[None], np.zeros((1, 0)))
    assert loaded.search(q, 1)[0][0] == 7
