"""Is this neighbour the same problem? A small learned score over each candidate link.

Cosine similarity alone links unrelated reports: issue templates, environment dumps and the
shared vocabulary of distributed training make a DeepSpeed OOM look like a DeepSpeed hang. On
5-fold CV of the shared data only about a third of the five nearest neighbours share the issue's
symptom, and fewer the root cause too. What separates the right links is mostly whether the
classifier, reading the new issue, believes in the neighbour's labels: so the score combines the
similarity with the classifier's probability of the neighbour's stage, symptom and root cause, a
lexical overlap of the titles (the same API or error name in unlike sentences), and cheap facts
(shared error signature, same repository or framework, known fix). It is a logistic regression
trained on out-of-fold pairs (an issue and its candidates from the other folds; relevant = the
same problem, ``same_problem``), and its threshold comes from the same out-of-fold record as the
labels' (``calibration``). Training on "same symptom" alone linked different problems that share
a symptom (measured in the README: a third of such links were another root cause)."""
from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from triagebot.domain import taxonomy
from triagebot.domain.environment import framework_of
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.domain.visibility import owner_of


def same_problem(a: Labels, b: Labels) -> bool:
    """Two reports are the same problem when they share the symptom and the root cause (a root
    cause nobody could name does not count against it): the definition of issue #11. Sharing
    the symptom alone is too coarse: two different pipeline-partitioning failures and an mpi4py
    double init all "hang"."""
    if a.symptom == taxonomy.UNKNOWN or a.symptom != b.symptom:
        return False
    return a.root_cause == b.root_cause or taxonomy.UNKNOWN in (a.root_cause, b.root_cause)

FEATURES = ("cosine", "gap_to_best", "rank", "p_symptom", "p_stage", "p_root_cause", "resolved",
            "same_repo", "same_framework", "shared_signature", "title_overlap",
            "p_symptom_and_cause", "top_symptom", "neighbours_sharing_symptom")
# The last three (5-fold CV of the shared data, cross-fitted, relevance target 0.62): issues with
# a same-symptom link 0.368 -> 0.409 at the same link precision (0.63 the same problem). Same
# problem means symptom *and* root cause, which a sum of the two probabilities cannot express;
# and a neighbour whose symptom most of the nearest issues share is less likely an outlier.
VOTERS = 5  # nearest issues whose symptoms vote for a candidate's (``neighbours_sharing_symptom``)
CANDIDATES = 20  # neighbours looked at per issue
MAX_LINKS = 3


class RelevanceModel(BaseModel):
    """Logistic regression over ``FEATURES`` and, with ``pairwise``, their pairwise products
    (fitted by ``fit``). ``mean``/``scale`` standardise a row first (empty: rows as they are)."""

    weights: list[float] = Field(default_factory=lambda: [0.0] * len(FEATURES))
    bias: float = 0.0
    mean: list[float] = Field(default_factory=list)
    scale: list[float] = Field(default_factory=list)
    pairwise: bool = False

    def inputs(self, rows: np.ndarray) -> np.ndarray:
        """The rows the weights apply to: standardised, then with their pairwise products."""
        x = rows if not self.mean else (rows - np.asarray(self.mean)) / np.asarray(self.scale)
        return with_products(x) if self.pairwise else x

    def score(self, rows: np.ndarray) -> np.ndarray:
        """P(relevant) for each row of candidate features."""
        if rows.size == 0:
            return np.zeros(0)
        if rows.shape[1] != len(FEATURES) or len(self.mean) not in (0, rows.shape[1]) \
                or len(self.scale) != len(self.mean) \
                or self.inputs(rows[:1]).shape[1] != len(self.weights):
            # a record fitted on another feature list (an index built by an older version):
            # no score is trustworthy, so nothing is linked until `triagebot index build`
            logging.getLogger(__name__).warning(
                "link relevance was fitted on %d weights, this version has %d features: no links "
                "until the index is rebuilt", len(self.weights), rows.shape[1])
            return np.zeros(len(rows))
        z = self.inputs(rows) @ np.asarray(self.weights) + self.bias
        return 1.0 / (1.0 + np.exp(-z))


def with_products(x: np.ndarray) -> np.ndarray:
    """``x`` followed by the product of every pair of its columns (squares included)."""
    i, j = np.triu_indices(x.shape[1])
    return np.hstack([x, x[:, i] * x[:, j]])


# A neighbour whose text is nearly the same report is linked whatever its relevance score: the
# score is trained on pairs of distinct reports, which are almost never this close, and a
# near-duplicate is the most useful link a reporter can get.
NEAR_DUPLICATE = 0.85


def link_order(scores: np.ndarray, ranks: Sequence[int]) -> np.ndarray:
    """Candidates in the order links are taken: by ``vouch_rank`` (nearly the same text, then
    the same error: the pairwise score could push them out of the few links), then by
    relevance, ties in the search's order. The service and the calibration record take links
    in this one order."""
    return np.lexsort((-np.asarray(scores), np.asarray(ranks)))


def same_error(signatures: Collection[str], item: IndexedIssue) -> bool:
    """Whether ``item``'s report showed an error the new report shows too, of those that mean
    the same problem wherever they occur (``diagnoses.linking``: DeepSpeed refusing to build
    ``async_io``, a port already in use at the rendezvous). Read from the texts, not the labels:
    a mechanism, not a resemblance."""
    return bool(signatures) and not set(signatures).isdisjoint(item.diagnoses)


NEARLY_THE_SAME, SAME_ERROR, UNVOUCHED = 0, 1, 2


def vouch_rank(cosine: float, signatures: Collection[str], item: IndexedIssue, repo: str) -> int:
    """Whether a link vouches for itself, whatever its relevance score, and how strongly:
    nearly the same text (``NEARLY_THE_SAME``), else the same error in the reporter's own
    tracker (``SAME_ERROR``; another tracker's fix for it names another launcher's flags), else
    ``UNVOUCHED``. A vouched link's fix may be offered and its thread shown to the reporter (a
    maintainer's "duplicate of" vouches too; the service knows it, the record has none)."""
    if cosine >= NEAR_DUPLICATE:
        return NEARLY_THE_SAME
    if same_error(signatures, item) and same_tracker(item.repo, repo):
        return SAME_ERROR
    return UNVOUCHED


SURE, UNLIKELY = 0.8, 0.05  # a belief this firm rules out a neighbour this improbable


# Names a fix is about: `code spans`, CamelCase, snake_case and UPPER_CASE words of a resolution.
_FIX_NAME = re.compile(r"`([^`]{3,40})`|\b([A-Za-z]+[a-z][A-Z][A-Za-z0-9]+|[a-z0-9]+_[a-z0-9_]+|"
                       r"[A-Z]{2,}[A-Z0-9_]*)\b")
# Names too common in these trackers to tell one fix from another.
_COMMON_NAMES = frozenset({"nccl", "cuda", "gpu", "gpus", "oom", "api", "pr", "ds_report", "zero",
                           "fp16", "bf16", "cpu", "pip", "os", "ddp", "fsdp", "moe", "json"})


def fix_names(resolution: str) -> set[str]:
    """The specific things a resolution names (lower case), common words left out."""
    return {(a or b).lower() for a, b in _FIX_NAME.findall(resolution or "")} - _COMMON_NAMES


def fix_fits(item: IndexedIssue, text: str) -> bool:
    """Whether a linked issue's fix may be offered for a report reading ``text``: a fix that names
    specific things (a TensorBoard callback, ``parallel_output``) none of which the report
    mentions is about another problem more often than not. On the 5-fold backtest, such resolved
    links were the same problem 0.35 of the time (119 links), the others 0.57 (130); maintainers
    scored them as harm ("an unrelated issue offered as the fix"). No text: no check."""
    if not item.resolved or not text:
        return True
    names = fix_names(item.resolution)
    lowered = text.lower()
    return not names or any(name in lowered for name in names)


def fix_offerable(item: IndexedIssue, repo: str, text: str) -> bool:
    """Whether a resolved neighbour's fix may be offered to the reporter of ``repo`` (its score
    aside): its fix fits the report (``fix_fits``) and it comes from the reporter's own tracker
    (``same_tracker``). On the 5-fold backtest, fixes offered from another tracker were the same
    problem 0.50 of the time (18), those of the reporter's own 0.73 (67)."""
    return item.resolved and fix_fits(item, text) and same_tracker(item.repo, repo)


def showable(repo: str, item: IndexedIssue, distributions: Mapping[str, Mapping[str, float]] | None,
             text: str, vouched: bool) -> bool:
    """Whether ``item`` may be linked at all (its score aside): ``linkable``, and a resolved issue
    only with an offerable fix (``fix_offerable``) unless a maintainer's "duplicate of", nearly
    the same text or the same error vouches for it (``vouch_rank``). Kept as a thread without
    its fix, a resolved issue whose fix was not offerable was the same problem 0.37 of the time
    (99 on the 5-fold backtest). One rule for the service (``triage.similar_issues``) and the
    links' record (``crossfit``)."""
    return linkable(repo, item, distributions) and (
        not item.resolved or vouched or fix_offerable(item, repo, text))


def linkable(repo: str, item: IndexedIssue,
             distributions: Mapping[str, Mapping[str, float]] | None = None) -> bool:
    """Whether ``item`` may be offered under an issue of ``repo`` at all:
    - one whose fix is known, or an unresolved thread of the reporter's own tracker
      (``same_tracker``) or organisation (``same_owner``: Accelerate's under a Transformers
      report, a company's other repositories): one of another has neither a fix nor the
      reporter's code to offer (maintainers read an unresolved Colossal-AI thread under a
      Megatron-LM report as noise, however alike the text; a strict reader judged 80 links of
      the 5-fold backtest one by one, and of the 15 unresolved ones from another repository one
      was worth a click, a Transformers report's Accelerate thread), even nearly the same text
      (another framework's thread has another codebase's discussion);
    - a title that says something (a bare "[BUG]" tells the reader nothing);
    - not contradicted by what the classifier is sure of: a TensorBoard-callback fix offered for
      a hang the model puts at 90% on NCCL was read as harm."""
    tracker = item.resolved or not repo or same_tracker(item.repo, repo) or same_owner(item.repo, repo)
    if not tracker or not title_words(item.title):
        return False
    for dim, label in (("symptom", item.labels.symptom), ("root_cause", item.labels.root_cause)):
        dist = (distributions or {}).get(dim) or {}
        if label == taxonomy.UNKNOWN or not dist:
            continue
        top = max(dist, key=lambda k: dist[k])
        if top != label and dist[top] >= SURE and dist.get(label, 0.0) < UNLIKELY:
            return False
    return True


def same_owner(a: str, b: str) -> bool:
    """Two repositories of one user or organisation (``huggingface/accelerate`` and
    ``huggingface/transformers``); GitHub's names ignore case."""
    owner = owner_of(a).lower()
    return bool(owner) and owner == owner_of(b).lower()


def same_tracker(a: str, b: str) -> bool:
    """The same repository, or two of the same known framework (Megatron-LM and its forks): the
    threads a reporter is shown (an unknown framework matches none)."""
    fa, fb = framework_of(a), framework_of(b)
    return a.lower() == b.lower() or (fa is not None and fa == fb)



_WORD = re.compile(r"[a-z_][a-z0-9_.]{2,}")
_COMMON = frozenset(
    "the and with for when not does using use can how from after error issue bug what why are this "
    "that training train model get got fails failed failing support question help into".split())


def title_words(title: str) -> frozenset[str]:
    """The distinctive words of a title (API names, error names, options), lower-cased."""
    return frozenset(w.strip(".") for w in _WORD.findall(title.lower()) if w not in _COMMON)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets: the lexical half of the retrieval (dense cosine is the
    other), which catches the same API or error name written in unlike sentences."""
    return len(a & b) / len(a | b) if a and b else 0.0


def candidate_features(
    hits: Sequence[tuple[int, float]], items: Sequence[IndexedIssue], repo: str,
    distributions: Mapping[str, Mapping[str, float]], features: np.ndarray,
    item_features: np.ndarray, title: str = "",
) -> np.ndarray:
    """One row of ``FEATURES`` per hit (row in ``items``, cosine), best hit first; ``title`` is
    the new issue's."""
    words = title_words(title)
    if not hits:
        return np.zeros((0, len(FEATURES)))
    best = hits[0][1]
    symptom, stage = distributions.get("symptom", {}), distributions.get("stage", {})
    cause = distributions.get("root_cause", {})
    top_symptom = max(symptom, key=lambda k: symptom[k]) if symptom else None
    voters = [items[row].labels.symptom for row, _ in hits[:VOTERS]]
    framework = framework_of(repo)
    has_signature = features > 0
    rows = []
    for rank, (row, cosine) in enumerate(hits):
        item = items[row]
        rows.append([
            cosine, cosine - best, float(rank),
            symptom.get(item.labels.symptom, 0.0), stage.get(item.labels.stage, 0.0),
            cause.get(item.labels.root_cause, 0.0),
            float(item.resolved), float(bool(repo) and item.repo == repo),
            float(framework is not None and framework_of(item.repo) == framework),
            float(bool(np.any(has_signature & (item_features[row] > 0)))),
            overlap(words, title_words(item.title)),
            symptom.get(item.labels.symptom, 0.0) * cause.get(item.labels.root_cause, 0.0),
            float(item.labels.symptom == top_symptom),
            voters.count(item.labels.symptom) / VOTERS,
        ])
    return np.asarray(rows, dtype=np.float64)


# Regularisation of the pairwise fit, chosen on 5-fold CV of the shared data (C 0.1 and 0.01
# within a point of each other).
PAIRWISE_C = 0.1


def fit(rows: np.ndarray, relevant: np.ndarray, c: float = PAIRWISE_C,
        pairwise: bool = True) -> RelevanceModel:
    """Fit the score on out-of-fold candidate rows (a few thousand rows of ``FEATURES``).

    Pairwise products because relevance is a conjunction the plain sum cannot express: a close
    neighbour counts when the classifier also believes its symptom, a same-repository one when
    its root cause is plausible. On 5-fold CV of the shared data, with each fold's threshold
    chosen on a record scored out of fold (``crossfit``) for the same target (0.62 the same
    problem): links the same problem 0.632 -> 0.652, issues with a same-symptom link 0.392 ->
    0.471 (scratch experiment in the note of #11, then the backtest in the README)."""
    from sklearn.linear_model import LogisticRegression

    if rows.size == 0 or len(set(relevant.tolist())) < 2:
        return RelevanceModel()
    mean, scale = rows.mean(axis=0), rows.std(axis=0)
    scale[scale == 0] = 1.0
    shape = RelevanceModel(weights=[], mean=mean.tolist(), scale=scale.tolist(), pairwise=pairwise)
    model = LogisticRegression(C=c, max_iter=3000).fit(shape.inputs(rows), relevant.astype(int))
    return shape.model_copy(update={"weights": [float(w) for w in model.coef_[0]],
                                    "bias": float(model.intercept_[0])})
