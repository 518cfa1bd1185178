"""The posting decision (#11): ``comment: useful | always | never``; with ``useful`` the bot comments
only when something for the reporter clears the bar (a relevant link, a diagnosis, advice, a
request specific to the report) and is silent otherwise; a stated label alone is applied as a
label, without a comment."""
from __future__ import annotations

import pytest

from support.comment import make_triage, nothing_stated, prediction, similar
from triagebot.comment import render as comment
from triagebot.comment import sections
from triagebot.comment.posting import posting_reasons, worth_labelling, worth_posting
from triagebot.domain.models import MissingInfo

VERSIONS = MissingInfo(key="versions", description="The versions.")
REPRO = MissingInfo(key="repro", description="A script.")
TRACEBACK = MissingInfo(key="traceback", description="The traceback.")


def unsure(**overrides):  # type: ignore[no-untyped-def]
    """Nothing stated, no links, no requests: only what the overrides add."""
    return nothing_stated(**overrides)


def test_useful_is_silent_when_nothing_clears_the_bar() -> None:
    assert posting_reasons(unsure()) == []
    assert not worth_posting(unsure())
    assert not comment.worth_posting(unsure(), "useful")  # the same function, re-exported


@pytest.mark.parametrize("dimension,label_id", [
    ("stage", "S4"), ("symptom", "4.2"), ("root_cause", "R4.5")])
def test_a_stated_label_alone_is_applied_without_a_comment(dimension: str, label_id: str) -> None:
    """Labels are the maintainers' channel: a comment naming only the stage or symptom tells the
    reporter what they just wrote (maintainers' read M)."""
    triage = unsure(**{dimension: prediction(label_id, 0.95)})
    assert posting_reasons(triage) == [] and not worth_posting(triage)
    assert worth_labelling(triage) and not worth_labelling(triage, "never")
    assert not worth_labelling(unsure())


def test_a_stated_question_alone_is_not_worth_a_comment() -> None:
    # a comment that only says "this reads like a question" helps nobody and reads as dismissive
    triage = unsure(is_bug=prediction("no", 0.9))
    assert posting_reasons(triage) == [] and not worth_posting(triage)


def test_the_distributed_flag_alone_is_not_worth_a_comment() -> None:
    assert not worth_posting(unsure(distributed_specific=prediction("yes", 0.99)))
    assert not worth_posting(unsure(is_bug=prediction("yes", 0.99)))


@pytest.mark.parametrize("resolved", [True, False])
def test_useful_posts_for_a_relevant_link(resolved: bool) -> None:
    hit = similar(5, resolved=resolved, resolution="Pinned torch." if resolved else "unresolved")
    hit = hit.model_copy(update={"for_reporter": not resolved})
    assert posting_reasons(unsure(similar=[hit])) == ["a relevant link"]


def test_a_thread_only_maintainers_would_weigh_is_not_worth_a_comment_alone() -> None:
    """An unresolved link below the reporter's bar stays in the maintainers' block: alone it
    earns no comment."""
    weak = similar(5, resolved=False, resolution="unresolved")
    assert not weak.for_reporter
    assert posting_reasons(unsure(similar=[weak])) == [] and not worth_posting(unsure(similar=[weak]))


def test_useful_posts_for_a_request_the_report_calls_for() -> None:
    """An error mentioned but not pasted is specific to this report even with no stated label."""
    assert posting_reasons(unsure(missing_info=[TRACEBACK])) == ["specific missing information"]


def test_generic_requests_alone_are_not_worth_a_comment() -> None:
    assert not worth_posting(unsure(missing_info=[VERSIONS, REPRO]))


def test_a_symptom_outside_the_stated_stage_is_not_a_stated_label() -> None:
    triage = unsure(stage=prediction("S5", 0.2, abstained=True), symptom=prediction("4.2", 0.9),
                    root_cause=prediction("R4.5", 0.9))
    assert worth_labelling(triage)  # with no stated stage the symptom stands on its own
    inconsistent = triage.model_copy(update={"stage": prediction("S5", 0.9)})
    assert sections.choice(inconsistent, "symptom") is None  # the stage, not the symptom
    assert worth_labelling(inconsistent)


def test_always_posts_every_triage_and_never_posts_none() -> None:
    assert worth_posting(unsure(), "always")
    assert not worth_posting(make_triage(), "never")
    assert worth_posting(make_triage(), "useful")


def test_all_reasons_are_reported() -> None:
    assert posting_reasons(make_triage()) == [
        "advice for the stated fix pattern", "a relevant link", "specific missing information"]


def test_comment_for_a_low_confidence_issue_states_nothing() -> None:
    """Posted anyway (``always``), an unsure triage names no label to the reporter."""
    body = comment.render(unsure())
    main = body.split("<details>")[0]
    assert main.splitlines()[1] == comment.HEADING
    for name in ("Training", "Memory", "Constrained", "Optimize", "%"):
        assert name not in main
    assert comment.TIPS_HEADING not in body and comment.SIMILAR_HEADING not in body


def test_related_issues_stay_with_the_maintainers_even_when_nothing_else_is_said() -> None:
    """Posted under ``comment: always`` with nothing for the reporter, a thread nobody vouched
    for still waits in the maintainers' block (judged one by one, such threads were mostly
    another problem): the public part is the heading alone."""
    body = comment.render(unsure(similar=[similar(5, resolved=False, resolution="unresolved")]))
    public, details = body.split("<details>", 1)
    assert comment.RELATED_PUBLIC_HEADING not in public and "/issues/5" not in public
    assert sections.RELATED_HEADING in details and "/issues/5" in details


def test_related_issues_stay_with_the_maintainers_beside_a_stated_label() -> None:
    triage = make_triage()
    assert comment.RELATED_PUBLIC_HEADING not in comment.render(triage)


def test_a_related_thread_relevant_enough_for_the_reporter_shows_beside_a_stated_label() -> None:
    """An unresolved link that clears the reporter's higher bar (``for_reporter``) is shown above
    the fold even beside a stated label; the others stay in the maintainers' block."""
    near = similar(5, resolved=False, resolution="unresolved").model_copy(
        update={"for_reporter": True})
    far = similar(6, resolved=False, resolution="unresolved")
    body = comment.render(unsure(stage=prediction("S4", 0.95), similar=[near, far]))
    public, details = body.split("<details>", 1)
    assert comment.RELATED_PUBLIC_HEADING in public and "/issues/5" in public
    assert "/issues/6" not in public and "/issues/6" in details


def test_a_stated_fix_pattern_with_no_advice_for_it_is_not_worth_a_bare_heading() -> None:
    """The fix pattern's name is not shown to reporters (only the advice it grounds, which needs
    a stated stage); alone it would post a bare heading, read by maintainers as noise."""
    triage = unsure(repo="NVIDIA/Megatron-LM", fix_pattern=prediction("F2", 0.9))
    assert posting_reasons(triage) == [] and not worth_posting(triage)
    with_stage = triage.model_copy(update={"stage": prediction("S1", 0.95)})
    assert comment.tips(with_stage)
    assert posting_reasons(with_stage) == ["advice for the stated fix pattern"]


def test_a_fix_held_back_is_listed_for_maintainers_with_its_resolution() -> None:
    """A resolved issue below the fixes' own bar is not offered to the reporter (judged one by
    one, such fixes were another problem a third of the time) and earns no comment, but a
    maintainer sees it with its fix."""
    held = similar(5, resolution="Pinned torch to 2.1.").model_copy(update={"fix_held_back": True})
    triage = unsure(similar=[held])
    assert posting_reasons(triage) == [] and not worth_posting(triage)
    public, details = comment.render(triage).split("<details>", 1)
    assert comment.SIMILAR_HEADING not in public and "/issues/5" not in public
    assert sections.RELATED_FIXED_HEADING in details and "Pinned torch to 2.1." in details
    assert sections.RELATED_HEADING not in details
