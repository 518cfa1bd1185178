"""Pacing of GitHub writes and reading GitHub's rate-limit signals (RELIABILITY 24-27).

GitHub's secondary limits (80 writes/min, 500/h per installation) are enforced server-side with
a 403 that can lock the installation out for minutes, so we stay under tighter margins ourselves:
at most 60 writes a minute, 450 an hour, and at least one second between writes. The ledger of
past writes is pluggable so several worker processes can share one (RELIABILITY 29)."""
from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

MINUTE = 60.0
HOUR = 3600.0
SECONDARY_WAIT = 60.0  # GitHub: "wait at least one minute" when no header says otherwise


class Ledger(Protocol):
    """Where write timestamps live; the SQLite store can offer one shared by all processes."""

    def record(self, installation_id: int, at: float) -> None: ...

    def recent(self, installation_id: int, since: float) -> list[float]: ...

    def book(self, installation_id: int, now: float, budget: WriteBudget) -> float:
        """Atomically pick the earliest allowed slot at or after ``now``, record it, return it
        (atomic across processes for a shared ledger, so two workers never take one slot)."""


class MemoryLedger:
    """Per-process ledger; enough for a single worker process."""

    def __init__(self) -> None:
        self._times: dict[int, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def record(self, installation_id: int, at: float) -> None:
        with self._lock:
            times = self._times[installation_id]
            times.append(at)
            while times and times[0] < at - HOUR:
                times.popleft()

    def recent(self, installation_id: int, since: float) -> list[float]:
        with self._lock:
            return [t for t in self._times[installation_id] if t >= since]

    def book(self, installation_id: int, now: float, budget: WriteBudget) -> float:
        with self._lock:
            slot = next_slot(list(self._times[installation_id]), now, budget)
            self._times[installation_id].append(slot)
            return slot


@dataclass(frozen=True)
class WriteBudget:
    per_minute: int = 60
    per_hour: int = 450
    min_gap: float = 1.0


def next_slot(times: list[float], now: float, budget: WriteBudget = WriteBudget()) -> float:
    """Earliest moment >= now at which one more write keeps every window within budget."""
    times = sorted(times)
    slot = now
    for _ in range(3):  # moving the slot forward can only free windows, so this settles fast
        start = slot
        if times:
            slot = max(slot, times[-1] + budget.min_gap)
        slot = _window_slot(times, slot, MINUTE, budget.per_minute)
        slot = _window_slot(times, slot, HOUR, budget.per_hour)
        if slot == start:
            break
    return slot


def _window_slot(times: list[float], slot: float, window: float, cap: int) -> float:
    inside = [t for t in times if t > slot - window]
    if len(inside) < cap:
        return slot
    return inside[-cap] + window


class WritePacer:
    """Blocks a writer until its installation's budget allows one more write, then records it.

    One lock per installation also keeps writes serialized (one in flight, RELIABILITY 25)."""

    def __init__(
        self,
        ledger: Ledger | None = None,
        budget: WriteBudget = WriteBudget(),
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.ledger = ledger or MemoryLedger()
        self.budget = budget
        self._clock = clock
        self._sleep = sleep
        self._locks: dict[int, threading.Lock] = defaultdict(threading.Lock)

    def delay(self, installation_id: int) -> float:
        """Seconds until the next write may start (0 when now); lets a queue defer instead of block."""
        now = self._clock()
        times = self.ledger.recent(installation_id, now - HOUR)
        return max(0.0, next_slot(times, now, self.budget) - now)

    def acquire(self, installation_id: int) -> float:
        """Wait for a slot, record the write, and return how long we waited."""
        with self._locks[installation_id]:
            now = self._clock()
            waited = max(0.0, self.ledger.book(installation_id, now, self.budget) - now)
            if waited > 0:
                self._sleep(waited)
            return waited


def rate_limit_wait(
    status: int, headers: Mapping[str, str], message: str, now: float
) -> float | None:
    """Seconds GitHub wants us to wait before retrying, or None if the response is no rate limit.

    Order follows GitHub's docs: Retry-After wins; then an exhausted primary quota waits for
    x-ratelimit-reset (+1 s, the reset instant is only known to the second); then a 429 or a
    secondary-limit 403 without headers waits one minute."""
    if status not in (403, 429):
        return None
    lower = {k.lower(): str(v) for k, v in headers.items()}
    retry_after = _number(lower.get("retry-after"))
    if retry_after is not None:
        return max(retry_after, 0.0)
    reset = _number(lower.get("x-ratelimit-reset"))
    if lower.get("x-ratelimit-remaining") == "0" and reset is not None:
        return max(reset - now, 0.0) + 1.0
    if status == 429 or _mentions_rate_limit(message):
        return SECONDARY_WAIT
    return None


def _mentions_rate_limit(message: str) -> bool:
    text = (message or "").lower()
    return "rate limit" in text or "abuse" in text or text.endswith("retry your request again later.")


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class QuotaTracker:
    """Remembers the last x-ratelimit-* seen per installation so the queue can pause early
    (RELIABILITY 27) instead of spending the last requests and hitting a 403."""

    def __init__(self, threshold: float = 0.10, clock: Callable[[], float] = time.time) -> None:
        self.threshold = threshold
        self._clock = clock
        self._seen: dict[int, tuple[int, int, float]] = {}

    def observe(self, installation_id: int, remaining: int, limit: int, reset: float) -> None:
        if limit > 0 and remaining >= 0:
            self._seen[installation_id] = (remaining, limit, reset)

    def should_pause(self, installation_id: int) -> bool:
        return self.resume_in(installation_id) > 0

    def resume_in(self, installation_id: int) -> float:
        """Seconds until the quota resets if we are below the threshold, else 0."""
        seen = self._seen.get(installation_id)
        if seen is None:
            return 0.0
        remaining, limit, reset = seen
        if remaining >= self.threshold * limit:
            return 0.0
        return max(0.0, reset - self._clock())
