"""The one pipeline: issue text -> embedding -> neighbours -> prediction -> ``Triage``.

``Engine`` holds what is loaded once per process (model, index, fitted classifier); ``triage`` is
otherwise a pure function of the issue. The optional ``Refiner`` (the LLM path) may sharpen the
offline answer but never replaces the checks around it."""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from triagebot.domain import diagnoses, missing, rules, taxonomy
from triagebot.domain.environment import framework_of
from triagebot.domain.models import Diagnosed, IndexedIssue, Issue, Prediction, Similar, Triage
from triagebot.domain.visibility import Viewer, prompt_may_use, visible_to
from triagebot.engine import confidence, relevance
from triagebot.engine.analysis import Analysed, analyse
from triagebot.engine.calibration import Calibration
from triagebot.engine.classify import (
    BINARY,
    READS_AS_NO_BUG_WITHHELD,
    Choice,
    Classifier,
    decide,
    reads_as_no_bug,
)
from triagebot.engine.embed import Embedder, load_embedder
from triagebot.engine.index import IssueIndex
from triagebot.text import references

log = logging.getLogger(__name__)

# A CUDA mismatch between torch and nvcc while something is being built (``rules.decisive``) is a
# build failure whatever else the report talks about: torch's extension builder refuses a CUDA
# toolkit other than the one torch was built with, so the stage is certain by mechanism, not by
# statistics (the shared data holds none with a major mismatch, too few to calibrate on).
DECISIVE_STAGE = "S1"
BINARY_NAMES = {
    "distributed_specific": {"yes": "Distributed-specific", "no": "Not distributed-specific"},
    "is_bug": {"yes": "Bug", "no": "Not a bug (question or feature request)"},
}


class Refiner(Protocol):
    """Something that may sharpen an offline triage (the LLM path). Must never raise: on any failure
    it returns ``offline`` unchanged with a note saying why."""

    def refine(self, issue: Issue, offline: Triage, neighbours: list[Similar]) -> Triage: ...


class Engine:
    """Everything triage needs, loaded once per process (model, index, classifier)."""

    def __init__(
        self, index: IssueIndex, embedder: Embedder, classifier: Classifier | None = None,
        refiner: Refiner | None = None,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.classifier = classifier or fit_classifier(index)
        self.refiner = refiner

    @classmethod
    def load(
        cls, index_dir: str | Path, refiner: Refiner | None = None,
        embedder: Embedder | None = None,
    ) -> Engine:
        index = IssueIndex.load(index_dir)  # refuses an index built with other rule features
        return cls(index, embedder or load_embedder(index.embedder_name), refiner=refiner)

    def repos(self) -> set[str]:
        """Repositories present in the index: the only ones comments may link to."""
        return {item.repo for item in self.index.items}

    def retrain(self) -> None:
        """Refit the classifier on the index as it is now (after corrections and new issues)."""
        self.classifier = fit_classifier(self.index)

    def triage(self, issue: Issue, exclude: frozenset[tuple[str, int]] = frozenset(),
               targets: dict[str, float] | None = None, viewer: Viewer | None = None,
               llm: bool = True) -> Triage:
        """Triage one issue; the issue itself is never its own neighbour.

        ``targets`` overrides the precision a dimension must clear to be stated (a repository's
        ``precision:``). Neighbours are only those ``viewer`` may see (default: the issue's own
        repository, so a private repository's issues appear on its own issues only);
        ``llm=False`` keeps the text away from the model (``domain.visibility.llm_allowed``)."""
        analysed = analyse(issue, self.embedder)
        skip = set(exclude) | ({issue.key} if issue.number is not None else set())
        viewer = viewer or Viewer.of(issue.repo)
        hits = self.index.search(analysed.vector, k=relevance.CANDIDATES, exclude=skip,
                                 visible=lambda item: visible_to(item, viewer))
        offline = predict(issue, analysed, self.index, self.classifier, hits, targets)
        if self.refiner is None or not llm:
            return offline
        refined = self.refiner.refine(issue, offline, self._promptable(offline.similar, issue.repo))
        return stated_as_offline(offline, refined)

    def _promptable(self, similar: list[Similar], repo: str) -> list[Similar]:
        """Neighbours whose text may go into a prompt for ``repo``: never another repository's
        private issue, even one its owner lets other repositories show."""
        def visibility(s: Similar) -> str:
            row = self.index.row_of((s.repo, s.number))
            return self.index.items[row].visibility if row is not None else "private"

        return [s for s in similar if prompt_may_use(visibility(s), s.repo, repo)]


def stated_as_offline(offline: Triage, refined: Triage) -> Triage:
    """The LLM may withhold a statement, never add one: a refined dimension is stated only when
    the offline engine stated it and the refined id is the same. The offline thresholds are
    calibrated on out-of-fold outcomes; an LLM's confidence is not (no real model has been
    measured here yet), so it cannot be allowed to open the gate."""
    preds = {}
    for dim in (*taxonomy.DIMENSIONS, *BINARY):
        before, after = offline.prediction(dim), refined.prediction(dim)
        stated = not before.abstained and after.id == before.id and not after.abstained
        preds[dim] = after if after.abstained == (not stated) else \
            after.model_copy(update={"abstained": not stated})
    preds = _hierarchy_kept(preds)
    updates = {dim: p for dim, p in preds.items() if p is not refined.prediction(dim)}
    return refined.model_copy(update=updates) if updates else refined


def fit_classifier(index: IssueIndex) -> Classifier:
    return Classifier.fit(index.vectors, index.features, index.items, index.calibration.words)


TITLE_CHARS = 300  # what the review page keeps of the issue's title


def predict(
    issue: Issue, analysed: Analysed, index: IssueIndex, classifier: Classifier,
    hits: list[tuple[int, float]], targets: dict[str, float] | None = None,
    calibration: Calibration | None = None,
) -> Triage:
    """The classifier's choice per dimension (hierarchy respected), stated only where the index's
    out-of-fold record says that confidence is right often enough; links only where the relevance
    score clears its own threshold. Pure, given the fitted parts."""
    record = calibration or index.calibration
    thresholds = record.thresholds(targets)
    embedded, worded = classifier.parts(analysed.vector, analysed.features, [analysed.words])[0]
    dists = classifier.combine(embedded, worded)
    choices = decide(dists)
    near = [(index.items[row], cosine) for row, cosine in hits[: confidence.NEIGHBOURS]]
    choices = confidence.rescored(
        choices, confidence.rows_of(choices, dists, embedded, worded, near), record.confidence)
    preds = {dim: _prediction(dim, choice, analysed.full, thresholds) for dim, choice in choices.items()}
    if reads_as_no_bug(choices):
        preds = _withheld(preds, READS_AS_NO_BUG_WITHHELD)
    if rules.decisive(analysed.full, analysed.env):
        preds = _decisive_build_failure(preds, dists, analysed.full)
    found = diagnoses.diagnose(analysed.full, analysed.env, analysed.diagnosed)
    preds = _hierarchy_kept(_stated_by_diagnoses(preds, dists, found, analysed.full))
    # the fix check reads the report without its dumps, as the ``fix_link`` record was taken
    # (``crossfit``): a name that occurs only in a pasted pip list is not the reporter's problem
    similar = similar_issues(index, hits, issue.repo, dists, analysed.features, record,
                             thresholds["link"], issue.title, analysed.words,
                             signatures=analysed.signatures,
                             cited=references.cited(f"{issue.title}\n{issue.body}", issue.repo),
                             # a fix is shown to the reporter: it clears the reporter's bar
                             # (``reporter_link``, asked of the links' record) as well as the
                             # fixes' own (``fix_link``), whichever is higher
                             fix_threshold=max(thresholds["fix_link"], thresholds["reporter_link"]))
    stage = preds["stage"]
    distributed = preds["distributed_specific"].id == "yes"
    return Triage(
        repo=issue.repo, number=issue.number, title=issue.title[:TITLE_CHARS], **preds, similar=similar,
        missing_info=missing.missing_info(analysed.full, analysed.env,
                                          None if stage.abstained else stage.id, distributed,
                                          framework=framework_of(issue.repo),
                                          cites_source=missing.cites_source(issue.body),
                                          pinned_source=missing.pins_source(issue.body),
                                          error_image=missing.error_in_image(issue.body),
                                          image_shown=missing.image_shown(issue.body),
                                          versions_raw=missing.versions_shown(issue.body)),
        diagnoses=found, environment=analysed.env, source="offline",
    )


def _hierarchy_kept(preds: dict[str, Prediction]) -> dict[str, Prediction]:
    """A symptom or root cause names its stage: never one stated without it, nor outside it."""
    stage = preds["stage"]
    outside = tuple(dim for dim in taxonomy.IN_STAGE
                    if stage.abstained or taxonomy.stage_of(dim, preds[dim].id) != stage.id)
    return _withheld(preds, outside) if outside else preds


def _decisive_build_failure(preds: dict[str, Prediction], dists: dict[str, dict[str, float]],
                            full: str) -> dict[str, Prediction]:
    """A torch/nvcc CUDA mismatch while building is a build failure (stage S1) by the taxonomy's
    own definition, whatever else the report mentions; the learned model sees too few to know (one
    of the 977 shared issues). The stage is stated from the rule; the finer dimensions are stated
    only if the model independently chose them inside S1."""
    if preds["stage"].id == DECISIVE_STAGE:
        return {**preds, "stage": preds["stage"].model_copy(update={"abstained": False})}
    stage = Prediction(
        id=DECISIVE_STAGE, name=_name("stage", DECISIVE_STAGE),
        confidence=round(dists.get("stage", {}).get(DECISIVE_STAGE, 0.0), 4), abstained=False,
        evidence=rules.evidence(full, "stage", DECISIVE_STAGE),
        facts=rules.facts(full, "stage", DECISIVE_STAGE))
    return {**_withheld(preds, taxonomy.AFTER_STAGE), "stage": stage}


def _stated_by_diagnoses(preds: dict[str, Prediction], dists: dict[str, dict[str, float]],
                         found: list[Diagnosed], full: str) -> dict[str, Prediction]:
    """A dimension the classifier did not state takes the id a diagnosis of the report's own error
    implies, for the dimensions that diagnosis may state (``Diagnosis.states``: measured right on
    >= 0.9 of >= 3 matched shared issues, e.g. ``cannot import name`` -> S1, R1.1, F2), with the
    error line as evidence. Like ``_decisive_build_failure``, a mechanism the model sees too
    rarely to calibrate on; unlike it, never against a stage the classifier states: a symptom or
    root cause only inside the stage stated by then (stage is decided first)."""
    for diagnosed in found:
        entry = diagnoses.BY_ID[diagnosed.id]
        quote: str | None = None  # the report's line, looked up once per diagnosis that states
        for dim in taxonomy.DIMENSIONS:  # stage first
            implied = entry.implies.get(dim)
            if dim not in entry.states or implied is None or not preds[dim].abstained:
                continue
            stage = preds["stage"]
            if dim in taxonomy.IN_STAGE and (
                    stage.abstained or taxonomy.stage_of(dim, implied) != stage.id):
                continue
            quote = quote or diagnoses.quote(full, diagnosed.id)
            old = preds[dim]
            others = [(old.id, old.confidence)] if old.id != implied else []
            preds = {**preds, dim: Prediction(
                id=implied, name=_name(dim, implied),
                confidence=round(dists.get(dim, {}).get(implied, 0.0), 4),
                abstained=False,
                alternatives=others + [a for a in old.alternatives if a[0] != implied],
                evidence=[quote] if quote else [])}
    return preds


def _withheld(preds: dict[str, Prediction], dims: tuple[str, ...]) -> dict[str, Prediction]:
    return {dim: p.model_copy(update={"abstained": True}) if dim in dims else p for dim, p in preds.items()}


def _prediction(dimension: str, choice: Choice, full: str, thresholds: dict[str, float]) -> Prediction:
    """A choice as a ``Prediction``: ``abstained`` unless its confidence clears the threshold of
    its target precision. Of ``is_bug`` only "not a bug" is ever asserted."""
    if choice.id == taxonomy.UNKNOWN:
        return Prediction(id=taxonomy.UNKNOWN, name="Unknown", confidence=0.0, abstained=True)
    gate = "not_a_bug" if dimension == "is_bug" else dimension
    stated = choice.confidence >= thresholds.get(gate, float("inf"))
    if dimension == "is_bug" and choice.id == "yes":
        stated = False
    return Prediction(
        id=choice.id, name=_name(dimension, choice.id), confidence=round(choice.confidence, 4),
        abstained=not stated, alternatives=choice.alternatives,
        evidence=rules.evidence(full, dimension, choice.id) if dimension not in BINARY else [],
        facts=rules.facts(full, dimension, choice.id) if dimension not in BINARY else [],
    )


def _name(dimension: str, label_id: str) -> str:
    if dimension in BINARY_NAMES:
        return BINARY_NAMES[dimension].get(label_id, label_id)
    return taxonomy.name(dimension, label_id)


def similar_issues(
    index: IssueIndex, hits: list[tuple[int, float]], repo: str,
    dists: dict[str, dict[str, float]], features: np.ndarray, record: Calibration,
    threshold: float, title: str = "", text: str = "", fix_threshold: float = 0.0,
    signatures: Sequence[str] = (),
    cited: frozenset[tuple[str, int]] = frozenset(),
) -> list[Similar]:
    """The neighbours worth a link: scored for being the same problem (``relevance``), kept only
    above the calibrated threshold (or vouched for: nearly the same text, or the same error as
    the report's ``signatures``, ``relevance.vouch_rank``), at most ``relevance.MAX_LINKS``,
    best first; a duplicate is replaced by its original, and each issue appears once. A fix
    about things the report (``text``) never mentions, or from another tracker, is not offered
    (``relevance.fix_offerable``).

    A resolved issue is offered to the reporter with its fix under "How similar issues were
    fixed", which a reporter acts on, only when it also clears ``fix_threshold``, read off the
    record of links offered as fixes alone (``fix_link``), or when vouched for; an unresolved
    one only when vouched for (nearly the same text, the same error, or a maintainer's
    "duplicate of"; ``Similar.for_reporter``). The others are for maintainers (``Similar.fix_held_back``).
    An issue the report itself names (``cited``, ``text.references``) is never linked back."""
    rows = relevance.candidate_features(hits, index.items, repo, dists, features, index.features,
                                        title)
    scores = record.relevance.score(rows)
    ranks = [relevance.vouch_rank(cosine, signatures, index.items[row], repo)
             for row, cosine in hits]
    self_vouched = [rank < relevance.UNVOUCHED for rank in ranks]
    shown: list[Similar] = []
    seen: set[tuple[str, int]] = set()
    for j in relevance.link_order(scores, ranks):
        row, cosine = hits[int(j)]
        if len(shown) >= relevance.MAX_LINKS:
            break
        if scores[j] < threshold and not self_vouched[j]:
            continue
        hit = index.items[row]
        item = _original(index, hit)
        # a maintainer's "duplicate of", nearly the same text or the same error vouches for the
        # fix on its own
        vouched = item is not hit or self_vouched[j]
        if not relevance.showable(repo, item, dists, text, vouched):
            continue
        if item.key in seen or references.names(cited, item.repo, item.number):
            continue
        seen.add(item.key)
        # The reporter is offered a fix above the fixes' own gate, and shown a thread with no
        # known fix only when vouched for: above a relevance threshold (0.75 the same problem by
        # the labels' record, of the reporter's own tracker), 600 threads on the 5-fold backtest
        # read as the same problem 2 times in 40 and as another problem 18 times (one by one, by
        # a strict maintainer). The rest, resolved ones with their fix included, are for
        # maintainers, who weigh them in their block.
        held_back = item.resolved and not vouched and scores[j] < fix_threshold
        shown.append(_similar(item, cosine, repo, float(scores[j]), for_reporter=vouched,
                              fix_held_back=held_back))
    return shown


def _original(index: IssueIndex, item: IndexedIssue) -> IndexedIssue:
    if item.close_reason == "duplicate" and item.duplicate_of is not None:
        row = index.row_of((item.repo, item.duplicate_of))
        if row is not None:
            return index.items[row]
    return item


def _similar(item: IndexedIssue, score: float, repo: str, relevance_score: float,
             for_reporter: bool = False, fix_held_back: bool = False) -> Similar:
    return Similar(
        repo=item.repo, number=item.number, url=item.url, title=item.title,
        score=round(float(score), 4), relevance=round(relevance_score, 4), labels=item.labels,
        resolution=item.resolution, resolved=item.resolved, cross_repo=bool(repo) and item.repo != repo,
        status=item.status, for_reporter=for_reporter, fix_held_back=fix_held_back,
    )

