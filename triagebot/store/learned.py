"""What the bot learns, as rows of the database (issue #14): indexed issues, versioned artifacts
(the fitted classifier, the calibration record), the trainer's lease. Plain SQL over
``db.Database``, the same on SQLite and PostgreSQL; the in-memory search cache built from these
rows is ``learning.shared``'s business, not this module's.

Every change is one transaction that takes the next number of one clock (``index_clock``) and
stamps every row it writes with it. Taking the number locks the clock's row until the transaction
ends, so numbers become visible in the order they were taken: a reader that has seen version N has
seen every change up to N, and catches up later by reading only rows with a higher version. A
removed issue leaves a tombstone (its key and version, nothing of its content) so other processes
learn that it went."""
from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from triagebot.store.db import Database

INDEX_LOCK = "triagebot:index"  # ``Database.lock`` key every index writer takes
CHANNEL = "triagebot_index"  # PostgreSQL NOTIFY channel: a change committed, payload its version


@dataclass(frozen=True)
class ItemRow:
    """One indexed issue as stored: ``item`` is ``IndexedIssue`` JSON, vector and features are
    float32 bytes; all three None for a tombstone (the issue was removed at ``version``)."""

    repo: str
    number: int
    version: int
    item: str | None
    vector: bytes | None
    features: bytes | None

    @property
    def removed(self) -> bool:
        return self.item is None


@dataclass(frozen=True)
class Artifact:
    name: str
    version: int  # the clock's number when it was stored
    index_version: int  # the index version it was made from (a classifier: fitted on)
    body: bytes


@dataclass(frozen=True)
class ItemBatch:
    """Consecutive indexed issues as columns (``LearnedStore.batches``): a cold load decodes a
    batch's vectors with one ``frombuffer`` instead of one small array per row, and never builds
    a per-row object."""

    keys: list[tuple[str, int]]
    versions: list[int]
    items: list[str]  # ``IndexedIssue`` JSON, one per key
    vectors: np.ndarray  # (rows, dim) float32, read-only view of the fetched bytes
    features: np.ndarray  # (rows, n_features) float32


_COLUMNS = "repo, number, version, item, vector, features"


class LearnedStore:
    """The learning record over one database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # changes -----------------------------------------------------------------------------------
    @contextmanager
    def change(self) -> Iterator[Change]:
        """One change: a transaction under the index lock that writes with the next version.
        Index writers do not take the queue's global write lock (``serialized=False``): they only
        wait for each other, never hold up a job claim. On PostgreSQL the commit notifies
        ``CHANNEL`` listeners (``learning.shared.start_listener``) with the version."""
        with self.db.transaction(serialized=False):
            self.db.lock(INDEX_LOCK)
            change = Change(self)
            yield change
            if change.written and self.db.postgres:  # delivered when (and only if) it commits
                self.db.execute("SELECT pg_notify(?, ?)", (CHANNEL, str(change.version)))

    def head(self) -> int:
        """The last version any change took (committed ones only, as seen from here)."""
        return int(self.db.query("SELECT version FROM index_clock WHERE name = 'index'")[0][0])

    def _next_version(self) -> int:
        self.db.execute("UPDATE index_clock SET version = version + 1 WHERE name = 'index'")
        return self.head()

    # reading -----------------------------------------------------------------------------------
    def rows_since(self, version: int) -> list[ItemRow]:
        """Every row written after ``version`` (tombstones included), oldest change first."""
        sql = f"SELECT {_COLUMNS} FROM index_items WHERE version > ? ORDER BY version, repo, number"
        return [_row(r) for r in self.db.query(sql, (version,))]

    def batches(self, dim: int, n_features: int, size: int = 5000) -> Iterator[ItemBatch]:
        """Every indexed issue (no tombstones) in (repo, number) order, ``size`` at a time, as
        columns: what a cold worker reads (``Database.stream``: binary, chunked). A stored vector
        or feature row of another width than ``dim`` / ``n_features`` is a ``ValueError``."""
        sql = f"SELECT {_COLUMNS} FROM index_items WHERE item IS NOT NULL ORDER BY repo, number"
        for rows in self.db.stream(sql, size=size):
            vectors = np.frombuffer(b"".join(r[4] for r in rows), np.float32)
            features = np.frombuffer(b"".join(r[5] for r in rows), np.float32)
            if vectors.size != len(rows) * dim or features.size != len(rows) * n_features:
                raise ValueError(f"stored vectors or features are not {dim} / {n_features} wide")
            yield ItemBatch([(str(r[0]), int(r[1])) for r in rows], [int(r[2]) for r in rows],
                            [str(r[3]) for r in rows], vectors.reshape(len(rows), dim),
                            features.reshape(len(rows), n_features))

    def keys(self) -> list[tuple[str, int]]:
        """The keys of every indexed issue (no tombstones)."""
        return [(str(r), int(n)) for r, n in
                self.db.query("SELECT repo, number FROM index_items WHERE item IS NOT NULL")]

    def count(self) -> int:
        return int(self.db.query("SELECT COUNT(*) FROM index_items WHERE item IS NOT NULL")[0][0])

    def meta(self) -> dict[str, str]:
        """The index's description (embedder, dims, feature layout); empty before an import."""
        return {name: value for name, value in self.db.query("SELECT name, value FROM index_meta")}

    def artifact(self, name: str, newer_than: int = 0) -> Artifact | None:
        """The latest artifact called ``name``, when newer than ``newer_than``."""
        rows = self.db.query("SELECT name, version, index_version, body FROM index_artifacts "
                             "WHERE name = ? AND version > ? ORDER BY version DESC LIMIT 1",
                             (name, newer_than))
        if not rows:
            return None
        name, version, index_version, body = rows[0]
        return Artifact(name, int(version), int(index_version), bytes(body))

    def artifact_version(self, name: str) -> int:
        rows = self.db.query("SELECT MAX(version) FROM index_artifacts WHERE name = ?", (name,))
        return int(rows[0][0] or 0)

    def analyze(self) -> None:
        """After a bulk import: PostgreSQL's planner otherwise guesses a freshly filled table's
        statistics and may scan every stored vector for a catch-up (measured: 200 ms at 20k rows
        instead of 2 ms); SQLite's planner uses the version index anyway."""
        if self.db.postgres:
            self.db.execute("ANALYZE index_items")

    # the trainer's lease -----------------------------------------------------------------------
    def take_lease(self, name: str, holder: str, seconds: float, now: float | None = None) -> bool:
        """Hold ``name`` for ``seconds`` unless someone else holds it now (a lapsed lease of a
        process that died is taken over). Re-taking one's own lease extends it."""
        now = time.time() if now is None else now
        with self.db.transaction(serialized=False):
            self.db.lock(f"lease:{name}")
            rows = self.db.query("SELECT holder, until FROM leases WHERE name = ?", (name,))
            if rows and rows[0][0] != holder and float(rows[0][1]) > now:
                return False
            self.db.execute("INSERT INTO leases (name, holder, until) VALUES (?,?,?) ON CONFLICT "
                            "(name) DO UPDATE SET holder = excluded.holder, until = excluded.until",
                            (name, holder, now + seconds))
        return True

    def release_lease(self, name: str, holder: str) -> None:
        self.db.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))


class Change:
    """The writes of one transaction, all stamped with one version (taken on first write)."""

    def __init__(self, store: LearnedStore) -> None:
        self.store, self.db = store, store.db
        self._version: int | None = None

    @property
    def written(self) -> bool:
        """Did this change write anything (and so take a version)?"""
        return self._version is not None

    @property
    def version(self) -> int:
        if self._version is None:
            self._version = self.store._next_version()
        return self._version

    def put(self, rows: Sequence[tuple[str, int, str, str, int | None, bytes, bytes]]) -> None:
        """Add or replace issues: (repo, number, item JSON, visibility, installation, vector,
        features)."""
        if not rows:
            return
        version = self.version
        sql = ("INSERT INTO index_items (repo, number, version, item, visibility, installation_id, "
               "vector, features) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (repo, number) DO UPDATE SET "
               "version = excluded.version, item = excluded.item, visibility = excluded.visibility, "
               "installation_id = excluded.installation_id, vector = excluded.vector, "
               "features = excluded.features")
        self.db.execute_many(sql, [(repo, number, version, item, visibility, inst, vec, feat)
                                   for repo, number, item, visibility, inst, vec, feat in rows])

    def remove(self, keys: Sequence[tuple[str, int]]) -> None:
        """Tombstones: the content goes, the key stays with this version."""
        if not keys:
            return
        version = self.version
        self.db.execute_many("UPDATE index_items SET version = ?, item = NULL, visibility = NULL, "
                             "installation_id = NULL, vector = NULL, features = NULL "
                             "WHERE repo = ? AND number = ?",
                             [(version, repo, number) for repo, number in keys])

    def set_meta(self, values: dict[str, str]) -> None:
        self.db.execute_many("INSERT INTO index_meta (name, value) VALUES (?,?) ON CONFLICT (name) "
                             "DO UPDATE SET value = excluded.value", list(values.items()))

    def put_artifact(self, name: str, body: bytes, index_version: int) -> int:
        """Store a new version of ``name``; older versions stay a while (``keep`` newest 3)."""
        version = self.version
        self.db.execute("INSERT INTO index_artifacts (name, version, index_version, body, at) "
                        "VALUES (?,?,?,?,?)", (name, version, index_version, body, time.time()))
        self.db.execute("DELETE FROM index_artifacts WHERE name = ? AND version NOT IN (SELECT "
                        "version FROM index_artifacts WHERE name = ? ORDER BY version DESC LIMIT 3)",
                        (name, name))
        return version


def _row(r: tuple[object, ...]) -> ItemRow:
    repo, number, version, item, vector, features = r
    return ItemRow(str(repo), int(number), int(version),  # type: ignore[call-overload]
                   None if item is None else str(item),
                   None if vector is None else bytes(vector),  # type: ignore[call-overload]
                   None if features is None else bytes(features))  # type: ignore[call-overload]

