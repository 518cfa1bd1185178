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


class ReviewAccess:
    """The review page's login attempts and server-side sessions (``review.guard`` decides)."""

    db: Database
    clock: Clock

    def login_failures(self, address: str | None, since: float) -> list[float]:
        """Times of failed logins since ``since``, of one address or (None) of all."""
        if address is None:
            rows = self.db.query("SELECT at FROM login_attempts WHERE at >= ?", (since,))
        else:
            rows = self.db.query("SELECT at FROM login_attempts WHERE addr = ? AND at >= ?",
                                 (address, since))
        return [float(r[0]) for r in rows]

    def add_login_attempt(self, address: str, at: float) -> int | None:
        return self.db.insert_id("INSERT INTO login_attempts (addr, at) VALUES (?,?)", (address, at))

    def drop_login_attempt(self, attempt_id: int) -> None:
        self.db.execute("DELETE FROM login_attempts WHERE id = ?", (attempt_id,))

    def open_session(self, sid: str, created: float, expires: float) -> None:
        self.db.execute("DELETE FROM review_sessions WHERE expires_at < ?", (created,))
        self.db.execute("DELETE FROM login_attempts WHERE at < ?", (created - 86_400,))
        self.db.execute("INSERT INTO review_sessions (sid, created_at, expires_at) VALUES (?,?,?)",
                        (sid, created, expires))

    def session_alive(self, sid: str) -> bool:
        return bool(self.db.query("SELECT 1 FROM review_sessions WHERE sid = ? AND expires_at > ?",
                                  (sid, self.clock())))

    def end_session(self, sid: str) -> None:
        self.db.execute("DELETE FROM review_sessions WHERE sid = ?", (sid,))


class Store(ReviewAccess):
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
        """Distinct issues of one author that took a flood-limit slot since ``since``, other than
        ``exclude``: the triage job's read of the limit (``take_author_slot`` books atomically)."""
        sql = ("SELECT COUNT(*) FROM author_slots WHERE author = ? AND at >= ? "
               "AND NOT (repo = ? AND number = ?)")
        return int(self.db.query(sql, (author, since, *exclude))[0][0])

    def take_author_slot(self, author: str, repo: str, number: int, limit: int,
                         window_s: float = 3600.0) -> bool:
        """The flood limit per author: may this issue be triaged, at most ``limit`` distinct
        issues of ``author`` per ``window_s``? Check and booking are one transaction, so two
        workers racing on the author's 5th and 6th issue cannot both get through. An issue that
        already holds a slot (a retried job) keeps it."""
        now = self.clock()
        with self.db.transaction():
            self.db.execute("DELETE FROM author_slots WHERE author = ? AND at < ?",
                            (author, now - window_s))
            if self.db.query("SELECT 1 FROM author_slots WHERE repo = ? AND number = ?",
                             (repo, number)):
                return True
            if self.db.query("SELECT COUNT(*) FROM author_slots WHERE author = ?",
                             (author,))[0][0] >= limit:
                return False
            self.db.execute("INSERT INTO author_slots (repo, number, author, at) VALUES (?,?,?,?)",
                            (repo, number, author, now))
        return True

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

    def pause_installation(self, installation_id: int, seconds: float, reason: str) -> float:
        """GitHub rate-limited this installation: every job of it waits until the returned
        instant. One row per installation; a later, shorter limit never shortens a pause."""
        until = self.clock() + max(0.0, seconds)
        sql = ("INSERT INTO installation_pauses (installation_id, until, reason, updated_at) "
               "VALUES (?,?,?,?) ON CONFLICT (installation_id) DO UPDATE SET "
               "until = CASE WHEN excluded.until > installation_pauses.until "
               "THEN excluded.until ELSE installation_pauses.until END, "
               "reason = excluded.reason, updated_at = excluded.updated_at")
        self.db.execute(sql, (installation_id, until, reason[:500], self.clock()))
        return self.installation_paused_until(installation_id)

    def installation_paused_until(self, installation_id: int) -> float:
        rows = self.db.query("SELECT until FROM installation_pauses WHERE installation_id = ?",
                             (installation_id,))
        return float(rows[0][0]) if rows else 0.0

    def installation_pause(self, installation_id: int) -> float:
        """Seconds this installation must still wait for GitHub's rate limit (0: none)."""
        return max(0.0, self.installation_paused_until(installation_id) - self.clock())

    def installation_active(self, installation_id: int) -> bool | None:
        rows = self.db.query("SELECT active FROM installations WHERE installation_id = ?",
                             (installation_id,))
        return bool(rows[0][0]) if rows else None

    # forgetting (an uninstall, a repository removed from an installation or deleted) -----------
    def repos_of_installation(self, installation_id: int) -> list[str]:
        """Every repository we know under this installation: those its events announced and
        those any job of it concerned (installations older than our records announce none)."""
        sql = ("SELECT repo FROM installation_repos WHERE installation_id = ? UNION "
               "SELECT DISTINCT repo FROM jobs WHERE installation_id = ? AND repo IS NOT NULL "
               "AND repo <> ''")
        return sorted({row[0] for row in self.db.query(sql, (installation_id, installation_id))})

    def forget_repos(self, repos: list[str], installation_id: int | None = None,
                     keep_job: int | None = None) -> dict[str, int]:
        """Delete what we stored about these repositories - triages, our comment ids, feedback,
        the authors' flood-limit slots, jobs (their payloads hold comment text) - and remember
        that they are forgotten, so a job already queued for them stores nothing new. Returns
        rows deleted per table."""
        deleted = {"triages": 0, "comments": 0, "feedback": 0, "author_slots": 0, "jobs": 0}
        with self.db.transaction():
            for repo in {r for r in repos if r}:
                for table in ("triages", "comments", "feedback", "author_slots"):
                    deleted[table] += self.db.execute(
                        f"DELETE FROM {table} WHERE lower(repo) = lower(?)", (repo,))
                deleted["jobs"] += self.db.execute(
                    "DELETE FROM jobs WHERE lower(repo) = lower(?) AND id <> ?", (repo, keep_job or -1))
                self.db.execute("DELETE FROM installation_repos WHERE lower(repo) = lower(?)", (repo,))
                self.db.execute("INSERT INTO forgotten_repos (repo, installation_id, at) VALUES "
                                "(?,?,?) ON CONFLICT (repo) DO UPDATE SET at = excluded.at",
                                (repo.lower(), installation_id, self.clock()))
        return deleted

    def unforget(self, repos: list[str]) -> None:
        """The repositories were (re-)added to an installation: jobs for them run again."""
        for repo in repos:
            self.db.execute("DELETE FROM forgotten_repos WHERE repo = ?", (repo.lower(),))

    def forgotten(self, repo: str) -> bool:
        return bool(self.db.query("SELECT 1 FROM forgotten_repos WHERE repo = ?", (repo.lower(),)))

    def forget_issue(self, repo: str, number: int, keep_job: int | None = None) -> int:
        """A deleted issue: its triage, comment id, feedback, author slot and jobs go; returns
        rows deleted."""
        count = 0
        with self.db.transaction():
            for table in ("triages", "comments", "feedback", "author_slots"):
                count += self.db.execute(f"DELETE FROM {table} WHERE lower(repo) = lower(?) AND "
                                         "number = ?", (repo, number))
            count += self.db.execute("DELETE FROM jobs WHERE lower(repo) = lower(?) AND number = ? "
                                     "AND id <> ?", (repo, number, keep_job or -1))
        return count

    def rename_repo(self, old: str, new: str) -> None:
        """A renamed or transferred repository: our records follow it to its new name."""
        if not old or not new or old == new:
            return
        with self.db.transaction():
            for table in ("triages", "comments", "author_slots"):
                self.db.execute(f"DELETE FROM {table} WHERE repo = ? AND number IN "
                                f"(SELECT number FROM {table} WHERE lower(repo) = lower(?))", (new, old))
            for table in ("triages", "comments", "feedback", "author_slots", "jobs"):
                self.db.execute(f"UPDATE {table} SET repo = ? WHERE lower(repo) = lower(?)", (new, old))
            self.db.execute("DELETE FROM installation_repos WHERE repo = ?", (new,))
            self.db.execute("UPDATE installation_repos SET repo = ? WHERE lower(repo) = lower(?)",
                            (new, old))


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"))
