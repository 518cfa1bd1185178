"""Bookkeeping around LLM calls: answer cache, hourly budget, and usage statistics.

Kept apart from the client so each piece is testable with a fake clock and a real database, and
so the cost controls (RELIABILITY 37) are visible in one place.

Two homes for the cache and the budget: this process (``AnswerCache``, ``Budget``: the CLI, or an
SQLite file named by ``TRIAGEBOT_LLM_CACHE``), or the service's database (``DbAnswerCache``,
``DbBudget``: tables ``llm_answers`` / ``llm_calls``, SQLite or PostgreSQL through the same SQL),
where every worker process on every machine shares one cache and one budget per installation, as
the README promises.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, Field

if TYPE_CHECKING:  # annotations only: the LLM path needs no database to run
    from triagebot.store.db import Database

Clock = Callable[[], float]
WINDOW_S = 3600.0  # the budget's sliding hour


class AnswerStore(Protocol):
    """Where validated answers are kept (``AnswerCache`` or ``DbAnswerCache``)."""

    def get(self, key: str) -> str | None: ...

    def put(self, key: str, answer: str, scope: str = "") -> None: ...

    def forget(self, scopes: list[str]) -> int: ...

    def close(self) -> None: ...


class CallBudget(Protocol):
    """The hourly call budget (``Budget`` or ``DbBudget``)."""

    per_hour: int

    def take(self, installation: str) -> bool: ...


def cache_key(model: str, version: str, system: str, user: str) -> str:
    """Content hash: the same model, prompt version and prompt text give the same answer key."""
    digest = hashlib.sha256()
    for part in (model, version, system, user):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


class AnswerCache:
    """Validated raw answers by content hash: in memory, or in an SQLite file when a path is given.

    Only answers that passed validation are stored, so a cache hit never skips a check that a
    fresh answer would have failed (the cross-field checks are re-run on every hit anyway).
    Each answer remembers the repository it was about (``scope``) so ``forget`` can delete a
    repository's answers when its installation goes (they quote its issues). With a file, the
    file is the only copy (no per-process memory that an uninstall in another worker would miss)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self._memory: dict[str, tuple[str, str]] = {}
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path:
            self._db = sqlite3.connect(str(path), check_same_thread=False)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS llm_cache "
                "(key TEXT PRIMARY KEY, answer TEXT NOT NULL, created REAL NOT NULL)"
            )
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(llm_cache)")}
            if "scope" not in columns:  # cache files written before answers had a scope
                self._db.execute("ALTER TABLE llm_cache ADD COLUMN scope TEXT NOT NULL DEFAULT ''")
            self._db.commit()

    def get(self, key: str) -> str | None:
        with self._lock:
            if self._db is None:
                hit = self._memory.get(key)
                return hit[0] if hit else None
            row = self._db.execute("SELECT answer FROM llm_cache WHERE key = ?", (key,)).fetchone()
            return row[0] if row else None

    def put(self, key: str, answer: str, scope: str = "") -> None:
        with self._lock:
            if self._db is None:
                self._memory[key] = (answer, scope.lower())
                return
            self._db.execute(
                "INSERT OR REPLACE INTO llm_cache (key, answer, created, scope) VALUES (?, ?, ?, ?)",
                (key, answer, time.time(), scope.lower()),
            )
            self._db.commit()

    def forget(self, scopes: list[str]) -> int:
        """Delete every answer about these repositories; returns how many."""
        wanted = {s.lower() for s in scopes if s}
        with self._lock:
            if self._db is None:
                gone = [k for k, (_, scope) in self._memory.items() if scope in wanted]
                for key in gone:
                    del self._memory[key]
                return len(gone)
            count = 0
            for scope in wanted:
                count += self._db.execute("DELETE FROM llm_cache WHERE scope = ?", (scope,)).rowcount
            self._db.commit()
            return count

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class Budget:
    """At most ``per_hour`` LLM classifications per installation in any sliding hour.

    Past the budget the refiner returns the offline triage (the job still completes)."""

    def __init__(self, per_hour: int, clock: Clock = time.monotonic) -> None:
        self.per_hour = per_hour
        self._clock = clock
        self._spent: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def take(self, installation: str) -> bool:
        """Spend one unit for ``installation`` if any is left; False when exhausted."""
        now = self._clock()
        with self._lock:
            spent = self._spent[installation]
            while spent and now - spent[0] >= WINDOW_S:
                spent.popleft()
            if len(spent) >= self.per_hour:
                return False
            spent.append(now)
            return True


class DbAnswerCache:
    """``AnswerCache`` in the service's database (table ``llm_answers``): a hit for one worker is
    a hit for all, and ``forget`` (an uninstall handled by any worker) deletes the answers every
    worker would otherwise have served. The database owns the connections; ``close`` is a no-op."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, key: str) -> str | None:
        rows = self.db.query("SELECT answer FROM llm_answers WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

    def put(self, key: str, answer: str, scope: str = "") -> None:
        self.db.execute("INSERT INTO llm_answers (key, answer, scope, created) VALUES (?,?,?,?) "
                        "ON CONFLICT (key) DO UPDATE SET answer = excluded.answer, "
                        "scope = excluded.scope, created = excluded.created",
                        (key, answer, scope.lower(), time.time()))

    def forget(self, scopes: list[str]) -> int:
        """Delete every answer about these repositories, in one transaction; returns how many."""
        wanted = sorted({s.lower() for s in scopes if s})
        with self.db.transaction(serialized=False):
            return sum(self.db.execute("DELETE FROM llm_answers WHERE scope = ?", (scope,))
                       for scope in wanted)

    def close(self) -> None:
        """Nothing to close: the connections are the database's."""


class DbBudget:
    """``Budget`` in the service's database (table ``llm_calls``): one budget per installation
    for all processes. ``take`` is one transaction that holds the installation's lock while it
    counts and books (PostgreSQL: an advisory lock on the installation; SQLite: the file's write
    lock), so concurrent callers in any process can never spend more than ``per_hour``. The
    clock is wall time (processes on several machines compare their stamps), not monotonic."""

    def __init__(self, db: Database, per_hour: int, clock: Clock = time.time) -> None:
        self.db = db
        self.per_hour = per_hour
        self._clock = clock

    def take(self, installation: str) -> bool:
        """Spend one unit for ``installation`` if any is left; False when exhausted."""
        if self.per_hour <= 0:
            return False
        now = self._clock()
        with self.db.transaction(serialized=False):
            self.db.lock(f"llm-budget:{installation}")
            self.db.execute("DELETE FROM llm_calls WHERE installation = ? AND at <= ?",
                            (installation, now - WINDOW_S))
            spent = self.db.query("SELECT COUNT(*) FROM llm_calls WHERE installation = ?",
                                  (installation,))[0][0]
            if int(spent) >= self.per_hour:
                return False
            self.db.execute("INSERT INTO llm_calls (installation, at) VALUES (?, ?)",
                            (installation, now))
        return True

    def spent(self, installation: str) -> int:
        """Calls booked for ``installation`` in the hour up to now (for reports and tests)."""
        rows = self.db.query("SELECT COUNT(*) FROM llm_calls WHERE installation = ? AND at > ?",
                             (installation, self._clock() - WINDOW_S))
        return int(rows[0][0])


class LLMStats(BaseModel):
    """What ``triagebot eval --llm`` reports about the LLM path."""

    calls: int = 0
    cache_hits: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_p50_ms: float = 0.0
    latency_p99_ms: float = 0.0
    refined: int = 0
    fallbacks: dict[str, int] = Field(default_factory=dict)


class StatsRecorder:
    """Thread-safe counters; ``snapshot`` turns them into ``LLMStats``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latencies: list[float] = []
        self._counts: Counter[str] = Counter()
        self._fallbacks: Counter[str] = Counter()

    def call(self, latency_s: float, tokens_in: int = 0, tokens_out: int = 0) -> None:
        with self._lock:
            self._latencies.append(latency_s * 1000)
            self._counts.update(calls=1, tokens_in=tokens_in, tokens_out=tokens_out)

    def count(self, what: str) -> None:
        with self._lock:
            self._counts[what] += 1

    def fallback(self, reason: str) -> None:
        with self._lock:
            self._fallbacks[reason] += 1

    def snapshot(self) -> LLMStats:
        with self._lock:
            lat = sorted(self._latencies)
            return LLMStats(
                calls=self._counts["calls"],
                cache_hits=self._counts["cache_hits"],
                tokens_in=self._counts["tokens_in"],
                tokens_out=self._counts["tokens_out"],
                latency_p50_ms=percentile(lat, 50),
                latency_p99_ms=percentile(lat, 99),
                refined=self._counts["refined"],
                fallbacks=dict(self._fallbacks),
            )


def percentile(ordered: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not ordered:
        return 0.0
    rank = max(1, -(-len(ordered) * pct // 100))
    return round(ordered[int(rank) - 1], 3)
