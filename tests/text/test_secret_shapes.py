"""One table of secret shapes (text/secrets.py), proven on every path that leaves the process: a title
or a body holding a credential never reaches (a) the public comment, (b) a log line, (c) the prompt
sent to the LLM. Each path is the real one: the engine over a real (hashing-embedder) index and the
service's renderer; the worker's structured log lines and PyGithub-style stdlib records; the real
LLM client against the local fake server (tests/support/llm_fake.py).

A credential-holding neighbour sits in the index next to a harmless canary word, so each test also
shows that the surrounding text *did* get through: none can pass because the text was dropped."""
from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.engine import records
from support.llm_fake import FakeLLM, classifier_factory
from triagebot.comment import render as comment
from triagebot.domain.models import Issue, LabelledIssue, Labels
from triagebot.engine.build import build_index
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IssueIndex
from triagebot.engine.triage import Engine
from triagebot.logs import JsonLineFormatter, emit
from triagebot.service import assembly
from triagebot.service.worker import Worker
from triagebot.settings import Settings
from triagebot.store.queue import JobSpec, Queue
from triagebot.store.records import Store
from triagebot.text import secrets

ROOT = Path(__file__).resolve().parents[2]
LLM_KEY = "sk-test-shape-suite-0123456789"

# Fake credentials of every shape, assembled here so no scanner mistakes the source for a leak.
# (id, the text as a reporter pastes it, the parts that must never come out)
_PEM_BODY = "MIIEowIBAAKCAQEAfakeTESTkeyNOTreal0123456789abcdefghijklmnopqrstuv"
SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    ("ghp", "ghp_" + "Zq8vW2" * 6, ("ghp_",)),
    ("gho", "gho_" + "Rt5yU1" * 6, ("gho_",)),
    ("ghu", "ghu_" + "Ka9dF3" * 6, ("ghu_",)),
    ("ghs", "ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a", ("ghs_",)),
    ("ghs_stateless", "ghs_123456_" + "eyJhbGciOiJSUzI1NiJ9." * 3 + "sig-_x", ("ghs_", "eyJhbGci")),
    ("ghr", "ghr_" + "Lp0oKm" * 6, ("ghr_",)),
    ("github_pat", "github_pat_11ABCDEFG0" + "_x9Yq" * 12, ("github_pat_",)),
    ("openai_sk", "sk-" + "T3stK3yOpen" * 4, ("sk-T3st",)),
    ("openai_sk_proj", "sk-proj-" + "A1b2C3d4" * 5, ("sk-proj-",)),
    ("huggingface", "hf_" + "AbCdEfGhIj" * 3 + "KlMn", ("hf_AbCd",)),
    ("aws_akia", "AKIA" + "IOSFODNN7EXAMPLE", ("AKIAIOSFODNN7EXAMPLE",)),
    ("aws_asia", "ASIA" + "Y3FAKEK3YEXAMPL3", ("ASIAY3FAKEK3YEXAMPL3",)),
    ("slack_xoxb", "xoxb-" + "1234567890-0987654321-" + "AbCd" * 6, ("xoxb-",)),
    ("slack_xoxp", "xoxp-" + "2234567890-1987654321-" + "EfGh" * 6, ("xoxp-",)),
    ("gitlab", "glpat-" + "AbCdEfGhIjKlMnOpQrSt", ("glpat-",)),
    ("pem_private_key", "-----BEGIN RSA PRIVATE KEY-----\n" + _PEM_BODY + "\n" + _PEM_BODY[::-1]
     + "\n-----END RSA PRIVATE KEY-----", ("PRIVATE KEY", _PEM_BODY, _PEM_BODY[::-1])),
    ("pem_openssh_key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + _PEM_BODY[5:] + "\n"
     "-----END OPENSSH PRIVATE KEY-----", ("PRIVATE KEY", _PEM_BODY[5:])),
    ("password_assignment", "password=CorrectHorse9Battery", ("CorrectHorse9Battery",)),
    ("token_assignment", "HF_TOKEN: 'open-sesame-4-real'", ("open-sesame-4-real",)),
    ("secret_assignment", 'client_secret = "s3cr3t with spaces"', ("s3cr3t with spaces",)),
    ("api_key_assignment", "OPENAI_API_KEY=Zx81-notprefixed-9kq", ("Zx81-notprefixed-9kq",)),
]
IDS = [shape[0] for shape in SHAPES]
ERROR = "RuntimeError: NCCL watchdog timeout in allreduce after 1800000 ms"


def canary(i: int) -> str:
    return f"canaryword{i}"


def one_line(value: str) -> str:
    return " ".join(value.split())


def issue_with(i: int, where: str) -> Issue:
    """A new issue holding shape ``i`` in its title or (as pasted, multi-line) in its body."""
    _, value, _ = SHAPES[i]
    title = f"NCCL timeout {canary(i)} {one_line(value)}" if where == "title" else f"NCCL timeout {canary(i)}"
    body = f"{ERROR}\nmy config: {value}\n{ERROR} {canary(i)}" if where == "body" else ERROR
    return Issue(repo="org/repo", number=1, title=title, body=body)


def assert_never_out(text: str, i: int) -> None:
    """None of the shape's sensitive parts, as written or behind Markdown escapes."""
    for variant in (text, text.replace("\\", "")):
        for part in SHAPES[i][2]:
            assert part not in variant, f"{SHAPES[i][0]}: {part!r} leaked"


@pytest.fixture(scope="module")
def index() -> IssueIndex:
    """The fixture issues plus one closed neighbour per shape whose title and resolution hold the
    credential next to that shape's canary word."""
    extra = [
        LabelledIssue(repo="org/repo", number=9000 + i, url=f"https://github.com/org/repo/issues/{9000 + i}",
                      title=f"NCCL timeout {canary(i)} {one_line(value)}",
                      body=f"{ERROR}\nmy config: {value}", close_reason="completed",
                      labels=Labels(stage="S4", symptom="4.11", root_cause="R4.7", fix_pattern="F3"),
                      resolution=f"Raised the NCCL timeout {canary(i)} {one_line(value)}")
        for i, (_, value, _) in enumerate(SHAPES)
    ]
    built, _ = build_index(records() + extra, HashingEmbedder())
    return built


@pytest.fixture(scope="module")
def engine(index: IssueIndex) -> Engine:
    return Engine(index, HashingEmbedder())


# the table itself --------------------------------------------------------------------------------
@pytest.mark.parametrize("i", range(len(SHAPES)), ids=IDS)
def test_every_shape_is_found_and_masked(i: int) -> None:
    _, value, _ = SHAPES[i]
    text = f"before {value} after"
    assert list(secrets.find(text)), SHAPES[i][0]
    masked = secrets.redact(text)
    assert_never_out(masked, i)
    assert masked.startswith("before ") and masked.endswith(" after") and secrets.MASK in masked


@pytest.mark.parametrize("text", [
    "disk-offload", "risk-free sk-", "task-sk-1", "ghost_writer", "laughs_at the highs_and lows",
    "hf_hub_download(repo_id)", "max_tokens: 2048", "tokenizer_type: GPT2BPETokenizer",
    "AKIA is not a key", "the secret is out", "Authorization header missing",
])
def test_ordinary_words_are_not_secrets(text: str) -> None:
    assert list(secrets.find(text)) == [] and secrets.redact(text) == text


def test_unterminated_private_key_is_masked_to_the_end() -> None:
    """A key pasted without its END line (a truncated body) takes the rest of the text with it."""
    assert secrets.redact(f"see\n-----BEGIN PRIVATE KEY-----\n{_PEM_BODY}\nmore") == "see\n" + secrets.MASK


def test_a_mask_is_never_masked_again() -> None:
    once = secrets.redact("token: ghp_abc password=hunter2hunter2 Bearer " + "x" * 30)
    assert secrets.redact(once) == once and once.count(secrets.MASK) == 3


def test_no_other_module_keeps_its_own_secret_patterns() -> None:
    """One owner: token prefixes are spelled out in text/secrets.py only."""
    shapes = re.compile(r"gh[psour]_|github_pat_|\bsk-|hf_\[|AKIA|xox\[|glpat-|-----BEGIN")
    for path in (ROOT / "triagebot").rglob("*.py"):
        if path.name == "secrets.py" and path.parent.name == "text":
            continue
        code = "\n".join(line for line in path.read_text(encoding="utf-8").splitlines()
                         if not line.lstrip().startswith("#"))
        strings = re.findall(r"r?[\"']([^\"'\n]*)[\"']", code)
        hits = [s for s in strings if shapes.search(s) and not s.startswith(("``", " "))]
        assert not hits, f"{path.relative_to(ROOT)}: {hits}"


# (a) the public comment --------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["title", "body"])
@pytest.mark.parametrize("i", range(len(SHAPES)), ids=IDS)
def test_secret_never_reaches_the_public_comment(engine: Engine, i: int, where: str) -> None:
    """The comment the service posts (its renderer, with the configured secrets): the neighbour's
    title and resolution are shown, with the credential masked, and nothing was withheld."""
    render = assembly.renderer(Settings.from_env({"OPENAI_API_KEY": LLM_KEY}), engine)
    triage = engine.triage(issue_with(i, where))
    body = render(triage.model_copy(update={"repo": "org/repo", "number": 1}))
    assert canary(i) in body and comment.FALLBACK_WITHHELD not in body
    assert_never_out(body, i)


# (b) log lines -----------------------------------------------------------------------------------
@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """The service's structured logger (logs.setup's formatter) writing to a buffer."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger("triagebot")
    old = (root.handlers[:], root.level)
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG)  # setLevel, not the attribute: it clears logging's level cache
    try:
        yield stream
    finally:
        root.handlers[:] = old[0]
        root.setLevel(old[1])


@pytest.mark.parametrize("where", ["title", "body"])
@pytest.mark.parametrize("i", range(len(SHAPES)), ids=IDS)
def test_secret_never_reaches_a_log_line(tmp_path: Path, json_lines: io.StringIO,
                                         caplog: pytest.LogCaptureFixture, i: int, where: str) -> None:
    """A job that fails with the issue's text in its error (GitHub echoing a body back), logged by
    the real worker; a field passed to ``emit``; a PyGithub-style DEBUG record with %-args."""
    issue = issue_with(i, where)
    store = Store(tmp_path / "s.sqlite3")
    queue = Queue(store.db, max_attempts=1)
    queue.accept("d1", "issues", "opened", [JobSpec(kind="triage", repo="org/repo", number=1)])

    def runner(_job: object) -> str:
        raise ValueError(f"GitHub refused the body: {issue.title}\n{issue.body}")

    Worker(queue, runner).run_once()
    emit(logging.getLogger("triagebot.test"), "issue seen", title=issue.title, body=issue.body)
    secrets.install()
    with caplog.at_level(logging.DEBUG, logger="github.Requester"):
        logging.getLogger("github.Requester").debug("POST %s -> %s", issue.title, issue.body)
    lines = json_lines.getvalue().splitlines()
    assert len(lines) == 2 and all(json.loads(line) for line in lines)
    assert all(canary(i) in line for line in lines) and canary(i) in caplog.text
    for out in (*lines, caplog.text, *(r.getMessage() for r in caplog.records)):
        assert_never_out(out, i)


# (c) the prompt sent to the LLM ------------------------------------------------------------------
@pytest.fixture(scope="module")
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.mark.parametrize("where", ["title", "body"])
@pytest.mark.parametrize("i", range(len(SHAPES)), ids=IDS)
def test_secret_never_reaches_the_llm_prompt(index: IssueIndex, llm: FakeLLM, i: int, where: str) -> None:
    """The engine with the real LLM client as its refiner: the issue and its neighbours go to the
    fake server; what it received holds the canaries but no credential."""
    llm.requests.clear()
    with classifier_factory(llm, LLM_KEY) as build:
        Engine(index, HashingEmbedder(), refiner=build()).triage(issue_with(i, where))
    sent = "\n".join(m["content"] for request in llm.requests for m in request["messages"])
    assert len(llm.requests) == 1 and sent.count(canary(i)) >= 2  # the issue and its neighbour
    assert_never_out(sent, i)
