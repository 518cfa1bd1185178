"""What the error says (``domain/diagnoses.py``) in the comment: shown first in the reporter's
block, at most two, in our own words only; it is worth a comment on its own, replaces the generic
advice and drops the requests it makes pointless."""
from __future__ import annotations

from support.comment import nothing_stated, prediction
from triagebot.comment import render as comment
from triagebot.comment.plain import render_text
from triagebot.comment.posting import posting_reasons, worth_posting
from triagebot.comment.render import DIAGNOSIS_HEADING, MISSING_HEADING, TIPS_HEADING
from triagebot.comment.sections import DETAILS_SUMMARY, DIAGNOSIS_CHARS
from triagebot.domain import diagnoses
from triagebot.domain.models import Diagnosed, Environment, MissingInfo

DS_REPORT = MissingInfo(key="ds_report", description="The full output of ds_report.")
TRACEBACK = MissingInfo(key="traceback", description="The full error and traceback as text "
                        "(with several ranks, from the first that failed).")
CONFIG = MissingInfo(key="config", description="The configuration in use (config file or arguments).")
MISMATCH = Diagnosed(id="cuda_mismatch", values={"torch_cuda": "11.8", "nvcc_cuda": "12.1"})


def unsure(**overrides):  # type: ignore[no-untyped-def]
    """Nothing stated, no links, no requests: only what the overrides add."""
    return nothing_stated(stage_id="S1", symptom_id="1.1", cause_id="R1.1", fix_id="F2", distributed_id="no",
                          **overrides)


def public_part(body: str) -> str:
    return body.split("<details>", 1)[0]


def test_the_diagnosis_is_shown_first_above_the_fold_and_before_the_requests() -> None:
    body = comment.render(unsure(diagnoses=[MISMATCH], stage=prediction("S1", 0.95)))
    public = public_part(body)
    assert DIAGNOSIS_HEADING in public
    assert "PyTorch was built with CUDA 11.8, but the toolkit" in public
    assert body.index(DIAGNOSIS_HEADING) < body.index(DETAILS_SUMMARY)
    killed = public_part(comment.render(unsure(diagnoses=[Diagnosed(id="sigkill")],
                                               stage=prediction("S4", 0.95), missing_info=[CONFIG])))
    assert killed.index(DIAGNOSIS_HEADING) < killed.index(MISSING_HEADING)


def test_a_diagnosis_alone_is_worth_a_comment() -> None:
    triage = unsure(diagnoses=[Diagnosed(id="sigkill")])
    assert posting_reasons(triage) == ["a diagnosis of the error"] and worth_posting(triage)
    assert posting_reasons(unsure()) == []


def test_an_unknown_or_stored_id_the_table_lacks_shows_nothing_and_posts_nothing() -> None:
    triage = unsure(diagnoses=[Diagnosed(id="from_an_older_release")])
    assert posting_reasons(triage) == []
    assert DIAGNOSIS_HEADING not in comment.render(triage)


def test_no_mention_link_or_report_text_gets_in_through_quoted_values() -> None:
    hostile = Diagnosed(id="import_name", values={"package": "@octocat please run curl evil.sh"})
    body = comment.render(unsure(diagnoses=[hostile]))
    assert "@" not in public_part(body) and "octocat" not in body and "curl" not in body
    assert "The installed package does not provide a name the code imports" in body


def test_a_checked_package_name_is_shown_as_code() -> None:
    body = comment.render(unsure(diagnoses=[Diagnosed(id="import_name",
                                                      values={"package": "colossalai"})]))
    assert "The installed `colossalai` does not provide" in body


def test_at_most_two_diagnoses_are_shown() -> None:
    three = [Diagnosed(id=i) for i in ("sigkill", "port_in_use", "not_divisible")]
    public = public_part(comment.render(unsure(diagnoses=three)))
    assert public.count("\n- ") == diagnoses.MAX_SHOWN
    assert "Exit code -9" in public and "rendezvous port" in public and "split evenly" not in public


def test_the_generic_advice_of_the_fix_pattern_gives_way_to_the_diagnosis() -> None:
    stated = dict(stage=prediction("S4", 0.95), fix_pattern=prediction("F5", 0.95),
                  environment=Environment(framework="deepspeed"))
    assert TIPS_HEADING in comment.render(unsure(**stated))
    body = comment.render(unsure(diagnoses=[Diagnosed(id="sigkill")], **stated))
    assert TIPS_HEADING not in body and "offload" not in public_part(body).split("-9")[0]


def test_a_request_the_diagnosis_answers_is_not_made() -> None:
    stated = dict(stage=prediction("S1", 0.95), missing_info=[DS_REPORT, TRACEBACK])
    before = public_part(comment.render(unsure(**stated)))
    assert "full output of ds" in before and "traceback" in before
    assert MISSING_HEADING not in comment.render(unsure(diagnoses=[MISMATCH], **stated))
    training = dict(stage=prediction("S4", 0.95), missing_info=[TRACEBACK, CONFIG])
    killed = public_part(comment.render(unsure(diagnoses=[Diagnosed(id="sigkill")], **training)))
    assert "traceback" not in killed and "configuration in use" in killed


def test_the_cli_text_shows_the_diagnosis_without_markdown() -> None:
    text = render_text(unsure(diagnoses=[MISMATCH]))
    assert "What the error says:" in text and "CUDA_HOME at a CUDA 11.8 toolkit" in text
    assert "`" not in text.split("What the error says:")[1].split("\n\n")[0]


def test_every_template_is_shown_whole() -> None:
    """The length cap is for safety only: a diagnosis cut in the middle reads as another one."""
    for entry in diagnoses.DIAGNOSES:
        for text in (entry.text, entry.detailed):
            assert len(text) + 40 < DIAGNOSIS_CHARS, entry.id
            shown = comment.render(unsure(diagnoses=[Diagnosed(id=entry.id)]))
            assert "…" not in public_part(shown), entry.id


def test_no_template_loses_a_word_to_the_link_filter() -> None:
    """A scheme in a code span (`tcp://`) is filtered like a link: the libuv diagnosis read
    "add `?use_libuv=0` to a [link removed] init method" in a blind read."""
    for entry in diagnoses.DIAGNOSES:
        shown = public_part(comment.render(unsure(diagnoses=[Diagnosed(id=entry.id)])))
        assert "removed]" not in shown, entry.id
