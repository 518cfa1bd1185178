"""The index as every process sees it (issue #14): the database is the record, each process keeps
a search cache (``IssueIndex``: faiss and numpy in memory, what the engine searches) and catches up
before each job by reading only the rows written since its version.

``SharedIndex`` has the ``LiveIndex`` interface (``current()``, ``writing()``), so every writer in
``learning`` (corrections, newly closed issues, visibility changes, ``index sync``) works on it
unchanged: ``writing()`` opens one database transaction under the index lock, catches up inside
it, lets the writer change the cache, then writes exactly the issues whose objects changed (and
tombstones for those that left) stamped with one new version. A process killed in the middle
leaves the database as it was (the transaction never committed); a writer that fails leaves this
process's cache to be rebuilt from the database, never a change the record lacks.

The classifier is fitted by one process at a time under a database lease (``train``) and stored as
a versioned artifact that every engine picks up on its next ``refresh()``; no job refits. The
calibration record (``calibration.json``) travels as an artifact too. ``import_dir`` and
``export_dir`` move the seed index format in and out."""
from __future__ import annotations

import gc
import io
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter

from triagebot.domain.models import IndexedIssue
from triagebot.engine.ann import VectorSearch
from triagebot.engine.calibration import Calibration
from triagebot.engine.classify import Classifier, SoftmaxModel
from triagebot.engine.index import IndexError_, IssueIndex, rules_signature
from triagebot.logs import emit
from triagebot.store.learned import CHANNEL, Artifact, Change, ItemRow, LearnedStore

log = logging.getLogger("triagebot.learning.shared")
CLASSIFIER = "classifier"
CALIBRATION = "calibration"
SEARCH = "search"  # a large index's trained faiss structure and the keys of its rows
TRAINER_LEASE = "trainer"
TRAIN_LEASE_S = 600.0  # a trainer that dies holds the lease at most this long
LOAD_BATCH = 5000  # rows a cold load reads and parses at a time (~8 MB of 384-dim vectors)
_ITEMS = TypeAdapter(list[IndexedIssue])


class SharedIndex:
    """The database's index plus this process's cache of it, caught up on ``current()``.

    Swap on write: a catch-up or a writer never changes the ``IssueIndex`` that ``current()``
    handed out, it changes a copy (``IssueIndex.fork``) and hands that out from then on. A triage on
    another thread keeps searching the one it was given (an engine holds it until its next
    ``refresh()``): faiss is never changed under a search, nor the items under a row number."""

    def __init__(self, store: LearnedStore) -> None:
        self.store = store
        self._index: IssueIndex | None = None
        self._version = 0  # the last change this cache has applied
        self._calibration_version = 0
        self._lock = threading.RLock()
        self.directory = None  # no index directory: ``LiveEngine`` asks for the classifier instead

    @property
    def version(self) -> int:
        return self._version

    # reading -----------------------------------------------------------------------------------
    def current(self) -> IssueIndex:
        """The cache, caught up with every change committed so far."""
        with self._lock:
            if self._index is None:
                self._load()
            else:
                self.catch_up()
            assert self._index is not None
            return self._index

    def _load(self) -> None:
        """Cold start: every row at once (one query), then the calibration artifact."""
        meta = self.store.meta()
        if not meta:
            raise IndexError_("the database holds no index yet: run `triagebot index import DIR` "
                              "(the service imports the shipped seed index on first start)")
        if meta.get("features_id") != rules_signature():
            raise IndexError_("the database's index was built with other rule features; import a "
                              "rebuilt one (triagebot index import DIR)")
        seen = self.store.head()  # before the rows: whatever commits meanwhile is caught up later
        columns = _read_columns(self.store, int(meta["dim"]), int(meta["n_features"]))
        index = IssueIndex(meta["embedder"], int(meta["dim"]), int(meta["n_features"]),
                           meta["features_id"])
        if not _adopt_search(index, columns, self.store.artifact(SEARCH)):
            _add_columns(index, columns, range(len(columns.keys)))
        index.reserve(1)  # headroom (a quarter): catch-ups append without copying the cache
        seen = max([seen, *columns.versions])
        del columns
        # The cache's objects (100k items at scale) live as long as the process: out of the
        # collector's sight, a full collection triggered by a job's allocations no longer walks
        # them (measured: a catch-up of 100 rows took 170 ms instead of 10 ms when one did).
        gc.freeze()
        self._index = index
        self._version = seen
        self._catch_up_artifacts()

    def catch_up(self) -> int:
        """Apply the rows written since this cache's version; returns how many."""
        with self._lock:
            if self._index is None:
                self._load()
                return 0
            rows = self.store.rows_since(self._version)
            if rows:
                index = self._index.fork()
                _apply(index, rows)
                self._index, self._version = index, rows[-1].version
            self._catch_up_artifacts()
            return len(rows)

    def _catch_up_artifacts(self) -> None:
        art = self.store.artifact(CALIBRATION, newer_than=self._calibration_version)
        if art is not None and self._index is not None:
            self._index.calibration = Calibration.model_validate_json(art.body)
            self._calibration_version = art.version

    # writing -----------------------------------------------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[IssueIndex]:
        """Exclusive (across processes and machines), fresh, and recorded as one change. The
        writer changes a copy (``IssueIndex.fork``) that replaces the cache once the change committed: a
        writer that fails leaves the cache as it was, like the record."""
        with self._lock:
            self.current()
            with self.store.change() as change:
                self.catch_up()  # inside the lock: nobody writes between this and the commit
                before = self._index
                assert before is not None
                index = before.fork()
                calibration = index.calibration
                yield index
                _record(change, index, before.items, before.keys())
                if index.calibration is not calibration:
                    change.put_artifact(CALIBRATION, index.calibration.model_dump_json().encode(),
                                        change.version)
                written = change.written
            if written:
                self._index, self._version = index, change.version
                if index.calibration is not calibration:
                    self._calibration_version = change.version

    # the classifier ----------------------------------------------------------------------------
    def classifier_since(self, version: int) -> tuple[int, Classifier] | None:
        """The trainer's classifier when one newer than ``version`` fits this index's layout."""
        art = self.store.artifact(CLASSIFIER, newer_than=version)
        if art is None:
            return None
        index = self.current()
        try:
            classifier = classifier_from_bytes(art.body, index.dim + index.n_features)
            classifier.words = index.calibration.words  # fitted at build time, kept in calibration
            return art.version, classifier
        except (ValueError, KeyError) as exc:
            emit(log, "classifier artifact ignored", logging.WARNING, version=art.version,
                 error=str(exc)[:200])
            return None

    def publish_classifier(self, classifier: Classifier, index_version: int) -> int:
        """Store ``classifier`` (fitted on the index at ``index_version``) as the newest."""
        with self.store.change() as change:
            return change.put_artifact(CLASSIFIER, classifier_to_bytes(classifier), index_version)


def open_shared(store: LearnedStore, seed: str | Path | None) -> SharedIndex:
    """The database's index; on first start (nothing imported yet) ``seed`` is imported once,
    whichever of several processes starting together gets there first."""
    if seed is not None and not store.meta():
        import_dir(store, seed, only_if_empty=True)
    return SharedIndex(store)


# training ------------------------------------------------------------------------------------
def train(shared: SharedIndex, holder: str | None = None, force: bool = False) -> dict[str, object]:
    """Refit the classifier when the index changed since the last fit (or ``force``), as the one
    trainer: the lease is taken first, and a process that cannot get it trains nothing. The fit
    runs on a copy of the cache, so this process's jobs are not held up meanwhile."""
    holder = holder or f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"
    store = shared.store
    if not store.take_lease(TRAINER_LEASE, holder, TRAIN_LEASE_S):
        return {"trained": False, "reason": "another process holds the trainer lease"}
    try:
        start = time.perf_counter()
        with shared._lock:
            index = shared.current()
            version = shared.version
            latest = store.artifact(CLASSIFIER)
            if not force and latest is not None and latest.index_version >= version:
                return {"trained": False, "reason": "the classifier is current"}
            vectors, features, items = index.vectors.copy(), index.features.copy(), list(index.items)
            words = index.calibration.words
        classifier = Classifier.fit(vectors, features, items, words)
        artifact = shared.publish_classifier(classifier, version)
        publish_search(shared)
        confirmed = sum(item.status == "confirmed" for item in items)
        emit(log, "classifier trained", version=artifact, index_version=version, issues=len(items))
        return {"trained": True, "version": artifact, "index_version": version,
                "issues": len(items), "confirmed": confirmed, "predicted": len(items) - confirmed,
                "seconds": round(time.perf_counter() - start, 2)}
    finally:
        store.release_lease(TRAINER_LEASE, holder)


def start_trainer(shared: SharedIndex, interval_s: float, stop: threading.Event) -> threading.Thread | None:
    """A background thread that refits every ``interval_s`` when the index changed (0: never).
    Every worker process may run one; the lease makes one of them do the work."""
    if interval_s <= 0:
        return None

    def loop() -> None:
        while not stop.wait(interval_s):
            try:
                train(shared)
            except Exception as exc:  # noqa: BLE001 - the next round retries
                emit(log, "training failed", logging.ERROR, error=f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=loop, name="triagebot-trainer", daemon=True)
    thread.start()
    return thread


def start_listener(shared: SharedIndex, stop: threading.Event) -> threading.Thread | None:
    """PostgreSQL: a background thread that catches the cache up as soon as another process
    commits a change (``LISTEN``), so the next job finds it applied instead of reading it first;
    every job still catches up itself, so a lost notification delays nothing past that. None on
    SQLite (no notifications; jobs catch up as before)."""
    if not shared.store.db.postgres:
        return None

    def loop() -> None:
        for payload in shared.store.db.notifications(CHANNEL, stop):
            try:
                if int(payload) > shared.version:
                    shared.catch_up()
            except Exception as exc:  # noqa: BLE001 - the next job catches up anyway
                emit(log, "catch-up on notification failed", logging.WARNING,
                     error=f"{type(exc).__name__}: {exc}"[:300])

    thread = threading.Thread(target=loop, name="triagebot-index-listener", daemon=True)
    thread.start()
    return thread


def publish_search(shared: SharedIndex) -> int | None:
    """Store the cache's trained search structure (IVF-PQ, from 50k issues) with the keys of its
    rows, so cold workers adopt it instead of training their own (20 s of a 100k load on 2
    cores); rows changed since are re-added on load. None when the search is exact (flat)."""
    with shared._lock:
        index = shared.current()
        search = index.search_structure
        if search.kind == "flat":
            return None
        body = _search_bytes(search.to_bytes(), [item.key for item in index.items])
        version = shared.version
    with shared.store.change() as change:
        return change.put_artifact(SEARCH, body, version)


def _search_bytes(faiss_bytes: bytes, keys: list[tuple[str, int]]) -> bytes:
    """The trained structure plus the key of each of its rows, as columns (the distinct
    repositories once, then an index into them and the number per row): a cold worker decodes
    100k keys in milliseconds, where one JSON list of pairs took a fifth of a second."""
    repos = sorted({repo for repo, _ in keys})
    position = {repo: i for i, repo in enumerate(repos)}
    out = io.BytesIO()
    np.savez(out, faiss=np.frombuffer(faiss_bytes, np.uint8),
             repos=np.frombuffer(json.dumps(repos).encode(), np.uint8),
             repo_of=np.array([position[repo] for repo, _ in keys], np.int32),
             numbers=np.array([number for _, number in keys], np.int64))
    return out.getvalue()


def _search_keys(data: Any) -> list[tuple[str, int]]:
    """The row keys ``_search_bytes`` stored (or, in an artifact stored before the columns, one
    JSON list of [repo, number] pairs)."""
    if "repos" not in data:
        return [(str(repo), int(number)) for repo, number in json.loads(bytes(data["keys"]).decode())]
    repos = json.loads(bytes(data["repos"]).decode())
    return list(zip([repos[i] for i in data["repo_of"].tolist()], data["numbers"].tolist()))


@dataclass
class _Columns:
    """Every stored issue of a cold load, parsed: rows in (repo, number) order."""

    keys: list[tuple[str, int]]
    versions: list[int]
    items: list[IndexedIssue]
    vectors: np.ndarray
    features: np.ndarray


def _read_columns(store: LearnedStore, dim: int, n_features: int) -> _Columns:
    """Read the stored issues in batches (``LearnedStore.batches``): each batch's metadata parsed
    by one pydantic call over a JSON array, its vectors kept as one array: no per-row objects,
    no hex-decoded bytea (``Database.stream`` is binary). Parsing is most of what is left (1.2 s
    of 100k items on this machine); a reader thread fetching ahead of it measured no gain."""
    keys: list[tuple[str, int]] = []
    versions: list[int] = []
    items: list[IndexedIssue] = []
    vectors: list[np.ndarray] = []
    features: list[np.ndarray] = []
    for batch in store.batches(dim, n_features, LOAD_BATCH):
        keys += batch.keys
        versions += batch.versions
        items += _ITEMS.validate_json("[" + ",".join(batch.items) + "]")
        vectors.append(batch.vectors)
        features.append(batch.features)
    return _Columns(keys, versions, items,
                    np.concatenate(vectors) if vectors else np.zeros((0, dim), np.float32),
                    np.concatenate(features) if features else np.zeros((0, n_features), np.float32))


def _add_columns(index: IssueIndex, columns: _Columns, rows: Sequence[int]) -> None:
    if len(rows):
        picked = np.asarray(rows, np.int64)
        index.add([columns.items[row] for row in rows], columns.vectors[picked],
                  columns.features[picked])


def _adopt_search(index: IssueIndex, columns: _Columns, art: Artifact | None) -> bool:
    """Fill ``index`` from ``columns`` around the stored search structure: rows in its order,
    then those written since it was stored re-added (replacing their stale entries). False (the
    caller builds anew) without one, or when an issue it holds has been removed since."""
    if art is None:
        return False
    with np.load(io.BytesIO(art.body), allow_pickle=False) as data:
        keys = _search_keys(data)
        position = {key: row for row, key in enumerate(columns.keys)}
        order = [position.pop(key, -1) for key in keys]
        if -1 in order:
            return False
        search = VectorSearch.from_bytes(bytes(data["faiss"]), index.dim)
    if search.ntotal != len(order):
        return False
    picked = np.asarray(order, np.int64)
    index.adopt([columns.items[row] for row in order], columns.vectors[picked],
                columns.features[picked], search)
    stale = [row for row in order if columns.versions[row] > art.index_version]
    _add_columns(index, columns, stale + sorted(position.values()))
    return True


# import / export -----------------------------------------------------------------------------
def import_dir(store: LearnedStore, directory: str | Path, *, replace: bool = False,
               only_if_empty: bool = False) -> dict[str, object]:
    """Load an index directory (the seed format) into the database as one change. Issues already
    there are replaced by the directory's copy; with ``replace`` (or when the directory was built
    with another embedder, whose vectors cannot be mixed with the stored ones) every other issue
    is removed. ``only_if_empty``: do nothing when an index is there already (first start)."""
    index = IssueIndex.load(directory)
    meta = {"embedder": index.embedder_name, "dim": str(index.dim),
            "n_features": str(index.n_features), "features_id": index.features_id}
    with store.change() as change:
        current = store.meta()
        if only_if_empty and current:
            return {"imported": 0, "removed": 0, "version": store.head(), "skipped": True}
        other_layout = bool(current) and any(current.get(k) != v for k, v in meta.items())
        removed: list[tuple[str, int]] = []
        if replace or other_layout:
            keep = {item.key for item in index.items}
            removed = [key for key in store.keys() if key not in keep]
        change.remove(removed)
        change.put(_rows_of(index, range(len(index.items))))
        change.set_meta(meta)
        change.put_artifact(CALIBRATION, index.calibration.model_dump_json().encode(), change.version)
        if index.search_structure.kind != "flat":  # trained already: cold workers adopt it
            change.put_artifact(SEARCH, _search_bytes(index.search_structure.to_bytes(),
                                                      [item.key for item in index.items]), change.version)
        version = change.version
    store.analyze()  # fresh statistics: catch-up reads by version, never by scanning every vector
    emit(log, "index imported", directory=str(directory), issues=len(index), removed=len(removed),
         version=version)
    return {"imported": len(index), "removed": len(removed), "version": version,
            "replaced_layout": other_layout}


def export_dir(shared: SharedIndex, directory: str | Path) -> int:
    """Write the database's index in the seed format; returns how many issues."""
    index = shared.current()
    index.save(directory)
    return len(index)


# rows <-> cache ------------------------------------------------------------------------------
Row = tuple[str, int, str, str, "int | None", bytes, bytes]


def _rows_of(index: IssueIndex, rows: range | list[int]) -> list[Row]:
    vectors, features = index.vectors, index.features
    out: list[Row] = []
    for row in rows:
        item = index.items[row]
        out.append((item.repo, item.number, item.model_dump_json(), item.visibility,
                    item.installation_id, np.ascontiguousarray(vectors[row], np.float32).tobytes(),
                    np.ascontiguousarray(features[row], np.float32).tobytes()))
    return out


def _record(change: Change, index: IssueIndex, before_items: list[IndexedIssue],
            before_keys: set[tuple[str, int]]) -> None:
    """Write what the writer changed: every item object that is new (added, replaced, relabelled,
    moved: writers never mutate an item in place, and ``before_items`` keeps the old objects
    alive so no id is reused), and tombstones for keys that left."""
    before_ids = set(map(id, before_items))
    changed = [row for row, item in enumerate(index.items) if id(item) not in before_ids]
    added = sum(index.items[row].key not in before_keys for row in changed)
    if len(index.items) != len(before_items) + added:
        change.remove([key for key in before_keys if index.row_of(key) is None])
    change.put(_rows_of(index, changed))


def _decode(rows: list[ItemRow], dim: int, n_features: int) -> tuple[list[IndexedIssue], np.ndarray, np.ndarray]:
    items = _ITEMS.validate_json("[" + ",".join(r.item or "" for r in rows) + "]")
    vectors = np.frombuffer(b"".join(r.vector or b"" for r in rows), np.float32).reshape(len(rows), dim)
    features = np.frombuffer(b"".join(r.features or b"" for r in rows), np.float32)
    return items, vectors, features.reshape(len(rows), n_features)


def _add_rows(index: IssueIndex, rows: list[ItemRow]) -> None:
    if rows:
        index.add(*_decode(rows, index.dim, index.n_features))


def _apply(index: IssueIndex, rows: list[ItemRow]) -> None:
    """Catch up: the latest row of each key wins; removed keys leave, the others are upserted."""
    latest = {(r.repo, r.number): r for r in rows}
    gone = {key for key, r in latest.items() if r.removed and index.row_of(key) is not None}
    if gone:
        index.remove(gone)
    _add_rows(index, [r for r in latest.values() if not r.removed])


# the classifier as bytes (numpy arrays and JSON: nothing executable, unlike a pickle) ---------
def classifier_to_bytes(classifier: Classifier) -> bytes:
    arrays: dict[str, np.ndarray] = {}
    classes: dict[str, list[str]] = {}
    for dim, model in classifier.models.items():
        classes[dim] = model.classes
        for part in ("weights", "bias", "mean", "scale"):
            arrays[f"{dim}.{part}"] = np.asarray(getattr(model, part), np.float32)
    header = {"fix_given_cause": classifier.fix_given_cause, "models": classes}
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    out = io.BytesIO()
    np.savez(out, **arrays)  # type: ignore[arg-type]  # numpy's stubs read **kwds as allow_pickle
    return out.getvalue()


def classifier_from_bytes(body: bytes, inputs: int) -> Classifier:
    """The stored classifier; ``ValueError`` when it does not read ``inputs`` columns."""
    with np.load(io.BytesIO(body), allow_pickle=False) as data:
        header = json.loads(bytes(data["header"]).decode())
        models = {}
        for dim, classes in header["models"].items():
            weights = data[f"{dim}.weights"]
            if weights.shape[0] != inputs:
                raise ValueError(f"the {dim} model reads {weights.shape[0]} inputs, not {inputs}")
            models[dim] = SoftmaxModel(list(classes), weights, data[f"{dim}.bias"],
                                       data[f"{dim}.mean"], data[f"{dim}.scale"])
    return Classifier(models, header["fix_given_cause"])

