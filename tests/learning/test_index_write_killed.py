"""Issue #14: ``kill -9`` of a worker in the middle of an index write leaves the database consistent
(the change is there whole or not at all) and the next write and triage on any process work. A
real child process writes 300 issues through ``SharedIndex.writing()`` and is killed after its rows
reached the database but before the transaction committed; real SQLite and PostgreSQL."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.engine import hashing_index, records
from support.learned import database_url
from triagebot.domain.models import Issue
from triagebot.domain.visibility import Viewer
from triagebot.engine.embed import HashingEmbedder
from triagebot.learning import live as learning
from triagebot.learning import shared
from triagebot.store.db import Database
from triagebot.store.learned import LearnedStore

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys, time
from pathlib import Path
from triagebot.domain.models import Labels
from triagebot.engine.embed import HashingEmbedder
from triagebot.github.port import IssueState
from triagebot.learning import live, shared
from triagebot.store import learned
from triagebot.store.db import Database

url, ready = sys.argv[1], Path(sys.argv[2])
put = learned.Change.put

def put_then_hang(self, rows):
    put(self, rows)
    ready.write_text("written, not committed")
    time.sleep(120)  # killed here

learned.Change.put = put_then_hang
index = shared.SharedIndex(learned.LearnedStore(Database(url, pool_size=1)))
labels = Labels(stage="S4", symptom="4.11", root_cause="R4.7", fix_pattern="F3")
entries = [live.ClosedEntry(IssueState(repo="kill/me", number=n, title=f"hang {n}",
                                       body=f"allreduce hangs at step {n}", state="closed"),
                            labels, True, "unresolved", "predicted") for n in range(300)]
rows = live.embedded(HashingEmbedder(), entries)
with index.writing() as current:
    current.add(*rows)
"""


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as found:
        yield found


def test_kill_9_mid_write_leaves_the_record_whole_and_the_next_triage_works(url: str, tmp_path: Path) -> None:
    hashing_index().save(tmp_path / "seed")
    first = shared.open_shared(LearnedStore(Database(url, pool_size=2)), tmp_path / "seed")
    engine = learning.LiveEngine(first, HashingEmbedder())
    head, count = first.store.head(), first.store.count()
    ready = tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", CHILD, url, str(ready)], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert child.poll() is None, "the writer exited before it was killed"
            assert time.monotonic() < deadline, "the writer never reached the database"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(30)
    store = LearnedStore(Database(url, pool_size=2))
    assert store.head() == head and store.count() == count  # nothing of the killed change
    assert not [r for r in store.rows_since(0) if r.repo == "kill/me"]
    after = shared.SharedIndex(store)  # a cold process, and the one that was running
    assert after.current().keys() == first.current().keys()
    engine.refresh()
    issue = Issue(repo="org/repo", number=1, title="NCCL timeout", body=records()[0].body)
    assert engine.triage(issue, viewer=Viewer.of("org/repo")).similar is not None
    learning.correct_index(after, *records()[0].key, "stage", "S2")  # the index lock was freed
    assert first.catch_up() == 1 and store.head() == head + 1
