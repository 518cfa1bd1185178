"""Requests keyed by symptom: what tells the causes of *this* symptom apart, asked only for a
symptom the comment states (or its confident top choice in the stated stage), never for what the
report already contains, at most three, and none on feature, documentation or roadmap issues."""
from __future__ import annotations

import pytest

from triagebot.domain import missing, symptom_requests
from triagebot.domain.environment import extract
from triagebot.domain.models import MissingInfo, Prediction, Triage


def _p(label_id: str, confidence: float = 0.95, abstained: bool = False) -> Prediction:
    return Prediction(id=label_id, name=label_id, confidence=confidence, abstained=abstained)


def triage_of(text: str, stage: str | None, symptom: str | None, *, framework: str | None = None,
              title: str = "", symptom_confidence: float = 0.95, forced_symptom: str = "4.3",
              distributed: bool = True) -> Triage:
    """The engine's triage of ``text``: ``missing_info`` read from the text, with the given stage
    and symptom stated (None: abstained; the symptom's top choice is then ``forced_symptom``)."""
    items = missing.missing_info(text, extract(text), stage, distributed, framework=framework)
    return Triage(
        title=title,
        stage=_p(stage) if stage else _p("S4", 0.3, abstained=True),
        symptom=_p(symptom) if symptom else _p(forced_symptom, symptom_confidence, abstained=True),
        root_cause=_p("unknown", 0.0, abstained=True), fix_pattern=_p("unknown", 0.0, abstained=True),
        distributed_specific=_p("yes" if distributed else "no"), is_bug=_p("yes", 0.9),
        missing_info=items)


def asked(text: str, stage: str | None, symptom: str | None, **kw) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.key for m in missing.asked_in_comment(triage_of(text, stage, symptom, **kw))]


def described(text: str, stage: str | None, symptom: str | None, **kw) -> str:  # type: ignore[no-untyped-def]
    return " ".join(m.description for m in missing.asked_in_comment(triage_of(text, stage, symptom, **kw)))


HANG = "ZeRO-3 training on 2 nodes hangs after a while, GPU utilization stays at 100%."


def test_a_hang_report_gets_the_py_spy_and_nccl_debug_requests() -> None:
    assert asked(HANG, "S4", "4.11") == ["stacks", "nccl_debug"]
    text = described(HANG, "S4", "4.11")
    assert "py-spy dump" in text and "NCCL_DEBUG=INFO" in text
    assert "same step" in text  # the report does not say where it stops
    assert "ds_report" not in text and "versions" not in text


def test_a_hang_report_that_pasted_nccl_debug_output_is_not_asked_for_it() -> None:
    pasted = HANG + "\n```\nnode1:123:456 [0] NCCL INFO Channel 00/02 : 0 1\n```"
    assert asked(pasted, "S4", "4.11") == ["stacks"]
    said = HANG + " I already ran with NCCL_DEBUG=INFO and saw nothing unusual."
    assert "nccl_debug" not in asked(said, "S4", "4.11")


def test_a_hang_report_with_py_spy_stacks_is_not_asked_for_them() -> None:
    dumped = HANG + "\npy-spy dump of rank 0:\nThread 1234 (active): \"MainThread\"\n"
    assert "stacks" not in asked(dumped, "S4", "4.11")


def test_a_hang_report_saying_where_it_stops_is_not_asked_whether_it_is_the_same_step() -> None:
    text = "Training hangs at step 4200 every time, on 8 GPUs."
    assert "same step" not in described(text, "S4", "4.11")


def test_an_nccl_timeout_gets_the_nccl_log_and_launch_command() -> None:
    text = "Multi-node training fails: the NCCL watchdog times out on the first all_reduce."
    assert asked(text, "S2", "2.2") == ["nccl_debug", "launcher_command", "hardware"]


@pytest.mark.parametrize("error", ["RuntimeError: CUDA error: device-side assert triggered",
                                   "CUDA error: an illegal memory access was encountered"])
def test_a_device_side_assert_gets_the_cuda_launch_blocking_request_whatever_is_stated(
        error: str) -> None:
    text = (f"Training crashes at step 3.\n```\n{error}\nCUDA kernel errors might be asynchronously "
            "reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.\n```")
    assert asked(text, None, None)[0] == "launch_blocking"  # the CUDA message's own hint is no run
    assert asked(text, "S4", "4.3") == ["launch_blocking"]
    assert "CUDA_LAUNCH_BLOCKING=1" in described(text, None, None)
    ran = text + "\nWith CUDA_LAUNCH_BLOCKING=1 the error points at the embedding lookup."
    assert "launch_blocking" not in asked(ran, "S4", "4.3")


def recorded(text: str, stage: str, framework: str | None = None) -> dict[str, str]:
    items = missing.missing_info(text, extract(text), stage, True, framework=framework)
    return {i.key: i.description for i in items}


def test_an_oom_report_records_only_the_memory_facts_it_lacks_and_asks_none() -> None:
    """The GPU-memory request was wrong in 5 of 5 judged comments (leaks, questions about a
    documented figure, stock scripts whose arguments fix the batch): recorded, never asked."""
    bare = "Fine-tuning with ZeRO-3 runs out of memory."
    full = recorded(bare, "S4", "deepspeed")["memory"]
    assert "per-GPU memory" in full and "model's size" in full and "micro-batch" in full
    assert "ZeRO stage" not in full  # the stage is named
    assert "memory" not in asked(bare, "S4", "4.2", framework="deepspeed")
    told = ("Llama-2-13B with ZeRO stage 3, micro batch size 4, runs out of memory: torch.cuda."
            "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
    assert "memory" not in recorded(told, "S4", "deepspeed")


def test_a_memory_leak_is_not_asked_for_the_out_of_memory_line_or_the_batch_size() -> None:
    leak = ("ZeRO stage 3 memory leak: GPU memory usage starts at ~6G but keeps climbing; after "
            "~100 steps my 2080ti hits CUDA out of memory.")
    assert "memory" not in asked(leak, "S4", "4.2", framework="deepspeed")


def test_memory_requests_use_the_frameworks_and_the_stages_terms() -> None:
    bare = "Running out of GPU memory."
    assert "tensor/pipeline parallel sizes and recompute" in recorded(bare, "S4", "megatron")["memory"]
    assert "placement or offload" in recorded(bare, "S4", "colossalai")["memory"]
    assert "init_inference" in recorded(bare, "S5", "deepspeed")["memory"]


def test_a_host_memory_kill_asks_for_dmesg_not_for_gpu_memory() -> None:
    text = "While partitioning the optimizer states the CPU runs out of memory and the job dies."
    assert asked(text, "S4", "4.2", framework="deepspeed") == ["host_memory"]
    assert "dmesg" in described(text, "S4", "4.2", framework="deepspeed")


def test_a_divergence_report_is_asked_for_a_comparison_run_in_its_frameworks_terms() -> None:
    text = "With bf16 the loss becomes nan after 2k steps."
    assert asked(text, "S4", "4.1", framework="deepspeed") == ["baseline_run"]
    assert "ZeRO stage 0" in described(text, "S4", "4.1", framework="deepspeed")
    assert "TorchDDPPlugin" in described(text, "S4", "4.1", framework="colossalai")
    assert "parallel size 1" in described(text, "S4", "4.1", framework="megatron")
    compared = "The loss diverges with ZeRO-3 but converges with plain DDP."
    assert described(compared, "S4", "4.1", framework="deepspeed").startswith("The loss curve")
    shown = compared + "\n| step | loss |\n| 1 | 2.3 |\n"
    assert "baseline_run" not in asked(shown, "S4", "4.1", framework="deepspeed")


def test_a_slow_training_report_is_asked_for_numbers_and_a_profile() -> None:
    assert asked("Training is much slower with ZeRO-3.", "S4", "4.1") == ["perf_numbers", "profile"]
    measured = "Training reaches only 130 TFLOPS per GPU on H100."
    assert asked(measured, "S4", "4.1") == ["profile"]


def test_a_build_failure_without_compiler_output_is_asked_for_the_build_log() -> None:
    text = "pip install horovod fails: Command errored out with exit status 1."
    keys = asked(text, "S1", "1.1", framework="horovod", distributed=False)
    assert keys[0] == "build_log" and len(keys) <= 3
    assert "pip install -v --no-cache-dir horovod" in described(
        text, "S1", "1.1", framework="horovod", distributed=False)
    shown = text + "\n```\ncsrc/adam.cu(12): error: identifier \"__half\" is undefined\n```"
    assert "build_log" not in asked(shown, "S1", "1.1", framework="horovod", distributed=False)


def test_an_import_error_is_asked_for_pip_list() -> None:
    text = "ImportError: cannot import name 'DeepSpeedPlugin' from 'accelerate'"
    assert asked(text, "S1", "1.2", framework="deepspeed", distributed=False) == ["pip_list"]
    assert "pip list" in described(text, "S1", "1.2", framework="deepspeed", distributed=False)
    listed = text + "\npip list: deepspeed 0.9.0, torch 2.0.1, accelerate 0.10.0"
    assert "pip_list" not in asked(listed, "S1", "1.2", framework="deepspeed", distributed=False)


def test_a_checkpoint_report_is_asked_for_the_parallel_sizes_at_save_and_load() -> None:
    text = "Loading the checkpoint fails with a size mismatch for the embedding weight."
    assert asked(text, "S4", "4.10", framework="megatron")[0] == "ckpt_parallel"
    assert "--tensor-model-parallel-size" in described(text, "S4", "4.10", framework="megatron")
    sized = text + " It was saved with TP=2 and is loaded with TP=1."
    assert "ckpt_parallel" not in asked(sized, "S4", "4.10", framework="megatron")


def test_wrong_inference_output_is_asked_for_the_same_prompt_without_the_wrapper() -> None:
    text = "init_inference with kernel injection generates garbage text."
    assert asked(text, "S5", "5.3", framework="deepspeed") == ["baseline_output"]
    assert "replace_with_kernel_inject=False" in described(text, "S5", "5.3", framework="deepspeed")


CHECKPOINT = "Loading the checkpoint fails with a size mismatch for the embedding weight."


def test_symptom_requests_need_a_stated_or_confident_symptom() -> None:
    # nothing stated: the symptom's requests stay unasked (the generic fallback may remain)
    assert not set(asked(CHECKPOINT, None, None, forced_symptom="4.10")) & symptom_requests.KEYS
    # stage stated, symptom not: only a confident top choice inside that stage keys requests
    confident = asked(CHECKPOINT, "S4", None, forced_symptom="4.10", symptom_confidence=0.9)
    assert confident[0] == "ckpt_parallel"
    unsure = asked(CHECKPOINT, "S4", None, forced_symptom="4.10",
                   symptom_confidence=missing.REQUEST_CONFIDENCE - 0.1)
    assert not set(unsure) & symptom_requests.KEYS
    outside = asked(CHECKPOINT, "S5", None, forced_symptom="4.10", symptom_confidence=0.99)
    assert not set(outside) & symptom_requests.KEYS
    # a confident top choice of another symptom is kept over a hang in the text
    assert asked(HANG, "S4", None, forced_symptom="4.2", symptom_confidence=0.9) != ["stacks", "nccl_debug"]


def test_symptom_requests_replace_the_generic_checklist_and_stay_at_three() -> None:
    text = ("Training hangs and then the NCCL watchdog times out. The program fails with an "
            "error.")
    items = missing.missing_info(text, extract(text), "S4", True, framework="deepspeed")
    assert {"ds_report", "traceback"} <= {i.key for i in items}  # recorded for the review page
    keys = asked(text, "S4", "4.7", framework="deepspeed")
    assert keys == ["nccl_debug", "stacks", "traceback"] and "ds_report" not in keys


def test_a_roadmap_or_feature_issue_gets_no_checklist() -> None:
    for title in ("[Roadmap] Colossal-AI Q3", "[FEATURE]: FP8 support", "Add a sharded saver",
                  "[REQUEST] universal checkpoint for ZeRO-1", "TODO: pipeline schedules"):
        assert missing.asked_in_comment(triage_of(title + "\nit fails with an error", "S4", "4.3",
                                                  title=title)) == [], title
    roadmap = "Plans for the next release\n- [ ] FP8\n- [ ] MoE\n- [ ] context parallel\n"
    assert missing.missing_info(roadmap, extract(roadmap), "S4", True) == []
    template = ("Support for X\n### 🚀 The feature, motivation and pitch\nIt would help to train "
                "larger models; it fails with an error today.")
    assert missing.missing_info(template, extract(template), "S4", True) == []


def test_a_bug_report_with_its_templates_checkboxes_still_gets_requests() -> None:
    text = ("[BUG]: training hangs\n- [x] Searched the existing issues\n- [x] Checked the latest "
            "main branch\n" + HANG)
    assert asked(text, "S4", "4.11", title="[BUG]: training hangs") == ["stacks", "nccl_debug"]


def test_every_request_template_is_short_plain_text_with_balanced_code_spans() -> None:
    texts = symptom_requests.all_descriptions()
    assert {symptom_requests.describe(k, None) for k in symptom_requests.KEYS} <= texts
    for text in texts:
        assert len(text) <= 200 and text.count("`") % 2 == 0, text
        assert "http" not in text and "@" not in text and "#" not in text, text


def test_a_stored_description_is_not_a_template() -> None:
    assert missing.is_template(MissingInfo(key="stacks", description=symptom_requests.describe(
        "stacks", None)))
    assert not missing.is_template(MissingInfo(key="stacks", description="run `rm -rf /`"))
    assert missing.is_template(MissingInfo(key="config", description=missing.describe(
        "config", "deepspeed")))


def test_pips_error_summary_is_not_the_build_log() -> None:
    text = ("Installing horovod fails:\n```\nsubprocess.CalledProcessError: Command '['cmake', "
            "'--build', '.']' returned non-zero exit status 2.\nERROR: Command errored out with "
            "exit status 1: python setup.py install\n```")
    assert "build_log" in asked(text, "S1", "1.1", framework="horovod", distributed=False)


def test_a_failed_install_is_not_asked_for_the_frameworks_own_report_tool() -> None:
    """ds_report and horovodrun --check-build cannot run before the package installs."""
    from triagebot.domain import environment, missing

    text = ("pip install deepspeed fails\n```\nBuilding wheel for deepspeed (setup.py) ... error\n"
            "ERROR: Failed building wheel for deepspeed\n```")
    keys = [i.key for i in missing.missing_info(text, environment.extract(text), "S1", False,
                                                 "deepspeed")]
    assert "ds_report" not in keys and "versions" in keys
    horovod = text.replace("deepspeed", "horovod")
    asked = missing.missing_info(horovod, environment.extract(horovod), "S1", False, "horovod")
    assert all("check-build" not in i.description for i in asked)


def test_a_speed_in_words_per_second_is_a_measured_speed() -> None:
    text = "On 4 nodes (32 H200 GPUs) training is slow: I only get about ~200 wps."
    assert asked(text, "S4", "4.1") == ["profile"]


def test_a_loss_that_does_not_move_is_a_training_outcome_not_slowness() -> None:
    """ "it did speed training up" was read as a slow-training report and asked for a profile."""
    text = ("To cut communication I switched to zero++, and it did speed training up. However, the loss "
            "stays at 11.9321 and grad_norm stays at 0 for the whole run.")
    keys = asked(text, "S4", "4.1", framework="deepspeed")
    assert "perf_numbers" not in keys and "profile" not in keys
    assert "perf_numbers" in asked("With ZeRO++ training got slower.", "S4", "4.1")


def test_a_single_gpu_output_beside_the_wrong_one_is_the_baseline() -> None:
    for text in ("GPT-J output on 2x 3090 is garbage.\nGPT-J output on 1x 3090:\n```\nDeepSpeed is a "
                 "framework\n```",
                 "Running on 2 GPUs gives garbage text. Running on 1 GPU gives the correct output."):
        assert "baseline_output" not in asked(text, "S5", "5.3", framework="deepspeed"), text


def test_a_rendezvous_timeout_before_nccl_is_not_asked_for_the_nccl_log() -> None:
    text = ("Connection timeout at init when using torch.distributed.run\n"
            "[E socket.cpp:793] [c10d] The client socket has timed out after 60s while trying to "
            "connect to (IP1, 2222).")
    assert "nccl_debug" not in asked(text, "S2", "2.2", framework="pytorch")
    nccl = text + "\nRuntimeError: NCCL error in: ProcessGroupNCCL.cpp:32, unhandled system error"
    assert "nccl_debug" in asked(nccl, "S2", "2.2", framework="pytorch")


def test_a_timer_log_is_a_measured_speed() -> None:
    text = ("DeepSpeedCPUAdam got much slower after the upgrade.\n```\n[Rank 0] time (ms) | "
            "optimizer_step: 1321.71\n```")
    assert "perf_numbers" not in asked(text, "S4", "4.1", framework="deepspeed")


def test_a_hang_at_the_same_named_step_is_not_asked_whether_it_is_the_same_step() -> None:
    text = "ZeRO-2 training hangs and then times out, always after the same fixed step."
    assert "same step" not in described(text, "S4", "4.11", framework="deepspeed")


def test_an_import_from_a_package_whose_version_is_given_is_not_asked_for_pip_list() -> None:
    moved = "ImportError: cannot import name 'ColoInitContext' from 'colossalai.zero'\ncolossalai: 0.2.8"
    assert "pip_list" not in asked(moved, "S1", "1.2", framework="colossalai", distributed=False)
    listed = "ModuleNotFoundError: No module named 'megatron.training'\nInstalled packages (excerpt): ..."
    assert "pip_list" not in asked(listed, "S1", "1.2", framework="megatron", distributed=False)
    # Horovod's template: the framework is MXNet, with its version (horovod#1016)
    mxnet = ("AttributeError: module 'horovod.mxnet' has no attribute 'DistributedTrainer'\n"
             "1. Framework: MXNet\n2. Framework version: 1.5.0\n3. Horovod version: 0.16.1")
    assert "pip_list" not in asked(mxnet, "S1", "1.2", framework="horovod", distributed=False)
    # a compiled extension the install may have skipped: the install is what to look at
    kernel = "ModuleNotFoundError: No module named 'colossalai._C.fused_optim'\ncolossalai 0.2.8"
    assert "pip_list" in asked(kernel, "S1", "1.2", framework="colossalai", distributed=False)


def test_a_per_phase_timer_log_is_a_profile() -> None:
    text = ("DeepSpeedCPUAdam got much slower after the upgrade.\n```\n[Rank 0] time (ms) | "
            "optimizer_allgather: 1.30 | optimizer_gradients: 10.25 | optimizer_step: 1321.71\n```")
    keys = asked(text, "S4", "4.1", framework="deepspeed")
    assert "profile" not in keys and "perf_numbers" not in keys


def test_a_divergence_is_not_asked_for_the_hardware() -> None:
    diverging = "With FSDP and bf16 the model trains worse than in fp32; the loss stays basically flat."
    assert "hardware" not in recorded(diverging, "S4")
    assert "hardware" in recorded("Training is much slower with FSDP on 2 nodes.", "S4")


def _requested(text: str, stage: str = "S4") -> list[str]:
    return [item.key for item in symptom_requests.requests(text, extract(text), None, stage)]


def test_a_reporter_who_got_stuck_is_not_a_hang() -> None:
    """DeepSpeed#579 ("I want to try multi-node training but got stuck. ... pdsh can't connect")
    was asked for the stacks of every rank while it hangs."""
    assert "stacks" not in _requested("I want to try multi-node training but got stuck. pdsh fails.")
    assert "stacks" not in _requested("We are stuck on this error for days: NCCL error 2.")
    assert "stacks" in _requested("Training got stuck at iteration 200 on both nodes.")
    assert "stacks" in _requested("The run starts but got stuck at the first all_reduce.")
    # the program as the subject, or a place in the run after a person's "stuck": a hang
    for hang in ("The training runs but got stuck.", "I got stuck at dist.barrier() on 2 nodes",
                 "I am stuck in init_process_group forever"):
        assert symptom_requests.hangs(hang), hang


def test_speed_is_asked_about_only_when_the_reporter_speaks_of_it() -> None:
    """Megatron's log lines print "throughput per GPU" on every iteration: a loss bug
    (Megatron-LM#2769) was asked for a profile."""
    log = ("Loss correctness problem: the first loss is 13.86 with FSDP2, 2.40 without.\n```\n"
           "iteration 1/ 100 | elapsed time per iteration (ms): 27003.9 | throughput per GPU "
           "(TFLOP/s/GPU): 452.7 | lm loss: 1.386388E+01\n```")
    asked = _requested(log)
    assert "profile" not in asked and "perf_numbers" not in asked
    assert symptom_requests.diverges(log)
    assert "profile" in _requested("Training is 3x slower with ZeRO-3 than with DDP on 8 GPUs.")
    # a loss *scaling* bug is no loss that went wrong
    assert not symptom_requests.diverges("Incorrect loss scaling with context parallel enabled")


def test_a_hang_on_the_first_step_or_at_start_up_says_where_it_stops() -> None:
    """DeepSpeed#3032 ("training hangs on the first step") was asked whether it stops at the
    same step; a start-up the report only describes is no such place."""
    for where in ("training hangs on the first step", "It gets stuck during initialization",
                  "The job hangs before the first training epoch starts"):
        assert "same step" not in described(where + " on 2 nodes.", "S4", "4.11"), where
    assert "same step" in described("Training on 2 nodes hangs. This is what it prints at "
                                    "startup: nothing.", "S4", "4.11")


def test_a_checkpoint_request_leaves_out_what_the_report_says_of_the_load() -> None:
    """DeepSpeed#2101 said it calls `load_checkpoint` and was asked how it loads; a Lightning
    `FSDPStrategy` report was asked for tensor and pipeline sizes, which FSDP has none of."""
    loaded = "Params go out of sync after load_checkpoint with load_optimizer_states=False."
    assert described(loaded, "S4", "4.10", framework="deepspeed").startswith(
        symptom_requests.CKPT_LOADED_DEEPSPEED)
    fsdp = "Can't save and load checkpoints with FSDPStrategy: the load fails."
    assert described(fsdp, "S4", "4.10").startswith(symptom_requests.CKPT_FSDP)
    config = loaded + '\n```\nconfig = {"zero_optimization": {"stage": 2}}\n```\non 4 GPUs'
    assert "ckpt_parallel" not in asked(config, "S4", "4.10", framework="deepspeed")


def test_a_block_introduced_as_the_installs_output_is_the_build_log() -> None:
    """DeepSpeed#2707 pasted "Output of `DS_BUILD_OPS=1 pip install deepspeed`:" and its log, and
    was asked for the build output (a strict reader's 0)."""
    pasted = ("DS_BUILD_OPS=1 produces lots of errors.\nOutput of `DS_BUILD_OPS=1 pip install "
              "deepspeed`:\n```\nCollecting deepspeed\n  Preparing metadata (setup.py) ... done\n```")
    assert "build_log" not in asked(pasted, "S1", "1.1", framework="deepspeed", distributed=False)
    said = "DS_BUILD_OPS=1 pip install deepspeed produces lots of errors."
    assert "build_log" in asked(said, "S1", "1.1", framework="deepspeed", distributed=False)


# --- a hang the text reports gets the hang requests when no symptom is stated ---------------------

@pytest.mark.parametrize("text", [
    HANG,
    "Training hangs at step 0 with 8 GPUs.",
    "My DDP job gets stuck at initializing on 2 nodes.",
    "The mnist_advanced example freezes after printing epoch 1/24 on 4 GPUs.",
    "FSDP training deadlocks in the backward pass with 16 ranks.",
])
def test_a_hang_in_the_text_is_asked_for_the_stacks_and_the_nccl_log_with_no_symptom_stated(
        text: str) -> None:
    assert asked(text, None, None) == ["stacks", "nccl_debug"], text
    assert asked(text, "S4", None, symptom_confidence=0.3) == ["stacks", "nccl_debug"], text
    assert "py-spy dump" in described(text, None, None) and "NCCL_DEBUG=INFO" in described(text, None, None)


def test_a_collective_timeout_is_a_hang_to_take_stacks_of() -> None:
    timeout = ("Training fails after 30 minutes.\n```\n[E ProcessGroupNCCL.cpp:737] [Rank 0] Watchdog "
               "caught collective operation timeout: WorkNCCL(SeqNum=3424, OpType=ALLGATHER, "
               "Timeout(ms)=1800000) ran for 1803741 milliseconds before timing out.\n```")
    assert asked(timeout, None, None) == ["stacks", "nccl_debug"]
    assert asked(timeout, "S4", "4.7") == ["nccl_debug", "stacks"]
    # the report is about the timeout setting itself: the wait is expected
    setting = "Setting a timeout through InitProcessGroupKwargs has no effect\n" + timeout
    assert "stacks" not in asked(setting, None, None) and "stacks" not in asked(setting, "S4", "4.7")


def test_an_initialization_hang_in_a_stated_setup_stage_is_asked_for_the_stacks_and_the_launch() -> None:
    text = "Multi-node training with colossalai run gets stuck before the process group is initialized."
    assert asked(text, "S2", None, symptom_confidence=0.3)[:2] == ["stacks", "launcher_command"]


@pytest.mark.parametrize(("text", "kw"), [
    # the reporter stuck, not the program
    ("Stuck trying to combine PP with DeepSpeed. I'm stuck trying to get PP working.", {}),
    # parameters frozen, not the program
    ("ZeRO3 checkpoint save/load loses frozen weights when I freeze the embeddings.", {}),
    # a hang word only in a pasted log
    ("Running the diffusion example fails\n```\nUserWarning: Error handling mechanism for deadlock "
     "detection is uninitialized. Skipping check.\nTraceback (most recent call last):\n  File \"main.py\", "
     "line 8, in <module>\nKeyError: 'x'\n```", {}),
    # a hang the report says is over
    ("Training hung on 8 GPUs; after upgrading NCCL the hang went away.", {}),
    ("Setting NCCL_P2P_DISABLE=1 fixes the deadlock on our 4090s.", {}),
    # no process in Python to dump: the launch over ssh failed and says so
    ("colossalai run on 2 nodes fails with 'not a valid RSA private key file' and then hangs.", {}),
    # a build that hangs waits on a lock, not on NCCL
    ("Fused kernel compilation can hang on 8 GPUs.", {"stage": "S1"}),
    # one process: no ranks, no NCCL
    ("Training hangs at step 0.", {"distributed": False}),
])
def test_no_hang_requests_without_an_unambiguous_hang_of_a_distributed_job(text: str, kw: dict) -> None:  # type: ignore[type-arg]
    stage = kw.get("stage")
    keys = asked(text, stage, None, symptom_confidence=0.3, distributed=kw.get("distributed", True))
    assert "stacks" not in keys and "nccl_debug" not in keys, text


def test_a_question_titled_hang_report_gets_no_hang_requests_without_a_stated_symptom() -> None:
    title = "[QUESTION] Reason A2A Overlap hangs on torch version < 2.6.0"
    text = title + "\nI came across this in the code and would like to understand why it hangs on 8 GPUs."
    assert "stacks" not in asked(text, None, None, title=title)
    assert asked(text, "S4", "4.11", title=title) == ["stacks", "nccl_debug"]  # stated: as before


def test_a_hang_report_that_shows_its_stacks_is_not_keyed_as_a_hang() -> None:
    dumped = HANG + "\npy-spy dump of rank 0:\nThread 1234 (active): \"MainThread\"\n"
    assert not {"stacks", "nccl_debug"} & set(asked(dumped, None, None))


def test_hang_requests_keyed_by_the_text_are_worth_a_comment_on_their_own() -> None:
    items = missing.asked_in_comment(triage_of(HANG, None, None))
    assert missing.specific(items, None)
    generic = [MissingInfo(key="versions", description="v")]
    assert not missing.specific(generic, None)


@pytest.mark.parametrize("text", [
    'Code hangs at "initalizing ddp" with more than one GPU.',
    "DDP gets stuck at `accelerator.prepare` on 2 GPUs.",
    "GPT training gets stuck in the dataloader sanity check with TP=2, PP=2.",
    "Resuming from a checkpoint hangs in the validation forward pass on 16 GPUs.",
    "FSDP training hangs when the program tries to save the model on 8 GPUs.",
    "Training hangs as soon as the model starts training on 2 GPUs.",
])
def test_a_hang_that_names_where_it_stops_is_not_asked_whether_it_is_the_same_step(text: str) -> None:
    assert "same step" not in described(text, "S4", "4.11"), text


def _keys(title: str, body: str, stage: str | None = "S4") -> list[str]:
    from triagebot.domain import missing as missing_module
    from triagebot.domain.environment import extract as extract_env
    from triagebot.text.signal import full_text as full
    text = full(title, body)
    return [item.key for item in missing_module.missing_info(text, extract_env(text), stage, True,
                                                              framework="deepspeed")]


@pytest.mark.parametrize("text", [
    "It doesn't crash, it just hangs", "No error, the job hangs forever",
    "it does not hang on 1 GPU but hangs on 8", "Training froze at step 100",
    "The process is stuck trying to connect to the master"])
def test_the_programs_hang_is_read(text: str) -> None:
    assert symptom_requests.hangs(text)


@pytest.mark.parametrize("text", [
    "It does not hang, it crashes immediately", "The loss is stuck at 11.0 on 8 GPUs",
    "I froze the first 10 layers", "I'm stuck trying to get PP working"])
def test_a_denied_hang_a_stuck_metric_or_frozen_layers_are_no_hang(text: str) -> None:
    assert not symptom_requests.hangs(text)


def test_a_denied_hang_or_a_stuck_metric_gets_no_stacks() -> None:
    assert "stacks" not in _keys("ZeRO-3 crash on 8 GPUs", "It does not hang, it crashes immediately.", None)
    assert "stacks" not in _keys("Loss on 8 GPUs", "The loss is stuck at 11.0 on 8 GPUs.", None)


def test_a_hang_after_the_one_that_is_gone_still_counts() -> None:
    text = ("It no longer hangs after downgrading to 0.13, but with 0.15 it hangs at the first step "
            "on 8 GPUs.")
    assert not symptom_requests.hang_gone(text)
    assert "stacks" in _keys("Hang with 0.15", text, None)
    assert symptom_requests.hang_gone("It no longer hangs after downgrading to 0.13.")


@pytest.mark.parametrize("body", [
    "The loss becomes NaN after 1000 steps with bf16 and ZeRO-2 on 8 GPUs. How can this happen?",
    "Memory usage is 2x higher than expected. How does this happen?",
    "Does deepspeed work with AMD CPUs? When I run it, the loss is NaN.",
    "Is there any documentation on this? The accuracy drops to random after resuming."])
def test_a_bug_report_with_a_question_in_it_keeps_its_requests(body: str) -> None:
    from triagebot.domain import missing as missing_module
    assert not missing_module.howto_question("Problem with ZeRO-2\n" + body)
    assert _keys("Problem with ZeRO-2", body)


def test_a_bug_report_with_a_wish_keeps_its_bug_requests() -> None:
    from triagebot.domain import missing as missing_module
    crash = "Training crashes at step 5. It would be nice if it didn't crash."
    assert not missing_module.asks_for_a_feature("Crash with ZeRO-3\n" + crash)
    assert "traceback" in _keys("Crash with ZeRO-3", crash)
    fails = "Resuming from checkpoint fails on 2 nodes. Any plans to fix this?"
    assert not missing_module.asks_for_a_feature("Bug\n" + fails)
    assert _keys("Bug", fails)


def test_a_feature_request_is_not_asked_for_the_launch_command() -> None:
    keys = _keys("Multi-node on SLURM", "Out-of-the-box support for multi-node SLURM on 8 nodes would be handy.",
                 None)
    assert "launcher_command" not in keys and "traceback" not in keys
