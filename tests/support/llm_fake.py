"""A local OpenAI-compatible chat-completions server for tests, evaluation and benchmarks.

Real HTTP on 127.0.0.1 (an ephemeral port), so the real ``openai`` client, its timeouts and its
error mapping are exercised. Replies are scripted (``FakeLLM.script``) or, when the script is
empty, produced by a deterministic keyword classifier ("smart" mode) so ``eval --llm`` can run
through it. Every request body is recorded in ``FakeLLM.requests``.
"""
from __future__ import annotations

import contextlib
import json
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOST = "127.0.0.1"


@dataclass
class Reply:
    """One scripted response: a chat answer (``content``) or an HTTP error (``status`` != 200)."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    message: str = "scripted error"


def answer(**overrides: Any) -> str:
    """A valid answer as JSON text, with any field overridden."""
    base: dict[str, Any] = {
        "stage": "S4", "symptom": "4.2", "root_cause": "R4.5", "fix_pattern": "F5",
        "distributed_specific": True, "is_bug": True, "confidence": 0.9,
        "rationale": "Out of memory during training with ZeRO.", "evidence": [],
        "duplicate_of": None,
    }
    base.update(overrides)
    return json.dumps(base)


# Keyword rules for "smart" mode: first match wins; ids are always consistent with the stage.
_RULES: list[tuple[str, tuple[str, str, str, str, bool]]] = [
    (r"\binstall|setup\.py|\bbuild\b|compil|\bwheel\b|nvcc|cuda_home|ninja", ("S1", "1.1", "R1.2", "F2", False)),
    (r"importerror|no module named|modulenotfound|cannot import", ("S1", "1.2", "R1.1", "F2", False)),
    (r"init_process_group|rendezvous|\bnccl\b.*(init|connect)|master_addr|launcher|hostfile",
     ("S2", "2.1", "R2.1", "F1", True)),
    (r"inference|generate\(|serving|init_inference|\bkernel inject", ("S5", "5.1", "R5.2", "F6", False)),
    (r"tokenizer|dataset|load_checkpoint|from_pretrained|vocab", ("S3", "3.1", "R3.1", "F3", False)),
    (r"out of memory|\boom\b|offload|cuda memory", ("S4", "4.2", "R4.5", "F5", True)),
    (r"\bhang|stuck|deadlock|timed? ?out", ("S4", "4.11", "R4.7", "F3", True)),
    (r"checkpoint", ("S4", "4.10", "R4.4", "F6", True)),
    (r"\bnan\b|loss|slow|throughput", ("S4", "4.1", "R4.3", "F3", False)),
]
_ISSUE = re.compile(r"<issue>(.*)</issue>", re.S)


def smart_answer(messages: list[dict[str, Any]]) -> str:
    """Classify the delimited issue of the last user turn by keywords (deterministic)."""
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    found = _ISSUE.search(users[0] if users else "")
    issue = (found.group(1) if found else "").lower()
    for pattern, (stage, symptom, cause, fix, dist) in _RULES:
        if re.search(pattern, issue):
            return answer(stage=stage, symptom=symptom, root_cause=cause, fix_pattern=fix,
                          distributed_specific=dist, confidence=0.8, rationale="keyword match")
    return answer(stage="S4", symptom="4.3", root_cause="unknown", fix_pattern="unknown",
                  distributed_specific=False, confidence=0.3, rationale="no keyword matched")


class FakeLLM:
    """The server. Use as a context manager; ``base_url`` is what the client is configured with."""

    def __init__(self, reject_formats: tuple[str, ...] = (), model: str = "fake-model") -> None:
        self.script: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.reject_formats = set(reject_formats)
        self.model = model
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer((HOST, 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def push(self, *replies: Reply | str) -> None:
        for reply in replies:
            self.script.append(Reply(content=reply) if isinstance(reply, str) else reply)

    def reply_for(self, body: dict[str, Any]) -> Reply:
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in self.reject_formats:
            return Reply(status=400, message=f"response_format {fmt} is not supported")
        if self.script:
            return self.script.popleft()
        return Reply(content=smart_answer(body.get("messages") or []))

    def wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)


def _handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # else delayed ACKs add 40 ms per call

        def log_message(self, *args: Any) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, {"error": {"message": "not found"}})
            body = json.loads(raw or b"{}")
            fake.requests.append(body)
            fake.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = fake.reply_for(body)
            fake.wait(reply.delay)
            if reply.status != 200:
                error = {"message": reply.message, "type": "fake_error", "code": reply.status}
                return self._send(reply.status, {"error": error}, reply.headers)
            self._send(200, _completion(body, reply.content, fake.model), reply.headers)

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (timeout test): nothing to do
                pass

    return Handler


def _completion(body: dict[str, Any], content: str | None, model: str) -> dict[str, Any]:
    prompt_chars = sum(len(m.get("content") or "") for m in body.get("messages") or [])
    usage = {"prompt_tokens": prompt_chars // 4, "completion_tokens": len(content or "") // 4}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    choice = {"index": 0, "message": {"role": "assistant", "content": content},
              "finish_reason": "stop"}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
            "model": body.get("model", model), "choices": [choice], "usage": usage}


# --- builders for tests: an offline triage and neighbours shaped like the Engine's -------------

def prediction(dimension: str, top: str, conf: float, *others: tuple[str, float]) -> Any:
    from triagebot.domain import taxonomy
    from triagebot.domain.models import Prediction

    name = taxonomy.name(dimension, top) if dimension in taxonomy.BY_DIMENSION else top.title()
    return Prediction(id=top, name=name, confidence=conf, abstained=conf < 0.5,
                      alternatives=[(top, conf), *others])


def offline_triage(repo: str = "org/repo", number: int = 7, **preds: Any) -> Any:
    """An offline triage: S4 / 4.2 / R4.5 / F5 by default, with second and third candidates."""
    from triagebot.domain.models import Triage

    defaults = {
        "stage": prediction("stage", "S4", 0.7, ("S3", 0.2), ("S5", 0.05)),
        "symptom": prediction("symptom", "4.2", 0.6, ("4.3", 0.2), ("4.8", 0.1)),
        "root_cause": prediction("root_cause", "R4.5", 0.5, ("R4.1", 0.3), ("R4.4", 0.1)),
        "fix_pattern": prediction("fix_pattern", "F5", 0.5, ("F3", 0.3), ("F2", 0.1)),
        "distributed_specific": prediction("bool", "true", 0.6, ("false", 0.4)),
        "is_bug": prediction("bool", "true", 0.9, ("false", 0.1)),
    }
    defaults.update(preds)
    return Triage(repo=repo, number=number, **defaults)


def neighbour(number: int, title: str = "CUDA out of memory with ZeRO-3", cross_repo: bool = False) -> Any:
    from triagebot.domain.models import Labels, Similar

    labels = Labels(stage="S4", symptom="4.2", root_cause="R4.5", fix_pattern="F5")
    return Similar(repo="org/repo", number=number, url=f"https://github.com/org/repo/issues/{number}",
                   title=title, score=0.8, labels=labels, resolution="Enabled CPU offload.",
                   resolved=True, cross_repo=cross_repo)


@contextlib.contextmanager
def classifier_factory(fake: FakeLLM, api_key: str, sleep: Callable[[float], None] = lambda _s: None,
                       **defaults: Any) -> Iterator[Callable[..., Any]]:
    """Builds LLMClassifiers pointed at ``fake`` (or another server) and closes them all after."""
    from triagebot.llm.client import LLMClassifier, LLMSettings

    made: list[Any] = []

    def build(server: FakeLLM | None = None, **overrides: Any) -> Any:
        values = {"model": "fake-model", "base_url": (server or fake).base_url, "api_key": api_key,
                  "timeout": 5.0, **defaults, **overrides}
        made.append(LLMClassifier(LLMSettings(**values), sleep=sleep))
        return made[-1]

    try:
        yield build
    finally:
        for clf in made:
            clf.close()
