"""The LLM answer cache and hourly call budget live in the service's database (issue #14): two
workers, each with its own connections (and in the budget race, separate OS processes), share one
cache and one budget per installation, on a real SQLite file and a real PostgreSQL alike; an
uninstall handled by either deletes the answers both would serve."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.learned import database_url
from support.llm_fake import FakeLLM, classifier_factory, offline_triage
from triagebot.domain.models import Issue
from triagebot.llm.store import DbAnswerCache, DbBudget
from triagebot.store.db import Database

KINDS = ["sqlite", "postgres"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=KINDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as value:
        Database(value, pool_size=2).close()  # migrated once, before the workers race
        yield value


def _issue(number: int, title: str = "CUDA out of memory with zero3") -> Issue:
    return Issue(repo="acme/proj", number=number, title=title, body="OOM at step 3 on 8 ranks")


def test_a_second_worker_is_served_from_the_first_workers_answer(url: str) -> None:
    a_db, b_db = Database(url, pool_size=2), Database(url, pool_size=2)
    with FakeLLM() as fake, classifier_factory(fake, "sk-test-0123456789") as build:
        a, b = build(), build()
        a.keep_state_in(a_db)
        b.keep_state_in(b_db)
        a.refine(_issue(3), offline_triage("acme/proj", 3), [])
        assert len(fake.requests) == 1
        b.refine(_issue(3), offline_triage("acme/proj", 3), [])
        assert len(fake.requests) == 1  # worker B's hit: A's answer, through the database
        assert b.stats().cache_hits == 1
        assert b.forget(["Acme/Proj"]) == 1  # B handles the uninstall...
        a.refine(_issue(3), offline_triage("acme/proj", 3), [])
        assert len(fake.requests) == 2  # ...and A no longer has the answer either
    a_db.close()
    b_db.close()


def test_workers_spend_one_budget_per_installation(url: str) -> None:
    a_db, b_db = Database(url, pool_size=2), Database(url, pool_size=2)
    with FakeLLM() as fake, classifier_factory(fake, "sk-test-0123456789", calls_per_hour=1) as build:
        a, b = build(), build()
        a.keep_state_in(a_db)
        b.keep_state_in(b_db)
        a.refine(_issue(3), offline_triage("acme/proj", 3), [])
        late = b.refine(_issue(4, "NCCL timeout in allreduce"), offline_triage("acme/proj", 4), [])
        assert len(fake.requests) == 1  # A spent acme's one call of this hour for both
        assert any("budget" in note for note in late.notes)
        assert b.stats().fallbacks == {"budget": 1}
        b.refine(Issue(repo="other/x", number=1, title="NCCL timeout", body="hang"),
                 offline_triage("other/x", 1), [])
        assert len(fake.requests) == 2  # another installation has its own budget
    a_db.close()
    b_db.close()


def test_the_database_budget_slides_over_the_hour(url: str) -> None:
    now = [1000.0]
    db = Database(url, pool_size=2)
    budget = DbBudget(db, 2, clock=lambda: now[0])
    assert budget.take("a") and budget.take("a") and not budget.take("a")
    assert budget.take("b") and budget.spent("a") == 2
    now[0] += 3599.0
    assert not budget.take("a")
    now[0] += 1.0
    assert budget.take("a") and budget.spent("a") == 1
    assert not DbBudget(db, 0).take("a")
    db.close()


def test_answers_remember_their_repository_and_survive_restarts(url: str) -> None:
    first = DbAnswerCache(Database(url, pool_size=2))
    first.put("k1", "secret answer", scope="Acme/Secret")
    first.put("k2", "other answer", scope="other/proj")
    first.put("k2", "newer answer", scope="other/proj")  # the same key again: replaced
    first.close()
    first.db.close()
    second = DbAnswerCache(Database(url, pool_size=2))  # a restarted worker
    assert second.get("k1") == "secret answer" and second.get("k2") == "newer answer"
    assert second.forget(["acme/secret", "", "nobody/else"]) == 1
    assert second.get("k1") is None and second.get("k2") == "newer answer"
    second.db.close()


RACER = textwrap.dedent("""
    import sys, threading
    from triagebot.llm.store import DbBudget
    from triagebot.store.db import Database

    db = Database(sys.argv[1], pool_size=4)
    budget = DbBudget(db, int(sys.argv[2]))
    go, won = threading.Event(), []

    def spend():
        go.wait()
        won.extend(budget.take("acme") for _ in range(5))

    threads = [threading.Thread(target=spend) for _ in range(4)]
    for t in threads:
        t.start()
    sys.stdin.readline()  # every process waits here, so they all spend at once
    go.set()
    for t in threads:
        t.join()
    print(sum(won))
""")


def test_concurrent_processes_cannot_overspend_the_budget(url: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    racers = [subprocess.Popen([sys.executable, "-c", RACER, url, "25"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
              for _ in range(3)]
    outs = [racer.communicate("go\n", timeout=120)[0] for racer in racers]
    assert all(racer.returncode == 0 for racer in racers)
    assert sum(int(out) for out in outs) == 25  # 60 attempts from 12 threads in 3 processes
    db = Database(url, pool_size=2)
    assert DbBudget(db, 25).spent("acme") == 25
    db.close()


def test_an_explicit_cache_file_keeps_the_answers_and_the_database_the_budget(tmp_path: Path) -> None:
    db = Database(tmp_path / "service.sqlite3")
    with FakeLLM() as fake, classifier_factory(fake, "sk-test-0123456789", calls_per_hour=5,
                                               cache_path=str(tmp_path / "answers.sqlite3")) as build:
        clf = build()
        clf.keep_state_in(db)
        clf.refine(_issue(3), offline_triage("acme/proj", 3), [])
    assert db.query("SELECT COUNT(*) FROM llm_answers")[0][0] == 0
    assert db.query("SELECT COUNT(*) FROM llm_calls")[0][0] == 1
    assert (tmp_path / "answers.sqlite3").exists()
    db.close()


def test_the_services_wiring_keeps_llm_state_in_its_database(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from triagebot.service import wiring
    from triagebot.settings import Settings
    from triagebot.store.records import Store

    settings = Settings(webhook_secret="s" * 20, db=str(tmp_path / "service.sqlite3"))
    store = Store(settings.db)
    with FakeLLM() as fake, classifier_factory(fake, "sk-test-0123456789") as build:
        clf = build()
        deps = wiring.build_deps(settings, store, engine=SimpleNamespace(refiner=clf),
                                 port_for=lambda _i: None)
        clf.refine(_issue(3), offline_triage("acme/proj", 3), [])
        assert store.db.query("SELECT scope FROM llm_answers") == [("acme/proj",)]
        assert deps.forget_llm is not None and deps.forget_llm(["acme/proj"]) == 1
    assert store.db.query("SELECT COUNT(*) FROM llm_calls")[0][0] == 1
    store.db.close()
