"""Issue #14: a large index's trained search structure (IVF-PQ) is stored in the database, at
import and by the trainer, so a cold worker adopts it instead of training its own (20 s of a
100k-issue load on 2 cores); rows written since are re-added, and a removal since makes the worker
build anew. Real SQLite and faiss; IVF-PQ from 1,000 rows here (1,200 stored) instead of 50,000."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from triagebot.domain import rules
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.engine import ann
from triagebot.engine.index import IssueIndex
from triagebot.learning import shared
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore

DIM = 64


def synthetic(n: int) -> IssueIndex:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    index = IssueIndex("hashing-test", DIM, len(rules.FEATURE_NAMES))
    items = [IndexedIssue(repo="big/repo", number=i, labels=Labels(stage=f"S{1 + i % 4}"))
             for i in range(n)]
    index.add(items, x, np.zeros((n, index.n_features), np.float32))
    return index


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LearnedStore:
    monkeypatch.setattr(ann, "FLAT_MAX", 1000)
    index = synthetic(1200)
    assert index.search_structure.kind == "ivfpq"
    index.save(tmp_path / "big")
    learned = LearnedStore(Database(str(tmp_path / "t.sqlite3")))
    shared.import_dir(learned, tmp_path / "big")
    return learned


def no_training(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> None:
        raise AssertionError("the cold worker trained its own IVF-PQ")

    monkeypatch.setattr(ann.VectorSearch, "rebuild", refuse)


def test_a_cold_worker_adopts_the_stored_structure_and_re_adds_newer_rows(
        store: LearnedStore, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = shared.SharedIndex(store)
    query = writer.current().vectors[5].copy()
    with writer.writing() as index:  # after the import's artifact: must be re-added on load
        row = index.row_of(("big/repo", 5))
        index.add([index.items[row].model_copy(update={"title": "changed"})],
                  index.vectors[row:row + 1].copy(), index.features[row:row + 1].copy())
    no_training(monkeypatch)
    cold = shared.SharedIndex(store).current()
    assert len(cold) == 1200 and cold.search_structure.kind == "ivfpq"
    assert cold.items[cold.row_of(("big/repo", 5))].title == "changed"
    assert cold.items[cold.search(query, k=1)[0][0]].number == 5


def test_the_trainer_stores_a_fresh_structure_and_a_removal_means_building_anew(
        store: LearnedStore, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = shared.SharedIndex(store)
    with writer.writing() as index:
        index.remove({("big/repo", 7)})
    before = store.artifact_version(shared.SEARCH)
    assert shared.train(writer, force=True)["trained"] is True
    assert store.artifact_version(shared.SEARCH) > before  # stored without the removed issue
    with writer.writing() as index:
        index.remove({("big/repo", 8)})
    cold = shared.SharedIndex(store).current()  # the stored one still holds 8: built anew
    assert len(cold) == 1198 and cold.row_of(("big/repo", 8)) is None


def test_the_trainer_thread_refits_when_the_index_changed(store: LearnedStore) -> None:
    index = shared.SharedIndex(store)
    stop = threading.Event()
    thread = shared.start_trainer(index, 0.05, stop)
    assert thread is not None and shared.start_trainer(index, 0, stop) is None
    deadline = time.monotonic() + 60
    while store.artifact(shared.CLASSIFIER) is None and time.monotonic() < deadline:
        stop.wait(0.05)
    stop.set()
    thread.join(10)
    assert store.artifact(shared.CLASSIFIER) is not None
