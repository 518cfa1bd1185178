"""The one pipeline: issue text -> embedding -> neighbours -> prediction -> ``Triage``.

``Engine`` holds what is loaded once per process (model, index, fitted classifier); ``triage`` is
otherwise a pure function of the issue. The optional ``Refiner`` (the LLM path) may sharpen the
offline answer but never replaces the checks around it."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from triagebot.domain import missing, rules, taxonomy
from triagebot.domain.models import IndexedIssue, Issue, Prediction, Similar, Triage
from triagebot.domain.visibility import Viewer, prompt_may_use, visible_to
from triagebot.engine.analysis import Analysed, analyse
from triagebot.engine.classify import (
    BINARY,
    FIX_VIA_CAUSE,
    KNN_K,
    RULE_WEIGHT,
    THRESHOLDS,
    Classifier,
    blend,
    knn_vote,
    within_stage,
)
from triagebot.engine.embed import Embedder, load_embedder
from triagebot.engine.index import IssueIndex

log = logging.getLogger(__name__)

SIMILAR_SHOWN = 5
MIN_SIMILARITY = 0.3  # cosine of all-MiniLM-L6-v2; below this neighbours are rarely related
NEAR_DUPLICATE = 0.85
# Share of the rules' verdict when it rests on a decisive signature (``rules.decisive``): the index
# holds too few such reports for the learned model to weigh them, so the domain rule leads.
DECISIVE_RULE_WEIGHT = 0.5
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
        self.classifier = classifier or Classifier.fit(index)
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
        self.classifier = Classifier.fit(self.index)

    def triage(self, issue: Issue, exclude: frozenset[tuple[str, int]] = frozenset(),
               viewer: Viewer | None = None, llm: bool = True) -> Triage:
        """Triage one issue; the issue itself is never its own neighbour.

        Neighbours are only those ``viewer`` may see (default: the issue's own repository, so a
        private repository's issues appear on its own issues only); ``llm=False`` keeps the text
        away from the model (the repository's consent, ``domain.visibility.llm_allowed``)."""
        analysed = analyse(issue, self.embedder)
        skip = set(exclude) | ({issue.key} if issue.number is not None else set())
        viewer = viewer or Viewer.of(issue.repo)
        hits = self.index.search(analysed.vector, k=max(KNN_K, 3 * SIMILAR_SHOWN), exclude=skip,
                                 visible=lambda item: visible_to(item, viewer))
        offline = predict(issue, analysed, self.index, self.classifier, hits)
        if self.refiner is None or not llm:
            return offline
        return self.refiner.refine(issue, offline, self._promptable(offline.similar, issue.repo))

    def _promptable(self, similar: list[Similar], repo: str) -> list[Similar]:
        """Neighbours whose text may go into a prompt for ``repo``: never another repository's
        private issue, even one its owner lets other repositories show."""
        def visibility(s: Similar) -> str:
            row = self.index.row_of((s.repo, s.number))
            return self.index.items[row].visibility if row is not None else "private"

        return [s for s in similar if prompt_may_use(visibility(s), s.repo, repo)]


def predict(
    issue: Issue, analysed: Analysed, index: IssueIndex, classifier: Classifier,
    hits: list[tuple[int, float]],
) -> Triage:
    """Blend the linear model with the neighbour vote and the keyword rules' verdict, enforce the
    hierarchy, attach evidence."""
    linear = classifier.linear_proba(analysed.vector, analysed.features)
    dist = {dim: blend(linear[dim], knn_vote(index, hits, dim)) for dim in linear}
    weight = DECISIVE_RULE_WEIGHT if rules.decisive(analysed.full, analysed.env) else RULE_WEIGHT
    for dim, rule_id in rules.classify(analysed.full, analysed.env).items():
        if dim in dist and rule_id != taxonomy.UNKNOWN:  # the error signatures get a say too
            dist[dim] = blend(dist[dim], {rule_id: 1.0}, weight)
    stage = _prediction("stage", dist["stage"], analysed.full)
    preds = {"stage": stage}
    inside = {dim: within_stage(dist[dim], dim, stage.id) for dim in taxonomy.IN_STAGE}
    for dim, sub in inside.items():
        preds[dim] = _prediction(dim, sub, analysed.full, scale=stage.confidence)
    fix = blend(dist["fix_pattern"], classifier.fix_via_cause(inside["root_cause"]), FIX_VIA_CAUSE)
    preds["fix_pattern"] = _prediction("fix_pattern", fix, analysed.full)
    for dim in BINARY:
        preds[dim] = _prediction(dim, dist[dim], analysed.full)
    similar = similar_issues(index, hits, issue.repo)
    distributed = preds["distributed_specific"].id == "yes"
    return Triage(
        repo=issue.repo, number=issue.number, **preds, similar=similar,
        missing_info=missing.missing_info(analysed.full, analysed.env, stage.id, distributed,
                                          framework=framework_of(issue.repo)),
        environment=analysed.env, source="offline",
    )


def framework_of(repo: str) -> str | None:
    """The framework a repository is, so the checklist asks for its own report (``ds_report``...)."""
    name = repo.lower()
    for key, framework in (("deepspeed", "deepspeed"), ("colossal", "colossalai"),
                           ("megatron", "megatron"), ("horovod", "horovod"), ("pytorch", "pytorch")):
        if key in name:
            return framework
    return None


def _prediction(dimension: str, dist: dict[str, float], full: str, scale: float = 1.0) -> Prediction:
    """The best id of a distribution as a ``Prediction`` (``unknown`` when there is nothing)."""
    if not dist:
        return Prediction(id=taxonomy.UNKNOWN, name="Unknown", confidence=0.0, abstained=True)
    ranked = sorted(dist.items(), key=lambda kv: (-kv[1], kv[0]))
    best, prob = ranked[0]
    confidence = float(min(max(prob * scale, 0.0), 1.0))
    return Prediction(
        id=best, name=_name(dimension, best), confidence=round(confidence, 4),
        abstained=confidence < THRESHOLDS[dimension],
        alternatives=[(k, round(float(v * scale), 4)) for k, v in ranked[1:4]],
        evidence=rules.evidence(full, dimension, best) if dimension not in BINARY else [],
        facts=rules.facts(full, dimension, best) if dimension not in BINARY else [],
    )


def _name(dimension: str, label_id: str) -> str:
    if dimension in BINARY_NAMES:
        return BINARY_NAMES[dimension].get(label_id, label_id)
    return taxonomy.name(dimension, label_id)


def similar_issues(index: IssueIndex, hits: list[tuple[int, float]], repo: str) -> list[Similar]:
    """Neighbours as shown to users: one per issue, a duplicate replaced by its original, nothing
    too dissimilar to help; those with a known fix first, except that a near-duplicate is always
    kept in front even without a fix (it is the most useful link a reporter can get)."""
    seen: set[tuple[str, int]] = set()
    shown: list[Similar] = []
    for row, score in hits:
        item = _original(index, index.items[row])
        if item.key in seen:
            continue
        seen.add(item.key)
        shown.append(_similar(item, score, repo))
    shown = [s for s in shown if s.score >= MIN_SIMILARITY]
    shown.sort(key=lambda s: (not (s.resolved or s.score >= NEAR_DUPLICATE), -s.score))
    return shown[:SIMILAR_SHOWN]


def _original(index: IssueIndex, item: IndexedIssue) -> IndexedIssue:
    if item.close_reason == "duplicate" and item.duplicate_of is not None:
        row = index.row_of((item.repo, item.duplicate_of))
        if row is not None:
            return index.items[row]
    return item


def _similar(item: IndexedIssue, score: float, repo: str) -> Similar:
    return Similar(
        repo=item.repo, number=item.number, url=item.url, title=item.title,
        score=round(float(score), 4), labels=item.labels, resolution=item.resolution,
        resolved=item.resolved, cross_repo=bool(repo) and item.repo != repo, status=item.status,
    )

