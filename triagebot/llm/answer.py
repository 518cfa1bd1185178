"""The only shape an LLM answer may take, and the checks it must pass before anything acts on it.

The model reads untrusted issue text, so its output is treated as untrusted too (RELIABILITY 31):
every field is an enum, a bool, a bounded number or a short bounded string; unknown keys are
rejected; ids must sit inside the chosen stage; ``duplicate_of`` must be one of the neighbours our
own search returned. Any violation discards the whole answer: partial trust would let an injected
instruction smuggle one field through while the others look sane.
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, create_model

from triagebot.domain import taxonomy
from triagebot.domain.models import Similar

MAX_RATIONALE = 300
MAX_EVIDENCE_LINES = 3
MAX_EVIDENCE_CHARS = 200


class InvalidAnswer(ValueError):
    """The model's reply cannot be used; ``reason`` is a short stable key for stats and notes."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def _choice(dimension: str, with_unknown: bool) -> Any:
    values = taxonomy.ids(dimension) + ([taxonomy.UNKNOWN] if with_unknown else [])
    return Literal[tuple(values)]


class AnswerFields(BaseModel):
    """Every field an answer has, with its bounds: what the rest of the bot reads. The four ids are
    plain strings here; ``LLMAnswer`` narrows them to the taxonomy's ids."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: str
    symptom: str
    root_cause: str
    fix_pattern: str
    distributed_specific: bool
    is_bug: bool
    confidence: float = Field(ge=0.0, le=1.0)
    rationale: str = Field(default="", max_length=MAX_RATIONALE)
    evidence: list[Annotated[str, StringConstraints(max_length=MAX_EVIDENCE_CHARS)]] = Field(
        default_factory=list, max_length=MAX_EVIDENCE_LINES)
    duplicate_of: int | None = None


def _build_answer_model() -> type[AnswerFields]:
    """Built from the taxonomy so the enum can never drift from the ids the rest of the bot uses."""
    return create_model(
        "LLMAnswer",
        __base__=AnswerFields,
        stage=(_choice("stage", False), ...),
        symptom=(_choice("symptom", True), ...),
        root_cause=(_choice("root_cause", True), ...),
        fix_pattern=(_choice("fix_pattern", True), ...),
    )


LLMAnswer = _build_answer_model()


def json_schema() -> dict[str, Any]:
    """The schema sent as ``response_format``, in the subset strict structured output accepts.

    Bounds (lengths, ranges) are dropped from the wire schema because several servers reject them;
    they are still enforced locally by ``LLMAnswer``."""
    schema = LLMAnswer.model_json_schema()
    props = {k: _strip(v) for k, v in schema["properties"].items()}
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


_DROP = {"title", "default", "maxLength", "minLength", "maxItems", "minimum", "maximum"}


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip(v) for k, v in node.items() if k not in _DROP}
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def parse(content: str | None) -> AnswerFields:
    """Strict parse of the model's reply: one JSON object (optionally inside a ``json`` fence)."""
    text = _unfence((content or "").strip())
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidAnswer("invalid_json", str(exc)[:120]) from exc
    if not isinstance(data, dict):
        raise InvalidAnswer("invalid_json", "not a JSON object")
    try:
        return LLMAnswer.model_validate(data, strict=True)
    except ValidationError as exc:
        raise InvalidAnswer("schema", _first_error(exc)) from exc


def _unfence(text: str) -> str:
    """Local servers in plain mode often wrap JSON in a Markdown fence; nothing else is tolerated."""
    if text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return inner[4:] if inner.startswith("json") else inner
    return text


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    return f"{where}: {err.get('type', 'invalid')}"


def check(answer: AnswerFields, neighbours: list[Similar], own_number: int | None) -> None:
    """Cross-field rules the schema alone cannot express; raises ``InvalidAnswer``."""
    if not taxonomy.consistent(answer.stage, answer.symptom, answer.root_cause):
        raise InvalidAnswer(
            "outside_stage", f"{answer.symptom}/{answer.root_cause} not in {answer.stage}"
        )
    if answer.duplicate_of is not None:
        allowed = duplicate_candidates(neighbours, own_number)
        if answer.duplicate_of not in allowed:
            raise InvalidAnswer("bad_duplicate", f"#{answer.duplicate_of} not among neighbours")


def duplicate_candidates(neighbours: list[Similar], own_number: int | None) -> set[int]:
    """Same-repository neighbours only: a bare number cannot name an issue in another repo."""
    return {n.number for n in neighbours if not n.cross_repo and n.number != own_number}
