"""Cached LLM answers remember the repository they are about, so removing a repository from the
App deletes them (they quote its issues): in memory, in the SQLite file, and in cache files
written before answers had a scope."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from support.llm_fake import FakeLLM, classifier_factory
from triagebot.domain.models import Issue
from triagebot.llm.store import AnswerCache


@pytest.mark.parametrize("on_disk", [False, True])
def test_forget_deletes_only_that_repositorys_answers(tmp_path: Path, on_disk: bool) -> None:
    cache = AnswerCache(tmp_path / "c.sqlite3" if on_disk else None)
    cache.put("k1", "secret answer", scope="Acme/Secret")
    cache.put("k2", "other answer", scope="other/proj")
    assert cache.forget(["acme/secret"]) == 1
    assert cache.get("k1") is None and cache.get("k2") == "other answer"
    cache.close()


def test_cache_files_from_before_scopes_are_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE llm_cache (key TEXT PRIMARY KEY, answer TEXT NOT NULL, created REAL NOT NULL)")
        db.execute("INSERT INTO llm_cache VALUES ('old', 'kept', 0)")
    cache = AnswerCache(path)
    assert cache.get("old") == "kept"
    cache.put("new", "x", scope="a/b")
    assert cache.forget(["a/b"]) == 1 and cache.get("old") == "kept"
    cache.close()


def test_refine_scopes_its_answer_to_the_issues_repository(tmp_path: Path) -> None:
    from support.llm_fake import offline_triage

    with FakeLLM() as fake, classifier_factory(fake, "sk-test-0123456789",
                                               cache_path=str(tmp_path / "c.sqlite3")) as build:
        clf = build()
        issue = Issue(repo="acme/secret", number=3, title="CUDA out of memory", body="OOM with zero3")
        clf.refine(issue, offline_triage("acme/secret", 3), [])
        clf.refine(issue, offline_triage("acme/secret", 3), [])
        assert len(fake.requests) == 1  # the second answer came from the cache
        assert clf.forget(["acme/secret"]) == 1
        clf.refine(issue, offline_triage("acme/secret", 3), [])
        assert len(fake.requests) == 2
