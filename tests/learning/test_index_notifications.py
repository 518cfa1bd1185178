"""Issue #14, optional part: on PostgreSQL a committed index change is announced (NOTIFY with its
version) and every process's listener catches its cache up at once, before its next job asks;
a listener whose session is cut reconnects; a failed catch-up is logged and the listener goes on;
SQLite has no listener (jobs catch up as before). Real PostgreSQL (skipped without one)."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from support.engine import hashing_index
from support.learned import database_url
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.learning import shared
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore


@pytest.fixture
def pg(tmp_path: Path) -> Iterator[tuple[shared.SharedIndex, shared.SharedIndex]]:
    """Two processes' caches over one PostgreSQL, the seed imported."""
    with database_url("postgres", tmp_path) as url:
        hashing_index().save(tmp_path / "seed")
        dbs = [Database(url, pool_size=2) for _ in range(2)]
        a, b = (shared.open_shared(LearnedStore(db), tmp_path / "seed") for db in dbs)
        b.current()
        try:
            yield a, b
        finally:
            for db in dbs:
                db.close()


def add(target: shared.SharedIndex, number: int) -> None:
    with target.writing() as index:
        x = np.random.default_rng(number).standard_normal((1, index.dim)).astype(np.float32)
        index.add([IndexedIssue(repo="new/repo", number=number, labels=Labels(stage="S2"))],
                  x / np.linalg.norm(x), np.zeros((1, index.n_features), np.float32))


def eventually(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_change_reaches_the_other_cache_without_waiting_for_its_next_job(pg) -> None:  # type: ignore[no-untyped-def]
    a, b = pg
    stop = threading.Event()
    thread = shared.start_listener(b, stop)
    assert thread is not None
    try:
        time.sleep(0.3)  # LISTEN issued
        add(a, 9001)
        assert eventually(lambda: b.version == a.version)  # nobody asked b to catch up
        assert b.catch_up() == 0  # already applied by the listener
        assert b.current().row_of(("new/repo", 9001)) is not None
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()


def test_a_cut_session_is_reopened_and_a_failed_catch_up_logged(
        pg, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:  # type: ignore[no-untyped-def]
    a, b = pg
    stop = threading.Event()
    thread = shared.start_listener(b, stop)
    assert thread is not None
    try:
        time.sleep(0.3)
        a.store.db.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE starts_with(query, 'LISTEN ') AND pid <> pg_backend_pid()")
        real, calls = b.catch_up, []

        def failing_once() -> int:
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("database went away mid catch-up")
            return real()

        monkeypatch.setattr(b, "catch_up", failing_once)
        with caplog.at_level(logging.WARNING, logger="triagebot.learning.shared"):
            deadline = time.monotonic() + 10
            number = 9100
            while b.version != a.version and time.monotonic() < deadline:
                add(a, number)  # until the reopened session hears one (and after the failed one)
                number += 1
                eventually(lambda: b.version == a.version, 1.0)
        assert b.version == a.version and len(calls) >= 2
        assert "catch-up on notification failed" in caplog.text
    finally:
        stop.set()
        thread.join(10)


def test_sqlite_has_no_listener(tmp_path: Path) -> None:
    hashing_index().save(tmp_path / "seed")
    cache = shared.open_shared(LearnedStore(Database(tmp_path / "l.sqlite3")), tmp_path / "seed")
    assert shared.start_listener(cache, threading.Event()) is None
    assert list(cache.store.db.notifications("anything", threading.Event())) == []
