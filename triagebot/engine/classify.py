"""The offline classifier, learned only from the issues an index was built from.

Per dimension, a multinomial logistic regression reads the issue's embedding and its rule
features (standardised); its probabilities are blended with a similarity-weighted vote of the
nearest labelled neighbours. The fix pattern is read through the root cause as well: the paper's
Figure 9 shows each root cause is mended by one or two fix patterns, and the opening report says
more about the cause than about the eventual fix, so P(fix) mixes the direct model with
sum_R P(R) P(fix | R) counted in the index. The hierarchy is enforced downstream: symptom and root
cause are chosen inside the predicted stage.

The regression is fitted here with a few hundred full-batch Adam steps in numpy rather than with
scikit-learn's L-BFGS: on the 2-core machines this runs on, that took 8-30 s per load for the
822-issue seed index, while this takes about a second with the same cross-validated accuracy
(stage 0.78 vs 0.77, symptom 0.51 vs 0.49 in our 5-fold runs)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from triagebot.domain import taxonomy
from triagebot.domain.models import IndexedIssue
from triagebot.engine.index import IssueIndex

DIMENSIONS = taxonomy.ALL_DIMENSIONS
BINARY = taxonomy.FLAGS

# Confidence under which a dimension abstains: the comment then says "unsure" instead of
# naming a guess. Set low enough that the bot commits whenever its best guess is clearly more often
# right than wrong on 5-fold CV (an abstention counts as an error in the evaluation); labels are
# gated separately, by each repository's own, higher thresholds (repo_config).
THRESHOLDS = {
    "stage": 0.35, "symptom": 0.2, "root_cause": 0.15, "fix_pattern": 0.3,
    "distributed_specific": 0.55, "is_bug": 0.55,
}
KNN_K = 10
KNN_WEIGHT = 0.3  # share of the neighbour vote in the blend (the rest is the linear model)
# Share of the keyword rules' one-hot verdict (rules.classify) blended in last: the error
# signatures are domain knowledge independent of the index, and on 5-fold CV a 0.2 share added
# 1-3 points on every dimension over the learned blend alone.
C = {"stage": 0.05, "symptom": 0.05, "root_cause": 0.2, "fix_pattern": 0.2,
     "distributed_specific": 0.2, "is_bug": 0.2}
STEPS = 200
LEARNING_RATE = 0.05
RULE_WEIGHT = 0.2
FIX_VIA_CAUSE = 0.6  # weight of sum_R P(R) P(fix|R) against the direct fix-pattern model
FIX_SMOOTHING = 0.5


def label_value(item: IndexedIssue, dimension: str) -> str | None:
    """Training target of an indexed issue, or None when it must not train this dimension.

    Questions and feature requests (``is_bug`` false) teach the stage and the yes/no dimensions
    but not the bug categories."""
    if dimension == "is_bug":
        return "yes" if item.is_bug else "no"
    if dimension == "distributed_specific":
        value = item.labels.distributed_specific
        return None if value is None else ("yes" if value else "no")
    if dimension != "stage" and not item.is_bug:
        return None
    value = getattr(item.labels, dimension)
    return None if value == taxonomy.UNKNOWN else value


@dataclass
class SoftmaxModel:
    """Multinomial logistic regression on standardised inputs."""

    classes: list[str]
    weights: np.ndarray
    bias: np.ndarray
    mean: np.ndarray
    scale: np.ndarray

    def proba(self, x: np.ndarray) -> np.ndarray:
        logits = ((x - self.mean) / self.scale) @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)


def fit_softmax(x: np.ndarray, y: list[str], c: float, steps: int = STEPS) -> SoftmaxModel:
    """Minimise mean cross-entropy + ||W||^2 / (2 C n) with Adam; deterministic (zero start)."""
    classes = sorted(set(y))
    if len(classes) < 2:  # nothing to learn (tiny or one-sided index): a constant model
        mean, scale = np.zeros(x.shape[1], np.float32), np.ones(x.shape[1], np.float32)
        k = max(len(classes), 1)
        return SoftmaxModel(classes or [taxonomy.UNKNOWN], np.zeros((x.shape[1], k), np.float32),
                            np.zeros(k, np.float32), mean, scale)
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = ((x - mean) / scale).astype(np.float32)
    target = np.zeros((len(y), len(classes)), np.float32)
    target[np.arange(len(y)), [classes.index(v) for v in y]] = 1.0
    model = SoftmaxModel(classes, np.zeros((z.shape[1], len(classes)), np.float32),
                         np.zeros(len(classes), np.float32), np.zeros_like(mean), np.ones_like(scale))
    _adam(model, z, target, 1.0 / (c * len(y)), steps)
    model.mean, model.scale = mean, scale
    return model


def _adam(model: SoftmaxModel, z: np.ndarray, target: np.ndarray, lam: float, steps: int) -> None:
    moments = [np.zeros_like(model.weights), np.zeros_like(model.weights),
               np.zeros_like(model.bias), np.zeros_like(model.bias)]
    for step in range(1, steps + 1):
        grad = (model.proba(z) - target) / len(z)
        g_w, g_b = z.T @ grad + lam * model.weights, grad.sum(axis=0)
        rate = LEARNING_RATE * np.sqrt(1 - 0.999**step) / (1 - 0.9**step)
        for param, g, m, v in ((model.weights, g_w, moments[0], moments[1]),
                               (model.bias, g_b, moments[2], moments[3])):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            param -= rate * m / (np.sqrt(v) + 1e-8)


class Classifier:
    """Fitted per-dimension models over [embedding, rule features], plus P(fix | root cause)."""

    def __init__(self, models: dict[str, SoftmaxModel], fix_given_cause: dict[str, dict[str, float]]):
        self.models = models
        self.fix_given_cause = fix_given_cause

    @classmethod
    def fit(cls, index: IssueIndex, rows: list[int] | None = None) -> Classifier:
        rows = list(range(len(index))) if rows is None else rows
        x = _design(index.vectors[rows], index.features[rows])
        models = {}
        for dim in DIMENSIONS:
            labelled = [(i, label_value(index.items[r], dim)) for i, r in enumerate(rows)]
            pairs = [(i, y) for i, y in labelled if y is not None]
            models[dim] = fit_softmax(x[[i for i, _ in pairs]], [y for _, y in pairs], C[dim])
        return cls(models, _fix_given_cause([index.items[r] for r in rows]))

    def linear_proba(self, vector: np.ndarray, features: np.ndarray) -> dict[str, dict[str, float]]:
        x = _design(vector.reshape(1, -1), features.reshape(1, -1))
        return {
            dim: dict(zip(m.classes, m.proba(x)[0].tolist())) for dim, m in self.models.items()
        }

    def fix_via_cause(self, cause_dist: dict[str, float]) -> dict[str, float]:
        """sum_R P(R) P(fix | R): the fix pattern as the root cause implies it."""
        out: dict[str, float] = {}
        for cause, p in cause_dist.items():
            for fix, q in self.fix_given_cause.get(cause, {}).items():
                out[fix] = out.get(fix, 0.0) + p * q
        total = sum(out.values())
        return {k: v / total for k, v in out.items()} if total else {}


def _design(vectors: np.ndarray, features: np.ndarray) -> np.ndarray:
    return np.hstack([vectors, features]).astype(np.float32)


def _fix_given_cause(items: list[IndexedIssue]) -> dict[str, dict[str, float]]:
    """Smoothed P(fix | root cause) counted over issues labelled with both."""
    fixes = taxonomy.ids("fix_pattern")
    counts: dict[str, dict[str, float]] = {}
    for item in items:
        cause, fix = label_value(item, "root_cause"), label_value(item, "fix_pattern")
        if cause and fix:
            row = counts.setdefault(cause, {f: FIX_SMOOTHING for f in fixes})
            row[fix] += 1.0
    return {c: {f: n / sum(row.values()) for f, n in row.items()} for c, row in counts.items()}


def knn_vote(
    index: IssueIndex, hits: list[tuple[int, float]], dimension: str
) -> dict[str, float]:
    """Similarity-weighted label distribution of the neighbours (sharpened: close ones count more)."""
    votes: dict[str, float] = {}
    for row, score in hits[:KNN_K]:
        value = label_value(index.items[row], dimension)
        if value is not None:
            votes[value] = votes.get(value, 0.0) + max(score, 0.0) ** 4
    total = sum(votes.values())
    return {k: v / total for k, v in votes.items()} if total else {}


def blend(first: dict[str, float], second: dict[str, float], weight: float = KNN_WEIGHT) -> dict[str, float]:
    """(1 - weight) * first + weight * second, renormalised; ``first`` alone when ``second`` is empty."""
    if not second:
        return dict(first)
    keys = set(first) | set(second)
    mixed = {k: (1 - weight) * first.get(k, 0.0) + weight * second.get(k, 0.0) for k in keys}
    total = sum(mixed.values()) or 1.0
    return {k: v / total for k, v in mixed.items()}


def within_stage(dist: dict[str, float], dimension: str, stage: str) -> dict[str, float]:
    """Restrict a symptom/root-cause distribution to the chosen stage, renormalised."""
    kept = {k: v for k, v in dist.items() if taxonomy.stage_of(dimension, k) == stage}
    total = sum(kept.values())
    return {k: v / total for k, v in kept.items()} if total else {}
