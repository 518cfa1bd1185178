"""Databases for the learning-record tests (issue #14): a fresh SQLite file, or a fresh schema of
the throwaway PostgreSQL named by TRIAGEBOT_TEST_POSTGRES_URL (skipped when it is not set)."""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PG_URL = os.environ.get("TRIAGEBOT_TEST_POSTGRES_URL", "")


@contextmanager
def database_url(kind: str, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty database of ``kind`` ("sqlite" or "postgres"), dropped afterwards."""
    if kind == "sqlite":
        yield str(tmp_path / "learned.sqlite3")
        return
    if not PG_URL:
        pytest.skip("TRIAGEBOT_TEST_POSTGRES_URL not set")
    psycopg = pytest.importorskip("psycopg")
    schema = f"l_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_URL}{'&' if '?' in PG_URL else '?'}options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
