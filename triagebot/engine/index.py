"""The index of labelled, historical issues: faiss over normalised vectors plus metadata.

A directory holds ``manifest.json`` (embedder, dimension, count), ``vectors.npy`` (one row per
issue), ``features.npy`` (the rule features of each issue's text, so the classifier can be
retrained without ever storing issue bodies) and ``meta.jsonl`` (``IndexedIssue`` per row).
Issues are keyed by (repo, number): adding a known issue replaces its row, so re-syncing or a
maintainer's correction never creates a duplicate neighbour.

Search structure, chosen by size (``triagebot.engine.ann``): below 50,000 issues an exact flat
inner-product index (a few ms, perfect recall, rebuilt from ``vectors.npy`` on load). From 50,000
on, IVF-PQ (about sqrt(n) lists, 48-byte codes, 48 lists probed) whose candidates are re-ranked
exactly against the float vectors, so scores remain true cosines. IVF-PQ rather than HNSW because
it trains and fills in seconds on a 2-core machine (HNSW construction of 1M vectors takes tens of
minutes), supports removal (replacing an issue's row), adds without retraining, and costs ~56
bytes a vector on top of the float copy. Large indexes persist it as ``faiss.index`` so loading
does not retrain; one that does not match the row count is rebuilt."""
from __future__ import annotations

import copy
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from datetime import datetime, timezone
from pathlib import Path

import faiss
import numpy as np

from triagebot.domain import rules
from triagebot.domain.models import IndexedIssue
from triagebot.engine.ann import VectorSearch
from triagebot.engine.calibration import FILE as CALIBRATION_FILE
from triagebot.engine.calibration import Calibration

FORMAT = 1
FAISS_FILE = "faiss.index"


class IndexError_(ValueError):
    """The index directory is missing, incomplete or inconsistent (a user-fixable problem)."""


class IssueIndex:
    """Vectors, rule features and metadata of indexed issues, searchable by cosine similarity."""

    def __init__(self, embedder_name: str, dim: int, n_features: int,
                 features_id: str = "") -> None:
        self.embedder_name = embedder_name
        self.features_id = features_id or rules_signature()
        self.dim = dim
        self.n_features = n_features
        self.items: list[IndexedIssue] = []
        self._vectors = np.zeros((0, dim), dtype=np.float32)  # capacity >= rows: amortised adds
        self._features = np.zeros((0, n_features), dtype=np.float32)
        self._rows: dict[tuple[str, int], int] = {}
        self._faiss = VectorSearch(dim)
        # The out-of-fold record the index was built with: which confidences clear which
        # precision (``calibration``). Kept across additions; refreshed by ``index build``.
        self.calibration = Calibration()

    def __len__(self) -> int:
        return len(self.items)

    @property
    def vectors(self) -> np.ndarray:
        """One L2-normalised row per issue (a view; rows line up with ``items``)."""
        return self._vectors[: len(self.items)]

    @property
    def features(self) -> np.ndarray:
        return self._features[: len(self.items)]

    def add(self, items: list[IndexedIssue], vectors: np.ndarray, features: np.ndarray) -> int:
        """Add or replace issues; returns how many were new."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        features = np.asarray(features, dtype=np.float32).reshape(len(items), self.n_features)
        new_rows, new_items, new = [], [], 0
        for item, vec, feat in zip(items, vectors, features):
            row = self._rows.get(item.key)
            if row is None:
                new_rows.append((vec, feat))
                new_items.append(item)
                self._rows[item.key] = len(self.items) + len(new_items) - 1
                new += 1
            elif row >= len(self.items):  # repeated within this batch: the later copy wins
                new_rows[row - len(self.items)] = (vec, feat)
                new_items[row - len(self.items)] = item
            else:
                self._replace(row, item, vec, feat)
        if new_items:
            start, end = len(self.items), len(self.items) + len(new_items)
            self._vectors = _grown(self._vectors, start, end)
            self._features = _grown(self._features, start, end)
            self._vectors[start:end] = np.stack([v for v, _ in new_rows])
            self._features[start:end] = np.stack([f for _, f in new_rows])
            self.items.extend(new_items)
            ids = np.arange(start, start + len(new_items), dtype=np.int64)
            self._faiss.add(self.vectors[start:], ids, self.vectors)
        return new

    def _replace(self, row: int, item: IndexedIssue, vec: np.ndarray, feat: np.ndarray) -> None:
        self.items[row] = item
        self.vectors[row] = vec
        self.features[row] = feat
        self._faiss.remove(row)
        self._faiss.add(vec.reshape(1, -1), np.array([row], dtype=np.int64), self.vectors)

    def update_labels(self, key: tuple[str, int], item: IndexedIssue) -> bool:
        """Replace the metadata of a known issue (a maintainer's correction), vectors unchanged."""
        row = self._rows.get(key)
        if row is None:
            return False
        self.items[row] = item
        return True

    def adopt(self, items: list[IndexedIssue], vectors: np.ndarray, features: np.ndarray,
              search: VectorSearch) -> None:
        """Fill an empty index with rows whose search structure was built before (``search``
        holds row ids 0..n-1 of exactly these rows, in this order)."""
        if self.items or search.ntotal != len(items):
            raise IndexError_("the stored search structure does not match the rows")
        self.items = list(items)
        self._vectors = np.array(vectors, dtype=np.float32)  # own, writable copies: replacing a
        self._features = np.array(features, dtype=np.float32)  # row writes into them
        self._rows = {item.key: row for row, item in enumerate(self.items)}
        self._faiss = search

    def fork(self) -> IssueIndex:
        """A copy that may be changed while this one is being searched: its own item list, key
        map and faiss structure. The vector and feature arrays are shared: the copy's additions
        go to rows past this index's length, which this index never reads; an issue re-added with
        a new vector is written in place, so a search running meanwhile may score that one issue
        against its new vector (nothing else)."""
        twin = copy.copy(self)
        twin.items = list(self.items)
        twin._rows = dict(self._rows)
        twin._faiss = self._faiss.clone()
        return twin

    @property
    def search_structure(self) -> VectorSearch:
        """The faiss side (``kind`` flat or ivfpq), for storing a trained one."""
        return self._faiss

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` more issues (at least a quarter more), so the next additions copy
        nothing: a cache loaded to its exact size otherwise copied every vector on its first
        catch-up (100 ms at 20k issues)."""
        used = len(self.items)
        self._vectors = _grown(self._vectors, used, used + rows)
        self._features = _grown(self._features, used, used + rows)

    def keys(self) -> set[tuple[str, int]]:
        """The (repo, number) of every indexed issue (a copy)."""
        return set(self._rows)

    def row_of(self, key: tuple[str, int]) -> int | None:
        return self._rows.get(key)

    def search(
        self, vector: np.ndarray, k: int = 10, exclude: AbstractSet[tuple[str, int | None]] = frozenset(),
        visible: Callable[[IndexedIssue], bool] | None = None,
    ) -> list[tuple[int, float]]:
        """Top-``k`` (row, cosine score) pairs, best first, never any excluded (repo, number) and,
        with ``visible``, only items it accepts (``domain.visibility.visible_to`` for a viewer).
        Filtering happens here, before anything downstream (vote, similar issues, evidence, LLM
        prompt) sees a neighbour; when filtered rows crowd the top, the search widens until ``k``
        are found or the whole index was searched."""
        if not self.items:
            return []
        fetch = min(len(self.items), k + len(exclude))
        while True:
            hits = self._faiss.search(vector, fetch, self.vectors)
            kept = [(r, s) for r, s in hits if self.items[r].key not in exclude
                    and (visible is None or visible(self.items[r]))]
            if len(kept) >= k or fetch >= len(self.items):
                return kept[:k]
            fetch = min(len(self.items), fetch * 4)

    def remove(self, keys: AbstractSet[tuple[str, int]]) -> int:
        """Drop these issues (vectors, features and metadata); returns how many were there.
        The search structure is rebuilt from the rows that stay, so nothing of a removed issue
        remains in memory or, after ``save``, on disk."""
        drop = {self._rows[key] for key in keys if key in self._rows}
        if drop:
            self._rebuild([row for row in range(len(self.items)) if row not in drop])
        return len(drop)

    def retag(self, update: Callable[[IndexedIssue], IndexedIssue | None]) -> tuple[int, int]:
        """Apply ``update`` to every item's metadata (vectors unchanged): a returned copy replaces
        the item (its key may change: a renamed repository, a transferred issue), None removes it.
        Returns (changed, removed). When two items end up with one key, the moved one wins."""
        changed, keep, moved, before = 0, [], {}, len(self.items)
        for row, item in enumerate(self.items):
            new = update(item)
            if new is None:
                continue
            keep.append(row)
            if new is not item:
                changed += 1
                self.items[row] = new
                if new.key != item.key:
                    moved[new.key] = row
        if moved:  # an unmoved item already holding a moved item's key gives way
            keep = [row for row in keep if moved.get(self.items[row].key, row) == row]
        if len(keep) != before or moved:
            self._rebuild(keep)
        return changed, before - len(keep)

    def _rebuild(self, rows: list[int]) -> None:
        items = [self.items[row] for row in rows]
        vectors, features = self.vectors[rows].copy(), self.features[rows].copy()
        self.items, self._rows, self._faiss = [], {}, VectorSearch(self.dim)
        self._vectors = np.zeros((0, self.dim), dtype=np.float32)
        self._features = np.zeros((0, self.n_features), dtype=np.float32)
        if items:
            self.add(items, vectors, features)

    # -- persistence -------------------------------------------------------------------------

    def save(self, directory: str | Path) -> None:
        """Write atomically enough: each file goes to a temp name first, then is renamed."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        _atomic(out / "vectors.npy", lambda f: np.save(f, self.vectors))
        _atomic(out / "features.npy", lambda f: np.save(f, self.features))
        lines = "".join(item.model_dump_json() + "\n" for item in self.items)
        _atomic(out / "meta.jsonl", lambda f: f.write(lines.encode()))
        calibration = self.calibration.model_dump_json().encode()
        _atomic(out / CALIBRATION_FILE, lambda f: f.write(calibration))
        manifest = {
            "format": FORMAT, "embedder": self.embedder_name, "dim": self.dim,
            "n_features": self.n_features, "features_id": self.features_id,
            "count": len(self.items), "search": self._faiss.kind,
            "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        if self._faiss.kind != "flat":
            _atomic(out / FAISS_FILE, lambda f: f.write(faiss.serialize_index(self._faiss.index)))
        else:
            (out / FAISS_FILE).unlink(missing_ok=True)
        _atomic(out / "manifest.json", lambda f: f.write(json.dumps(manifest, indent=1).encode()))

    @classmethod
    def load(cls, directory: str | Path) -> IssueIndex:
        path = Path(directory)
        try:
            manifest = json.loads((path / "manifest.json").read_text())
            index = cls(manifest["embedder"], int(manifest["dim"]), int(manifest["n_features"]),
                        manifest.get("features_id", "?"))
            vectors = np.load(path / "vectors.npy")
            features = np.load(path / "features.npy")
            with open(path / "meta.jsonl", encoding="utf-8") as fh:
                items = [IndexedIssue.model_validate_json(line) for line in fh if line.strip()]
        except (OSError, ValueError, KeyError) as exc:
            detail = " ".join(str(exc).split())[:300]  # pydantic messages span lines
            raise IndexError_(f"cannot load index from {path}: {detail}") from exc
        if not (len(items) == len(vectors) == len(features) == manifest["count"]):
            raise IndexError_(f"index at {path} is inconsistent (row counts differ)")
        if index.features_id != rules_signature():
            raise IndexError_(f"index at {path} was built with other rule features; rebuild it "
                              "(triagebot index build / index sync)")
        index._fill(items, vectors, features, path / FAISS_FILE)
        index.calibration = Calibration.load(path)
        return index

    def _fill(self, items: list[IndexedIssue], vectors: np.ndarray, features: np.ndarray,
              faiss_file: Path) -> None:
        """Loading: reuse a saved IVF-PQ index when it matches, else build the search anew."""
        saved = _read_search(faiss_file, self.dim, len(items))
        if saved is None:
            self.add(items, vectors, features)
            return
        self.items = items
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._features = np.ascontiguousarray(features, dtype=np.float32)
        self._rows = {item.key: row for row, item in enumerate(items)}
        self._faiss = saved

    @staticmethod
    def mtime(directory: str | Path) -> float:
        """When the index was last saved (workers reload when this changes)."""
        try:
            return os.stat(Path(directory) / "manifest.json").st_mtime
        except OSError:
            return 0.0


def rules_signature() -> str:
    """Identifies the rule-feature layout: an index's stored features are only meaningful to the
    classifier when they were computed by the same rules (bodies are not kept to recompute them)."""
    return hashlib.sha256("\n".join(rules.FEATURE_NAMES).encode()).hexdigest()[:16]


def _grown(array: np.ndarray, used: int, needed: int) -> np.ndarray:
    """``array`` with room for ``needed`` rows: capacity grows by a quarter, so adding one issue to
    a large index copies nothing most of the time (a plain vstack copied every vector on every
    add: 1.5 GB per issue at 1M) while spare room stays under 25%."""
    if needed <= len(array):
        return array
    bigger = np.empty((max(needed, len(array) + len(array) // 4, 64), array.shape[1]), dtype=array.dtype)
    bigger[:used] = array[:used]
    return bigger


def _read_search(path: Path, dim: int, count: int) -> VectorSearch | None:
    if not path.exists():
        return None
    try:
        saved = VectorSearch.read(path, dim)
    except RuntimeError:
        return None  # unreadable: rebuild from the vectors
    return saved if saved.ntotal == count and saved.kind != "flat" else None


def _atomic(target: Path, write) -> None:  # type: ignore[no-untyped-def]
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the index is shared with worker processes
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
