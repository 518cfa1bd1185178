"""What a closed issue contributes to the index, decided from GitHub's data alone. Pure.

A repository's own labels are mapped back to taxonomy ids through its ``label_map`` (the same
allow-list the bot labels with, read in reverse), so maintainers' labelling becomes confirmed
training data. The resolution line is the last substantive reply of someone with write access:
the person who fixed or explained it, trimmed to a sentence or two and made safe to show."""
from __future__ import annotations

import re
from collections.abc import Iterable

from triagebot.domain import taxonomy
from triagebot.domain.models import CloseReason, Labels
from triagebot.domain.repo_config import RepoConfig
from triagebot.github.port import CommentState
from triagebot.text import sanitize
from triagebot.text import signal as text

MAINTAINERS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
MIN_REPLY_CHARS = 40  # shorter replies are "thanks!" or "closing", not an explanation
RESOLUTION_CHARS = 200
UNRESOLVED = "unresolved"
_DUPLICATE = re.compile(r"\bduplicate of\s+#(\d+)", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_QUOTE = re.compile(r"^\s*>.*$", re.M)
Mapping = dict[str, tuple[str, str]]  # repo label (lower case) -> (dimension, taxonomy id)


def inverse_label_map(config: RepoConfig) -> Mapping:
    """Repo label -> (dimension, id). Special keys map to the two yes/no dimensions."""
    out: Mapping = {}
    for key, label in config.label_map.items():
        if key in ("distributed_specific", "not_a_bug"):
            out[label.lower()] = (key, key)
            continue
        for dim in taxonomy.DIMENSIONS:
            if taxonomy.label(dim, key) is not None:
                out[label.lower()] = (dim, key)
    return out


def mapped_ids(labels: Iterable[str], mapping: Mapping) -> dict[str, str]:
    """Taxonomy ids the issue's labels name, one per dimension (the first label wins)."""
    found: dict[str, str] = {}
    for label in labels:
        dim_id = mapping.get(label.lower())
        if dim_id is not None:
            found.setdefault(*dim_id)
    return found


def confirmed_labels(ids: dict[str, str]) -> Labels | None:
    """Labels from mapped ids when they determine a stage (given, or implied by a symptom or root
    cause); ids outside that stage are dropped rather than trusted. None when no stage is known."""
    stage = ids.get("stage") or _implied_stage(ids)
    if stage is None:
        return None
    kept = {d: v for d, v in ids.items() if d in taxonomy.AFTER_STAGE
            and (d == "fix_pattern" or taxonomy.stage_of(d, v) == stage)}
    distributed = True if "distributed_specific" in ids else None
    return Labels(stage=stage, distributed_specific=distributed, **kept)


def _implied_stage(ids: dict[str, str]) -> str | None:
    for dim in taxonomy.IN_STAGE:
        if dim in ids:
            return taxonomy.stage_of(dim, ids[dim])
    return None


def close_reason(state_reason: str | None) -> CloseReason:
    """GitHub's ``state_reason`` as the index spells it (old issues have none)."""
    if state_reason in ("completed", "not_planned", "duplicate"):
        return state_reason  # type: ignore[return-value]
    return "unknown"


def duplicate_of(comments: list[CommentState]) -> int | None:
    """The issue number named by a "Duplicate of #N" comment (GitHub's own wording), if any."""
    for comment in reversed(comments):
        match = _DUPLICATE.search(comment.body or "")
        if match:
            return int(match.group(1))
    return None


def resolution_line(comments: list[CommentState], limit: int = RESOLUTION_CHARS) -> str:
    """The maintainers' last substantive reply, first sentence(s), at most ``limit`` characters,
    without links, mentions, references or secrets; ``unresolved`` when there is none."""
    for comment in reversed(comments):
        if comment.author_type == "Bot" or comment.author_association not in MAINTAINERS:
            continue
        prose = _prose(comment.body or "")
        if len(prose) > MIN_REPLY_CHARS:
            return _first_sentences(sanitize.neutral(prose), limit)
    return UNRESOLVED


def _prose(body: str) -> str:
    """The reply's own words: no quoted text, code blocks, markup or links."""
    prose, _ = text.split_code(text.normalize(body))
    prose = text.strip_markup(_QUOTE.sub("", prose))
    return " ".join(prose.split())


def _first_sentences(line: str, limit: int) -> str:
    out = ""
    for sentence in _SENTENCE_END.split(line):
        if out and len(out) + 1 + len(sentence) > limit:
            break
        out = f"{out} {sentence}".strip()
    if len(out) > limit:
        out = out[: limit - 1].rstrip() + sanitize.ELLIPSIS
    return out
