"""``Triage.stated``: the one definition of what the public comment asserts, shared by the comment,
the posting decision and the backtest (#11)."""
from __future__ import annotations

import pytest

from support.comment import make_triage, prediction
from triagebot.comment import sections


def test_a_stated_dimension_gives_its_id_and_an_abstained_one_nothing() -> None:
    triage = make_triage(fix_pattern=prediction("F5", 0.3, abstained=True))
    assert triage.stated("stage") == "S4" and triage.stated("symptom") == "4.2"
    assert triage.stated("fix_pattern") is None


def test_flags_are_booleans_and_of_is_bug_only_not_a_bug_is_asserted() -> None:
    assert make_triage().stated("distributed_specific") is True
    assert make_triage(distributed_specific=prediction("no", 0.9)).stated("distributed_specific") is False
    assert make_triage(is_bug=prediction("yes", 0.99)).stated("is_bug") is None
    assert make_triage(is_bug=prediction("no", 0.99)).stated("is_bug") is False
    assert make_triage(is_bug=prediction("no", 0.99, abstained=True)).stated("is_bug") is None


@pytest.mark.parametrize("dimension,label_id", [
    ("stage", "unknown"), ("symptom", "9.9"), ("root_cause", "R0"), ("fix_pattern", "F99"),
    ("distributed_specific", "maybe")])
def test_an_id_outside_the_taxonomy_is_never_asserted(dimension: str, label_id: str) -> None:
    assert make_triage(**{dimension: prediction(label_id, 0.99)}).stated(dimension) is None


def test_a_symptom_or_cause_of_another_stage_than_the_stated_one_is_not_asserted() -> None:
    triage = make_triage(stage=prediction("S2", 0.95))
    assert triage.stated("symptom") is None and triage.stated("root_cause") is None


@pytest.mark.parametrize("overrides", [
    {}, {"stage": prediction("S2", 0.95)}, {"stage": prediction("S4", 0.2, abstained=True)},
    {"is_bug": prediction("no", 0.9)}, {"distributed_specific": prediction("no", 0.2, abstained=True)},
])
def test_the_comment_reads_the_same_definition(overrides: dict[str, object]) -> None:
    triage = make_triage(**overrides)
    for dim in ("stage", "symptom", "root_cause", "fix_pattern"):
        assert sections.choice(triage, dim) == triage.stated(dim)
    for dim in ("distributed_specific", "is_bug"):
        assert sections.flag(triage, dim) == triage.stated(dim)
