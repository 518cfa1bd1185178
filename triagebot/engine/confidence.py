"""How sure the choice of a dimension is, read from more than its probability. Pure.

The classifier's mixed probability is one signal of being right; three others are cheap and say
something it does not: whether the embedding model and the words model *each* rank the choice
first, how far it leads its runner-up, and whether the nearest indexed issues carry the same
label. On 5-fold CV of the shared data a logistic regression over these, fitted on out-of-fold
outcomes, let the comment state more at the same precision for stage (coverage 0.622 -> 0.651),
fix pattern (0.142 -> 0.175) and the distributed flag (0.740 -> 0.766); for symptom it gained
half a point and for "not a bug" it lost, so those keep the plain probability (``DIMENSIONS``).
Without the neighbour features it gained nothing: this is where the neighbour vote of earlier
versions still earns its place - as evidence of being right, not as a blend of the label.

The score replaces the choice's confidence before the calibrated threshold is applied (the
threshold is read off out-of-fold outcomes of the same score), so a record fitted on another
feature list, or none, leaves the plain probability in place."""
from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from triagebot.domain.models import IndexedIssue
from triagebot.engine.classify import Choice, label_value

Distribution = Mapping[str, float]

DIMENSIONS = ("stage", "fix_pattern", "distributed_specific")
FEATURES = ("probability", "p_embedding", "p_words", "embedding_agrees", "words_agrees", "margin",
            "neighbours_agree", "neighbours_agree_weighted")
NEIGHBOURS = 5


def features(choice: str, probability: float, mixed: Distribution, embedding: Distribution,
             words: Distribution, neighbours: Sequence[tuple[str | None, float]]) -> list[float]:
    """One row of ``FEATURES`` for the chosen label of one dimension; ``neighbours`` holds the
    nearest indexed issues' labels of that dimension (None: unlabelled) with their cosine."""
    ranked = sorted(mixed.values(), reverse=True)
    margin = ranked[0] - (ranked[1] if len(ranked) > 1 else 0.0) if ranked else 0.0
    near = list(neighbours)[:NEIGHBOURS]
    agree = [label == choice for label, _ in near]
    total = sum(cosine for _, cosine in near)
    weighted = sum(cosine for (_, cosine), ok in zip(near, agree) if ok) / total if total > 0 else 0.0
    return [probability, embedding.get(choice, 0.0), words.get(choice, 0.0),
            float(_top(embedding) == choice), float(_top(words) == choice), margin,
            sum(agree) / len(agree) if agree else 0.0, weighted]


def rows_of(choices: Mapping[str, Choice], dists: Mapping[str, Distribution],
            embedded: Mapping[str, Distribution], worded: Mapping[str, Distribution],
            neighbours: Sequence[tuple[IndexedIssue, float]]) -> dict[str, list[float]]:
    """``features`` of every dimension of ``DIMENSIONS`` that has a choice; ``neighbours`` are the
    nearest indexed issues, best first, with their cosine."""
    return {dim: features(choices[dim].id, choices[dim].confidence, dists.get(dim, {}),
                          embedded.get(dim, {}), worded.get(dim, {}),
                          [(label_value(item, dim), cosine) for item, cosine in neighbours])
            for dim in DIMENSIONS if dim in choices}


def rescored(choices: Mapping[str, Choice], rows: Mapping[str, Sequence[float]],
             model: ConfidenceModel) -> dict[str, Choice]:
    """The choices with the model's score as the confidence of each dimension it has a head for."""
    return {dim: dataclasses.replace(choice, confidence=model.score(dim, rows[dim]))
            if dim in rows and dim in model.heads else choice for dim, choice in choices.items()}


def _top(dist: Distribution) -> str | None:
    return min(dist.items(), key=lambda kv: (-kv[1], kv[0]))[0] if dist else None


class Head(BaseModel):
    weights: list[float]
    bias: float


class ConfidenceModel(BaseModel):
    """Per dimension, logistic-regression weights over ``FEATURES`` (fitted by ``fit``)."""

    heads: dict[str, Head] = Field(default_factory=dict)

    def score(self, dimension: str, row: Sequence[float]) -> float:
        """P(the choice is right); the plain probability (``row[0]``) for a dimension without a
        head, or a head fitted on another feature list."""
        head = self.heads.get(dimension)
        if head is None:
            return float(row[0])
        if len(head.weights) != len(row):
            logging.getLogger(__name__).warning(
                "confidence of %s was fitted on %d features, this version has %d: plain "
                "probability until the index is rebuilt", dimension, len(head.weights), len(row))
            return float(row[0])
        z = float(np.dot(head.weights, row)) + head.bias
        return float(1.0 / (1.0 + np.exp(-z)))


def fit(rows: Mapping[str, Sequence[tuple[list[float], bool]]], c: float = 1.0) -> ConfidenceModel:
    """A head per dimension of ``DIMENSIONS`` from out-of-fold (features, right?) pairs."""
    from sklearn.linear_model import LogisticRegression

    heads = {}
    for dim in DIMENSIONS:
        pairs = rows.get(dim, [])
        outcomes = {ok for _, ok in pairs}
        if len(pairs) < 20 or len(outcomes) < 2:
            continue  # too little to learn from: the plain probability stays
        model = LogisticRegression(C=c, max_iter=1000).fit(
            np.asarray([f for f, _ in pairs]), np.asarray([int(ok) for _, ok in pairs]))
        heads[dim] = Head(weights=[float(w) for w in model.coef_[0]], bias=float(model.intercept_[0]))
    return ConfidenceModel(heads=heads)
