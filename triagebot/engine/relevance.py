"""Is this neighbour the same problem? A small learned score over each candidate link.

Cosine similarity alone links unrelated reports: issue templates, environment dumps and the
shared vocabulary of distributed training make a DeepSpeed OOM look like a DeepSpeed hang. On
5-fold CV of the shared data only about a third of the five nearest neighbours share the issue's
symptom. What separates the right links is mostly whether the classifier, reading the new issue,
believes in the neighbour's labels: so the score combines the similarity with the classifier's
probability of the neighbour's symptom and stage, and a few cheap facts (shared error signature,
same repository, known fix). It is a logistic regression over those features, trained on
out-of-fold pairs (an issue and its candidates from the other folds; "relevant" = same symptom),
and its threshold comes from the same out-of-fold record as the labels' (``calibration``)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from triagebot.domain.models import IndexedIssue

FEATURES = ("cosine", "gap_to_best", "rank", "p_symptom", "p_stage", "resolved", "same_repo",
            "shared_signature")
CANDIDATES = 20  # neighbours looked at per issue
MAX_LINKS = 3


class RelevanceModel(BaseModel):
    """Logistic regression weights over ``FEATURES`` (fitted by ``fit``)."""

    weights: list[float] = Field(default_factory=lambda: [0.0] * len(FEATURES))
    bias: float = 0.0

    def score(self, rows: np.ndarray) -> np.ndarray:
        """P(relevant) for each row of candidate features."""
        if rows.size == 0:
            return np.zeros(0)
        z = rows @ np.asarray(self.weights) + self.bias
        return 1.0 / (1.0 + np.exp(-z))


def candidate_features(
    hits: Sequence[tuple[int, float]], items: Sequence[IndexedIssue], repo: str,
    distributions: Mapping[str, Mapping[str, float]], features: np.ndarray,
    item_features: np.ndarray,
) -> np.ndarray:
    """One row of ``FEATURES`` per hit (row in ``items``, cosine), best hit first."""
    if not hits:
        return np.zeros((0, len(FEATURES)))
    best = hits[0][1]
    symptom, stage = distributions.get("symptom", {}), distributions.get("stage", {})
    has_signature = features > 0
    rows = []
    for rank, (row, cosine) in enumerate(hits):
        item = items[row]
        rows.append([
            cosine, cosine - best, float(rank),
            symptom.get(item.labels.symptom, 0.0), stage.get(item.labels.stage, 0.0),
            float(item.resolved), float(bool(repo) and item.repo == repo),
            float(bool(np.any(has_signature & (item_features[row] > 0)))),
        ])
    return np.asarray(rows, dtype=np.float64)


def fit(rows: np.ndarray, relevant: np.ndarray, c: float = 1.0) -> RelevanceModel:
    """Fit the score on out-of-fold candidate rows (a few thousand rows, eight features)."""
    from sklearn.linear_model import LogisticRegression

    if rows.size == 0 or len(set(relevant.tolist())) < 2:
        return RelevanceModel()
    model = LogisticRegression(C=c, max_iter=1000).fit(rows, relevant.astype(int))
    return RelevanceModel(weights=[float(w) for w in model.coef_[0]],
                          bias=float(model.intercept_[0]))
