"""What the comment asks, as the reporter reads it: the symptom's own requests with their commands
as code spans, no checklist or debugging advice on a feature or roadmap issue, and a request the
reporter's own error calls for is reason enough to comment."""
from __future__ import annotations

from support.comment import make_triage, prediction
from triagebot.comment import render as comment
from triagebot.comment import sections
from triagebot.comment.plain import render_text
from triagebot.comment.posting import posting_reasons, worth_posting
from triagebot.domain import missing
from triagebot.domain.environment import extract
from triagebot.domain.models import MissingInfo

HANG = "Training on 2 nodes hangs after a while with ZeRO-3; GPU utilization stays at 100%."


def hang_triage(text: str = HANG, **overrides):  # type: ignore[no-untyped-def]
    items = missing.missing_info(text, extract(text), "S4", True, framework="deepspeed")
    fields = dict(symptom=prediction("4.11", 0.95), root_cause=prediction("R4.7", 0.3, abstained=True),
                  fix_pattern=prediction("F4", 0.3, abstained=True), similar=[], missing_info=items)
    fields.update(overrides)
    return make_triage(**fields)


def reporter_block(body: str) -> str:
    return body.split("<details>")[0]


def test_a_hang_comment_asks_for_stacks_and_the_nccl_log_as_code() -> None:
    body = reporter_block(comment.render(hang_triage()))
    assert "- [ ] A stack of every rank while it hangs: `py-spy dump --pid PID`" in body
    assert "`NCCL_DEBUG=INFO`" in body
    assert "ds\\_report" not in body and "config JSON" not in body
    assert body.count("- [ ] ") == 2


def test_a_hang_comment_does_not_ask_for_the_nccl_log_it_was_given() -> None:
    pasted = HANG + "\n```\nnode1:1:1 [0] NCCL INFO Channel 00/02 : 0 1\n```"
    body = reporter_block(comment.render(hang_triage(pasted)))
    assert "py-spy" in body and "NCCL\\_DEBUG" not in body and "NCCL_DEBUG" not in body


def test_the_plain_text_view_shows_the_commands_without_backticks() -> None:
    text = render_text(hang_triage())
    assert "py-spy dump --pid PID" in text and "`py-spy" not in text


def test_a_stored_request_is_escaped_not_rendered_as_code() -> None:
    stored = make_triage(missing_info=[MissingInfo(key="stacks", description="run `rm -rf /`"),
                                       MissingInfo(key="memory", description="x")],
                         symptom=prediction("4.11", 0.95))
    body = comment.render(stored)
    assert "run \\`rm -rf /\\`" in body and "`rm -rf /`" not in body.replace("\\`", "")


def test_a_feature_request_gets_no_checklist_and_no_debugging_advice() -> None:
    for title in ("[FEATURE]: FP8 in the MoE layer", "[Roadmap] Q3 plans", "Add a sharded saver"):
        triage = hang_triage(title=title, fix_pattern=prediction("F4", 0.9))
        assert sections.tips(triage) == [] and sections.asked_missing(triage) == []
        body = comment.render(triage)
        assert comment.MISSING_HEADING not in body and comment.TIPS_HEADING not in body
    bug = hang_triage(title="[BUG]: training hangs", fix_pattern=prediction("F4", 0.9))
    assert sections.tips(bug) and sections.asked_missing(bug)


def test_a_device_side_assert_request_alone_is_worth_a_comment() -> None:
    text = "Training crashes.\n```\nRuntimeError: CUDA error: device-side assert triggered\n```"
    unsure = {d: prediction("S4" if d == "stage" else "4.3", 0.2, abstained=True)
              for d in ("stage", "symptom")}
    triage = make_triage(**unsure, root_cause=prediction("R4.4", 0.2, abstained=True),
                         fix_pattern=prediction("F6", 0.2, abstained=True), similar=[],
                         missing_info=missing.missing_info(text, extract(text), None, True))
    assert posting_reasons(triage) == ["specific missing information"] and worth_posting(triage)
    assert "`CUDA_LAUNCH_BLOCKING=1`" in comment.render(triage)


def test_horovod_install_failures_are_not_told_to_reinstall() -> None:
    """Reinstalling with ``--no-cache-dir`` fixed none of the 11 Horovod build and import reports
    it was shown on (MPI, GCC, CUDA/NCCL paths) and once repeated the reporter's own command."""
    for symptom in ("1.1", "1.2"):
        build = dict(repo="horovod/horovod", stage=prediction("S1", 0.9),
                     symptom=prediction(symptom, 0.9), root_cause=prediction("R1.1", 0.9),
                     fix_pattern=prediction("F2", 0.9), similar=[])
        assert "no-cache-dir" not in " ".join(sections.tips(make_triage(**build)))


def test_a_yaml_config_block_counts_as_the_config_shown() -> None:
    text = ("FSDP with offload crashes with an error. The FSDP config lives in config.yaml:\n"
            "```\ncompute_environment: LOCAL_MACHINE\n```")
    assert "config" not in [i.key for i in missing.missing_info(text, extract(text), "S4", True)]
    inline = ("ZeRO offload fails with an error:\n```\ndistributed_type: DEEPSPEED\n"
              "mixed_precision: bf16\nnum_processes: 8\n```")
    assert "config" not in [i.key for i in missing.missing_info(inline, extract(inline), "S4", True)]
    assert "config" in [i.key for i in missing.missing_info(
        "ZeRO offload fails with an error.", extract("x"), "S4", True)]
