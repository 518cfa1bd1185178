"""Evaluation: held-out figures per dimension, k-fold cross-validation and the baselines every
figure is read against (majority class, keyword rules).

An abstention counts as wrong in ``accuracy``; ``covered_accuracy`` is the accuracy on the issues
where the bot did commit. Labels ``unknown`` are skipped for that dimension. The issue being
evaluated is never its own neighbour, and in cross-validation never trains the classifier."""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Protocol

from triagebot.domain import rules, taxonomy
from triagebot.domain.models import Issue, LabelledIssue, Triage
from triagebot.domain.visibility import Viewer, visible_to
from triagebot.engine.analysis import Analysed, analyse_many, stack
from triagebot.engine.classify import Classifier
from triagebot.engine.embed import Embedder
from triagebot.engine.index import IssueIndex
from triagebot.engine.triage import predict

EVAL_DIMENSIONS = taxonomy.LABEL_DIMENSIONS


class Triager(Protocol):
    """What ``evaluate_on_index`` needs: an ``Engine``, or the CLI's ``LiveEngine`` wrapping one."""

    def triage(self, issue: Issue) -> Triage: ...


def truth(record: LabelledIssue, dimension: str) -> str | None:
    if dimension == "distributed_specific":
        value = record.labels.distributed_specific
        return None if value is None else ("yes" if value else "no")
    value = getattr(record.labels, dimension)
    return None if value == taxonomy.UNKNOWN else value


def score(pairs: Sequence[tuple[str, str, bool]]) -> dict[str, float]:
    """(truth, predicted, abstained) triples -> n, accuracy, macro-F1, kappa, coverage, covered acc."""
    n = len(pairs)
    if n == 0:
        return {"n": 0, "accuracy": 0.0, "macro_f1": 0.0, "kappa": 0.0, "coverage": 0.0,
                "covered_accuracy": 0.0}
    guesses = [(t, "<abstain>" if a else p) for t, p, a in pairs]
    correct = sum(t == p for t, p in guesses)
    covered = [(t, p) for t, p, a in pairs if not a]
    return {
        "n": n,
        "accuracy": round(correct / n, 4),
        "macro_f1": round(_macro_f1(guesses), 4),
        "kappa": round(_kappa([(t, p) for t, p, _ in pairs]), 4),
        "coverage": round(len(covered) / n, 4),
        "covered_accuracy": round(sum(t == p for t, p in covered) / len(covered), 4) if covered else 0.0,
    }


def _macro_f1(pairs: list[tuple[str, str]]) -> float:
    labels = {t for t, _ in pairs}
    f1s = []
    for label in labels:
        tp = sum(t == p == label for t, p in pairs)
        fp = sum(p == label and t != label for t, p in pairs)
        fn = sum(t == label and p != label for t, p in pairs)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / len(f1s) if f1s else 0.0


def _kappa(pairs: list[tuple[str, str]]) -> float:
    """Cohen's kappa between the labels and the bot's best guesses."""
    n = len(pairs)
    observed = sum(t == p for t, p in pairs) / n
    truths, preds = Counter(t for t, _ in pairs), Counter(p for _, p in pairs)
    expected = sum(truths[k] * preds.get(k, 0) for k in truths) / (n * n)
    return (observed - expected) / (1 - expected) if expected < 1 else 0.0


def report(records: Sequence[LabelledIssue], triages: Sequence[Triage]) -> dict:  # type: ignore[type-arg]
    """The evaluation object of ``triagebot eval --json``."""
    out: dict = {"n": len(records)}  # type: ignore[type-arg]
    for dim in EVAL_DIMENSIONS:
        pairs = []
        for record, triage in zip(records, triages):
            expected = truth(record, dim)
            if expected is not None:
                pred = triage.prediction(dim)
                pairs.append((expected, pred.id, pred.abstained))
        out[dim] = score(pairs)
    out["retrieval"] = {"hit_at_5": _hit_at_5(records, triages)}
    return out


def _hit_at_5(records: Sequence[LabelledIssue], triages: Sequence[Triage]) -> float:
    hits = [
        any(s.labels.symptom == r.labels.symptom for s in t.similar[:5])
        for r, t in zip(records, triages) if r.labels.symptom != taxonomy.UNKNOWN
    ]
    return round(sum(hits) / len(hits), 4) if hits else 0.0


def evaluate_on_index(engine: Triager, records: Sequence[LabelledIssue]) -> dict:  # type: ignore[type-arg]
    """Triage each record with title and body only, never retrieving the record itself."""
    triages = [engine.triage(r.model_copy(update={"labels": r.labels})) for r in records]
    return report(records, triages)


def folds(n: int, k: int, seed: int = 13) -> list[list[int]]:
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[i::k] for i in range(k)]


def cross_validate(
    records: Sequence[LabelledIssue], embedder: Embedder, k: int = 5,
    progress: Callable[[str], None] = lambda _: None,
) -> dict:  # type: ignore[type-arg]
    """k-fold CV: each fold's index and classifier are built from the other folds only."""
    analysed = analyse_many(list(records), embedder)
    vectors, features = stack(analysed, len(rules.FEATURE_NAMES))
    triages: list[Triage | None] = [None] * len(records)
    for number, test_rows in enumerate(folds(len(records), k), 1):
        test = set(test_rows)
        train = [i for i in range(len(records)) if i not in test]
        index = IssueIndex(embedder.name, embedder.dim, len(rules.FEATURE_NAMES))
        index.add([records[i].to_indexed() for i in train], vectors[train], features[train])
        classifier = Classifier.fit(index)
        for i in test_rows:
            triages[i] = _predict_one(records[i], analysed[i], index, classifier)
        progress(f"fold {number}/{k} done")
    result = report(records, [t for t in triages if t is not None])
    result["baselines"] = baselines(records, analysed, k)
    return result


def _predict_one(record: LabelledIssue, analysed: Analysed, index: IssueIndex,
                 classifier: Classifier) -> Triage:
    viewer = Viewer.of(record.repo)  # the same rule as Engine.triage: private items stay home
    hits = index.search(analysed.vector, k=15, exclude={record.key},
                        visible=lambda item: visible_to(item, viewer))
    return predict(record, analysed, index, classifier, hits)


def baselines(records: Sequence[LabelledIssue], analysed: Sequence[Analysed], k: int) -> dict:  # type: ignore[type-arg]
    """Majority class (learned per fold) and the keyword-rule classifier, never abstaining."""
    out: dict = {}  # type: ignore[type-arg]
    rule_guesses = [rules.classify(a.full, a.env) for a in analysed]
    for dim in taxonomy.DIMENSIONS:
        majority_pairs, rule_pairs = [], []
        for test_rows in folds(len(records), k):
            test = set(test_rows)
            train = [truth(records[i], dim) for i in range(len(records)) if i not in test]
            common = Counter(t for t in train if t is not None).most_common(1)
            guess = common[0][0] if common else taxonomy.UNKNOWN
            for i in test_rows:
                expected = truth(records[i], dim)
                if expected is not None:
                    majority_pairs.append((expected, guess, False))
                    rule_pairs.append((expected, rule_guesses[i].get(dim, taxonomy.UNKNOWN), False))
        out[dim] = {"majority": score(majority_pairs)["accuracy"],
                    "keyword_rules": score(rule_pairs)["accuracy"]}
    return out
