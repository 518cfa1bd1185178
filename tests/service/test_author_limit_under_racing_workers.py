"""Issue #13: the 5-triages-per-author-per-hour flood limit holds when two workers race on the
author's 5th and 6th issue (before, both read "4 so far" and both posted: 6 comments). Two
Worker threads, each with its own connection to one SQLite file, meet at a barrier right after
fetching their issue, so both decide at the same moment."""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from support.service import BOT, FakeEngine, RecordingPort
from triagebot.service import jobs as handlers
from triagebot.service.jobs import Deps
from triagebot.service.worker import Worker
from triagebot.store.db import Database
from triagebot.store.queue import JobSpec, Queue
from triagebot.store.records import Store


class RacingGitHub(RecordingPort):
    """Issues 5 and 6 are fetched together; posting a comment takes a moment."""

    def __init__(self) -> None:
        super().__init__()
        self.barrier = threading.Barrier(2)

    def get_issue(self, repo: str, number: int) -> Any:
        issue = super().get_issue(repo, number)
        if number in (5, 6):
            self.barrier.wait(10)
        return issue

    def create_comment(self, repo: str, number: int, body: str) -> int:
        time.sleep(0.3)
        return super().create_comment(repo, number, body)


def worker(path: Path, gh: RecordingPort) -> Worker:
    store = Store(Database(path))  # one connection per worker, like two processes
    deps = Deps(store=store, port_for=lambda _i: gh, engine=FakeEngine(), bot_login=BOT)
    return Worker(Queue(store.db), lambda job: handlers.run(deps, job))


def enqueue(queue: Queue, number: int) -> None:
    queue.enqueue(JobSpec(kind="triage", payload={"reason": "opened"}, installation_id=1,
                          dedupe_key=f"triage:org/repo#{number}", repo="org/repo", number=number))


def test_two_racing_workers_cannot_exceed_the_author_limit(tmp_path: Path) -> None:
    path = tmp_path / "race.sqlite3"
    gh = RacingGitHub()
    for number in range(1, 7):
        gh.add_issue("org/repo", number)  # all by alice
    queue = Queue(Database(path))
    for number in range(1, 5):
        enqueue(queue, number)
    assert worker(path, gh).drain() == 4
    enqueue(queue, 5)
    enqueue(queue, 6)
    threads = [threading.Thread(target=worker(path, gh).run_once) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    posted = [number for number in range(1, 7) if gh.bot_comments("org/repo", number)]
    assert len(posted) == 5, posted
    assert len(queue.jobs("done")) == 6  # the sixth is finished as skipped, not failed


def test_authors_slots_follow_their_repository_when_it_is_forgotten_renamed_or_an_issue_deleted(
        tmp_path: Path) -> None:
    """The slots hold who opened which issue (issue #13); like the triages they are forgotten
    with their repository or issue (issue #10) and follow a rename."""
    store = Store(tmp_path / "s.sqlite3")
    for repo, number in [("org/a", 1), ("org/a", 2), ("org/b", 1), ("org/c", 1)]:
        assert store.take_author_slot("alice", repo, number, limit=10)

    def slots() -> list[tuple[str, int]]:
        return sorted((r, n) for r, n in store.db.query("SELECT repo, number FROM author_slots"))

    assert store.forget_repos(["org/a"])["author_slots"] == 2
    assert store.forget_issue("org/b", 1) == 1
    store.rename_repo("org/c", "org/d")
    assert slots() == [("org/d", 1)]
