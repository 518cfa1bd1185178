"""Out-of-fold predictions: the record that calibration and the backtest are both read from.

Each labelled issue is predicted by a classifier that never saw it (k folds), and its candidate
links are drawn from the other folds only. From that record:
- ``calibrate`` keeps every dimension's (confidence, right?) pairs and fits the link relevance
  score: what ``index build`` stores next to an index, so the service states only what clears its
  target precision;
- ``evaluate.cross_validate`` replays the service's own decision for each held-out issue with
  thresholds read from the *other* folds' record (cross-fitting), so the reported precision is not
  the precision of the data the thresholds were chosen on.

The vectors can differ per fold (``fold_vectors``): an encoder fine-tuned on labelled issues must
not embed the issues it was tuned on for their own evaluation, so the fine-tuning script embeds
everything once per fold with that fold's encoder."""
from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from triagebot.domain.models import IndexedIssue
from triagebot.engine import confidence, relevance
from triagebot.engine.calibration import Calibration, Outcomes
from triagebot.engine.classify import (
    READS_AS_NO_BUG_WITHHELD,
    Choice,
    Classifier,
    Distribution,
    decide,
    fit_words,
    label_value,
    reads_as_no_bug,
)
from triagebot.engine.index import IssueIndex

FOLDS = 5
SEED = 13


def folds(n: int, k: int, seed: int = SEED) -> list[list[int]]:
    """k disjoint folds over range(n), shuffled with a fixed seed."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[i::k] for i in range(k)]


@dataclass
class FoldModel:
    """What the service would have had, had the index held only the other folds."""

    index: IssueIndex
    classifier: Classifier
    rows: list[int]  # positions (in the full list) of the index's items


@dataclass
class OutOfFold:
    """Per issue: the distributions of a classifier that did not see it, its candidate links
    (from other folds) with their features and relevance labels, and which fold it was in."""

    fold_of: list[int]
    dists: list[dict[str, Distribution]]
    candidates: list[list[tuple[int, float]]]  # (position in the full list, cosine)
    candidate_rows: list[np.ndarray]
    models: list[FoldModel] = field(default_factory=list)
    texts: Sequence[str] | None = None  # each issue's cleaned text, when the words model had it
    # per issue, the embedding model's and the words model's own distributions (``confidence``)
    parts: list[tuple[dict[str, Distribution], dict[str, Distribution]]] = field(default_factory=list)

    def neighbours(self, items: Sequence[IndexedIssue], pos: int) -> list[tuple[IndexedIssue, float]]:
        """The nearest issues of other folds, best first, with their cosine."""
        return [(items[c], cosine) for c, cosine in self.candidates[pos][: confidence.NEIGHBOURS]]

    def _scored(self, items: Sequence[IndexedIssue], pos: int
                ) -> tuple[dict[str, Choice], dict[str, list[float]]]:
        """The classifier's choices for the issue at ``pos`` and the ``confidence`` features of
        those it can rescore (none without the per-model distributions)."""
        chosen = decide(self.dists[pos])
        if not self.parts:
            return chosen, {}
        embedded, worded = self.parts[pos]
        return chosen, confidence.rows_of(chosen, self.dists[pos], embedded, worded,
                                          self.neighbours(items, pos))

    def choices(self, items: Sequence[IndexedIssue], pos: int,
                model: confidence.ConfidenceModel | None = None) -> dict[str, Choice]:
        """What the service would choose for the issue at ``pos``, with the confidence it gates
        on (``model``'s score where it has a head)."""
        chosen, rows = self._scored(items, pos)
        return chosen if model is None else confidence.rescored(chosen, rows, model)

    def confidence_training(self, items: Sequence[IndexedIssue], positions: Sequence[int]
                            ) -> dict[str, list[tuple[list[float], bool]]]:
        """Out-of-fold (features, right?) pairs of ``confidence.DIMENSIONS`` over ``positions``."""
        pairs: dict[str, list[tuple[list[float], bool]]] = {}
        for pos in positions:
            chosen, rows = self._scored(items, pos)
            for dim, row in rows.items():
                truth = label_value(items[pos], dim)
                if truth is not None:
                    pairs.setdefault(dim, []).append((row, chosen[dim].id == truth))
        return pairs

    def outcomes(self, items: Sequence[IndexedIssue], positions: Sequence[int],
                 model: confidence.ConfidenceModel | None = None) -> dict[str, Outcomes]:
        """(confidence, right?) per dimension over ``positions``, as the service would decide."""
        pairs: dict[str, list[tuple[float, bool]]] = {}
        for pos in positions:
            chosen = self.choices(items, pos, model)
            question = reads_as_no_bug(chosen)
            for dim, choice in chosen.items():
                if question and dim in READS_AS_NO_BUG_WITHHELD:
                    continue  # never stated there (``triage.predict``): not in their record
                truth = label_value(items[pos], dim)
                if dim == "is_bug":
                    if choice.id == "no":  # the comment only ever asserts "not a bug"
                        pairs.setdefault("not_a_bug", []).append((choice.confidence, truth == "no"))
                    continue
                if truth is not None:
                    pairs.setdefault(dim, []).append((choice.confidence, choice.id == truth))
        return {dim: Outcomes.of(p) for dim, p in pairs.items()}

    def relevance_training(self, items: Sequence[IndexedIssue], positions: Sequence[int],
                           unseen: frozenset[int] = frozenset()) -> tuple[np.ndarray, np.ndarray]:
        """Candidate rows of ``positions`` and whether each candidate is the same problem;
        without the pairs whose candidate is ``unseen`` (the same pair, seen from the other
        side, would tell the score the answer for an issue it is to be judged on)."""
        rows, labels = [], []
        for pos in positions:
            for (cand, _), row in zip(self.candidates[pos], self.candidate_rows[pos]):
                if cand in unseen:
                    continue
                rows.append(row)
                labels.append(relevance.same_problem(items[pos].labels, items[cand].labels))
        if not rows:
            return np.zeros((0, len(relevance.FEATURES))), np.zeros(0, bool)
        return np.asarray(rows), np.asarray(labels)

    def calibration(self, items: Sequence[IndexedIssue], positions: Sequence[int]) -> Calibration:
        """The record over ``positions`` plus a relevance score fitted on their candidates, with
        the link outcomes (top links per issue) scored by such a model fitted without them."""
        gate = confidence.fit(self.confidence_training(items, positions))
        outcomes = self.outcomes(items, positions, gate)
        model = relevance.fit(*self.relevance_training(items, positions))
        link_pairs: list[tuple[float, bool]] = []
        fix_pairs: list[tuple[float, bool]] = []
        # The link record is scored out of fold too: a score fitted on the very pairs it then
        # scores looks surer than it is (with pairwise products, 119 weights), and the
        # thresholds read from this record would let worse links through.
        for group in range(FOLDS):
            scored = positions[group::FOLDS]
            held = frozenset(scored)
            scorer = relevance.fit(*self.relevance_training(
                items, [p for p in positions if p not in held], unseen=held))
            self.link_pairs(items, scored, scorer, link_pairs, fix_pairs)
        outcomes["link"] = Outcomes.of(link_pairs)
        outcomes["fix_link"] = Outcomes.of(fix_pairs)
        return Calibration(outcomes=outcomes, folds=len(self.models), relevance=model,
                           confidence=gate)

    def link_pairs(self, items: Sequence[IndexedIssue], positions: Sequence[int],
                   model: relevance.RelevanceModel, link_pairs: list[tuple[float, bool]],
                   fix_pairs: list[tuple[float, bool]]) -> None:
        """(score, same problem?) of the links ``model`` would show for ``positions``; those
        offering a fix also go to ``fix_pairs``."""
        for pos in positions:
            if len(self.candidate_rows[pos]):
                scores = model.score(self.candidate_rows[pos])
                text = self.texts[pos] if self.texts else ""
                candidates = self.candidates[pos]
                ranks = [relevance.vouch_rank(cosine, items[pos].diagnoses, items[cand],
                                              items[pos].repo) for cand, cosine in candidates]
                shown: list[tuple[float, IndexedIssue]] = []
                for j in relevance.link_order(scores, ranks):  # what ``similar_issues`` may show
                    cand, _ = candidates[j]
                    if relevance.showable(items[pos].repo, items[cand], self.dists[pos], text,
                                          vouched=ranks[j] < relevance.UNVOUCHED):
                        shown.append((float(scores[j]), items[cand]))
                for score, cand in shown[: relevance.MAX_LINKS]:
                    pair = (score, relevance.same_problem(items[pos].labels, cand.labels))
                    link_pairs.append(pair)
                    if cand.resolved:
                        fix_pairs.append(pair)


def out_of_fold(
    items: Sequence[IndexedIssue], vectors: np.ndarray, features: np.ndarray, embedder_name: str,
    k: int = FOLDS, fold_vectors: Sequence[np.ndarray] | None = None,
    progress: Callable[[str], None] = lambda _: None,
    parts: Sequence[Sequence[int]] | None = None,
    texts: Sequence[str] | None = None,
) -> OutOfFold:
    """Fit one classifier per fold on the other folds and predict the held-out issues.

    ``parts`` fixes the folds (the encoder's fine-tuning chose them, and its per-fold vectors
    are only honest for those); otherwise ``folds(n, k)``. With ``texts`` (each issue's cleaned
    title and body) every fold also fits its words model on its own training texts."""
    n = len(items)
    parts = [list(p) for p in parts] if parts is not None else folds(n, k)
    k = len(parts)
    fold_of = [-1] * n  # -1: held out by no fold (a fold left out of the record)
    for number, part in enumerate(parts):
        for pos in part:
            fold_of[pos] = number
    record = OutOfFold(fold_of, [{}] * n, [[] for _ in range(n)],
                       [np.zeros((0, len(relevance.FEATURES)))] * n, texts=texts,
                       parts=[({}, {}) for _ in range(n)])
    for number, held_out in enumerate(parts):
        vecs = vectors if fold_vectors is None else fold_vectors[number]
        held = set(held_out)
        train = [i for i in range(n) if i not in held]
        index = IssueIndex(embedder_name, vecs.shape[1], features.shape[1])
        index.add([items[i] for i in train], vecs[train], features[train])
        words = fit_words([texts[i] for i in train], [items[i] for i in train]) if texts else None
        classifier = Classifier.fit(vecs[train], features[train], [items[i] for i in train], words)
        record.models.append(FoldModel(index, classifier, train))
        by_model = classifier.parts(vecs[held_out], features[held_out],
                                    [texts[i] for i in held_out] if texts else None)
        for pos, (embedded, worded) in zip(held_out, by_model):
            dist = classifier.combine(embedded, worded)
            record.dists[pos] = dist
            record.parts[pos] = (embedded, worded)
            hits = index.search(vecs[pos], k=relevance.CANDIDATES)
            record.candidates[pos] = [(train[row], score) for row, score in hits]
            record.candidate_rows[pos] = relevance.candidate_features(
                hits, index.items, items[pos].repo, dist, features[pos], index.features,
                items[pos].title)
        progress(f"fold {number + 1}/{k} fitted")
    return record


def load_fold_vectors(directory: str | Path, n: int) -> tuple[list[list[int]], list[np.ndarray]]:
    """Folds and per-fold vectors written by ``scripts/train_encoder.py``: ``folds.json`` (the
    held-out positions of each fold) and ``vectors_fold{k}.npy`` (every issue embedded by the
    encoder tuned without fold k). Folds whose vectors are missing are left out: the record then
    covers fewer issues, but each of them honestly."""
    path = Path(directory)
    parts = [list(map(int, p)) for p in json.loads((path / "folds.json").read_text())]
    if sorted(i for p in parts for i in p) != list(range(n)):
        raise ValueError(f"{path}: folds do not partition the {n} labelled issues")
    kept = [(p, path / f"vectors_fold{k}.npy") for k, p in enumerate(parts)
            if (path / f"vectors_fold{k}.npy").is_file()]
    if not kept:
        raise ValueError(f"{path}: no vectors_fold*.npy")
    vectors = [np.load(file) for _, file in kept]
    if any(len(v) != n for v in vectors):
        raise ValueError(f"{path}: vectors do not cover the {n} labelled issues")
    return [p for p, _ in kept], vectors


def held_out(parts: Sequence[Sequence[int]]) -> list[int]:
    """Every position some fold held out (all of them, unless folds were left out)."""
    return sorted(i for part in parts for i in part)
