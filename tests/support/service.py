"""Shared helpers for the service tests: ``RecordingPort``, a hand-written GitHubPort that records
every call (not to be confused with ``support.github_fake.FakeGitHub``, the fake GitHub *server*
that the real PyGithub port talks to over HTTP), ``Rig`` (store, queue, worker and jobs in one
process), a fixed-answer engine, a real werkzeug server on 127.0.0.1:0, signed deliveries, and the
octokit example payloads. Also two worker entry points run as scripts: a tiny one for the kill -9
test, and ``--service``, the real ``triagebot worker`` wiring, for the stop tests."""
from __future__ import annotations

import fcntl
import http.client
import itertools
import json
import os
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # for ``support`` when run as the kill -9 test's worker

from werkzeug.serving import make_server  # noqa: E402

from support.clock import FakeClock  # noqa: E402
from triagebot.domain import missing  # noqa: E402
from triagebot.domain.models import MissingInfo, Prediction, Triage  # noqa: E402
from triagebot.github.port import CommentState, GitHubPort, IssueState, RepoInfo  # noqa: E402
from triagebot.service import jobs as handlers  # noqa: E402
from triagebot.service import payload as payload_shape  # noqa: E402
from triagebot.service import signature as webhook  # noqa: E402
from triagebot.service.jobs import Deps  # noqa: E402
from triagebot.service.routing import route  # noqa: E402
from triagebot.service.worker import Worker  # noqa: E402
from triagebot.store.queue import Queue  # noqa: E402
from triagebot.store.records import Store  # noqa: E402

SECRET = "test-secret-🔑"
BOT = "triagebot[bot]"
WRITES = ("create_comment", "edit_comment", "add_labels", "remove_label")
EXAMPLES_DEFAULT = ROOT / ".ci/node/node_modules/@octokit/webhooks-examples/api.github.com/index.json"


def examples_path() -> Path:
    return Path(os.environ.get("TRIAGEBOT_WEBHOOK_EXAMPLES") or EXAMPLES_DEFAULT)


def load_examples() -> dict[str, list[dict]] | None:
    """event name -> example payloads, or None when the npm package is not installed."""
    path = examples_path()
    if path.is_dir():
        path = path / "api.github.com" / "index.json"
    if not path.is_file():
        return None
    return {e["name"]: e["examples"] for e in json.loads(path.read_text(encoding="utf-8"))}


def fixed_triage() -> Triage:
    def p(id_: str, name: str = "x") -> Prediction:
        return Prediction(id=id_, name=name, confidence=0.9)

    # a request for the reporter: stated labels alone are applied, not commented on
    config = MissingInfo(key="config", description=missing.describe("config", None))
    return Triage(stage=p("S4", "Training & Evaluation"), symptom=p("4.2"), root_cause=p("unknown"),
                  fix_pattern=p("unknown"), distributed_specific=p("true"), is_bug=p("true"),
                  missing_info=[config])


class FakeEngine:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def triage(self, issue: Any, **_how: Any) -> Triage:
        self.calls.append(issue)
        return fixed_triage()


class RecordingPort:
    """A GitHubPort in memory: answers reads from dicts and records every call in ``calls``.
    ``fail[method]`` is a list of exceptions raised by the next calls of that method. With
    ``state_path`` the state lives in a JSON file so two processes (the kill -9 test) see the same
    GitHub."""

    def __init__(self, state_path: Path | None = None) -> None:
        self.state_path = state_path
        self.issues: dict[tuple[str, int], IssueState] = {}
        self.comments: dict[tuple[str, int], list[CommentState]] = {}
        self.calls: list[tuple[str, tuple]] = []
        self.fail: dict[str, list[Exception]] = {}
        self.files: dict[tuple[str, str], str] = {}
        self.private_repos: set[str] = set()
        self.block_on: str | None = None
        self._ids = itertools.count(1000)

    def add_issue(self, repo: str, number: int, **fields: Any) -> IssueState:
        issue = IssueState(repo=repo, number=number, title=fields.pop("title", "NCCL hang"),
                           body=fields.pop("body", "hangs at allreduce"), author="alice", **fields)
        self.issues[(repo, number)] = issue
        self._save()
        return issue

    @property
    def writes(self) -> list[tuple[str, tuple]]:
        return [c for c in self.calls if c[0] in WRITES]

    def bot_comments(self, repo: str, number: int) -> list[CommentState]:
        self._load()
        return [c for c in self.comments.get((repo, number), []) if c.author == BOT]

    def _call(self, name: str, *args: Any) -> None:
        self._load()
        self.calls.append((name, args))
        queued = self.fail.get(name)
        if queued:
            raise queued.pop(0)

    def get_issue(self, repo: str, number: int) -> IssueState | None:
        self._call("get_issue", repo, number)
        return self.issues.get((repo, number))

    def list_comments(self, repo: str, number: int) -> list[CommentState]:
        self._call("list_comments", repo, number)
        return list(self.comments.get((repo, number), []))

    def create_comment(self, repo: str, number: int, body: str) -> int:
        self._call("create_comment", repo, number, body)
        cid = max([c.id for cs in self.comments.values() for c in cs] + [next(self._ids)]) + 1
        self.comments.setdefault((repo, number), []).append(
            CommentState(id=cid, body=body, author=BOT, author_type="Bot"))
        self._save()
        self._maybe_block("create_comment")
        return cid

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        self._call("edit_comment", repo, comment_id, body)
        for cs in self.comments.values():
            for i, c in enumerate(cs):
                if c.id == comment_id:
                    cs[i] = c.model_copy(update={"body": body})
        self._save()

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        self._call("add_labels", repo, number, labels)
        self._maybe_block("add_labels")
        issue = self.issues[(repo, number)]
        self.issues[(repo, number)] = issue.model_copy(update={"labels": issue.labels + labels})
        self._save()

    def remove_label(self, repo: str, number: int, label: str) -> None:
        self._call("remove_label", repo, number, label)

    def repo_labels(self, repo: str) -> list[str]:
        self._call("repo_labels", repo)
        return ["bug", "stage: training", "symptom: memory"]

    def read_file(self, repo: str, path: str) -> str | None:
        self._call("read_file", repo, path)
        return self.files.get((repo, path))

    def repository(self, repo: str) -> RepoInfo | None:
        self._call("repository", repo)
        return RepoInfo(full_name=repo, private=repo in self.private_repos, owner=repo.split("/")[0])

    def iter_closed_issues(self, repo: str, since: Any = None, start_page: int = 0) -> Iterator:
        return iter(())

    def _maybe_block(self, name: str) -> None:
        if self.block_on == name:
            Path(str(self.state_path) + ".blocked").write_text("1")
            threading.Event().wait(float(os.environ.get("FAKE_BLOCK_S") or 3600))  # killed here

    # cross-process persistence --------------------------------------------------------------
    def _save(self) -> None:
        if self.state_path is None:
            return
        data = {"issues": [i.model_dump(mode="json") for i in self.issues.values()],
                "comments": [c.model_dump(mode="json") | {"repo": k[0], "number": k[1]}
                             for k, cs in self.comments.items() for c in cs]}
        with _locked(self.state_path):
            tmp = self.state_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data))
            tmp.replace(self.state_path)

    def _load(self) -> None:
        if self.state_path is None or not self.state_path.exists():
            return
        with _locked(self.state_path):
            data = json.loads(self.state_path.read_text())
        self.issues = {(i["repo"], i["number"]): IssueState(**i) for i in data["issues"]}
        self.comments = {}
        for c in data["comments"]:
            key = (c.pop("repo"), c.pop("number"))
            self.comments.setdefault(key, []).append(CommentState(**c))


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(str(path) + ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


# HTTP -------------------------------------------------------------------------------------------
def healthy(base: str) -> bool:
    """Whether a started ``triagebot serve`` at ``base`` answers its health check yet."""
    import urllib.request

    try:
        with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def live_server(app: Any) -> Iterator[str]:
    """A real werkzeug HTTP server on 127.0.0.1 with an OS-chosen port."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)


def post(address: str, body: bytes, event: str = "issues", *, delivery: str | None = None,
         secret: str | None = SECRET, signature: str | None = None,
         extra: dict[str, str] | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event,
               "X-GitHub-Delivery": delivery or str(uuid.uuid4()), "User-Agent": "GitHub-Hookshot/test"}
    if signature is not None:
        headers["X-Hub-Signature-256"] = signature
    elif secret is not None:
        headers["X-Hub-Signature-256"] = webhook.sign(secret, body)
    headers.update(extra or {})
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        conn.request("POST", "/webhook", body=body, headers=headers)
        resp = conn.getresponse()
        raw = resp.read()
    finally:
        conn.close()
    return resp.status, (json.loads(raw) if raw.startswith(b"{") else {})


def issue_payload(action: str, repo: str = "org/repo", number: int = 7, sender: str = "alice",
                  sender_type: str = "User", installation: int = 42, **extra: Any) -> dict:
    owner = repo.split("/")[0]
    return {"action": action, "issue": {"number": number, "title": "NCCL hang", "body": "b",
                                        "state": "open", "user": {"login": "alice"}},
            "repository": {"full_name": repo, "name": repo.split("/")[1], "owner": {"login": owner}},
            "sender": {"login": sender, "type": sender_type},
            "installation": {"id": installation}, **extra}


def encode(payload: dict) -> bytes:
    """GitHub's own formatting: indented JSON with a trailing newline."""
    return (json.dumps(payload, indent=2) + "\n").encode("utf-8")


def _worker_main(db: str, state: str) -> None:
    """Subprocess worker for the kill -9 test: real queue + handlers over a file-backed fake."""
    from triagebot.service import jobs as handlers
    from triagebot.service.jobs import Deps
    from triagebot.service.worker import Worker
    from triagebot.store.queue import Queue
    from triagebot.store.records import Store

    gh = RecordingPort(Path(state))
    gh.block_on = os.environ.get("FAKE_BLOCK_ON") or None
    store = Store(db)
    deps = Deps(store=store, port_for=lambda _i: gh, engine=FakeEngine(), bot_login=BOT)
    Worker(Queue(store.db, lease_s=1.0), lambda job: handlers.run(deps, job)).drain()


def _service_main(db: str, state: str) -> None:
    """Subprocess ``triagebot worker`` for the stop tests: the real ``wiring.work`` (settings
    from the environment, lease, heartbeat, signals, grace) over the file-backed fake."""
    from triagebot.service import wiring
    from triagebot.settings import Settings

    gh = RecordingPort(Path(state))
    gh.block_on = os.environ.get("FAKE_BLOCK_ON") or None
    settings = Settings.from_env({**os.environ, "TRIAGEBOT_DB": db})
    wiring.work(settings, 1, engine=FakeEngine(), port_for=lambda _i: gh)


class Rig:
    """Real store, queue, worker and jobs on a SQLite file in one process, on a fake clock, fed
    deliveries as the receiver would (``deliver``). GitHub is ``gh``, a RecordingPort holding
    org/repo#7, unless the test passes another ``port`` (the PyGithub port to the fake server);
    further ``deps`` (``paused``, ``author_limit``, ``indexer`` ...) go to the jobs' Deps."""

    def __init__(self, tmp_path: Path, port: GitHubPort | None = None, clock: FakeClock | None = None,
                 max_attempts: int = 3, **deps: Any) -> None:
        self.clock = clock or FakeClock(1_000_000.0)
        self.gh = RecordingPort()
        self.gh.add_issue("org/repo", 7)
        self.port: GitHubPort = port or self.gh
        self.store = Store(tmp_path / "h.sqlite3", clock=self.clock)
        self.queue = Queue(self.store.db, max_attempts=max_attempts, clock=self.clock)
        self.indexed: list[tuple[Any, Any]] = []
        deps = {"indexer": lambda issue, labels, **_how: self.indexed.append((issue, labels))} | deps
        self.deps = Deps(store=self.store, port_for=lambda _i: self.port, engine=FakeEngine(),
                         bot_login=BOT, clock=self.clock, **deps)
        self.worker = Worker(self.queue, lambda job: handlers.run(self.deps, job))
        self._n = 0

    def deliver(self, event: str, payload: dict) -> None:
        """As the receiver would, so a payload its shape check refuses fails the test here."""
        problem = payload_shape.problem(payload)
        assert problem is None, f"the receiver would answer 400: {problem}"
        self._n += 1
        self.queue.accept(f"d{self._n}", event, payload.get("action"), route(event, payload, BOT))

    def drain(self) -> int:
        return self.worker.drain()


def command(body: str, association: str = "MEMBER", who: str = "maint") -> dict:
    return issue_payload("created", sender=who, comment={
        "body": body, "author_association": association, "user": {"login": who}})


if __name__ == "__main__":
    if sys.argv[1] == "--service":
        _service_main(sys.argv[2], sys.argv[3])
    else:
        _worker_main(sys.argv[1], sys.argv[2])
