"""A thin database adapter: SQLite by default (stdlib, WAL), PostgreSQL when the URL says so.

SQL elsewhere is written once with ``?`` placeholders and portable statements (``INSERT ... ON
CONFLICT DO NOTHING``, no vendor functions); this module translates placeholders for psycopg and
applies numbered migrations recorded in ``schema_version``.

PostgreSQL sessions come from a bounded pool (psycopg_pool), borrowed per statement or per
transaction: the receiver runs every request on a new thread, and a connection per thread opened
one session per webhook ("too many clients" at 300 req/s). SQLite keeps one connection per thread
(opening one is a file open, and its writers serialise on the file lock anyway)."""
from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from triagebot.settings import ConfigError

POOL_SIZE = 10  # PostgreSQL sessions per Database (per process): TRIAGEBOT_DB_POOL_SIZE
POOL_TIMEOUT_S = 5.0  # wait this long for a free session, then fail (GitHub gives us 10 s)
WRITERS_LOCK = 4242  # PostgreSQL advisory lock (one-key space) of serialized transactions
KEYED_LOCKS = 4243  # first key of ``lock(key)``'s advisory locks (two-key space)

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
    # 2: privacy (issue #10) - replayed bodies, forgotten repositories, review sessions and
    # login attempts
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
    # 3: waiting on GitHub costs no attempt (issue #13): how often a job waited and since when
    # (the 24 h deadline counts from there), and one rate-limit pause per installation
    """
    ALTER TABLE jobs ADD COLUMN waits INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN waiting_since DOUBLE PRECISION;
    CREATE TABLE installation_pauses (installation_id BIGINT PRIMARY KEY,
        until DOUBLE PRECISION NOT NULL, reason TEXT, updated_at DOUBLE PRECISION NOT NULL);
    """,
    # 4: the per-author hourly triage limit, taken atomically (two racing workers let 6 through)
    """
    CREATE TABLE author_slots (repo TEXT NOT NULL, number INTEGER NOT NULL, author TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, number));
    CREATE INDEX author_slots_author ON author_slots (author, at);
    """,
    # 5: claims stay fast with a large backlog: queued jobs are walked in order through
    # jobs_ready; running jobs are found by lease (expired ones, and the "no live twin" check)
    """
    CREATE INDEX jobs_lease ON jobs (status, lease_until);
    """,
]

# The learning record's own numbered track (``learning_schema_version``): branches that add queue
# migrations and branches that change what the bot learns no longer collide on one number (issue
# #13's 2-4 and privacy's 2 did; ``_renumber_branch_migrations`` untangles that one).
LEARNING_MIGRATIONS: list[str] = [
    # 1: what the bot learns lives here (issue #14): every indexed issue (metadata, vector, rule
    # features) with the version of the change that last wrote it (a removed issue keeps only its
    # key and version: a tombstone other processes catch up on), one clock that numbers every
    # change, versioned artifacts (the fitted classifier, the calibration record), leases (one
    # trainer at a time), and the LLM answer cache and call budget shared by all processes
    """
    CREATE TABLE index_clock (name TEXT PRIMARY KEY, version BIGINT NOT NULL);
    INSERT INTO index_clock (name, version) VALUES ('index', 0);
    CREATE TABLE index_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE index_items (repo TEXT NOT NULL, number INTEGER NOT NULL, version BIGINT NOT NULL,
        visibility TEXT, installation_id BIGINT, item TEXT, vector BLOB, features BLOB,
        PRIMARY KEY (repo, number));
    CREATE INDEX index_items_version ON index_items (version);
    CREATE TABLE index_artifacts (name TEXT NOT NULL, version BIGINT NOT NULL,
        index_version BIGINT NOT NULL, body BLOB NOT NULL, at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (name, version));
    CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL,
        until DOUBLE PRECISION NOT NULL);
    CREATE TABLE llm_answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL,
        scope TEXT NOT NULL DEFAULT '', created DOUBLE PRECISION NOT NULL);
    CREATE INDEX llm_answers_scope ON llm_answers (scope);
    CREATE TABLE llm_calls (id INTEGER PRIMARY KEY, installation TEXT NOT NULL,
        at DOUBLE PRECISION NOT NULL);
    CREATE INDEX llm_calls_installation ON llm_calls (installation, at);
    """,
]


class Database:
    """SQLite: one connection per thread (sqlite3 objects must not cross threads). PostgreSQL: at
    most ``pool_size`` sessions, each borrowed for one statement or one transaction. Writes
    serialise through ``transaction()``, which takes the write lock up front so read-modify-write
    is atomic."""

    def __init__(self, url: str | Path, pool_size: int = POOL_SIZE) -> None:
        self.url = str(url)
        self.postgres = self.url.startswith(("postgresql://", "postgres://"))
        self._local = threading.local()
        self._pool = self._open_pool(pool_size) if self.postgres else None
        self.migrate()

    def _open_pool(self, size: int) -> Any:
        try:  # optional dependencies, only for PostgreSQL deployments
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise ConfigError("TRIAGEBOT_DB is a PostgreSQL URL but psycopg/psycopg-pool are not "
                              "installed: pip install 'triagebot[postgres]'") from None
        # check: a session dropped by a database restart is replaced, not handed to a request
        return ConnectionPool(self.url, min_size=1, max_size=max(1, size), open=True,
                              kwargs={"autocommit": True}, timeout=POOL_TIMEOUT_S,
                              check=ConnectionPool.check_connection, name="triagebot")

    def _connect(self) -> Any:
        if self.url != ":memory:":
            Path(self.url).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.url, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    @property
    def conn(self) -> Any:
        """This thread's SQLite connection."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
        return conn

    @contextmanager
    def _session(self) -> Iterator[Any]:
        """The connection for one statement: the open transaction's, else a pooled PostgreSQL
        session returned right after, else this thread's SQLite connection."""
        if not self.postgres:
            yield self.conn
            return
        tx = getattr(self._local, "tx", None)
        if tx is not None:
            yield tx
            return
        with self._pooled() as conn:
            yield conn

    def _pooled(self) -> Any:
        """A PostgreSQL session borrowed from the pool (a context manager that returns it)."""
        if self._pool is None:
            raise RuntimeError(f"{self.url} is no PostgreSQL database: it has no session pool")
        return self._pool.connection()

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.postgres else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; returns the affected row count."""
        with self._session() as conn:
            return conn.execute(self._sql(sql), tuple(params)).rowcount

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement for many parameter rows (psycopg pipelines them; sqlite3 loops in C):
        loading 100k indexed issues one round trip each took minutes."""
        if not rows:
            return
        with self._session() as conn:
            if self.postgres:
                with conn.cursor() as cur:
                    cur.executemany(self._sql(sql), [tuple(r) for r in rows])
            else:
                conn.executemany(sql, [tuple(r) for r in rows])

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._session() as conn:
            return list(conn.execute(self._sql(sql), tuple(params)).fetchall())

    def stream(self, sql: str, params: Sequence[Any] = (), size: int = 5000) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of one query in lists of at most ``size``, for reading a whole large table
        (a cold worker's 100k indexed issues). PostgreSQL: the binary protocol (a bytea column
        arrives as its bytes, not hex text to decode: half the read time) in chunked mode, so
        the server keeps sending while the caller digests a batch and no result is held twice;
        SQLite: ``fetchmany``. The session stays borrowed until the iterator is exhausted or
        closed."""
        with self._session() as conn:
            if self.postgres:
                with conn.cursor(binary=True) as cur:
                    batch: list[tuple[Any, ...]] = []
                    for row in cur.stream(self._sql(sql), tuple(params), size=size):
                        batch.append(row)
                        if len(batch) >= size:
                            yield batch
                            batch = []
                    if batch:
                        yield batch
                return
            cursor = conn.execute(sql, tuple(params))
            try:
                while rows := cursor.fetchmany(size):
                    yield rows
            finally:
                cursor.close()

    def notifications(self, channel: str, stop: threading.Event, wait_s: float = 1.0) -> Iterator[str]:
        """PostgreSQL: the payloads of ``NOTIFY channel`` as they arrive (``LISTEN`` on a session
        of its own, outside the pool: it stays open), until ``stop`` is set; a dropped session is
        reopened after ``wait_s`` (what was sent meanwhile is lost: listeners only hurry what
        callers catch up on anyway). SQLite has no notifications: nothing is yielded."""
        if not self.postgres:
            return
        import psycopg

        while not stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {channel}")
                    while not stop.is_set():
                        for note in conn.notifies(timeout=wait_s):
                            yield note.payload
            except psycopg.OperationalError:
                stop.wait(wait_s)

    def insert_id(self, sql: str, params: Sequence[Any] = ()) -> int | None:
        """INSERT returning the new row id (None when ON CONFLICT skipped it)."""
        rows = self.query(sql + " RETURNING id", params)
        return int(rows[0][0]) if rows else None

    @contextmanager
    def transaction(self, serialized: bool = True) -> Iterator[Database]:
        """A write transaction; a nested call is a savepoint (its failure undoes only its own
        writes). SQLite: BEGIN IMMEDIATE, so writers always take turns (other processes wait on
        busy_timeout). PostgreSQL: one pooled session for the whole transaction, under a
        transaction-level advisory lock unless ``serialized`` is False: the receiver's inserts
        skip it (they only add rows, which unique indexes keep consistent), because at 300
        deliveries/s every request queueing on one lock was what bounded the receiver."""
        if self.postgres:
            tx = getattr(self._local, "tx", None)
            if tx is not None:
                with tx.transaction():
                    yield self
                return
            with self._pooled() as conn, conn.transaction():
                self._local.tx = conn
                try:
                    if serialized:
                        conn.execute(f"SELECT pg_advisory_xact_lock({WRITERS_LOCK})")
                    yield self
                finally:
                    self._local.tx = None
            return
        conn = self.conn
        nested = conn.in_transaction
        conn.execute("SAVEPOINT nested" if nested else "BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            conn.execute("ROLLBACK TO nested" if nested else "ROLLBACK")
            if nested:
                conn.execute("RELEASE nested")
            raise
        conn.execute("RELEASE nested" if nested else "COMMIT")

    def lock(self, key: str) -> None:
        """Inside ``transaction()``: wait until no other transaction holds ``key``, and hold it
        until this one ends. For writers that skip the global lock (``serialized=False``) but
        must take turns on one thing. PostgreSQL: a transaction-level advisory lock on the key's
        hash, in the two-key space, which never meets the writers' one-key lock; SQLite: its
        writers already take turns on the file."""
        if not self.postgres:
            return
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=4).digest()
        self.execute("SELECT pg_advisory_xact_lock(CAST(? AS INTEGER), CAST(? AS INTEGER))",
                     (KEYED_LOCKS, int.from_bytes(digest, "big", signed=True)))

    @property
    def integrity_error(self) -> tuple[type[Exception], ...]:
        """What a unique-index violation raises with this database's driver."""
        if self.postgres:
            import psycopg

            return (psycopg.IntegrityError,)
        return (sqlite3.IntegrityError,)

    def ping(self) -> bool:
        try:
            return self.query("SELECT 1")[0][0] == 1
        except Exception:  # noqa: BLE001 - health check reports, never raises
            return False

    def migrate(self) -> int:
        """Apply pending numbered migrations; returns the schema version."""
        with self.transaction():  # under the writers' lock: processes starting together take turns
            self.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            rows = self.query("SELECT MAX(version) FROM schema_version")
            current = self._renumber_branch_migrations(rows[0][0] or 0)
            for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
                self._run_script(script)
                self.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
        self._migrate_track("learning_schema_version", LEARNING_MIGRATIONS)
        return len(MIGRATIONS)

    def _migrate_track(self, table: str, scripts: list[str]) -> int:
        """Apply the pending scripts of one numbered track recorded in ``table``."""
        with self.transaction():  # as ``migrate``: two processes never both create the table
            self.execute(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER NOT NULL)")
            current = self.query(f"SELECT MAX(version) FROM {table}")[0][0] or 0
            for number, script in enumerate(scripts[current:], start=current + 1):
                self._run_script(script)
                self.execute(f"INSERT INTO {table} (version) VALUES (?)", (number,))
        return len(scripts)

    def _renumber_branch_migrations(self, current: int) -> int:
        """Issue #13's branch numbered its migrations 2-4 before privacy's 2 was merged ahead of
        them (now 3-5). A database that branch created has ``jobs.waits`` but no
        ``deliveries.body_hash``: run privacy's migration it never saw, shift its recorded numbers
        up by one, and return the corrected version (any other database is left as it is)."""
        if not 2 <= current <= 4 or self._has_column("deliveries", "body_hash") \
                or not self._has_column("jobs", "waits"):
            return current
        self._run_script(MIGRATIONS[1])
        self.execute("UPDATE schema_version SET version = version + 1 WHERE version >= 2")
        self.execute("INSERT INTO schema_version (version) VALUES (2)")
        return current + 1

    def _has_column(self, table: str, column: str) -> bool:
        if self.postgres:
            sql = ("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = "
                   "current_schema() AND table_name = ? AND column_name = ?")
        else:
            sql = "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?"
        return bool(self.query(sql, (table, column))[0][0])

    def _run_script(self, script: str) -> None:
        if self.postgres:
            script = script.replace("id INTEGER PRIMARY KEY,", "id BIGSERIAL PRIMARY KEY,")
            script = script.replace(" BLOB", " BYTEA")
        for statement in filter(str.strip, script.split(";")):
            self.execute(statement)

    def close(self) -> None:
        """This thread's SQLite connection, or the whole PostgreSQL pool."""
        if self._pool is not None:
            self._pool.close()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
