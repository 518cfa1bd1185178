"""The combination rule of combine.py, case by case (pure: no server)."""
from __future__ import annotations

import pytest

from support.llm_fake import answer, neighbour, offline_triage, prediction
from triagebot.domain import taxonomy
from triagebot.llm import combine
from triagebot.llm.answer import parse

TEXT = "Title: OOM\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB"


def merged(offline=None, **fields):
    return combine.combine(offline or offline_triage(), parse(answer(**fields)), issue_text=TEXT)


def test_agreement_boosts_confidence():
    result = merged(stage="S4", symptom="4.2", confidence=0.8)
    assert result.stage.id == "S4" and result.stage.confidence > 0.8
    assert result.symptom.confidence > 0.8 and not result.symptom.abstained
    assert result.source == "offline+llm"


def test_pick_inside_top3_is_taken_with_max_confidence_discounted():
    result = merged(symptom="4.3", confidence=0.7)
    assert result.symptom.id == "4.3"
    assert result.symptom.name == taxonomy.name("symptom", "4.3")
    assert result.symptom.confidence == pytest.approx(0.7 * combine.SWITCH_DISCOUNT)
    assert result.symptom.alternatives[0][0] == "4.3"


def test_pick_outside_top3_rejected_when_offline_is_confident():
    result = merged(symptom="4.11", confidence=0.95)  # offline symptom confidence is 0.6
    assert result.symptom.id == "4.2"


def test_pick_outside_top3_accepted_when_llm_sure_and_offline_weak():
    offline = offline_triage(symptom=prediction("symptom", "4.2", 0.3, ("4.3", 0.2)))
    result = merged(offline, symptom="4.11", confidence=0.9)
    assert result.symptom.id == "4.11"
    assert result.symptom.confidence == pytest.approx(0.9 * combine.OUTSIDE_DISCOUNT)


def test_pick_outside_top3_with_low_llm_confidence_keeps_offline():
    offline = offline_triage(symptom=prediction("symptom", "4.2", 0.3))
    assert merged(offline, symptom="4.11", confidence=0.6).symptom.id == "4.2"


def test_unknown_keeps_offline():
    result = merged(root_cause="unknown", fix_pattern="unknown")
    assert result.root_cause.id == "R4.5" and result.fix_pattern.id == "F5"


def test_stage_change_takes_symptom_and_cause_from_llm():
    result = merged(stage="S3", symptom="3.1", root_cause="R3.2", confidence=0.9)
    assert result.stage.id == "S3"
    assert (result.symptom.id, result.root_cause.id) == ("3.1", "R3.2")
    assert taxonomy.consistent(result.stage.id, result.symptom.id, result.root_cause.id)


def test_stage_change_with_unknown_symptom_abstains():
    result = merged(stage="S3", symptom="unknown", root_cause="unknown", confidence=0.9)
    assert result.stage.id == "S3"
    assert result.symptom.id == "unknown" and result.symptom.abstained
    assert result.root_cause.id == "unknown" and result.root_cause.abstained


def test_rejected_stage_change_ignores_llm_symptom_of_other_stage():
    result = merged(stage="S1", symptom="1.1", root_cause="R1.1", confidence=0.9)
    assert result.stage.id == "S4"  # S1 is not among the offline candidates, offline is sure
    assert (result.symptom.id, result.root_cause.id) == ("4.2", "R4.5")


@pytest.mark.parametrize("stage, symptom, cause, conf", [
    ("S1", "1.1", "R1.1", 0.99), ("S3", "3.2", "unknown", 0.9), ("S5", "5.2", "R5.1", 0.5),
    ("S4", "4.11", "R4.7", 0.95), ("S2", "unknown", "R2.1", 0.85),
])
def test_hierarchy_always_consistent(stage, symptom, cause, conf):
    for offline_conf in (0.2, 0.45, 0.9):
        offline = offline_triage(stage=prediction("stage", "S4", offline_conf, ("S3", 0.2), ("S5", 0.1)))
        result = merged(offline, stage=stage, symptom=symptom, root_cause=cause, confidence=conf)
        assert taxonomy.consistent(result.stage.id, result.symptom.id, result.root_cause.id)


def test_binary_flip_only_when_llm_sure_and_offline_unsure():
    assert merged(distributed_specific=False, confidence=0.9).distributed_specific.id == "false"
    assert merged(is_bug=False, confidence=0.9).is_bug.id == "true"  # offline is_bug 0.9
    assert merged(distributed_specific=True, confidence=0.9).distributed_specific.confidence > 0.9


def test_threshold_controls_abstention():
    result = combine.combine(offline_triage(), parse(answer(symptom="4.3", confidence=0.7)),
                             issue_text=TEXT, thresholds={"symptom": 0.8})
    assert result.symptom.abstained


def test_evidence_only_verbatim_error_lines_without_links_or_mentions():
    lines = ["torch.cuda.OutOfMemoryError: CUDA out of memory.",  # verbatim error: kept
             "Error: the model made this up",                     # not in the issue
             "Tried to allocate 2 GiB"]                           # verbatim but not an error line
    result = merged(evidence=lines)
    assert result.stage.evidence == ["torch.cuda.OutOfMemoryError: CUDA out of memory."]
    assert combine.verified_evidence(["OOM"], TEXT) == []  # too short to mean anything
    text = "error: see https://evil.example/x and ping @admin, fixed in #12"
    for bad in ("error: see https://evil.example/x", "ping @admin", "fixed in #12"):
        assert combine.verified_evidence([bad], text) == []


def test_rationale_only_in_notes():
    result = merged(rationale="Looks like OOM")
    assert any("Looks like OOM" in n for n in result.notes)
    public = result.model_dump(exclude={"notes"})
    assert "Looks like OOM" not in str(public)


def test_duplicate_moves_neighbour_first():
    offline = offline_triage().model_copy(update={"similar": [neighbour(3), neighbour(4)]})
    result = merged(offline, duplicate_of=4)
    assert [s.number for s in result.similar] == [4, 3]
