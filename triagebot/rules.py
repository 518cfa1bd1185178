"""Domain knowledge as code: error signatures from the papers mapped to taxonomy evidence. Pure.

STUB: interface fixed; implementation to follow."""
from __future__ import annotations

import numpy as np

from triagebot.models import Environment

# Names of the features ``features`` returns, in order; the classifier learns weights for them.
FEATURE_NAMES: list[str] = []


def features(text: str, env: Environment) -> np.ndarray:
    """A fixed-length float32 vector of rule hits (0/1 or counts squashed to [0, 1])."""
    return np.zeros(len(FEATURE_NAMES), dtype=np.float32)


def evidence(text: str, dimension: str, label_id: str, limit: int = 2) -> list[str]:
    """Short snippets of ``text`` (error lines, config names) that support ``label_id``."""
    return []


def classify(text: str, env: Environment) -> dict[str, str]:
    """Keyword-rule baseline: one id per dimension (stage, symptom, root_cause, fix_pattern)."""
    return {"stage": "S4", "symptom": "4.1", "root_cause": "unknown", "fix_pattern": "unknown"}
