"""Issue #10 (privacy) and issue #13 (reliability) were built in parallel and both appended
migration 2. Merged, privacy's is 2 and #13's are 3-5. A database opened by either branch before
the merge must reach the one merged schema: privacy's (at 2) simply runs 3-5; #13's (recorded as
2-4, without privacy's columns) gets privacy's migration and its numbers shifted. Real SQLite
and, when TRIAGEBOT_TEST_POSTGRES_URL is set, PostgreSQL."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support.learned import database_url
from triagebot.store import db as db_module
from triagebot.store.db import MIGRATIONS, Database
from triagebot.store.queue import JobSpec, Queue, ReplayedBody

PRIVACY_BRANCH = MIGRATIONS[:2]  # the first schema, then privacy's 2
RELIABILITY_BRANCH = [MIGRATIONS[0], *MIGRATIONS[2:]]  # the first schema, then #13's 2, 3, 4
SPEC = JobSpec(kind="triage", dedupe_key="triage:o/r#1", repo="o/r", number=1, installation_id=1)


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as found:
        yield found


def opened_by(branch: list[str], url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Create the database as that branch's code did, with a queued job in it."""
    with monkeypatch.context() as patch:
        patch.setattr(db_module, "MIGRATIONS", branch)
        old = Database(url)
        old.execute("INSERT INTO jobs (kind, payload, dedupe_key, status, attempts, run_after, "
                    "repo, number, installation_id, created_at, updated_at) "
                    "VALUES ('triage', '{}', 'triage:o/r#9', 'queued', 0, 0, 'o/r', 9, 1, 0, 0)")
        old.close()


def assert_merged_schema(db: Database) -> None:
    versions = sorted(row[0] for row in db.query("SELECT version FROM schema_version"))
    assert versions == list(range(1, len(MIGRATIONS) + 1)) == [1, 2, 3, 4, 5]
    for table, column in [("deliveries", "body_hash"), ("jobs", "access"), ("jobs", "waits"),
                          ("jobs", "waiting_since"), ("forgotten_repos", "repo"),
                          ("review_sessions", "sid"), ("login_attempts", "addr"),
                          ("installation_pauses", "until"), ("author_slots", "author")]:
        assert db._has_column(table, column), f"{table}.{column}"
    queue = Queue(db)  # both branches' queue features work on it
    assert queue.accept("d-1", "issues", "opened", [SPEC], body_hash="a" * 64)
    with pytest.raises(ReplayedBody):
        queue.accept("d-2", "issues", "opened", [SPEC], body_hash="a" * 64)
    job = queue.claim()
    assert job is not None and job.repo == "o/r" and job.number == 9  # the old branch's job
    assert queue.wait(job, "TransientError: 502") == "queued" and queue.jobs("queued")[0].waits == 1


@pytest.mark.parametrize("branch", ["privacy", "reliability"])
def test_a_database_of_either_branch_reaches_the_merged_schema(
        url: str, branch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    opened_by(PRIVACY_BRANCH if branch == "privacy" else RELIABILITY_BRANCH, url, monkeypatch)
    db = Database(url)
    try:
        assert_merged_schema(db)
        assert db.migrate() == 5  # opening it again changes nothing
        assert len(db.query("SELECT version FROM schema_version")) == 5
    finally:
        db.close()


def test_a_new_database_gets_every_migration_once(url: str) -> None:
    db = Database(url)
    try:
        db.execute("INSERT INTO jobs (kind, payload, dedupe_key, status, attempts, run_after, "
                   "repo, number, installation_id, created_at, updated_at) "
                   "VALUES ('triage', '{}', 'triage:o/r#9', 'queued', 0, 0, 'o/r', 9, 1, 0, 0)")
        assert_merged_schema(db)
    finally:
        db.close()
    Database(url).close()  # and reopening it runs none again
