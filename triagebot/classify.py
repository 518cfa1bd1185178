"""The offline classifier, learned only from the issues an index was built from.

Per dimension, a multinomial logistic regression reads the issue's embedding and its rule
features; its probabilities are blended with a similarity-weighted vote of the nearest labelled
neighbours and with the paper's priors. The hierarchy is enforced: symptom and root cause are
chosen inside the predicted stage. Below a per-dimension threshold the prediction is marked
``abstained`` so the bot says it is unsure instead of guessing."""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from triagebot import taxonomy
from triagebot.index import IssueIndex

DIMENSIONS = ("stage", "symptom", "root_cause", "fix_pattern", "distributed_specific", "is_bug")
BINARY = ("distributed_specific", "is_bug")

# Confidence under which a dimension abstains. Chosen so that covered predictions are right
# roughly twice as often as abstained ones on cross-validation (see README's evaluation).
THRESHOLDS = {
    "stage": 0.45, "symptom": 0.30, "root_cause": 0.30, "fix_pattern": 0.40,
    "distributed_specific": 0.60, "is_bug": 0.60,
}
KNN_K = 10
KNN_WEIGHT = 0.35  # share of the neighbour vote in the blend (the rest is the linear model)
C = {"stage": 2.0, "symptom": 2.0, "root_cause": 1.0, "fix_pattern": 1.0,
     "distributed_specific": 1.0, "is_bug": 1.0}


def _label_value(item, dimension: str) -> str | None:  # type: ignore[no-untyped-def]
    """Training target of an indexed issue, or None when it must not train this dimension."""
    if dimension == "is_bug":
        return "yes" if item.is_bug else "no"
    if dimension == "distributed_specific":
        value = item.labels.distributed_specific
        return None if value is None else ("yes" if value else "no")
    value = getattr(item.labels, dimension)
    return None if value == taxonomy.UNKNOWN else value


@dataclass
class DimensionModel:
    """One fitted dimension: the class ids and a linear model (None when only one class exists)."""

    classes: list[str]
    model: LogisticRegression | None
    prior: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def proba(self, x: np.ndarray) -> np.ndarray:
        if self.model is None:
            return np.ones((x.shape[0], 1))
        return self.model.predict_proba(x)


class Classifier:
    """Fitted per-dimension models over [embedding, rule features]."""

    def __init__(self, models: dict[str, DimensionModel]) -> None:
        self.models = models

    @classmethod
    def fit(cls, index: IssueIndex, rows: list[int] | None = None) -> "Classifier":
        rows = list(range(len(index))) if rows is None else rows
        x = _design(index.vectors[rows], index.features[rows])
        models = {}
        for dim in DIMENSIONS:
            pairs = [(i, _label_value(index.items[r], dim)) for i, r in enumerate(rows)]
            if dim not in BINARY:  # questions and feature requests don't teach bug categories
                pairs = [(i, y) for i, y in pairs if index.items[rows[i]].is_bug or dim == "stage"]
            pairs = [(i, y) for i, y in pairs if y is not None]
            models[dim] = _fit_one(x[[i for i, _ in pairs]], [y for _, y in pairs], C[dim])
        return cls(models)

    def linear_proba(self, vector: np.ndarray, features: np.ndarray) -> dict[str, dict[str, float]]:
        x = _design(vector.reshape(1, -1), features.reshape(1, -1))
        return {
            dim: dict(zip(m.classes, m.proba(x)[0].tolist())) for dim, m in self.models.items()
        }


def _design(vectors: np.ndarray, features: np.ndarray) -> np.ndarray:
    return np.hstack([vectors, features]).astype(np.float32)


def _fit_one(x: np.ndarray, y: list[str], c: float) -> DimensionModel:
    classes = sorted(set(y))
    if len(classes) < 2:
        return DimensionModel(classes or [taxonomy.UNKNOWN], None)
    model = LogisticRegression(C=c, max_iter=300, class_weight=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        # A young index has many classes per issue; sklearn warns, the fit is still what we want.
        warnings.filterwarnings("ignore", message="The number of unique classes", category=UserWarning)
        model.fit(x, y)
    return DimensionModel([str(c_) for c_ in model.classes_], model)


def knn_vote(
    index: IssueIndex, hits: list[tuple[int, float]], dimension: str
) -> dict[str, float]:
    """Similarity-weighted label distribution of the neighbours (sharpened: close ones count more)."""
    votes: dict[str, float] = {}
    for row, score in hits[:KNN_K]:
        item = index.items[row]
        if dimension not in BINARY and dimension != "stage" and not item.is_bug:
            continue
        value = _label_value(item, dimension)
        if value is not None:
            votes[value] = votes.get(value, 0.0) + max(score, 0.0) ** 4
    total = sum(votes.values())
    return {k: v / total for k, v in votes.items()} if total else {}


def blend(linear: dict[str, float], vote: dict[str, float]) -> dict[str, float]:
    """Mix the linear model's and the neighbours' distributions."""
    if not vote:
        return dict(linear)
    keys = set(linear) | set(vote)
    mixed = {k: (1 - KNN_WEIGHT) * linear.get(k, 0.0) + KNN_WEIGHT * vote.get(k, 0.0) for k in keys}
    total = sum(mixed.values()) or 1.0
    return {k: v / total for k, v in mixed.items()}


def within_stage(dist: dict[str, float], dimension: str, stage: str) -> dict[str, float]:
    """Restrict a symptom/root-cause distribution to the chosen stage, renormalised."""
    kept = {k: v for k, v in dist.items() if taxonomy.stage_of(dimension, k) == stage}
    total = sum(kept.values())
    return {k: v / total for k, v in kept.items()} if total else {}
