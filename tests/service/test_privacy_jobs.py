"""Deliveries -> jobs -> index and database, with the real queue, handlers, live engine (hashing
embedder), LLM client (against the local fake) and SQLite: items are indexed with their
visibility, kept current on repository and issue events, and an uninstall forgets - checked in
the database, the index directory and the LLM cache file afterwards."""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from support.llm_fake import FakeLLM
from support.review import live_engine, make_index
from support.service import BOT, RecordingPort, command, issue_payload
from triagebot.llm.client import build_refiner
from triagebot.service import jobs as handlers
from triagebot.service import wiring
from triagebot.service.payload import problem
from triagebot.service.routing import route
from triagebot.service.worker import Worker
from triagebot.settings import Settings
from triagebot.store.queue import Queue
from triagebot.store.records import Store

TEXT = "flibbergrad allreduce hangs forever on the quasar cluster after step 1200 with zero3"
SECRET_TITLE = "quasar flibbergrad hang on internal cluster XJ-9"
INSTALL = {"id": 1, "account": {"login": "acme"}}
ACME_REPOS = [{"full_name": "acme/secret"}, {"full_name": "acme/public"}]


class Service:
    """The worker side of ``triagebot serve`` with fakes only at the edges."""

    def __init__(self, tmp_path: Path, llm: FakeLLM | None = None, **settings: Any) -> None:
        self.index_dir = make_index(tmp_path / "index")
        env = {"TRIAGEBOT_LLM_BASE_URL": llm.base_url, "TRIAGEBOT_LLM_MODEL": "fake",
               "TRIAGEBOT_LLM_CACHE": str(tmp_path / "llm.sqlite3")} if llm else {}
        self.cache = tmp_path / "llm.sqlite3"
        self.refiner = build_refiner(env) if llm else None
        self.engine = live_engine(self.index_dir)
        self.engine._engine.refiner = self.refiner
        self.settings = Settings(webhook_secret="s" * 20, db=str(tmp_path / "p.sqlite3"), **settings)
        self.store = Store(self.settings.db)
        self.queue = Queue(self.store.db)
        self.gh = RecordingPort()
        deps = wiring.build_deps(self.settings, self.store, engine=self.engine,
                                 port_for=lambda _i: self.gh, author_limit=10_000)
        self.worker = Worker(self.queue, lambda job: handlers.run(deps, job))
        self.n = 0

    def deliver(self, event: str, payload: dict) -> None:
        assert problem(payload) is None, problem(payload)  # the receiver's shape check lets it in
        self.n += 1
        self.queue.accept(f"d{self.n}", event, payload.get("action"), route(event, payload, BOT))
        self.worker.drain()

    def issue(self, action: str, repo: str, number: int, title: str = "flibbergrad hang",
              private: bool = False, installation: int = 1, **extra: Any) -> None:
        if action == "closed":
            self.gh.add_issue(repo, number, title=title, body=TEXT, state="closed",
                              state_reason="completed")
        elif action == "opened":
            self.gh.add_issue(repo, number, title=title, body=TEXT)
        payload = issue_payload(action, repo=repo, number=number, installation=installation, **extra)
        payload["repository"]["private"] = private
        payload["issue"]["state_reason"] = "completed" if action == "closed" else None
        self.deliver("issues", payload)

    def comment(self, repo: str, number: int) -> str:
        [posted] = self.gh.bot_comments(repo, number)
        return posted.body

    def item(self, repo: str, number: int) -> Any:
        index = self.engine.index
        row = index.row_of((repo, number))
        return index.items[row] if row is not None else None

    def rows(self, table: str, repo_prefix: str) -> int:
        return self.store.db.query(f"SELECT COUNT(*) FROM {table} WHERE repo LIKE ?",
                                   (repo_prefix + "%",))[0][0]


def repository_event(action: str, repo: str, private: bool, **extra: Any) -> dict:
    owner, name = repo.split("/")
    return {"action": action, "repository": {"full_name": repo, "name": name, "private": private,
                                             "owner": {"login": owner}},
            "installation": {"id": 1}, "sender": {"login": "admin", "type": "User"}, **extra}


@pytest.fixture
def service(tmp_path: Path) -> Service:
    svc = Service(tmp_path)
    svc.deliver("installation", {"action": "created", "installation": INSTALL,
                                 "repositories": ACME_REPOS, "sender": {"login": "a"}})
    svc.issue("closed", "acme/secret", 5, SECRET_TITLE, private=True)
    svc.issue("closed", "acme/public", 6, "flibbergrad hang public control")
    return svc


def test_closed_issues_are_indexed_with_their_repositorys_visibility(service: Service) -> None:
    secret, public = service.item("acme/secret", 5), service.item("acme/public", 6)
    assert (secret.visibility, secret.owner, secret.installation_id) == ("private", "acme", 1)
    assert public.visibility == "public"


def test_another_repository_never_sees_the_private_issue(service: Service) -> None:
    # an unresolved thread is linked only within its own organisation (``relevance.linkable``):
    # other/proj's control is its own organisation's; acme/public's is the one that shares an
    # organisation with the secret, which only its privacy keeps out
    service.issue("closed", "other/lib", 7, "flibbergrad hang public control", installation=2)
    for repo, number, installation in (("other/proj", 1, 2), ("acme/public", 2, 1)):
        service.issue("opened", repo, number, installation=installation)
        body = service.comment(repo, number)
        assert "flibbergrad hang public control" in body  # the control is linked
        for leak in (SECRET_TITLE, "acme/secret", "secret/issues/5", "XJ-9"):
            assert leak not in body
    service.issue("opened", "acme/secret", 9)
    assert SECRET_TITLE in service.comment("acme/secret", 9)  # at home it is shown


def test_private_repository_may_share_with_its_owner_through_its_config(tmp_path: Path) -> None:
    svc = Service(tmp_path)
    svc.gh.files[("acme/secret", ".github/triagebot.yml")] = "private_issues_shown_to: owner\n"
    svc.issue("closed", "acme/secret", 5, SECRET_TITLE, private=True)
    svc.issue("opened", "acme/public", 2)
    svc.issue("opened", "other/proj", 1, installation=2)
    assert SECRET_TITLE in svc.comment("acme/public", 2)
    assert SECRET_TITLE not in svc.comment("other/proj", 1)


def test_privatized_and_publicized_follow_the_api_state(service: Service) -> None:
    service.gh.private_repos.add("acme/public")
    service.deliver("repository", repository_event("privatized", "acme/public", True))
    assert service.item("acme/public", 6).visibility == "private"
    service.issue("opened", "acme/secret", 9)  # its own organisation: only privacy keeps it out
    assert "public control" not in service.comment("acme/secret", 9)
    # a late "publicized" delivery while GitHub says the repository is private changes nothing
    service.deliver("repository", repository_event("publicized", "acme/public", False))
    assert service.item("acme/public", 6).visibility == "private"
    service.gh.private_repos.discard("acme/public")
    service.deliver("repository", repository_event("publicized", "acme/public", False))
    assert service.item("acme/public", 6).visibility == "public"


def test_rename_transfer_and_deletion_of_repositories(service: Service) -> None:
    service.deliver("repository", repository_event(
        "renamed", "acme/secret-renamed", True, changes={"repository": {"name": {"from": "secret"}}}))
    assert service.item("acme/secret", 5) is None
    moved = service.item("acme/secret-renamed", 5)
    assert moved.visibility == "private" and moved.url.endswith("acme/secret-renamed/issues/5")
    assert service.store.get_triage("acme/secret-renamed", 5) is not None  # records follow
    service.deliver("repository", repository_event(
        "transferred", "newco/secret-renamed", True,
        changes={"owner": {"from": {"organization": {"login": "acme"}}}}))
    assert service.item("newco/secret-renamed", 5).owner == "newco"
    service.deliver("repository", repository_event("deleted", "newco/secret-renamed", True))
    assert service.item("newco/secret-renamed", 5) is None
    assert service.rows("triages", "newco/") == 0


def test_deleted_and_transferred_issues(service: Service) -> None:
    transfer = {"changes": {"new_issue": {"number": 40}, "new_repository": {
        "full_name": "acme/secret", "private": True, "owner": {"login": "acme"}}}}
    service.issue("transferred", "acme/public", 6, **transfer)
    assert service.item("acme/public", 6) is None
    assert service.item("acme/secret", 40).visibility == "private"  # moved into a private repository
    service.issue("deleted", "acme/secret", 5, private=True)
    assert service.item("acme/secret", 5) is None and service.store.get_triage("acme/secret", 5) is None


def test_uninstall_forgets_private_items_records_and_llm_answers(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        svc = Service(tmp_path, llm, llm_private_repos="on")
        svc.deliver("installation", {"action": "created", "installation": INSTALL,
                                     "repositories": ACME_REPOS, "sender": {"login": "a"}})
        svc.issue("closed", "acme/secret", 5, SECRET_TITLE, private=True)
        svc.issue("closed", "acme/public", 6, "flibbergrad hang public control")
        svc.issue("opened", "acme/secret", 9, private=True)
        svc.deliver("issue_comment", command("/triage stage S2") | {
            "repository": {"full_name": "acme/secret", "private": True, "owner": {"login": "acme"}},
            "issue": {"number": 9, "title": "t", "body": "b", "state": "open"}})
        svc.issue("opened", "other/proj", 1, installation=2)
        assert llm.requests and svc.rows("feedback", "acme/") and svc.rows("triages", "acme/")
        with sqlite3.connect(svc.cache) as cache:
            assert cache.execute("SELECT COUNT(*) FROM llm_cache WHERE scope LIKE 'acme/%'").fetchone()[0]
        svc.deliver("installation", {"action": "deleted", "installation": INSTALL,
                                     "repositories": ACME_REPOS, "sender": {"login": "a"}})
        svc.refiner.close()
    for table in ("triages", "feedback", "comments", "jobs"):
        assert svc.rows(table, "acme/") == 0, table
    assert svc.rows("triages", "other/") == 1  # another installation's records stay
    fresh = live_engine(svc.index_dir)  # what is on disk now
    assert fresh.index.row_of(("acme/secret", 5)) is None
    assert fresh.index.row_of(("acme/public", 6)) is not None  # a public issue stays public
    assert SECRET_TITLE not in (svc.index_dir / "meta.jsonl").read_text()
    with sqlite3.connect(svc.cache) as cache:
        assert cache.execute("SELECT COUNT(*) FROM llm_cache WHERE scope LIKE 'acme/%'").fetchone()[0] == 0
        assert cache.execute("SELECT COUNT(*) FROM llm_cache WHERE scope = 'other/proj'").fetchone()[0] == 1


def test_a_forgotten_repository_is_not_triaged_until_added_again(service: Service) -> None:
    service.deliver("installation_repositories", {
        "action": "removed", "installation": INSTALL, "repositories_removed": [ACME_REPOS[0]]})
    assert service.item("acme/secret", 5) is None and service.rows("triages", "acme/secret") == 0
    service.gh.calls.clear()
    service.issue("opened", "acme/secret", 9, private=True)
    assert service.gh.writes == [] and service.rows("triages", "acme/secret") == 0
    service.deliver("installation_repositories", {
        "action": "added", "installation": INSTALL, "repositories_added": [ACME_REPOS[0]]})
    service.issue("opened", "acme/secret", 10, private=True)
    assert service.comment("acme/secret", 10)


@pytest.mark.parametrize(("private", "config", "operator", "asked"), [
    (False, "", "off", True),
    (False, "llm: off\n", "off", False),
    (True, "", "off", False),
    (True, "llm: on\n", "opt-in", True),
    (True, "", "opt-in", False),
])
def test_model_consent_per_repository(tmp_path: Path, private: bool, config: str, operator: str,
                                      asked: bool) -> None:
    with FakeLLM() as llm:
        svc = Service(tmp_path, llm, llm_private_repos=operator)
        svc.gh.files[("acme/repo", ".github/triagebot.yml")] = config
        svc.issue("opened", "acme/repo", 3, title="flibbergrad zorblax hang", private=private)
        svc.refiner.close()
    assert any("zorblax" in m["content"] for r in llm.requests for m in r["messages"]) is asked
    assert svc.comment("acme/repo", 3)
