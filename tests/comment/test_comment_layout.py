"""The layout of #11: a short block for the reporter with only what is stated, advice only on
grounds and in the framework's own terms, at most three requests that fit; a collapsed block for
maintainers with labels, evidence and what was held back; a length budget."""
from __future__ import annotations

import itertools

import pytest

from support.comment import make_triage, prediction, similar
from triagebot.comment import advice, sections
from triagebot.comment import render as comment
from triagebot.comment.plain import render_text
from triagebot.domain import missing
from triagebot.domain.environment import extract
from triagebot.domain.models import Environment, Labels, MissingInfo

MEGATRON = "NVIDIA/Megatron-LM"
COLOSSAL = "hpcaitech/ColossalAI"
DIMS = ("stage", "symptom", "root_cause", "fix_pattern")
GOOD = {"stage": ("S4", "Training & Evaluation"), "symptom": ("4.2", "Memory & offload issue"),
        "root_cause": ("R4.5", "Constrained resource and inefficient utilization"),
        "fix_pattern": ("F5", "Optimize memory, model, and data resources")}


def reporter_block(body: str) -> str:
    return body.split("<details>")[0]


def fixed_with(pattern: str, number: int = 1) -> object:
    hit = similar(number, resolution="Pinned torch to 2.1 and rebuilt.")
    return hit.model_copy(update={"labels": Labels(stage="S1", symptom="1.1", fix_pattern=pattern)})


@pytest.mark.parametrize("held", [c for n in range(1, 5) for c in itertools.combinations(DIMS, n)])
def test_held_back_dimensions_appear_only_in_the_maintainers_block(held: tuple[str, ...]) -> None:
    triage = make_triage(**{d: prediction(GOOD[d][0], 0.3, abstained=True) for d in held})
    main, details = comment.render(triage).split("<details>")
    for dim in held:
        label_id, name = GOOD[dim]
        assert name not in main and label_id not in main
        assert f"{name} (`{label_id}`, 30%)" in details
    assert sections.HELD_BACK_HEADING in details
    assert "Likely" not in main and "unsure" not in main and "%" not in main


def test_stated_labels_are_named_for_maintainers_not_above_the_fold() -> None:
    """Named above the fold, the labels told reporters what they had just written and, when
    wrong, were the harm in 2 of 3 zeros of maintainers' read M: they sit in the collapsed block."""
    main, details = comment.render(make_triage()).split("<details>")
    for name in ("Training & Evaluation", "Memory & offload issue", "`S4`", "%"):
        assert name not in reporter_block(main)
    assert "**Labels**: Training & Evaluation (`S4`, 91%), Memory & offload issue (`4.2`, " in details


def test_the_maintainers_block_holds_labels_evidence_environment_and_commands() -> None:
    details = comment.render(make_triage()).split("<details>")[1]
    assert details.index("**Labels**") < details.index("- Symptom: `torch.OutOfMemoryError")
    assert "**Detected environment**: `deepspeed 0.14.2, 8 GPUs`" in details  # a count says what it counts
    assert comment.FOOTER in details and "**Other candidates**: `4.3` 12%" not in details  # < 15%


# --- advice ---------------------------------------------------------------------------------

def test_no_advice_without_a_stated_fix_pattern_or_a_linked_fix() -> None:
    triage = make_triage(fix_pattern=prediction("F2", 0.2, abstained=True), similar=[])
    assert sections.tips(triage) == [] and comment.TIPS_HEADING not in comment.render(triage)


def test_linked_fixes_are_no_ground_for_general_advice() -> None:
    """The fixes of linked resolved issues are shown as they are; without a stated fix pattern no
    general advice is added beside them."""
    triage = make_triage(repo=MEGATRON, stage=prediction("S1", 0.9), symptom=prediction("1.1", 0.9),
                         fix_pattern=prediction("F5", 0.2, abstained=True),
                         similar=[fixed_with("F2", 1), fixed_with("F2", 2)])
    body = comment.render(triage)
    assert sections.tips(triage) == [] and comment.TIPS_HEADING not in body
    assert "Pinned torch to 2.1 and rebuilt." in body


def test_horovod_gets_no_torch_distributed_variables() -> None:
    triage = make_triage(repo="horovod/horovod", stage=prediction("S2", 0.9),
                         symptom=prediction("2.1", 0.9), root_cause=prediction("R2.1", 0.9),
                         fix_pattern=prediction("F1", 0.9), similar=[])
    assert not any("MASTER_ADDR" in t for t in sections.tips(triage))


def test_megatron_issues_never_hear_of_ds_report() -> None:
    triage = make_triage(repo=MEGATRON, stage=prediction("S1", 0.9), symptom=prediction("1.1", 0.9),
                         root_cause=prediction("R1.1", 0.9), fix_pattern=prediction("F2", 0.9),
                         similar=[], missing_info=missing.missing_info(
                             "pip install fails with an error", extract("x"), "S1", False,
                             framework="megatron"))
    body = comment.render(triage)
    assert "ds_report" not in body and "ds\\_report" not in body and "DeepSpeed" not in body
    assert "Transformer Engine" in body


def test_python_import_errors_get_no_cuda_advice() -> None:
    triage = make_triage(stage=prediction("S1", 0.9), symptom=prediction("1.2", 0.9),
                         root_cause=prediction("R1.1", 0.9), fix_pattern=prediction("F2", 0.9),
                         similar=[], missing_info=[MissingInfo(key="cuda", description="CUDA")])
    body = comment.render(triage)
    assert "nvcc" not in body and "CUDA" not in reporter_block(body)


def test_import_errors_get_no_version_advice_that_assumes_a_moved_name() -> None:
    """'Compare pip list with the release the code was written for' was wrong on 4 of the 11
    reports it was shown on: a package never installed, a kernel not built, an undefined symbol.
    The certain case, ``cannot import name``, is the import_name diagnosis."""
    for repo in ("deepspeedai/DeepSpeed", COLOSSAL, "pytorch/pytorch", "horovod/horovod"):
        triage = make_triage(repo=repo, stage=prediction("S1", 0.9), symptom=prediction("1.2", 0.9),
                             root_cause=prediction("R1.1", 0.9),
                             fix_pattern=prediction("F2", 0.9), similar=[])
        assert "pip list" not in " ".join(sections.tips(triage))


def test_build_failures_get_no_cuda_version_advice_without_a_shown_mismatch() -> None:
    """Shown on every F2 build failure, the CUDA-version tips were wrong on 24 of 47 showings
    (Windows, libaio, a missing op_builder, GCC, packaging; twice versions the report showed to
    match). A mismatch the report shows is the cuda_mismatch diagnosis."""
    build = dict(stage=prediction("S1", 0.9), symptom=prediction("1.1", 0.9),
                 root_cause=prediction("R1.1", 0.9), fix_pattern=prediction("F2", 0.9), similar=[])
    for repo in ("deepspeedai/DeepSpeed", COLOSSAL, "horovod/horovod", "pytorch/pytorch"):
        tips = " ".join(sections.tips(make_triage(repo=repo, **build)))
        assert "torch.version.cuda" not in tips and "colossalai check" not in tips, repo
        assert "torch_extensions" not in tips, repo


def test_every_tip_names_where_it_applies() -> None:
    """Advice that fits any report of a fix pattern ("reduce it to a minimal script", "pin your
    versions") helped none of the reports it was shown on."""
    assert all(tip.specificity for tip in advice.TIPS)
    assert not [tip for tip in advice.TIPS if tip.pattern == "F6"]


def test_nccl_errors_are_not_told_to_pick_a_network_interface() -> None:
    """A maintainer scored 0 the NCCL_SOCKET_IFNAME tip on what was an NCCL version bug; F1 with
    an NCCL symptom was fixed by choosing the interface in 5 of 11 resolved shared issues."""
    for repo, stage, symptom, fix in (("NVIDIA-NeMo/Speech", "S2", "2.2", "F1"),
                                      ("pytorch/pytorch", "S4", "4.7", "F1"),
                                      ("pytorch/pytorch", "S2", "2.2", "F4"),
                                      ("pytorch/pytorch", "S4", "4.7", "F4")):
        triage = make_triage(repo=repo, stage=prediction(stage, 0.9),
                             symptom=prediction(symptom, 0.9), root_cause=prediction("R2.2", 0.9),
                             fix_pattern=prediction(fix, 0.9), similar=[])
        assert "NCCL_SOCKET_IFNAME" not in " ".join(sections.tips(triage))


def test_torchrun_advice_only_when_the_report_runs_torchrun() -> None:
    """Shown to reports naming no launcher (Lightning on SLURM, a bare init_method), the torchrun
    flags tip fitted none of the 4."""
    setup = dict(repo="pytorch/pytorch", stage=prediction("S2", 0.9), symptom=prediction("2.1", 0.9),
                 root_cause=prediction("R2.1", 0.9), fix_pattern=prediction("F1", 0.9), similar=[])
    assert not any("--nnodes" in t for t in sections.tips(make_triage(**setup)))
    torchrun = make_triage(**setup, environment=extract("torchrun --nnodes 2 --nproc_per_node 8 x.py"))
    assert any("--nnodes" in t for t in sections.tips(torchrun))


def test_colossal_ai_memory_advice_names_its_plugins_not_zero_config() -> None:
    tips = " ".join(sections.tips(make_triage(repo=COLOSSAL, similar=[])))
    assert "GeminiPlugin" in tips and "gradient_accumulation_steps" not in tips


def test_launcher_advice_only_for_the_launcher_the_report_uses() -> None:
    setup = dict(repo=COLOSSAL, stage=prediction("S2", 0.9), symptom=prediction("2.1", 0.9),
                 root_cause=prediction("R2.1", 0.9), fix_pattern=prediction("F1", 0.9), similar=[])
    torch_launch = make_triage(**setup, environment=extract(
        "python -m torch.distributed.launch --nproc_per_node 2 run.py"))
    assert not any("colossalai run" in t for t in sections.tips(torch_launch))
    ssh = make_triage(**setup, environment=extract("colossalai run --hostfile h train.py"))
    assert "colossalai run" in sections.tips(ssh)[0]


def test_at_most_one_tip_beside_a_linked_fix() -> None:
    launch = dict(stage=prediction("S2", 0.95), symptom=prediction("2.1", 0.9),
                  fix_pattern=prediction("F1", 0.9),
                  environment=Environment(framework="deepspeed", launcher="deepspeed"))
    assert len(sections.tips(make_triage(similar=[], **launch))) == 2
    assert len(sections.tips(make_triage(similar=[similar(1)], **launch))) == 1


def test_no_advice_without_a_stated_stage_and_no_generic_tip_beside_a_specific_one() -> None:
    assert sections.tips(make_triage(similar=[], stage=prediction("S4", 0.3, abstained=True))) == []
    tips = sections.tips(make_triage(similar=[]))  # F5 in a DeepSpeed training report
    assert len(tips) == 1 and "gradient_accumulation_steps" in tips[0]


# --- what to add ------------------------------------------------------------------------------

def test_at_most_three_requests() -> None:
    many = [MissingInfo(key=k, description=k) for k in ("traceback", "config", "ds_report",
                                                         "versions", "hardware", "repro")]
    triage = make_triage(missing_info=many)
    assert len(sections.asked_missing(triage)) == 3
    assert comment.render(triage).count("- [ ] ") == 3


def test_requests_fit_what_is_stated() -> None:
    items = [MissingInfo(key=k, description=k) for k in
             ("launcher_command", "hardware", "traceback", "versions", "cuda")]
    unstated = make_triage(stage=prediction("S2", 0.3, abstained=True),
                           symptom=prediction("2.1", 0.2, abstained=True), missing_info=items)
    assert [m.key for m in sections.asked_missing(unstated)] == ["traceback", "versions"]
    setup = make_triage(stage=prediction("S2", 0.9), symptom=prediction("2.1", 0.9),
                        root_cause=prediction("R2.1", 0.9), missing_info=items)
    assert [m.key for m in sections.asked_missing(setup)] == ["launcher_command", "traceback", "versions"]
    nccl = setup.model_copy(update={"symptom": prediction("2.2", 0.9)})
    assert [m.key for m in sections.asked_missing(nccl)] == ["launcher_command", "hardware", "traceback"]
    question = make_triage(is_bug=prediction("no", 0.9), missing_info=items)
    assert sections.asked_missing(question) == []


@pytest.mark.parametrize("text", [
    "Training hangs after 100 steps, there is no error and no traceback, GPU util stays at 100%.",
    "The job fails.\n```\n[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective "
    "operation timeout\n```",
    "It crashes silently, nothing is printed.",
])
def test_never_asks_for_a_traceback_the_reporter_gave_or_said_there_is_none(text: str) -> None:
    keys = [i.key for i in missing.missing_info(text, extract(text), "S4", True)]
    assert "traceback" not in keys


def test_never_asks_for_versions_already_given() -> None:
    for text in ("deepspeed 0.14.2 and torch 2.3.0 fail with an error",
                 "Running in nvcr.io/nvidia/pytorch:25.06-py3 the build fails with an error",
                 "Megatron-LM in the NGC PyTorch 24.10 container fails with an error"):
        keys = [i.key for i in missing.missing_info(text, extract(text), "S1", False, "megatron")]
        assert "versions" not in keys, text


def test_plain_text_view_follows_the_same_rules() -> None:
    triage = make_triage(fix_pattern=prediction("F5", 0.9, abstained=True), similar=[],
                         missing_info=[MissingInfo(key=k, description=f"ask {k}") for k in
                                       ("traceback", "config", "ds_report", "versions")])
    text = render_text(triage)
    assert "What to try first" not in text
    assert "ask versions" not in text and text.count("  - ask ") == 3
    assert "would comment (comment: useful): yes" in text
    silent = triage.model_copy(update={d: prediction("S4" if d == "stage" else "4.2", 0.1, abstained=True)
                                       for d in ("stage", "symptom")})
    silent = silent.model_copy(update={"root_cause": prediction("R4.5", 0.1, abstained=True),
                                       "missing_info": []})
    assert "would comment (comment: useful): no" in render_text(silent)
    assert "would label: no" in render_text(silent) and "would label: yes" in text
    assert "Stage:        unsure (best guess Training & Evaluation (S4), 10%)" in render_text(silent)


# --- length -----------------------------------------------------------------------------------

def long_triage():
    resolution = ("The reporter pinned the framework to the previous release and rebuilt the ops "
                  "against the toolkit PyTorch was built with, after which the job ran.")  # ~p75
    title = "ZeRO-3 run crashes with CUDA out of memory at the first backward pass on 8 GPUs"
    hits = [similar(n, title=title, resolution=resolution) for n in (1, 2)]
    hits.append(similar(3, title=title, resolved=False, resolution="unresolved"))
    items = [MissingInfo(key=k, description=missing.DESCRIPTIONS[k])
             for k in ("traceback", "config", "ds_report")]
    return make_triage(similar=hits, missing_info=items)


def test_a_full_comment_sheds_its_least_useful_parts_to_stay_under_1500_characters() -> None:
    triage = long_triage()
    body = comment.render(triage)
    assert len(body) < comment.TARGET_CHARS
    unbounded = comment._compose(triage, frozenset(), "full")
    assert len(unbounded) > comment.TARGET_CHARS
    assert "**Detected environment**" in unbounded and "**Detected environment**" not in body
    # what the reporter needs stays: the fixes, the request list, the maintainers' labels
    assert body.count("Pinned") + body.count("pinned the framework") >= 2
    assert body.count("- [ ] ") == 3 and "**Labels**" in body and comment.FOOTER in body


def test_a_comment_over_the_budget_anyway_keeps_the_related_titles_first_words() -> None:
    """Bare numbers are the last resort, taken only where they bring the comment under the
    budget: a comment that stays over it keeps the start of each related title."""
    triage = long_triage()
    resolution = triage.similar[0].resolution * 2
    fixes = [hit.model_copy(update={"resolution": resolution}) for hit in triage.similar[:2]]
    more = [similar(n, title="ZeRO-3 hangs at the first all-gather on 8 nodes", resolved=False,
                    resolution="unresolved") for n in (4, 5)]
    triage = triage.model_copy(update={"similar": [*fixes, *more]})
    body = comment.render(triage, allowed_repos=frozenset({"microsoft/DeepSpeed"}))
    assert len(body) > comment.TARGET_CHARS  # over it even with everything else shed
    assert "issues/4) ZeRO-3 hangs at the first" in body


def test_a_short_comment_loses_nothing() -> None:
    body = comment.render(make_triage())
    assert len(body) < comment.TARGET_CHARS
    assert body == comment._compose(make_triage(), frozenset({"microsoft/DeepSpeed"}), "full")
