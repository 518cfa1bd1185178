"""The faiss structure behind ``IssueIndex``, chosen by size (see index.py for why).

Below ``FLAT_MAX`` rows: exact inner-product search (``IndexFlatIP`` under ``IndexIDMap2``).
From ``FLAT_MAX`` rows on: ``IndexIVFPQ`` (compressed codes, inverted lists) whose candidates are
re-ranked exactly against the float vectors ``IssueIndex`` keeps anyway, so scores stay true
cosines. Ids are ``IssueIndex`` rows in both, so replacing an issue is remove-then-add."""
from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import faiss
import numpy as np

FLAT_MAX = 50_000  # exact search of 50k x 384 floats is ~5 ms on one core; beyond, go approximate
DIMS_PER_CODE = 8  # PQ sub-vector width: 384 dims -> 48 one-byte codes a vector
NPROBE = 48
RERANK = 16  # candidates fetched per result wanted (at least 256), re-ranked exactly
TRAIN_PER_LIST = 64
SMALL_BATCH = 1000  # below this, faiss runs single-threaded (see _single_thread)


def nlist_for(n: int) -> int:
    """About sqrt(n) inverted lists, a power of two (1M rows -> 1024)."""
    return int(2 ** round(math.log2(max(64.0, math.sqrt(n)))))


def pq_m(dim: int) -> int:
    """Number of PQ sub-quantisers: about dim / 8, and a divisor of dim as faiss requires."""
    return next(m for m in range(max(1, dim // DIMS_PER_CODE), 0, -1) if dim % m == 0)


class VectorSearch:
    """Cosine search over rows of ``vectors`` (which the caller owns and passes in)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.kind = "flat"
        self.index: faiss.Index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    def add(self, vectors: np.ndarray, ids: np.ndarray, all_vectors: np.ndarray) -> None:
        """Add rows; crossing ``FLAT_MAX`` switches once to IVF-PQ trained on ``all_vectors``."""
        if self.kind == "flat" and len(all_vectors) >= FLAT_MAX:
            self.rebuild(all_vectors)
            return
        with _single_thread(len(vectors) < SMALL_BATCH):
            self.index.add_with_ids(np.ascontiguousarray(vectors, np.float32), ids.astype(np.int64))

    def rebuild(self, all_vectors: np.ndarray) -> None:
        """Train IVF-PQ on a sample of ``all_vectors`` and add them all (ids = rows)."""
        n = len(all_vectors)
        nlist = nlist_for(n)
        quantiser = faiss.IndexFlatIP(self.dim)
        ivf = faiss.IndexIVFPQ(quantiser, self.dim, nlist, pq_m(self.dim), 8, faiss.METRIC_INNER_PRODUCT)
        sample = np.random.default_rng(0).choice(n, min(n, nlist * TRAIN_PER_LIST), replace=False)
        ivf.train(np.ascontiguousarray(all_vectors[np.sort(sample)], np.float32))
        # a hash direct map makes remove_ids cheap for replacements
        ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]  # faiss stubs lack DirectMap
        ivf.nprobe = NPROBE
        for start in range(0, n, 100_000):
            chunk = np.ascontiguousarray(all_vectors[start:start + 100_000], np.float32)
            ivf.add_with_ids(chunk, np.arange(start, start + len(chunk), dtype=np.int64))
        self.index, self.kind = ivf, "ivfpq"

    def remove(self, row: int) -> None:
        self.index.remove_ids(np.array([row], dtype=np.int64))  # type: ignore[arg-type]  # stubs: IDSelector only

    def search(self, query: np.ndarray, fetch: int, vectors: np.ndarray) -> list[tuple[int, float]]:
        """(row, cosine) best first; IVF-PQ candidates are re-scored against ``vectors``."""
        q = np.ascontiguousarray(query.reshape(1, -1), np.float32)
        with _single_thread():
            return self._search(q, fetch, vectors)

    def _search(self, q: np.ndarray, fetch: int, vectors: np.ndarray) -> list[tuple[int, float]]:
        if self.kind == "flat":
            scores, rows = self.index.search(q, fetch)
            return [(int(r), float(s)) for r, s in zip(rows[0], scores[0]) if r >= 0]
        _, rows = self.index.search(q, max(fetch * RERANK, 256))
        cand = rows[0][rows[0] >= 0]
        exact = vectors[cand] @ q[0]
        best = np.argsort(-exact, kind="stable")[:fetch]
        return [(int(cand[i]), float(exact[i])) for i in best]

    def save(self, path: Path) -> None:
        faiss.write_index(self.index, str(path))

    def to_bytes(self) -> bytes:
        return faiss.serialize_index(self.index).tobytes()

    def clone(self) -> VectorSearch:
        """An independent copy (its own faiss structure: 12 ms for IVF-PQ at 100k issues, 35 ms
        for a flat index at 49k, on a 2-core machine)."""
        twin = copy.copy(self)
        twin.index = faiss.clone_index(self.index)
        return twin

    @classmethod
    def from_bytes(cls, data: bytes, dim: int) -> VectorSearch:
        """What ``to_bytes`` wrote (the database keeps a large index's trained structure, so a
        cold worker does not retrain it: 20 s of a 100k-issue load)."""
        return cls._adopted(cls(dim), faiss.deserialize_index(np.frombuffer(data, np.uint8)))

    @classmethod
    def read(cls, path: Path, dim: int) -> VectorSearch:
        return cls._adopted(cls(dim), faiss.read_index(str(path)))

    @staticmethod
    def _adopted(store: VectorSearch, index: faiss.Index) -> VectorSearch:
        store.index = index
        ivf = faiss.try_extract_index_ivf(store.index)
        if ivf is not None:
            ivf.nprobe = NPROBE
            store.kind = "ivfpq"
        return store


@contextmanager
def _single_thread(active: bool = True) -> Iterator[None]:
    """One query or a few added vectors: waking faiss's OpenMP threads costs more than the work
    (measured on 2 busy cores: adding one vector to IVF-PQ took 13 ms with 2 threads, 0.02 ms
    with 1; one flat search of 822 rows took 17 ms)."""
    threads = faiss.omp_get_max_threads()
    if active:
        faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(threads)
