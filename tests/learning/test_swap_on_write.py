"""Issue #14: a process's search cache is swapped on write, never changed under a reader. Worker
threads triage over the ``IssueIndex`` that ``current()`` gave them while a catch-up or a writer
on another thread applies changes: the reader's items, key map, vectors and faiss structure stay
one consistent snapshot (before, a catch-up changed faiss and the item list under a running
search). Real SQLite or PostgreSQL, real faiss, a second process's writes."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from support.engine import hashing_index
from support.learned import database_url
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.engine import ann
from triagebot.engine.index import IssueIndex
from triagebot.learning import shared
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore

OPENED: list[Database] = []


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as found:
        hashing_index().save(tmp_path / "seed")
        shared.import_dir(LearnedStore(_opened(found)), tmp_path / "seed")
        try:
            yield found
        finally:
            while OPENED:
                OPENED.pop().close()


def _opened(url: str) -> Database:
    OPENED.append(Database(url, pool_size=4))
    return OPENED[-1]


def process(url: str) -> shared.SharedIndex:
    """One worker process's cache, with its own connections."""
    return shared.SharedIndex(LearnedStore(_opened(url)))


def new_issues(index: IssueIndex, start: int, n: int) -> tuple[list[IndexedIssue], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(start)
    x = rng.standard_normal((n, index.dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    items = [IndexedIssue(repo="new/repo", number=start + i, labels=Labels(stage="S2")) for i in range(n)]
    return items, x, np.zeros((n, index.n_features), np.float32)


def consistent(index: IssueIndex, query: np.ndarray) -> None:
    """One search over ``index`` reads rows that its items, key map and vectors agree on."""
    for row, score in index.search(query, k=5):
        item = index.items[row]
        assert index.row_of(item.key) == row
        assert abs(float(index.vectors[row] @ query) - score) < 1e-4


def test_a_catch_up_hands_out_a_new_cache_and_leaves_the_old_one_as_it_was(url: str) -> None:
    writer, reader = process(url), process(url)
    old = reader.current()
    keys, first = old.keys(), old.items[0].key
    with writer.writing() as index:
        index.add(*new_issues(index, 500, 3))
        index.remove({first})
    assert reader.catch_up() == 4
    new = reader.current()
    assert new is not old and old.keys() == keys and len(old) == len(keys)
    assert new.row_of(first) is None and new.row_of(("new/repo", 501)) is not None
    assert old.search_structure.index is not new.search_structure.index
    query = writer.current().vectors[writer.current().row_of(("new/repo", 501))]
    consistent(old, query)
    consistent(new, query)
    assert new.items[new.search(query, k=1)[0][0]].key == ("new/repo", 501)


def test_a_writer_changes_a_copy_that_replaces_the_cache_only_once_committed(url: str) -> None:
    cache = process(url)
    before = cache.current()
    with pytest.raises(RuntimeError), cache.writing() as index:
        assert index is not before
        index.add(*new_issues(index, 700, 2))
        raise RuntimeError("the writer fell over")
    assert cache.current() is before and before.row_of(("new/repo", 700)) is None
    with cache.writing() as index:
        index.add(*new_issues(index, 700, 2))
    assert cache.current() is index and before.row_of(("new/repo", 700)) is None


def test_triages_on_other_threads_never_see_a_cache_change_under_them(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann, "FLAT_MAX", 300)  # IVF-PQ once the writes pass 300 issues
    writer, worker = process(url), process(url)
    worker.current()
    stop, failures, searches = threading.Event(), [], [0]

    def triage() -> None:
        rng = np.random.default_rng(threading.get_ident())
        while not stop.is_set():
            try:
                index = worker.current()  # as a job's refresh() does; then it reads at leisure
                for _ in range(5):
                    q = rng.standard_normal(index.dim).astype(np.float32)
                    consistent(index, q / np.linalg.norm(q))
                    searches[0] += 1
            except Exception as exc:  # noqa: BLE001 - collected, the test fails below
                failures.append(exc)
                stop.set()

    threads = [threading.Thread(target=triage) for _ in range(3)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    for round_ in range(12):  # another process adds and removes; this one catches up meanwhile
        with writer.writing() as index:
            index.add(*new_issues(index, 1000 + 30 * round_, 30))
            if round_ % 3 == 2:
                index.remove({index.items[0].key, index.items[5].key})
        worker.catch_up()
        if stop.is_set() or time.monotonic() > deadline:
            break
    stop.set()
    for thread in threads:
        thread.join(30)
    assert not failures, failures[:3]
    assert searches[0] > 0 and worker.current().keys() == writer.current().keys()
    assert worker.current().search_structure.kind == "ivfpq"
