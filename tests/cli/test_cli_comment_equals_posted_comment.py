"""``triagebot triage --comment FILE`` prints byte for byte the body the service posts for the same
issue, index and settings: the CLI runs as its own process (reading the environment like a user's
shell), the service runs its real path (routing, durable queue, worker, triage job, renderer)
against the fake GitHub port, both over the same index directory; offline and with the LLM (the
local fake server, deterministic), where both go through the one engine builder."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.engine import DS_REPO, deepspeed_issue, write_index
from support.llm_fake import FakeLLM
from support.service import BOT, RecordingPort, issue_payload
from triagebot.comment.render import MARKER
from triagebot.service import jobs, wiring
from triagebot.service.routing import route
from triagebot.service.worker import Worker
from triagebot.settings import Settings
from triagebot.store.queue import Queue
from triagebot.store.records import Store

ROOT = Path(__file__).resolve().parents[2]
NUMBER = 9001


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_index(tmp_path_factory.mktemp("same") / "index")


@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def environment(tmp_path: Path, index_dir: Path, llm: FakeLLM | None) -> dict[str, str]:
    """The settings both sides read, as variables (secrets included: both scan for them)."""
    env = {"TRIAGEBOT_INDEX": str(index_dir), "TRIAGEBOT_DB": str(tmp_path / "bot.sqlite3"),
           "TRIAGEBOT_WEBHOOK_SECRET": "whsec-same-body-1234", "OPENAI_API_KEY": "sk-same-body-0123456789"}
    if llm is not None:
        env |= {"TRIAGEBOT_LLM_BASE_URL": llm.base_url, "TRIAGEBOT_LLM_MODEL": "fake-model"}
    return env


def posted_by_the_service(env: dict[str, str], title: str, body: str) -> str:
    """One ``issues.opened`` delivery through router, queue, worker and the triage job."""
    settings = Settings.from_env(env)
    store = Store(settings.db)
    gh = RecordingPort()
    gh.add_issue(DS_REPO, NUMBER, title=title, body=body)
    deps = wiring.build_deps(settings, store, port_for=lambda _installation: gh)
    queue = Queue(store.db)
    payload = issue_payload("opened", repo=DS_REPO, number=NUMBER)
    queue.accept("delivery-1", "issues", "opened", route("issues", payload, settings.bot_login))
    assert Worker(queue, lambda job: jobs.run(deps, job)).drain() == 1
    [posted] = gh.bot_comments(DS_REPO, NUMBER)
    assert settings.bot_login == BOT
    return posted.body


def printed_by_the_cli(env: dict[str, str], issue_file: Path, *flags: str) -> bytes:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TRIAGEBOT_", "OPENAI_"))}
    done = subprocess.run([sys.executable, "-m", "triagebot", "triage", "--comment", *flags, str(issue_file)],
                          env={**clean, **env, "PYTHONPATH": str(ROOT)}, cwd=ROOT, capture_output=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@pytest.mark.parametrize("with_llm", [False, True], ids=["offline", "llm"])
def test_cli_prints_the_body_the_service_posts(tmp_path: Path, index_dir: Path, llm: FakeLLM,
                                              with_llm: bool) -> None:
    title, body = deepspeed_issue(300)
    issue_file = tmp_path / "issue.json"
    issue_file.write_text(json.dumps({"title": title, "body": body, "repo": DS_REPO, "number": NUMBER}))
    env = environment(tmp_path, index_dir, llm if with_llm else None)
    llm.requests.clear()
    posted = posted_by_the_service(env, title, body)
    printed = printed_by_the_cli(env, issue_file, *(["--llm"] if with_llm else []))
    assert posted.startswith(MARKER) and "issues/" in posted  # a real comment, with similar issues
    assert printed == posted.encode("utf-8")
    assert len(llm.requests) == (2 if with_llm else 0)  # each side asked the model once
