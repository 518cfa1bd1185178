"""What the service remembers: deliveries seen, triages posted, human feedback, installations and
the shared write ledger. Every method is one small SQL statement over ``db.Database``."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from triagebot.domain.models import Triage
from triagebot.store.db import Database

DELIVERY_TTL_S = 8 * 24 * 3600  # > GitHub's 3-day (github.com) and 7-day (GHES) redelivery windows
Clock = Callable[[], float]


class Feedback(BaseModel):
    repo: str
    number: int
    dimension: str
    old_id: str | None = None
    new_id: str | None = None
    who: str = ""
    source: str  # page | command | label | bot (a label the bot applied)
    at: float = 0.0


class StoredTriage(BaseModel):
    repo: str
    number: int
    author: str | None
    triage: Triage
    comment_id: int | None
    created_at: float
    updated_at: float


class Store:
    """Records over one database. ``clock`` is injectable so TTL and pacing tests need no sleeping."""

    def __init__(self, db: Database | str | Path, clock: Clock = time.time) -> None:
        self.db = db if isinstance(db, Database) else Database(db)
        self.clock = clock

    # deliveries ------------------------------------------------------------------------------
    def record_delivery(self, delivery_id: str, event: str, action: str | None) -> bool:
        """False when this delivery id was seen already (a redelivery)."""
        sql = ("INSERT INTO deliveries (delivery_id, event, action, received_at) VALUES (?,?,?,?) "
               "ON CONFLICT DO NOTHING")
        return self.db.execute(sql, (delivery_id, event, action, self.clock())) == 1

    def purge_deliveries(self, ttl_s: float = DELIVERY_TTL_S) -> int:
        return self.db.execute("DELETE FROM deliveries WHERE received_at < ?", (self.clock() - ttl_s,))

    def delivery_count(self) -> int:
        return self.db.query("SELECT COUNT(*) FROM deliveries")[0][0]

    # triages and comments ---------------------------------------------------------------------
    def save_triage(self, triage: Triage, author: str | None, comment_id: int | None) -> None:
        now = self.clock()
        sql = ("INSERT INTO triages (repo, number, author, triage, comment_id, created_at, "
               "updated_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT (repo, number) DO UPDATE SET "
               "triage = excluded.triage, comment_id = excluded.comment_id, "
               "updated_at = excluded.updated_at")
        args = (triage.repo, triage.number, author, triage.model_dump_json(), comment_id, now, now)
        self.db.execute(sql, args)

    def get_triage(self, repo: str, number: int) -> StoredTriage | None:
        rows = self.db.query("SELECT repo, number, author, triage, comment_id, created_at, "
                             "updated_at FROM triages WHERE repo = ? AND number = ?", (repo, number))
        if not rows:
            return None
        r = rows[0]
        return StoredTriage(repo=r[0], number=r[1], author=r[2],
                            triage=Triage.model_validate_json(r[3]), comment_id=r[4],
                            created_at=r[5], updated_at=r[6])

    def author_triages_since(self, author: str, since: float, exclude: tuple[str, int]) -> int:
        """Distinct issues of one author triaged since ``since`` (flood limit per author)."""
        sql = ("SELECT COUNT(*) FROM triages WHERE author = ? AND created_at >= ? "
               "AND NOT (repo = ? AND number = ?)")
        return self.db.query(sql, (author, since, *exclude))[0][0]

    def remember_comment(self, repo: str, number: int, comment_id: int) -> None:
        sql = ("INSERT INTO comments (repo, number, comment_id, posted_at) VALUES (?,?,?,?) "
               "ON CONFLICT (repo, number) DO UPDATE SET comment_id = excluded.comment_id")
        self.db.execute(sql, (repo, number, comment_id, self.clock()))

    def comment_id(self, repo: str, number: int) -> int | None:
        rows = self.db.query("SELECT comment_id FROM comments WHERE repo = ? AND number = ?",
                             (repo, number))
        return int(rows[0][0]) if rows else None

    # feedback ---------------------------------------------------------------------------------
    def add_feedback(self, fb: Feedback) -> None:
        sql = ("INSERT INTO feedback (repo, number, dimension, old_id, new_id, who, source, at) "
               "VALUES (?,?,?,?,?,?,?,?)")
        self.db.execute(sql, (fb.repo, fb.number, fb.dimension, fb.old_id, fb.new_id, fb.who,
                              fb.source, fb.at or self.clock()))

    def feedback(self, repo: str, number: int, since: float = 0.0) -> list[Feedback]:
        sql = ("SELECT repo, number, dimension, old_id, new_id, who, source, at FROM feedback "
               "WHERE repo = ? AND number = ? AND at >= ? ORDER BY at, id")
        keys = ("repo", "number", "dimension", "old_id", "new_id", "who", "source", "at")
        rows = self.db.query(sql, (repo, number, since))
        return [Feedback(**dict(zip(keys, row))) for row in rows]

    # installations ----------------------------------------------------------------------------
    def set_installation(self, installation_id: int, account: str, active: bool) -> None:
        sql = ("INSERT INTO installations (installation_id, account, active, updated_at) "
               "VALUES (?,?,?,?) ON CONFLICT (installation_id) DO UPDATE SET "
               "account = excluded.account, active = excluded.active, "
               "updated_at = excluded.updated_at")
        self.db.execute(sql, (installation_id, account, int(active), self.clock()))

    def set_repos(self, installation_id: int, added: list[str], removed: list[str]) -> None:
        for repo in added:
            self.db.execute("INSERT INTO installation_repos (installation_id, repo) VALUES (?,?) "
                            "ON CONFLICT DO NOTHING", (installation_id, repo))
        for repo in removed:
            self.db.execute("DELETE FROM installation_repos WHERE installation_id = ? AND repo = ?",
                            (installation_id, repo))

    def enabled_repos(self, installation_id: int) -> list[str]:
        sql = ("SELECT r.repo FROM installation_repos r JOIN installations i "
               "ON i.installation_id = r.installation_id WHERE r.installation_id = ? "
               "AND i.active = 1 ORDER BY r.repo")
        return [row[0] for row in self.db.query(sql, (installation_id,))]

    def installation_active(self, installation_id: int) -> bool | None:
        rows = self.db.query("SELECT active FROM installations WHERE installation_id = ?",
                             (installation_id,))
        return bool(rows[0][0]) if rows else None


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))
