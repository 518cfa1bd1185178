"""The write ledger in the database, so several worker processes draw on one per-installation
budget (RELIABILITY 24, 29). The pacing rule itself lives in ``ratelimit``; this is its shared
``Ledger``: booking a slot reads the recent writes and records the new one in one transaction."""
from __future__ import annotations

from triagebot.github.ratelimit import HOUR, WriteBudget, next_slot
from triagebot.store.db import Database


class DbLedger:
    """``ratelimit.Ledger`` on the ``write_ledger`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, installation_id: int, at: float) -> None:
        self.db.execute("INSERT INTO write_ledger (installation_id, at) VALUES (?, ?)",
                        (installation_id, at))

    def recent(self, installation_id: int, since: float) -> list[float]:
        rows = self.db.query("SELECT at FROM write_ledger WHERE installation_id = ? AND at >= ? "
                             "ORDER BY at", (installation_id, since))
        return [r[0] for r in rows]

    def book(self, installation_id: int, now: float, budget: WriteBudget) -> float:
        with self.db.transaction():
            slot = next_slot(self.recent(installation_id, now - HOUR), now, budget)
            self.record(installation_id, slot)
            self.db.execute("DELETE FROM write_ledger WHERE at < ?", (now - 2 * HOUR,))
        return slot
