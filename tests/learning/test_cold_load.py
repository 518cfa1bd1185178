"""Issue #14: a cold worker reads the whole index in batches of columns (binary, streamed) and
ends with exactly the cache the writer holds: every key, item, vector and feature row, on real
SQLite and real PostgreSQL; a stored row of the wrong width is refused; a search structure stored
in the earlier artifact format (keys as one JSON list) is still adopted, not retrained."""
from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from support.engine import hashing_index
from support.learned import database_url
from triagebot.domain import rules
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.engine import ann
from triagebot.engine.index import IssueIndex
from triagebot.learning import shared
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as found:
        yield found


def test_a_cold_load_in_small_batches_rebuilds_the_writers_cache(
        url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashing_index().save(tmp_path / "seed")
    writer_db, cold_db = Database(url, pool_size=2), Database(url, pool_size=2)
    writer = shared.open_shared(LearnedStore(writer_db), tmp_path / "seed")
    with writer.writing() as index:  # a tombstone: never part of a cold load
        index.remove({index.items[0].key})
    expected = writer.current()
    monkeypatch.setattr(shared, "LOAD_BATCH", 7)  # many batches, the last one short
    cold = shared.SharedIndex(LearnedStore(cold_db))
    loaded = cold.current()
    assert cold.version == writer.version
    assert sorted(loaded.keys()) == sorted(expected.keys()) and len(loaded) == len(expected) > 7
    for item in expected.items:
        row, mine = loaded.row_of(item.key), expected.row_of(item.key)
        assert row is not None and mine is not None and loaded.items[row] == item
        assert np.array_equal(loaded.vectors[row], expected.vectors[mine])
        assert np.array_equal(loaded.features[row], expected.features[mine])
    writer_db.close()
    cold_db.close()


def test_the_database_streams_every_row_in_batches_and_can_stop_early(url: str) -> None:
    db = Database(url, pool_size=1)
    db.execute_many("INSERT INTO index_meta (name, value) VALUES (?, ?)",
                    [(f"k{i:02d}", str(i)) for i in range(23)])
    batches = list(db.stream("SELECT name FROM index_meta ORDER BY name", size=10))
    assert [len(b) for b in batches] == [10, 10, 3] and batches[2][-1] == ("k22",)
    partial = db.stream("SELECT name FROM index_meta ORDER BY name", size=5)
    assert next(partial)[0] == ("k00",)
    partial.close()  # the session goes back to the pool usable (one session: reused at once)
    assert db.query("SELECT COUNT(*) FROM index_meta")[0][0] == 23
    db.close()


def test_a_stored_row_of_another_width_is_refused(tmp_path: Path) -> None:
    hashing_index().save(tmp_path / "seed")
    store = LearnedStore(Database(tmp_path / "l.sqlite3"))
    shared.import_dir(store, tmp_path / "seed")
    store.db.execute("UPDATE index_items SET vector = ? WHERE number = (SELECT MIN(number) "
                     "FROM index_items)", (b"\x00" * 12,))
    with pytest.raises(ValueError, match="stored vectors or features are not 256 / "):
        shared.SharedIndex(store).current()


def synthetic(n: int, dim: int = 64) -> IssueIndex:
    x = np.random.default_rng(0).standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    index = IssueIndex("hashing-test", dim, len(rules.FEATURE_NAMES))
    index.add([IndexedIssue(repo="big/repo", number=i, labels=Labels(stage="S1")) for i in range(n)],
              x, np.zeros((n, index.n_features), np.float32))
    return index


def test_a_structure_stored_in_the_earlier_format_is_adopted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann, "FLAT_MAX", 1000)
    index = synthetic(1200)
    index.save(tmp_path / "big")
    store = LearnedStore(Database(tmp_path / "t.sqlite3"))
    shared.import_dir(store, tmp_path / "big")
    out = io.BytesIO()  # what the trainer stored before keys became columns
    np.savez(out, faiss=np.frombuffer(index.search_structure.to_bytes(), np.uint8),
             keys=np.frombuffer(json.dumps([item.key for item in index.items]).encode(), np.uint8))
    with store.change() as change:
        change.put_artifact(shared.SEARCH, out.getvalue(), store.head())
    monkeypatch.setattr(ann.VectorSearch, "rebuild", None)  # training now would fail the test
    cold = shared.SharedIndex(store).current()
    assert len(cold) == 1200 and cold.search_structure.kind == "ivfpq"
    assert cold.items[cold.search(index.vectors[9], k=1)[0][0]].number == 9
