"""The bug taxonomy of distributed deep learning frameworks (Ma et al.): ids, names, stages.

Ids and names are the facts every dataset here uses (``taxonomy.json``); descriptions are our own
words, written for the people who read the bot's comments and for the LLM prompt. ``share`` is the
paper's percentage (within the stage for symptoms and root causes, overall for stages and fix
patterns) and serves as a prior.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from triagebot.domain.descriptions import DESCRIPTIONS, FIX_ADVICE  # noqa: F401 (re-exported)

UNKNOWN = "unknown"

# The dimensions, owned here and nowhere else. ``DIMENSIONS`` are the taxonomy's own four (each
# has ids and names below); a triage also answers two yes/no questions (``FLAGS``). An indexed
# issue's labels carry the four plus ``distributed_specific`` (``is_bug`` is a field of its own).
DIMENSIONS = ("stage", "symptom", "root_cause", "fix_pattern")
FLAGS = ("distributed_specific", "is_bug")
LABEL_DIMENSIONS = DIMENSIONS + ("distributed_specific",)
ALL_DIMENSIONS = DIMENSIONS + FLAGS
AFTER_STAGE = DIMENSIONS[1:]  # the ids a confident stage is followed by (labels, corrections)
IN_STAGE = ("symptom", "root_cause")  # each id of these belongs to one stage (the hierarchy)


@dataclass(frozen=True)
class Label:
    """One node of the taxonomy."""

    id: str
    name: str
    stage: str | None
    share: float
    description: str = ""


_STAGES = [
    ('S1', 'Package Build & Import', None, 24.7),
    ('S2', 'Communication Setup', None, 9.3),
    ('S3', 'Data & Model Preparation', None, 6.0),
    ('S4', 'Training & Evaluation', None, 49.8),
    ('S5', 'Inference', None, 10.1),
]
_SYMPTOMS = [
    ('1.1', 'Installation & build failure', 'S1', 66.2),
    ('1.2', 'Import & API usage error', 'S1', 29.5),
    ('1.3', 'Package & resource acquisition failure', 'S1', 4.3),
    ('2.1', 'Initialization & launch setup failure', 'S2', 89.9),
    ('2.2', 'NCCL connection & timeout error', 'S2', 7.6),
    ('2.3', 'Configuration error', 'S2', 2.5),
    ('3.1', 'Data/model loading failure', 'S3', 52.9),
    ('3.2', 'API & configuration error', 'S3', 19.6),
    ('3.3', 'Data/model inconsistency & mismatch', 'S3', 13.7),
    ('3.4', 'Memory & performance anomaly', 'S3', 7.8),
    ('3.5', 'General runtime & behavioral error', 'S3', 5.9),
    ('4.1', 'Unexpected performance', 'S4', 22.0),
    ('4.2', 'Memory & offload issue', 'S4', 19.6),
    ('4.3', 'Runtime error', 'S4', 11.1),
    ('4.4', 'Training execution error', 'S4', 10.9),
    ('4.5', 'Component & functionality failure', 'S4', 6.6),
    ('4.6', 'Parameter/tensor mismatch', 'S4', 6.1),
    ('4.7', 'Communication error', 'S4', 5.2),
    ('4.8', 'Unexpected termination', 'S4', 5.0),
    ('4.9', 'Resource & setup issue', 'S4', 4.0),
    ('4.10', 'Checkpoint & state failure', 'S4', 3.8),
    ('4.11', 'Hang & stall', 'S4', 3.5),
    ('4.12', 'Incompatibility', 'S4', 2.1),
    ('5.1', 'Execution failure', 'S5', 37.2),
    ('5.2', 'Memory issue', 'S5', 15.1),
    ('5.3', 'Inference output inconsistency', 'S5', 11.6),
    ('5.4', 'Performance anomaly', 'S5', 9.3),
    ('5.5', 'Model loading issue', 'S5', 5.8),
    ('5.6', 'Compilation failure', 'S5', 5.8),
    ('5.7', 'Device & hardware compatibility', 'S5', 4.7),
    ('5.8', 'Tensor/parameter mismatch', 'S5', 3.5),
    ('5.9', 'Functional correctness issue', 'S5', 3.5),
    ('5.10', 'Deployment issue', 'S5', 2.3),
    ('5.11', 'Import error', 'S5', 1.2),
]
_ROOT_CAUSES = [
    ('R1.1', 'Mismatched version/compatibility', 'S1', 39.5),
    ('R1.2', 'Deficient build environment', 'S1', 18.6),
    ('R1.3', 'Gapped component/dependency', 'S1', 14.8),
    ('R1.4', 'Misconfigured environment/path', 'S1', 14.3),
    ('R1.5', 'Temporary/operational disruption', 'S1', 3.3),
    ('R1.6', 'Flawed framework/API', 'S1', 1.9),
    ('R2.1', 'Flawed launcher and environment configuration', 'S2', 46.8),
    ('R2.2', 'Mismatched software and dependency compatibility', 'S2', 19.0),
    ('R2.3', 'Incompatible network/system configuration', 'S2', 15.2),
    ('R2.4', 'Inadequate understanding and documentation gap', 'S2', 12.7),
    ('R3.1', 'Incorrect API usage and preparation configuration', 'S3', 43.1),
    ('R3.2', 'Misconfigured data-model vocab, paths, and ZeRO initialization', 'S3', 19.6),
    ('R3.3', 'Misaligned parameter, tensor, and model structure', 'S3', 15.7),
    ('R3.4', 'Incompatible dependency/framework feature', 'S3', 13.7),
    ('R4.1', 'Misconfigured system/tool setting', 'S4', 25.5),
    ('R4.2', 'Incompatible component interaction', 'S4', 18.9),
    ('R4.3', 'Problematic numerical stability/algorithmic implementation', 'S4', 11.6),
    ('R4.4', 'Flawed code implementation and kernel error', 'S4', 11.1),
    ('R4.5', 'Constrained resource and inefficient utilization', 'S4', 8.5),
    ('R4.6', 'Misaligned data, model, and training graph', 'S4', 7.6),
    ('R4.7', 'Disrupted distributed communication (NCCL/inter-process/network)', 'S4', 7.1),
    ('R4.8', 'Limited framework design and optimization', 'S4', 1.9),
    ('R5.1', 'Misconfigured resource and distributed setting', 'S5', 22.1),
    ('R5.2', 'Faulty inference logic and framework limitation', 'S5', 18.6),
    ('R5.3', 'Mismatched dependency/hardware', 'S5', 17.4),
    ('R5.4', 'Misused framework API/interface', 'S5', 16.3),
    ('R5.5', 'Inherent framework/model incompatibility', 'S5', 12.8),
    ('R5.6', 'Flawed model loading and parallel optimization', 'S5', 7.0),
]
_FIX_PATTERNS = [
    ('F1', 'Configure environment and launch settings', None, 10.6),
    ('F2', 'Manage versions and dependencies', None, 37.2),
    ('F3', 'Tune distributed APIs, communication, and features', None, 31.9),
    ('F4', 'Maintain network and hardware infrastructure', None, 4.4),
    ('F5', 'Optimize memory, model, and data resources', None, 5.7),
    ('F6', 'Revise code, logic, and serving behavior', None, 10.1),
]

# Descriptions in our own words, keyed by id (a test checks coverage), and first-aid advice per
# fix pattern; the texts live in ``descriptions`` to keep this module to lookups.


def _build(rows: Sequence[tuple[str, str, str | None, float]]) -> dict[str, Label]:
    return {i: Label(i, n, st, sh, DESCRIPTIONS.get(i, "")) for i, n, st, sh in rows}


STAGES: dict[str, Label] = _build(_STAGES)
SYMPTOMS: dict[str, Label] = _build(_SYMPTOMS)
ROOT_CAUSES: dict[str, Label] = _build(_ROOT_CAUSES)
FIX_PATTERNS: dict[str, Label] = _build(_FIX_PATTERNS)

BY_DIMENSION: dict[str, dict[str, Label]] = {
    "stage": STAGES,
    "symptom": SYMPTOMS,
    "root_cause": ROOT_CAUSES,
    "fix_pattern": FIX_PATTERNS,
}


def ids(dimension: str) -> list[str]:
    """All ids of one dimension, in taxonomy order (without ``unknown``)."""
    return list(BY_DIMENSION[dimension])


def label(dimension: str, label_id: str) -> Label | None:
    """The label of ``label_id`` in ``dimension``, or None (``unknown`` included)."""
    return BY_DIMENSION[dimension].get(label_id)


def name(dimension: str, label_id: str) -> str:
    """Human name of an id; ``unknown`` and foreign ids read as "Unknown"."""
    found = label(dimension, label_id)
    return found.name if found else "Unknown"


def stage_of(dimension: str, label_id: str) -> str | None:
    """The stage a symptom or root cause belongs to (None for stages, fix patterns, unknown)."""
    found = label(dimension, label_id)
    return found.stage if found else None


def in_stage(dimension: str, stage_id: str) -> list[str]:
    """Symptom or root-cause ids that belong to ``stage_id``."""
    return [i for i, lab in BY_DIMENSION[dimension].items() if lab.stage == stage_id]


def is_valid(dimension: str, label_id: str) -> bool:
    """True for a known id of the dimension or ``unknown`` (not for stages, which are never unknown)."""
    if label_id == UNKNOWN:
        return dimension in AFTER_STAGE
    return label_id in BY_DIMENSION[dimension]


def consistent(stage: str, symptom: str, root_cause: str) -> bool:
    """Symptom and root cause must sit inside the stage (``unknown`` is always consistent)."""
    return all(
        value == UNKNOWN or stage_of(dim, value) == stage
        for dim, value in (("symptom", symptom), ("root_cause", root_cause))
    )


def describe(dimension: str, label_id: str) -> str:
    """Our one- or two-sentence explanation of an id ("" for unknown or foreign ids)."""
    found = label(dimension, label_id)
    return found.description if found else ""


def advice(fix_pattern: str) -> list[str]:
    """First things to try for a fix pattern (empty for ``unknown``)."""
    return list(FIX_ADVICE.get(fix_pattern, []))
