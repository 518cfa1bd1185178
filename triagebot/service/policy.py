"""What the bot may do to an issue: which labels to add, which maintainer commands to obey. Pure.

Labels are decided here by code alone (RELIABILITY 35): only names from the repo's allow-list
(``label_map`` values and ``needs_review_label``), only labels that already exist in the repo (the
bot never creates labels), never one a human removed, and nothing at all in mode ``off``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, field_validator

from triagebot.domain import taxonomy
from triagebot.domain.models import Triage
from triagebot.domain.repo_config import RepoConfig

COMMAND_PREFIX = "/triage"
TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})

_DIMENSION_ALIASES = {
    "stage": "stage",
    "symptom": "symptom",
    "root_cause": "root_cause",
    "root-cause": "root_cause",
    "cause": "root_cause",
    "fix": "fix_pattern",
    "fix_pattern": "fix_pattern",
    "fix-pattern": "fix_pattern",
    "distributed": "distributed_specific",
    "distributed_specific": "distributed_specific",
}
_FLAG_WORDS = {"yes": True, "true": True, "no": False, "false": False}
_FENCE = re.compile(r"^\s*(```|~~~)")


class Command(BaseModel):
    """A maintainer's ``/triage`` command. ``value`` is a taxonomy id, or a bool for
    ``distributed_specific``; None for ``rerun`` and ``not_a_bug``."""

    action: Literal["rerun", "set", "not_a_bug"]
    dimension: str | None = None  # one of taxonomy.LABEL_DIMENSIONS
    value: str | bool | None = None

    @field_validator("dimension")
    @classmethod
    def _a_label_dimension(cls, value: str | None) -> str | None:
        if value is not None and value not in taxonomy.LABEL_DIMENSIONS:
            raise ValueError(f"not a dimension a command can set: {value!r}")
        return value


def may_command(author_association: str | None) -> bool:
    """Only people with write access may steer the bot; contributors and bots may not (bot status
    grants no trust, RELIABILITY 44)."""
    return (author_association or "").strip().upper() in TRUSTED_ASSOCIATIONS


def parse_command(comment_body: str | None) -> Command | None:
    """The first ``/triage`` line outside code blocks and quotes, or None for anything else."""
    line = _command_line(comment_body or "")
    if line is None:
        return None
    words = line.split()
    if words[0].lower() != COMMAND_PREFIX:
        return None
    return _parse_words([w.lower() for w in words[1:]])


def _command_line(body: str) -> str | None:
    in_code = False
    for raw in body.splitlines():
        if _FENCE.match(raw):
            in_code = not in_code
            continue
        stripped = raw.strip()
        if not in_code and stripped.lower().split(" ", 1)[0] == COMMAND_PREFIX:
            return stripped
    return None


def _parse_words(words: list[str]) -> Command | None:
    if not words or words in (["rerun"], ["again"]):
        return Command(action="rerun")
    if words in (["not-a-bug"], ["not_a_bug"], ["notabug"], ["not-bug"], ["not_bug"]):
        return Command(action="not_a_bug")
    if len(words) != 2 or words[0] not in _DIMENSION_ALIASES:
        return None
    dimension = _DIMENSION_ALIASES[words[0]]
    if dimension == "distributed_specific":
        flag = _FLAG_WORDS.get(words[1])
        return None if flag is None else Command(action="set", dimension=dimension, value=flag)
    label_id = _canonical_id(dimension, words[1])
    return None if label_id is None else Command(action="set", dimension=dimension, value=label_id)


def _canonical_id(dimension: str, word: str) -> str | None:
    """``s4`` -> ``S4``, ``r4.2`` -> ``R4.2``; ``unknown`` only where the taxonomy allows it and
    never for the stage or the symptom, which a maintainer can always name."""
    if word == taxonomy.UNKNOWN:
        return word if dimension in ("root_cause", "fix_pattern") else None
    candidate = word.upper()
    return candidate if taxonomy.label(dimension, candidate) is not None else None


def labels_to_apply(
    triage: Triage,
    config: RepoConfig,
    current_labels: Iterable[str],
    human_removed: Iterable[str],
    repo_labels: Iterable[str],
) -> list[str]:
    """Labels to add now (already-present ones left out), spelled as the repo spells them.

    ``suggest`` adds only ``needs_review_label``; ``apply`` adds the mapped labels of confident
    predictions, or ``needs_review_label`` when none was confident enough."""
    if not config.enabled or config.mode == "off":
        return []
    wanted = [config.needs_review_label] if config.mode == "suggest" else _applied(triage, config)
    existing = {name.casefold(): name for name in repo_labels}
    blocked = {name.casefold() for name in [*current_labels, *human_removed]}
    allow = {name.casefold() for name in [*config.label_map.values(), config.needs_review_label]}
    out: list[str] = []
    for name in wanted:
        key = name.casefold()
        if key in allow and key in existing and key not in blocked and existing[key] not in out:
            out.append(existing[key])
    return out


def _applied(triage: Triage, config: RepoConfig) -> list[str]:
    keys = confident_keys(triage, config)
    labels = [config.label_map[k] for k in keys if k in config.label_map]
    return labels or [config.needs_review_label]


def confident_keys(triage: Triage, config: RepoConfig) -> list[str]:
    """``label_map`` keys the triage supports: taxonomy ids at or above their threshold (not
    abstained, consistent with the stage) plus ``distributed_specific``/``not_a_bug`` flags."""
    thresholds = config.thresholds
    stage = triage.stage.id if _confident(triage, "stage", thresholds.stage) else None
    keys = [stage] if stage else []
    for dim in taxonomy.AFTER_STAGE:
        label_id = triage.prediction(dim).id
        if _confident(triage, dim, getattr(thresholds, dim)) and _in_stage(label_id, stage):
            keys.append(label_id)
    dist = triage.distributed_specific
    if _confident(triage, "distributed_specific", config.thresholds.distributed_specific) and _yes(dist.id):
        keys.append("distributed_specific")
    if not triage.is_bug.abstained and _no(triage.is_bug.id):
        keys.append("not_a_bug")
    return keys


def _confident(triage: Triage, dimension: str, threshold: float) -> bool:
    pred = triage.prediction(dimension)
    return not pred.abstained and pred.id != taxonomy.UNKNOWN and pred.confidence >= threshold


def _in_stage(label_id: str, stage: str | None) -> bool:
    """Fix patterns span all stages; a symptom or root cause must sit in the confident stage."""
    if label_id in taxonomy.FIX_PATTERNS:
        return True
    owner = taxonomy.stage_of("symptom", label_id) or taxonomy.stage_of("root_cause", label_id)
    return stage is not None and owner == stage


def _yes(value: str) -> bool:
    return value.strip().lower() in ("yes", "true", "1")


def _no(value: str) -> bool:
    return value.strip().lower() in ("no", "false", "0")
