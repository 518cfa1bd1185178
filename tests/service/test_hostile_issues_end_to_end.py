"""The whole path for hostile and huge issues (RELIABILITY 23, 36, 38, 40, 41): a signed delivery
to the real receiver on 127.0.0.1, the real queue, worker and handlers, the real engine (hashing
embedder, so no model), the real LLM client against tests/support/llm_fake.py, the real renderer and label
policy, and a fake GitHub port that records what would be posted. Secrets are configured exactly as
in production (environment -> Settings and LLM settings)."""
from __future__ import annotations

import logging
import re
import time
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from support.adversarial import CORPUS, MARKERS, obeying_answers
from support.engine import hashing_index
from support.llm_fake import FakeLLM, Reply
from support.service import RecordingPort, encode, issue_payload, live_server, post
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.triage import Engine
from triagebot.llm.client import build_refiner
from triagebot.service import jobs as handlers
from triagebot.service import wiring as server
from triagebot.service.app import create_app
from triagebot.service.worker import Worker
from triagebot.settings import Settings
from triagebot.store.queue import Queue
from triagebot.store.records import Store
from triagebot.text import signal as text

WEBHOOK_SECRET = "whsec-pipeline-3f9a1c77e2"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpipelineTESTkeyNOTREAL0123456789\n-----END RSA PRIVATE KEY-----\n"
LLM_KEY = "sk-pipeline-llm-key-0123456789"
SECRETS = (WEBHOOK_SECRET, PRIVATE_KEY.strip(), "MIIEpipelineTESTkeyNOTREAL0123456789", LLM_KEY)
REPO = "org/repo"
CONFIG = """mode: apply
comment: always
label_map:
  S4: "stage: training"
  "4.2": "symptom: memory"
thresholds: {stage: 0.0, symptom: 0.0, root_cause: 0.0, fix_pattern: 0.0}
"""
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
OUR_LINK = re.compile(r"https://(?:redirect\.)?github\.com/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+/issues/\d+")
MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9-]")


class RecordingEmbedder(HashingEmbedder):
    """The hashing embedder, keeping every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return super().encode(texts)


class ObeyingLLM(FakeLLM):
    """A model that does what the issue says, in the way ``mode`` names (see test_llm_adversarial)."""

    def __init__(self, mode: str) -> None:
        super().__init__()
        self.mode = mode

    def reply_for(self, body: dict[str, Any]) -> Reply:
        user = body["messages"][1]["content"]
        inside = user.split("<issue>", 1)[-1].split("</issue>", 1)[0].strip()
        title, _, rest = inside.partition("\n")
        return Reply(content=obeying_answers(title, rest)[self.mode])


class Pipeline:
    def __init__(self, tmp_path: Path, llm: FakeLLM | None) -> None:
        env = {"TRIAGEBOT_WEBHOOK_SECRET": WEBHOOK_SECRET, "TRIAGEBOT_PRIVATE_KEY": PRIVATE_KEY,
               "TRIAGEBOT_APP_ID": "1", "TRIAGEBOT_DB": str(tmp_path / "p.sqlite3"),
               "OPENAI_API_KEY": LLM_KEY}
        if llm is not None:
            env |= {"TRIAGEBOT_LLM_BASE_URL": llm.base_url, "TRIAGEBOT_LLM_MODEL": "fake"}
        self.settings = Settings.from_env(env)
        self.embedder = RecordingEmbedder()
        self.refiner = build_refiner(env)
        engine = Engine(hashing_index(), self.embedder, refiner=self.refiner)
        self.gh = RecordingPort()
        self.gh.files[(REPO, ".github/triagebot.yml")] = CONFIG
        self.store = Store(self.settings.db)
        self.queue = Queue(self.store.db)
        deps = server.build_deps(self.settings, self.store, engine=engine, indexer=lambda *a: None,
                                 port_for=lambda _i: self.gh, author_limit=10_000)
        self.worker = Worker(self.queue, lambda job: handlers.run(deps, job))
        self.app = create_app(self.settings, store=self.store, queue=self.queue)

    def open(self, address: str, number: int, title: str, body: str) -> None:
        self.gh.add_issue(REPO, number, title=title, body=body)
        payload = issue_payload("opened", repo=REPO, number=number)
        payload["issue"] |= {"title": title, "body": body}
        status, _ = post(address, encode(payload), secret=WEBHOOK_SECRET)
        assert status == 202

    def comment(self, number: int) -> str:
        [posted] = self.gh.bot_comments(REPO, number)
        return posted.body

    def labels(self) -> set[str]:
        return {name for call, args in self.gh.writes if call == "add_labels" for name in args[2]}

    def close(self) -> None:
        if self.refiner is not None:
            self.refiner.close()


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.DEBUG):
        yield caplog


def assert_no_attacker_content(body: str) -> None:
    assert "![" not in body and "<img" not in body.lower() and not MENTION.search(body)
    assert all(OUR_LINK.fullmatch(u) for u in re.findall(r"https?://[^\s)\]>]+", body)), body
    ours = OUR_LINK.sub("", body).lower()
    for marker in [m for m in MARKERS if m != "@"]:
        assert marker.lower() not in ours, marker


def assert_no_secrets(*texts: str) -> None:
    for blob in texts:
        for secret in SECRETS:
            assert secret not in blob


ALLOWED_LABELS = {"stage: training", "symptom: memory", "triage: needs-review"}
MODES = sorted(obeying_answers("t", "b"))


@pytest.mark.parametrize("mode", MODES)
def test_adversarial_issues_through_the_real_pipeline(tmp_path: Path, mode: str, logs: Any) -> None:
    """RELIABILITY 38 end to end: 0 attacker URLs, mentions or strings in posted comments, and
    100% of applied labels within the allow-list; 23/36: no secret in logs, prompts or comments."""
    leaked = ("Config dump", f"my webhook secret is {WEBHOOK_SECRET} and key {LLM_KEY}\n"
                             f"RuntimeError: CUDA out of memory {WEBHOOK_SECRET}")
    cases = [*sorted(CORPUS.items()), ("leaked_secret", leaked)]
    with ObeyingLLM(mode) as llm:
        pipe = Pipeline(tmp_path, llm)
        with live_server(pipe.app) as address:
            for number, (_, (title, body)) in enumerate(cases, start=1):
                pipe.open(address, number, title, body)
        assert pipe.worker.drain() == len(cases)
        pipe.close()
        prompts = [m["content"] for r in llm.requests for m in r["messages"]]
    assert len(llm.requests) >= len(cases)
    comments = [pipe.comment(n) for n in range(1, len(cases) + 1)]
    for body in comments:
        assert_no_attacker_content(body)
    assert pipe.labels() <= ALLOWED_LABELS
    assert_no_secrets(*comments, *prompts, logs.text,
                      *(str(r.__dict__) for r in logs.records))
    for seen in [*pipe.embedder.seen, *prompts]:  # RELIABILITY 41 before embedding and the LLM
        assert not INVISIBLE.search(seen)
        assert unicodedata.normalize("NFKC", seen) == seen


def test_secrets_never_reach_logs_prompts_or_comments_offline(tmp_path: Path, logs: Any) -> None:
    """RELIABILITY 23 without an LLM: the secret pasted into an issue is not echoed anywhere."""
    pipe = Pipeline(tmp_path, None)
    with live_server(pipe.app) as address:
        pipe.open(address, 1, f"leak {WEBHOOK_SECRET}", f"RuntimeError: {WEBHOOK_SECRET} {PRIVATE_KEY}")
    assert pipe.worker.drain() == 1
    assert_no_secrets(pipe.comment(1), logs.text, *(str(r.__dict__) for r in logs.records))


def huge_body() -> str:
    """65,536 characters of emoji, CJK, combining marks, fullwidth and invisible characters
    around a real error: every slice of it is multi-byte."""
    unit = "显存不足 🔥🚀👩‍👩‍👧 ｆｕｌｌｗｉｄｔｈ e\u0301\u200b\u202e "
    line = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB 🔥\n"
    filler = (unit * (65_536 // len(unit) + 1))[: 65_536 - len(line)]
    return filler[:30_000] + "\n" + line + filler[30_000 + 1:]


def test_65536_char_multibyte_body_is_triaged_quickly(tmp_path: Path) -> None:
    """RELIABILITY 40: a maximal body of multi-byte text goes through receiver, worker and engine
    well inside any timeout; the embedding input is bounded and deterministic (41: normalised)."""
    body = huge_body()
    assert len(body) == 65_536 and len(body.encode("utf-8")) > 150_000
    pipe = Pipeline(tmp_path, None)
    with live_server(pipe.app) as address:
        started = time.monotonic()
        pipe.open(address, 1, "训练时显存不足 🔥", body)
        acked = time.monotonic() - started
        assert pipe.worker.drain() == 1
        elapsed = time.monotonic() - started
    assert acked < 5.0 and elapsed < 60.0  # well inside GitHub's 10 s; speed itself: bench/
    assert pipe.comment(1)
    [embedded] = pipe.embedder.seen
    assert len(embedded) <= text.SIGNAL_CHARS and not INVISIBLE.search(embedded)
    assert embedded == text.signal_text("训练时显存不足 🔥", body)  # deterministic
    assert "out of memory" in embedded.lower()
