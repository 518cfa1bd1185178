"""Evaluation: held-out figures per dimension, k-fold cross-validation and the baselines every
figure is read against (majority class, keyword rules).

An abstention counts as wrong in ``accuracy``; ``covered_accuracy`` is the accuracy on the issues
where the bot did commit. Labels ``unknown`` are skipped for that dimension. The issue being
evaluated is never its own neighbour, and in cross-validation never trains the classifier."""
from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol

import numpy as np

from triagebot.comment import posting
from triagebot.domain import missing, rules, taxonomy
from triagebot.domain.models import Issue, LabelledIssue, Triage
from triagebot.domain.visibility import Viewer, visible_to
from triagebot.engine import crossfit, relevance
from triagebot.engine.analysis import Analysed, analyse_many, stack
from triagebot.engine.embed import Embedder
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
        return {"n": 0, "accuracy": 0.0, "forced_accuracy": 0.0, "macro_f1": 0.0, "kappa": 0.0, "coverage": 0.0,
                "covered_accuracy": 0.0}
    guesses = [(t, "<abstain>" if a else p) for t, p, a in pairs]
    correct = sum(t == p for t, p in guesses)
    forced = sum(t == p for t, p, _ in pairs)
    covered = [(t, p) for t, p, a in pairs if not a]
    return {
        "n": n,
        "accuracy": round(correct / n, 4),
        "forced_accuracy": round(forced / n, 4),
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


def evaluate_on_index(engine: Triager, records: Sequence[LabelledIssue],
                      render: Callable[[Triage], str] | None = None,
                      worth_posting: Callable[[Triage], bool] | None = None) -> dict[str, Any]:
    """Triage each record with title and body only, never retrieving the record itself."""
    triages = [engine.triage(r.model_copy(update={"labels": r.labels})) for r in records]
    result = report(records, triages)
    result["predictions"] = [backtest_row(r, t, render, worth_posting)
                             for r, t in zip(records, triages)]
    result["stated"] = stated_summary(result["predictions"], records)
    return result


def cross_validate(
    records: Sequence[LabelledIssue], embedder: Embedder, k: int = 5,
    progress: Callable[[str], None] = lambda _: None,
    fold_vectors: Sequence[np.ndarray] | None = None,
    parts: Sequence[Sequence[int]] | None = None,
    render: Callable[[Triage], str] | None = None,
    worth_posting: Callable[[Triage], bool] | None = None,
) -> dict[str, Any]:
    """k-fold CV of exactly what the service would state: each held-out issue is triaged by
    ``predict`` with an index and classifier built from the other folds only, and thresholds read
    from the other folds' out-of-fold record (cross-fitted). Returns the report with one
    ``predictions`` row per issue (the backtest)."""
    if fold_vectors is not None:  # the encoder's per-fold vectors replace a fresh embedding
        embedder = NoVectors(fold_vectors[0].shape[1], embedder.name)
    analysed = analyse_many(list(records), embedder)
    vectors, features = stack(analysed, len(rules.FEATURE_NAMES))
    items = [r.to_indexed(signatures=a.signatures) for r, a in zip(records, analysed)]
    record = crossfit.out_of_fold(items, vectors, features, embedder.name, k,
                                  fold_vectors=fold_vectors, progress=progress, parts=parts,
                                  texts=[a.words for a in analysed])
    covered = crossfit.held_out(parts) if parts is not None else list(range(len(records)))
    triages: list[Triage | None] = [None] * len(records)
    for number, model in enumerate(record.models):
        others = [i for i in covered if record.fold_of[i] != number]
        calibration = record.calibration(items, others)
        vecs = vectors if fold_vectors is None else fold_vectors[number]
        for i in (i for i in covered if record.fold_of[i] == number):
            viewer = Viewer.of(records[i].repo)  # the same rule as Engine.triage
            hits = model.index.search(vecs[i], k=relevance.CANDIDATES,
                                      visible=functools.partial(visible_to, viewer=viewer))
            mine = replace(analysed[i], vector=vecs[i])
            triages[i] = predict(records[i], mine, model.index, model.classifier, hits,
                                 calibration=calibration)
        progress(f"fold {number + 1}/{len(record.models)} predicted")
    tested = [(r, t) for r, t in zip(records, triages) if t is not None]
    result = report([r for r, _ in tested], [t for _, t in tested])
    result["baselines"] = baselines(records, analysed, k)
    result["predictions"] = [backtest_row(r, t, render, worth_posting) for r, t in tested]
    result["stated"] = stated_summary(result["predictions"], [r for r, _ in tested], records)
    return result


class NoVectors:
    """Stands in for the encoder when every vector comes from elsewhere (``fold_vectors``): the
    analysis still reads each text for its rule features, and its vectors are replaced."""

    def __init__(self, dim: int, name: str) -> None:
        self.dim, self.name = dim, name

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros((len(texts), self.dim), np.float32)


def backtest_row(record: LabelledIssue, triage: Triage, render: Callable[[Triage], str] | None,
                 worth_posting: Callable[[Triage], bool] | None) -> dict[str, Any]:
    """What the public comment would assert for one issue (``eval --predictions``)."""
    stated: dict[str, Any] = {}
    forced: dict[str, Any] = {}
    for dim in (*taxonomy.DIMENSIONS, "distributed_specific", "is_bug"):
        pred = triage.prediction(dim)
        value: Any = pred.id
        if dim in taxonomy.FLAGS:
            value = None if pred.id == taxonomy.UNKNOWN else pred.id == "yes"
        forced[dim] = value
        stated[dim] = triage.stated(dim)  # the comment's own definition
    posted = (worth_posting or posting.worth_posting)(triage)
    body = render(triage) if (render and posted) else ""
    # labels go on the issue with the comment, and on a silent issue where a label is stated
    labelled = posted or posting.worth_labelling(triage)
    return {
        "repo": record.repo, "number": record.number, "posted": posted, "labelled": labelled,
        "stated": stated,
        "forced": forced, "similar": [{"repo": s.repo, "number": s.number, "relevance": s.relevance,
                     "resolved": s.resolved, "for_reporter": s.for_reporter,
                     "fix_held_back": s.fix_held_back}
                                      for s in triage.similar],
        "missing": [m.key for m in missing.asked_in_comment(triage)], "comment_chars": len(body),
        "comment": body or None,  # what a maintainer would read, for reading a sample by hand
    }


def stated_summary(rows: Sequence[dict[str, Any]], records: Sequence[LabelledIssue],
                   indexed: Sequence[LabelledIssue] | None = None) -> dict[str, Any]:
    """Precision and coverage of what would be posted, per dimension, and of the links
    (``indexed``: every issue a link may point to, when more than ``records``)."""
    out: dict[str, Any] = {}
    for dim in (*taxonomy.DIMENSIONS, "distributed_specific"):
        pairs = [(row["stated"][dim], _truth_value(rec, dim)) for row, rec in zip(rows, records)]
        known = [(s, t) for s, t in pairs if t is not None]
        said = [(s, t) for s, t in known if s is not None]
        out[dim] = {"n": len(known), "stated": len(said),
                    "precision": _share(sum(s == t for s, t in said), len(said)),
                    "coverage": round(len(said) / len(known), 4) if known else 0.0}
    not_bug = [(rec.is_bug is False) for row, rec in zip(rows, records) if row["stated"]["is_bug"] is False]
    out["not_a_bug"] = {"stated": len(not_bug),
                        "precision": _share(sum(not_bug), len(not_bug)),
                        "coverage": round(len(not_bug) / max(1, sum(not r.is_bug for r in records)), 4)}
    labels_of = {(r.repo, r.number): r.labels for r in (indexed or records)}
    links = relevant = with_good = with_any = same = fixes = fixes_same = 0
    for_reporter = reporter_same = reporter_symptom = 0
    for row, rec in zip(rows, records):
        linked = [labels_of.get((s["repo"], s["number"])) for s in row["similar"]]
        good = [lab is not None and lab.symptom == rec.labels.symptom for lab in linked]
        alike = [lab is not None and relevance.same_problem(rec.labels, lab) for lab in linked]
        links += len(good)
        relevant += sum(good)
        same += sum(alike)
        with_good += any(good)
        with_any += bool(good)
        # links the comment offers as fixes ("How similar issues were fixed"): what a reporter acts on
        offered = [a for a, s in zip(alike, row["similar"])
                   if s.get("resolved") and not s.get("fix_held_back")]
        fixes += len(offered)
        fixes_same += sum(offered)
        # related threads shown to the reporter beside what else the comment says
        shown = [(a, g) for a, g, s in zip(alike, good, row["similar"])
                 if s.get("for_reporter") and not s.get("resolved")]
        for_reporter += len(shown)
        reporter_same += sum(a for a, _ in shown)
        reporter_symptom += sum(g for _, g in shown)
    out["links"] = {"per_issue": round(links / max(1, len(rows)), 3),
                    "precision": _share(relevant, links),
                    "same_problem": _share(same, links),
                    "issues_with_relevant_link": round(with_good / max(1, len(rows)), 4),
                    "issues_with_any_link": round(with_any / max(1, len(rows)), 4),
                    "offered_as_fixes": fixes,
                    "fixes_same_problem": _share(fixes_same, fixes),
                    "related_for_reporter": for_reporter,
                    "related_for_reporter_same_problem": _share(reporter_same, for_reporter),
                    "related_for_reporter_same_symptom": _share(reporter_symptom, for_reporter)}
    posted = [row for row in rows if row["posted"]]
    chars = sorted(row["comment_chars"] for row in posted if row["comment_chars"])
    silent_labelled = sum(1 for row in rows if row.get("labelled") and not row["posted"])
    out["posted"] = {"share": round(len(posted) / max(1, len(rows)), 4),
                     "median_chars": chars[len(chars) // 2] if chars else 0,
                     "labelled_silently": round(silent_labelled / max(1, len(rows)), 4)}
    return out


def _share(part: int, whole: int) -> float | None:
    """``part / whole`` to four places; None when there is nothing to divide (nothing stated)."""
    return round(part / whole, 4) if whole else None


def _truth_value(record: LabelledIssue, dimension: str) -> Any:
    value = truth(record, dimension)
    if dimension == "distributed_specific" and value is not None:
        return value == "yes"
    return value


def baselines(records: Sequence[LabelledIssue], analysed: Sequence[Analysed], k: int) -> dict:  # type: ignore[type-arg]
    """Majority class (learned per fold) and the keyword-rule classifier, never abstaining."""
    out: dict = {}  # type: ignore[type-arg]
    rule_guesses = [rules.classify(a.full, a.env) for a in analysed]
    for dim in taxonomy.DIMENSIONS:
        majority_pairs, rule_pairs = [], []
        for test_rows in crossfit.folds(len(records), k):
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
