"""Bookkeeping around LLM calls: answer cache, hourly budget, and usage statistics.

Kept apart from the client so each piece is testable with a fake clock and a real SQLite file, and
so the cost controls (RELIABILITY 37) are visible in one place.
"""
from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

Clock = Callable[[], float]


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
            while spent and now - spent[0] >= 3600:
                spent.popleft()
            if len(spent) >= self.per_hour:
                return False
            spent.append(now)
            return True


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
