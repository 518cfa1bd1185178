"""Shared write pacing per installation, kept in the database so several worker processes draw on
one budget: GitHub's secondary limits are 80 writes/min and 500/h per installation; we stay at
<= 60/min, <= 450/h and >= 1 s between writes (RELIABILITY 24, 29)."""
from __future__ import annotations

import time
from typing import Callable

from triagebot.db import Database
from triagebot.ports import GitHubPort

PER_MINUTE = 60
PER_HOUR = 450
SPACING_S = 1.0


class WritePacer:
    """``reserve(installation)`` books the earliest allowed slot and returns how long to wait."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.db, self.clock, self.sleep = db, clock, sleep

    def reserve(self, installation_id: int) -> float:
        with self.db.transaction():
            now = self.clock()
            rows = self.db.query("SELECT at FROM write_ledger WHERE installation_id = ? AND at > ? "
                                 "ORDER BY at", (installation_id, now - 3600))
            slot = next_slot([r[0] for r in rows], now)
            self.db.execute("INSERT INTO write_ledger (installation_id, at) VALUES (?, ?)",
                            (installation_id, slot))
            self.db.execute("DELETE FROM write_ledger WHERE at < ?", (now - 7200,))
        return max(0.0, slot - now)

    def record(self, installation_id: int, at: float) -> None:
        """``ratelimit.Ledger`` protocol: lets github.py's limiter share this DB ledger."""
        self.db.execute("INSERT INTO write_ledger (installation_id, at) VALUES (?, ?)",
                        (installation_id, at))

    def recent(self, installation_id: int, since: float) -> list[float]:
        rows = self.db.query("SELECT at FROM write_ledger WHERE installation_id = ? AND at >= ? "
                             "ORDER BY at", (installation_id, since))
        return [r[0] for r in rows]

    def wait(self, installation_id: int) -> None:
        delay = self.reserve(installation_id)
        if delay > 0:
            self.sleep(delay)


def next_slot(booked: list[float], now: float) -> float:
    """Earliest time >= now that keeps spacing, the per-minute and the per-hour caps. Pure."""
    slot = max([now] + [b + SPACING_S for b in booked[-1:]])
    while True:
        in_minute = [b for b in booked if slot - 60 < b <= slot]
        in_hour = [b for b in booked if slot - 3600 < b <= slot]
        if len(in_minute) >= PER_MINUTE:
            slot = in_minute[-PER_MINUTE] + 60
        elif len(in_hour) >= PER_HOUR:
            slot = in_hour[-PER_HOUR] + 3600
        else:
            return slot


class PacedPort:
    """A ``GitHubPort`` whose write calls wait for the installation's shared budget first."""

    WRITES = ("create_comment", "edit_comment", "add_labels", "remove_label")

    def __init__(self, port: GitHubPort, pacer: WritePacer, installation_id: int) -> None:
        self._port, self._pacer, self._installation = port, pacer, installation_id

    def __getattr__(self, name: str):  # noqa: ANN204 - forwards the GitHubPort protocol
        attr = getattr(self._port, name)
        if name not in self.WRITES:
            return attr

        def paced(*args, **kwargs):  # noqa: ANN002, ANN003
            self._pacer.wait(self._installation)
            return attr(*args, **kwargs)

        return paced
