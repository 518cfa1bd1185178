"""The suite's one fake clock: code under test takes ``clock`` (and often ``sleep``) as arguments,
so tests move time by hand instead of waiting for it."""
from __future__ import annotations

START = 1_800_000_000.0  # 2027-01-15 08:00 UTC: fixed, so times in expectations are stable


class FakeClock:
    """Time that only moves when a test (or a sleep through ``sleep``) moves it. Pass the instance
    where code wants ``clock()`` and ``clock.sleep`` where it wants ``sleep(seconds)``; the sleeps
    it was asked for are kept in ``sleeps``."""

    def __init__(self, now: float = START) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
