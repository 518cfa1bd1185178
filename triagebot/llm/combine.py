"""Merge a validated LLM answer into the offline triage. Pure: no I/O, no model calls.

The rule, per taxonomy dimension (stage, symptom, root cause, fix pattern), with ``c`` the LLM's
confidence and the offline classifier's candidates (top-1 first, probabilities ``p``):

* LLM pick == offline top-1  -> keep it; confidence = m + (1 - m) * min(c, p) * AGREE_BOOST, where
  m = max(c, p): agreement of two independent readers is stronger than either alone.
* LLM disagrees with a firm offline top-1 (p >= OFFLINE_FIRM) and is no surer (c <= p) -> keep
  offline, confidence * DISAGREE_DISCOUNT (added after a weak model, measured against the keyword
  fake on a held-out split, pulled stage accuracy down 12 points by switching firm answers).
* LLM pick in the offline top-3 -> take the LLM pick; confidence = max(c, p(pick)) * SWITCH_DISCOUNT
  (the classifier thought it plausible; the LLM read the whole text).
* LLM pick outside the top-3 -> take it only when c >= OUTSIDE_MIN_LLM and the offline top-1 is
  weak (p < OUTSIDE_MAX_OFFLINE); confidence = c * OUTSIDE_DISCOUNT. Otherwise keep offline.
* LLM says "unknown" -> keep offline unchanged.

Hierarchy stays consistent: the stage is decided first. If the final stage is the offline one, the
LLM's symptom / root cause are considered only when the LLM chose the same stage (otherwise its ids
belong to another stage). If the final stage is the LLM's new stage, symptom and root cause come
from the LLM answer (already checked to sit in that stage) or become ``unknown`` and abstain;
never an offline id from the old stage.

``distributed_specific`` and ``is_bug`` flip only when c >= OUTSIDE_MIN_LLM and the offline
confidence is under BINARY_MAX_OFFLINE; agreement is boosted as above.

A changed prediction abstains when its confidence is under the dimension's threshold (``thresholds``,
default DEFAULT_THRESHOLD), so the LLM cannot make the bot sound surer than the numbers allow.

Public text: nothing the model writes is shown publicly. Its evidence lines are kept only if they
appear verbatim in the issue excerpt the model saw, look like error/log lines, and carry no URL,
mention, reference, markup, backtick, shell substitution, base64 blob or instruction vocabulary
("ignore", "label", "api key", ...) (RELIABILITY 32-34); its rationale goes to ``notes`` only.
"""
from __future__ import annotations

from collections.abc import Mapping

from triagebot.domain import taxonomy
from triagebot.domain.models import Prediction, Similar, Triage
from triagebot.llm.answer import AnswerFields
from triagebot.text import sanitize
from triagebot.text import signal as text

AGREE_BOOST = 0.5
OFFLINE_FIRM = 0.8
DISAGREE_DISCOUNT = 0.9
SWITCH_DISCOUNT = 0.9
OUTSIDE_MIN_LLM = 0.8
OUTSIDE_MAX_OFFLINE = 0.5
OUTSIDE_DISCOUNT = 0.6
BINARY_MAX_OFFLINE = 0.7
DEFAULT_THRESHOLD = 0.5
TOP_K = 3
MAX_EVIDENCE = 3



def combine(
    offline: Triage,
    answer: AnswerFields,
    *,
    issue_text: str,
    neighbours: list[Similar] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> Triage:
    """The refined triage: offline predictions adjusted by ``answer`` under the rule above."""
    limits = dict(thresholds or {})
    c = answer.confidence
    stage = _merge(offline.stage, answer.stage, c, "stage", limits)
    changed_stage = stage.id != offline.stage.id
    hier = {dim: _hierarchical(offline, answer, dim, stage, changed_stage, limits)
            for dim in taxonomy.IN_STAGE}
    evidence = verified_evidence(answer.evidence, issue_text)
    update = {
        "stage": _with_evidence(stage, evidence),
        **hier,
        "fix_pattern": _merge(offline.fix_pattern, answer.fix_pattern, c, "fix_pattern", limits),
        "distributed_specific": _binary(offline.distributed_specific, answer.distributed_specific, c),
        "is_bug": _binary(offline.is_bug, answer.is_bug, c),
        "source": "offline+llm",
        "similar": _duplicate_first(offline.similar, answer.duplicate_of),
        "notes": offline.notes + _notes(answer, offline, stage),
    }
    return offline.model_copy(update=update)


def _hierarchical(
    offline: Triage, answer: AnswerFields, dim: str, stage: Prediction, changed: bool,
    limits: Mapping[str, float],
) -> Prediction:
    pick = getattr(answer, dim)
    if not changed:
        base = offline.prediction(dim)
        return _merge(base, pick, answer.confidence, dim, limits) if answer.stage == stage.id else base
    if pick == taxonomy.UNKNOWN:
        return Prediction(id=taxonomy.UNKNOWN, name=taxonomy.name(dim, pick), confidence=0.0,
                          abstained=True)
    conf = min(answer.confidence, stage.confidence)
    return _prediction(dim, pick, conf, limits, [(pick, conf)])


def _merge(base: Prediction, pick: str, c: float, dim: str, limits: Mapping[str, float]) -> Prediction:
    if pick == taxonomy.UNKNOWN:
        return base
    if pick == base.id:
        m = max(c, base.confidence)
        conf = min(0.99, m + (1 - m) * min(c, base.confidence) * AGREE_BOOST)
        return base.model_copy(update={"confidence": conf, "abstained": conf < _limit(dim, limits)})
    if base.confidence >= OFFLINE_FIRM and c <= base.confidence:
        conf = base.confidence * DISAGREE_DISCOUNT  # a firm offline answer stands, a bit less sure
        return base.model_copy(update={"confidence": conf, "abstained": conf < _limit(dim, limits)})
    probs = dict(base.alternatives[:TOP_K])
    if pick in probs:
        conf = max(c, probs[pick]) * SWITCH_DISCOUNT
    elif c >= OUTSIDE_MIN_LLM and base.confidence < OUTSIDE_MAX_OFFLINE:
        conf = c * OUTSIDE_DISCOUNT
    else:
        return base
    return _prediction(dim, pick, conf, limits, _reorder(base.alternatives, pick, conf))


def _prediction(dim: str, pick: str, conf: float, limits: Mapping[str, float],
                alternatives: list[tuple[str, float]]) -> Prediction:
    return Prediction(id=pick, name=taxonomy.name(dim, pick), confidence=conf,
                      abstained=conf < _limit(dim, limits), alternatives=alternatives)


def _limit(dim: str, limits: Mapping[str, float]) -> float:
    return limits.get(dim, DEFAULT_THRESHOLD)


def _reorder(alts: list[tuple[str, float]], pick: str, conf: float) -> list[tuple[str, float]]:
    return [(pick, conf)] + [(i, p) for i, p in alts if i != pick]


_BINARY_IDS = {("true", "false"), ("yes", "no")}


def _binary(base: Prediction, value: bool, c: float) -> Prediction:
    """Map the LLM's bool onto the offline vocabulary ("true"/"false" or "yes"/"no")."""
    vocab = next((v for v in _BINARY_IDS if base.id.lower() in v), None)
    if vocab is None:
        return base
    pick = vocab[0] if value else vocab[1]
    if pick == base.id.lower():
        m = max(c, base.confidence)
        conf = min(0.99, m + (1 - m) * min(c, base.confidence) * AGREE_BOOST)
        return base.model_copy(update={"confidence": conf})
    if c < OUTSIDE_MIN_LLM or base.confidence >= BINARY_MAX_OFFLINE:
        return base
    conf = c * OUTSIDE_DISCOUNT
    name = "Yes" if value else "No"
    return Prediction(id=pick, name=name, confidence=conf, abstained=conf < DEFAULT_THRESHOLD,
                      alternatives=_reorder(base.alternatives, pick, conf), evidence=base.evidence)


def _with_evidence(pred: Prediction, evidence: list[str]) -> Prediction:
    merged = list(dict.fromkeys(evidence + pred.evidence))[:MAX_EVIDENCE]
    return pred.model_copy(update={"evidence": merged})


def verified_evidence(lines: list[str], issue_text: str) -> list[str]:
    """Model-quoted lines that are verbatim in the issue, look like errors, and are inert."""
    haystack = _squash(issue_text)
    kept: list[str] = []
    for line in lines:
        line = _squash(line)
        if len(line) < 8 or line not in haystack or not sanitize.inert_quote(line, strict=True):
            continue
        if text.error_lines(line) and line not in kept:
            kept.append(line)
    return kept[:MAX_EVIDENCE]


def _squash(value: str) -> str:
    return text.one_line(value)


def _duplicate_first(similar: list[Similar], number: int | None) -> list[Similar]:
    """A confirmed duplicate moves to the front of the list (our own search result, not model text)."""
    if number is None:
        return similar
    hit = [s for s in similar if s.number == number and not s.cross_repo]
    return hit[:1] + [s for s in similar if s not in hit[:1]]


def _notes(answer: AnswerFields, offline: Triage, stage: Prediction) -> list[str]:
    """Internal notes (never rendered publicly): what the LLM said and what changed."""
    verdict = "kept" if stage.id == offline.stage.id else f"changed from {offline.stage.id}"
    notes = [
        f"llm: stage={answer.stage} symptom={answer.symptom} root_cause={answer.root_cause} "
        f"fix_pattern={answer.fix_pattern} confidence={answer.confidence:.2f}; final stage "
        f"{stage.id} {verdict}",
    ]
    if answer.duplicate_of is not None:
        notes.append(f"llm: possible duplicate of #{answer.duplicate_of}")
    if answer.rationale:
        notes.append("llm rationale (untrusted, internal): " + " ".join(answer.rationale.split()))
    return notes
