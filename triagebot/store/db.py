"""A thin database adapter: SQLite by default (stdlib, WAL), PostgreSQL when the URL says so.

SQL elsewhere is written once with ``?`` placeholders and portable statements (``INSERT ... ON
CONFLICT DO NOTHING``, no vendor functions); this module translates placeholders for psycopg and
applies numbered migrations recorded in ``schema_version``."""
from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MIGRATIONS: list[str] = [
    # 1: the whole first schema
    """
    CREATE TABLE deliveries (delivery_id TEXT PRIMARY KEY, event TEXT NOT NULL, action TEXT,
        received_at DOUBLE PRECISION NOT NULL);
    CREATE INDEX deliveries_received ON deliveries (received_at);
    CREATE TABLE jobs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL,
        dedupe_key TEXT, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        run_after DOUBLE PRECISION NOT NULL, lease_until DOUBLE PRECISION, last_error TEXT,
        installation_id BIGINT, repo TEXT, number INTEGER, delivery_id TEXT,
        created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL);
    CREATE UNIQUE INDEX jobs_pending_key ON jobs (dedupe_key) WHERE status = 'queued';
    CREATE INDEX jobs_ready ON jobs (status, run_after);
    CREATE INDEX jobs_issue ON jobs (repo, number);
    CREATE TABLE triages (repo TEXT NOT NULL, number INTEGER NOT NULL, author TEXT,
        triage TEXT NOT NULL, comment_id BIGINT, created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, number));
    CREATE INDEX triages_author ON triages (author, created_at);
    CREATE TABLE comments (repo TEXT NOT NULL, number INTEGER NOT NULL, comment_id BIGINT NOT NULL,
        posted_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, number));
    CREATE TABLE feedback (id INTEGER PRIMARY KEY, repo TEXT NOT NULL,
        number INTEGER NOT NULL, dimension TEXT NOT NULL, old_id TEXT, new_id TEXT, who TEXT,
        source TEXT NOT NULL, at DOUBLE PRECISION NOT NULL);
    CREATE INDEX feedback_issue ON feedback (repo, number, at);
    CREATE TABLE installations (installation_id BIGINT PRIMARY KEY, account TEXT,
        active INTEGER NOT NULL DEFAULT 1, updated_at DOUBLE PRECISION NOT NULL);
    CREATE TABLE installation_repos (installation_id BIGINT NOT NULL, repo TEXT NOT NULL,
        PRIMARY KEY (installation_id, repo));
    CREATE TABLE write_ledger (id INTEGER PRIMARY KEY, installation_id BIGINT NOT NULL,
        at DOUBLE PRECISION NOT NULL);
    CREATE INDEX write_ledger_inst ON write_ledger (installation_id, at);
    """,
    # 2: privacy - replayed bodies, forgotten repositories, review sessions and login attempts
    """
    ALTER TABLE deliveries ADD COLUMN body_hash TEXT;
    ALTER TABLE jobs ADD COLUMN access TEXT;
    CREATE INDEX deliveries_body ON deliveries (body_hash, received_at);
    CREATE TABLE forgotten_repos (repo TEXT PRIMARY KEY, installation_id BIGINT,
        at DOUBLE PRECISION NOT NULL);
    CREATE TABLE review_sessions (sid TEXT PRIMARY KEY, created_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL);
    CREATE TABLE login_attempts (id INTEGER PRIMARY KEY, addr TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL);
    CREATE INDEX login_attempts_at ON login_attempts (at, addr);
    """,
]


class Database:
    """One connection per thread (sqlite3 objects must not cross threads); writes serialise through
    ``transaction()`` which takes the write lock up front so read-modify-write is atomic."""

    def __init__(self, url: str | Path) -> None:
        self.url = str(url)
        self.postgres = self.url.startswith(("postgresql://", "postgres://"))
        self._local = threading.local()
        self.migrate()

    def _connect(self) -> Any:
        if self.postgres:
            import psycopg  # optional dependency, only for PostgreSQL deployments

            return psycopg.connect(self.url, autocommit=True)
        if self.url != ":memory:":
            Path(self.url).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.url, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    @property
    def conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; returns the affected row count."""
        cur = self.conn.execute(self._sql(sql), tuple(params))
        return cur.rowcount

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self.conn.execute(self._sql(sql), tuple(params)).fetchall())

    def insert_id(self, sql: str, params: Sequence[Any] = ()) -> int | None:
        """INSERT returning the new row id (None when ON CONFLICT skipped it)."""
        rows = self.query(sql + " RETURNING id", params)
        return int(rows[0][0]) if rows else None

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """A write transaction. SQLite: BEGIN IMMEDIATE (other processes wait on busy_timeout)."""
        conn = self.conn
        if self.postgres:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(4242)")
                yield self
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def ping(self) -> bool:
        try:
            return self.query("SELECT 1")[0][0] == 1
        except Exception:  # noqa: BLE001 - health check reports, never raises
            return False

    def migrate(self) -> int:
        """Apply pending numbered migrations; returns the schema version."""
        self.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        with self.transaction():
            rows = self.query("SELECT MAX(version) FROM schema_version")
            current = rows[0][0] or 0
            for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
                self._run_script(script)
                self.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
        return len(MIGRATIONS)

    def _run_script(self, script: str) -> None:
        if self.postgres:
            script = script.replace("id INTEGER PRIMARY KEY,", "id BIGSERIAL PRIMARY KEY,")
        for statement in filter(str.strip, script.split(";")):
            self.execute(statement)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
