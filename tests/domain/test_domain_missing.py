"""The missing-information checklist: stable keys, stage-specific, short, asks only for gaps."""
from __future__ import annotations

from pathlib import Path

import pytest

import support.domain as s
from support.comment import make_triage
from triagebot.domain import missing, symptom_requests
from triagebot.domain.environment import extract
from triagebot.domain.models import MissingInfo
from triagebot.text.signal import full_text

KEYS = {"versions", "cuda", "ds_report", "traceback", "launcher_command", "hardware", "config", "repro"}


def _keys(text: str, stage: str, distributed: bool, framework: str | None = None) -> list[str]:
    items = missing.missing_info(text, extract(text), stage, distributed, framework=framework)
    return [item.key for item in items]


def test_every_key_has_a_plain_description() -> None:
    assert set(missing.DESCRIPTIONS) == KEYS
    assert all(d and "http" not in d and "@" not in d for d in missing.DESCRIPTIONS.values())


def test_vague_build_report_asks_for_versions_cuda_and_error() -> None:
    keys = _keys("pip install fails with an error", "S1", False)
    assert keys[:3] == ["versions", "cuda", "traceback"]
    assert "hardware" not in keys and "launcher_command" not in keys


def test_deepspeed_build_report_asks_for_ds_report_instead_of_versions() -> None:
    keys = _keys("The JIT build of the fused_adam op fails with an error", "S1", False,
                 framework="deepspeed")
    assert keys[0] == "ds_report" and "versions" not in keys and "cuda" not in keys


def test_ds_report_present_satisfies_versions_and_cuda() -> None:
    assert _keys(s.BUILD_FAILURE + s.DS_REPORT, "S1", False, framework="deepspeed") == []


def test_distributed_setup_failure_asks_for_launch_command_and_hardware() -> None:
    keys = _keys("Multi-node run fails, the second node cannot connect.", "S2", True)
    assert keys[:3] == ["launcher_command", "hardware", "traceback"]


def test_complete_setup_report_needs_nothing_about_launch() -> None:
    keys = _keys(s.NCCL_SETUP, "S2", True)
    assert "launcher_command" not in keys and "hardware" not in keys and "traceback" not in keys


def test_zero_config_mentioned_but_not_shown() -> None:
    text = "Training with ZeRO stage 3 and offload gives OOM at step 10\nRuntimeError: CUDA out of memory"
    assert "config" in _keys(text, "S4", True)
    shown = text + '\n```json\n{"zero_optimization": {"stage": 3}, "train_batch_size": 8}\n```'
    assert "config" not in _keys(shown, "S4", True)


def test_not_distributed_skips_launcher_and_hardware() -> None:
    keys = _keys("Training crashes with an error", "S4", False)
    assert "launcher_command" not in keys and "hardware" not in keys


def test_at_most_five_items_and_stable_for_unknown_stage() -> None:
    keys = _keys("it fails with an error", "S4", True, framework="deepspeed")
    assert len(keys) <= missing.MAX_ITEMS and set(keys) <= KEYS
    assert _keys("it fails with an error", "S9", True) == _keys("it fails with an error", "S4", True)


def test_repro_present_when_code_is_shown() -> None:
    assert "repro" not in _keys("```python\nimport deepspeed\n```", "S5", False)
    assert "repro" in _keys("inference gives wrong answers", "S5", False)


# --- #11: only what fits the stated stage and framework, never what is there --------------------

def _asked(keys: list[str], **stated) -> list[str]:  # type: ignore[no-untyped-def]
    items = [missing.MissingInfo(key=k, description=k) for k in keys]
    return [i.key for i in missing.asked(items, **stated)]


def test_asked_keeps_at_most_three_in_the_given_order() -> None:
    keys = ["traceback", "config", "ds_report", "versions", "repro"]
    assert _asked(keys, stage="S4", distributed=True) == ["traceback", "config", "ds_report"]


def test_asked_with_no_stated_stage_keeps_only_generic_requests() -> None:
    keys = ["launcher_command", "hardware", "ds_report", "cuda", "traceback", "versions"]
    assert _asked(keys, stage=None, distributed=True) == ["traceback", "versions"]


def test_asked_drops_what_does_not_fit_the_stated_symptom() -> None:
    assert _asked(["versions", "cuda", "traceback"], stage="S1", symptom="1.2") == ["versions", "traceback"]
    assert _asked(["traceback", "config"], stage="S4", symptom="4.11") == ["config"]
    assert _asked(["launcher_command", "hardware"], stage="S4", distributed=None) == []
    assert _asked(["launcher_command", "hardware"], stage="S2", distributed=None) == [
        "launcher_command"]
    assert _asked(["launcher_command", "hardware"], stage="S2", symptom="2.2") == [
        "launcher_command", "hardware"]
    assert _asked(["traceback", "versions"], stage="S4", question=True) == []


def test_cuda_is_asked_only_when_the_report_is_about_building() -> None:
    assert "cuda" not in _keys("ImportError: cannot import name 'foo' from 'bar'", "S1", False)
    assert "cuda" in _keys("The op fails to compile with nvcc", "S1", False)


def test_a_plain_python_command_is_a_launch_command() -> None:
    text = "CUDA_VISIBLE_DEVICES=3 python main.py --experiment x gets stuck during init, no error"
    assert "launcher_command" not in _keys(text, "S2", True)


def test_ds_report_outside_builds_only_when_versions_are_missing() -> None:
    given = "deepspeed 0.12.3, torch 2.1.0: training crashes with an error"
    assert "ds_report" not in _keys(given, "S4", True, framework="deepspeed")
    assert "ds_report" in _keys(given, "S1", False, framework="deepspeed")
    assert "ds_report" in _keys("training crashes with an error", "S4", True, framework="deepspeed")


def test_requests_are_worded_for_the_framework() -> None:
    text = "training crashes with an error, using a plugin"
    for framework, word, absent in (("megatron", "Megatron arguments", "DeepSpeed"),
                                    ("colossalai", "Booster settings", "DeepSpeed"),
                                    ("deepspeed", "DeepSpeed config", "Megatron")):
        described = " ".join(i.description for i in missing.missing_info(
            text, extract(text), "S4", True, framework=framework))
        assert word in described and absent not in described and "ds_report" not in (
            described if framework != "deepspeed" else "")


def test_specific_requests() -> None:
    traceback = [missing.MissingInfo(key="traceback", description="x")]
    versions = [missing.MissingInfo(key="versions", description="x")]
    assert missing.specific(traceback, stage=None) and missing.specific(versions, stage="S1")
    assert not missing.specific(versions, stage=None) and not missing.specific([], stage="S1")


def test_machines_and_launch_command_only_where_they_explain_the_symptom() -> None:
    keys = ["hardware", "launcher_command", "config"]
    assert _asked(keys, stage="S4", symptom="4.10", distributed=True) == ["config"]  # checkpoint
    assert _asked(keys, stage="S4", symptom="4.2", distributed=True) == ["hardware", "config"]
    assert _asked(keys, stage="S4", symptom="4.7", distributed=True) == keys  # collectives
    assert _asked(keys, stage="S4", symptom=None, distributed=True) == ["config"]


def test_versions_in_prose_or_a_filled_in_versions_section_are_not_asked_again() -> None:
    prose = "errno 98 Address already in use with torchrun. I tested torch1.10 ~ torch2.1.0."
    assert extract(prose).torch == "1.10"
    assert "versions" not in _keys(prose, "S2", True)
    section = "It fails with an error.\n\n### Versions\n\nPython 3.10, tested on 2.1 and 2.3\n"
    assert "versions" not in _keys(section, "S4", False)


def test_printed_output_without_a_traceback_is_not_asked_for_again() -> None:
    text = ("My script calls hvd.init(), launched with\n```\nmpirun -n 1 python t.py\n```\n\n"
            "The output is:\n```\n0.12.1\nAttempting to use an MPI routine after finalizing MPI\n```\n"
            "That last line looks like an error. I'm on the latest hvd from the master branch.")
    keys = _keys(text, "S2", True, framework="horovod")
    assert "traceback" not in keys and "versions" not in keys
    quoted_only = "Launching the example fails with `All tensors must be on devices[0]: 0`."
    assert "traceback" in _keys(quoted_only, "S3", True)


def test_plugin_arguments_shown_inline_are_a_config() -> None:
    text = ('Using the Booster with GeminiPlugin (placement_policy="auto") the run crashes with '
            'CUDA out of memory.\ntorch.cuda.OutOfMemoryError: CUDA out of memory.')
    assert "config" not in _keys(text, "S4", True, framework="colossalai")


def test_a_report_that_says_no_error_was_printed_is_not_asked_for_a_traceback() -> None:
    text = "The MoE inference run crashes without any useful error output; the process just exits."
    assert "traceback" not in _keys(text, "S5", False)
    assert "traceback" in _keys("The MoE inference run crashes at the first step.", "S5", False)


def test_a_report_naming_the_script_it_runs_is_not_asked_for_a_repro() -> None:
    named = "Running examples/language/llama/benchmark.py with 8 GPUs gives wrong loss values."
    assert "repro" not in _keys(named, "S5", False)
    assert "repro" not in _keys("pretrain_gpt_distributed.sh diverges after 1k steps.", "S5", False)
    assert "repro" in _keys("inference gives wrong answers with the new release", "S5", False)


def test_any_launcher_with_arguments_is_a_launch_command() -> None:
    for shown in ("torchx run -s kubernetes dist.ddp -j 2x8 --script train.py",
                  "colossalai run --nproc_per_node 8 --hostfile hosts train.py",
                  "srun --nodes=2 --gpus-per-node=8 launch.sh"):
        assert "launcher_command" not in _keys("Rendezvous fails across nodes.\n" + shown, "S2", True)
    assert "launcher_command" in _keys("Rendezvous fails across nodes.", "S2", True)


def test_a_plugin_named_on_the_command_line_is_the_config() -> None:
    text = "Training with --plugin moe --ep 4 --pp 16 crashes in moe_dp_group with ZeRO offload."
    assert "config" not in _keys(text, "S4", True, framework="colossalai")
    assert "GeminiPlugin" not in missing.describe("config", "colossalai")


def test_documentation_and_feature_requests_get_no_bug_checklist() -> None:
    from triagebot.domain.models import MissingInfo, Prediction, Triage

    def triage(title: str) -> Triage:
        p = Prediction(id="unknown", name="", confidence=0.0, abstained=True)
        return Triage(title=title, stage=p, symptom=p, root_cause=p, fix_pattern=p,
                      distributed_specific=p, is_bug=Prediction(id="yes", name="", confidence=0.6),
                      missing_info=[MissingInfo(key="repro", description="r"),
                                    MissingInfo(key="traceback", description="t")])

    assert missing.asked_in_comment(triage("[DOC]: which init context fits ZeRO-3?")) == []
    assert missing.asked_in_comment(triage("[FEATURE] support FP8 in the MoE layer")) == []
    assert {m.key for m in missing.asked_in_comment(triage("[QUESTION] crash at step 3"))} == {
        "traceback", "repro"}


def test_a_report_naming_its_gpu_model_is_not_asked_for_the_hardware() -> None:
    text = "ZeRO-3 training hangs at the first step on 2 A6000 GPUs, deepspeed --include localhost:2,3"
    assert extract(text).gpu_model == "A6000"
    assert "hardware" not in _keys(text, "S4", True)
    assert "hardware" in _keys("ZeRO-3 training hangs at the first step", "S4", True)


def test_a_launcher_named_in_prose_is_not_a_launch_command() -> None:
    prose = "Launching on multiple nodes gives a torchrun command not found error."
    assert "launcher_command" in _keys(prose, "S2", True)
    assert "launcher_command" not in _keys(prose + "\ntorchrun --nnodes 2 train.py", "S2", True)
    assert "launcher_command" in _keys("The deepspeed config fails on 2 nodes.", "S2", True)


def test_a_filled_in_environment_list_gives_the_versions() -> None:
    text = ("FSDP fails with an error once mixed precision is on.\n- `Accelerate` version: 0.22.0\n"
            "- PyTorch version (GPU?): 2.0.1+cu117 (True)\n")
    assert "versions" not in _keys(text, "S4", True)


def test_a_report_that_says_ds_report_was_attached_is_not_asked_for_it_or_its_versions() -> None:
    text = ("[BUG] No overlap of communication in ZeRO-0\nI see no overlap in the profiler trace. "
            "ZeRO stage 0 with overlap_comm.\nds_report output was attached.")
    keys = _keys(text, "S4", True, framework="deepspeed")
    assert "ds_report" not in keys and "versions" not in keys and "cuda" not in keys


def test_a_quoted_plugin_argument_is_the_colossalai_config() -> None:
    text = ('OOM with gemini\nThe script:\n```\ntorchrun --nproc_per_node 8 finetune.py \\\n'
            '    --plugin "gemini_auto" --batch_size 2\n```\nCUDA out of memory with the plugin.')
    assert "config" not in _keys(text, "S4", True, framework="colossalai")


def test_a_package_build_is_not_asked_for_the_training_config() -> None:
    text = ("Error building the DeepSpeed wheel on Windows\nI set DS_BUILD_AIO=0 because offload "
            "ops fail.\n`python setup.py bdist_wheel` gives\nLINK : fatal error LNK1181: cannot "
            "open input file 'aio.lib'")
    assert "config" not in _keys(text, "S4", False, framework="deepspeed")


def test_a_report_citing_source_lines_is_not_asked_for_config_or_a_script() -> None:
    body = ("When loading the optimizer with CPU offload the flag is not used.\nThis is where it "
            "comes from:\nhttps://github.com/pytorch/pytorch/blob/2200118f59cb/torch/distributed/"
            "fsdp/_optim_utils.py#L391-L393\n")
    assert missing.cites_source(body) and not missing.cites_source("see https://github.com/a/b")
    text = "CPU offload flag should be passed through\n" + body
    items = missing.missing_info(text, extract(text), "S4", True, cites_source=True)
    assert not {"config", "repro"} & {item.key for item in items}


def test_a_plan_under_a_todo_heading_gets_no_bug_checklist() -> None:
    text = ("[chat] switch to the official transformers release\n## Description\nSome use cases "
            "fail.\n## TODOs\nBump the transformers version.\nFix the errors in the llama model.")
    assert missing.not_a_bug_text(text) and _keys(text, "S4", False) == []


def test_a_missing_launcher_command_is_the_error_and_its_tools_are_not_asked_for() -> None:
    text = ("horovodrun: command not found\nI just installed version 0.16.1 and the Keras demos run "
            "on one GPU, but `horovodrun` is not in my installation.")
    items = missing.missing_info(text, extract(text), "S1", False, framework="horovod")
    assert "traceback" not in [item.key for item in items]
    assert all("check-build" not in item.description for item in items)


def test_a_working_setup_without_errors_does_not_hide_the_failing_ones_missing_error() -> None:
    text = ("Error when training with expert-model-parallel-size=4\nOn 4 nodes I get an error. "
            "A 2-node run with expert-model-parallel-size=2 works without any errors.")
    assert "traceback" in _keys(text, "S4", True)
    assert "traceback" not in _keys("Training stops without any error message at step 40", "S4", True)


# --- requests for what the report already says in other words -----------------------------------

def test_versions_written_in_bold_backticks_paths_or_image_tags_count_as_given() -> None:
    for given in ("- **DeepSpeed version**: 0.15.0",
                  "FSDP memory allocation differs between PT 2.0 and nightlies",
                  "torch-'1.13.1+cu117', transformers-4.32.0",
                  "`pip install deepspeed` (deepspeed-0.10.1.tar.gz) fails",
                  "environment: colossal=0.4.9, Hybrid Parallel Plugin",
                  "I just installed version `0.16.1` and it runs",
                  'File "/envs/a/lib/python3.8/site-packages/megatron_lm-1.1.5-py3.8.egg/megatron/x.py"',
                  "docker run uber/horovod:0.15.2-tf1.12.0-torch1.0.0-py3.5",
                  "With the NeMo prebuilt containers from 25.04 onward it fails",
                  "Deadlock in distributed all_reduce on v1.1"):
        assert "versions" not in _keys(f"Training fails with an error.\n{given}", "S4", True), given
    # CUDA alone is not the framework's version, and a timing is not a version
    for absent in ("cuda10.2", "ppl without deepspeed = 29.76", "NCCL version 2.19.3"):
        assert "versions" in _keys(f"Training fails with an error.\n{absent}", "S4", True,
                                   framework="megatron"), absent


def test_ds_report_is_not_asked_when_its_output_or_both_versions_are_in_the_report() -> None:
    listed = ("Resumed training acts like a fresh model.\n- **DeepSpeed version**: 0.15.0\n"
              "- **PyTorch version**: 2.4.1\n")
    assert "ds_report" not in _keys(listed, "S4", True, framework="deepspeed")
    truncated = ("v0.8.0 raises an error with bf16\n```\n-----\nDeepSpeed C++/CUDA extension op "
                 "report\n-----\n...\n```")
    assert "ds_report" not in _keys(truncated, "S4", True, framework="deepspeed")
    assert "ds_report" in _keys("- **DeepSpeed version**: 0.15.0\ntraining fails with an error", "S4",
                                True, framework="deepspeed")


def test_a_framework_install_failing_in_prose_is_not_asked_for_ds_report() -> None:
    for said in ("[BUG] pip install . fails\nRunning `pip install .` on the DeepSpeed source tree fails.",
                 "Building DeepSpeed from source fails when the transformer extension is enabled.",
                 "[BUG] Problems building DeepSpeed on Windows\nDeepSpeed fails to build on Windows.",
                 "pip install of DeepSpeed fails with an error."):
        keys = _keys(said, "S1", False, framework="deepspeed")
        assert "ds_report" not in keys, said
    horovod = missing.missing_info("pip install horovod fails with error: 'x' was not declared",
                                   extract(""), "S1", False, framework="horovod")
    assert all("check-build" not in item.description for item in horovod)


def test_a_how_to_question_gets_no_bug_checklist() -> None:
    for title in ("[QUESTION] How do I run inference on llama2 with megatron-lm?",
                  "Is gradient accumulation supported by hybridparallelplugin?",
                  "[QUESTION] Any plans to optimize TP scheduling?",
                  "How can I tell whether PPO training is working well?"):
        assert _keys(f"{title}\nI would like to know.", "S4", False) == [], title
    # a question about an error or a hang is a bug report
    for title in ('[BUG] How to fix "Invalidate trace cache @ step 1"?\nI get this and cannot go on.',
                  "How do I stop init_process_group from hanging on DGX A100?\nIt hangs.",
                  "How do I run inference?\nIt fails with an error."):
        assert not missing.howto_question(title), title


def test_a_source_link_at_a_commit_gives_the_framework_version() -> None:
    body = ("The value comes from the wrong argument:\nhttps://github.com/NVIDIA/Megatron-LM/blob/"
            "30461822692a5da057c3db171d26fbee1d7c49d2/megatron/core/tokenizers/x.py#L98\n")
    assert missing.pins_source(body)
    assert not missing.pins_source(body.replace("30461822692a5da057c3db171d26fbee1d7c49d2", "main"))
    text = "_get_merges_file() is called with the wrong argument\nTokenization fails."
    keys = [i.key for i in missing.missing_info(text, extract(text), "S4", False, framework="megatron",
                                                cites_source=True, pinned_source=True)]
    assert "versions" not in keys
    ds = [i.key for i in missing.missing_info(text, extract(text), "S4", False, framework="deepspeed",
                                              cites_source=True, pinned_source=True)]
    assert "ds_report" not in ds and "versions" not in ds


def test_an_import_or_shell_error_quoted_in_prose_is_the_whole_error() -> None:
    for quoted in ("cannot import name 'DeepSpeedPlugin' from 'accelerate'\nThis import fails.",
                   "Error: No module named 'colossalai._C.fused_optim'\nI get this error.",
                   "Launching on multiple nodes gives a torchrun command not found error."):
        assert "traceback" not in _keys(quoted, "S4", True), quoted


def test_an_error_block_introduced_as_what_it_failed_with_is_not_asked_for_again() -> None:
    text = ("Loading a model now fails with:\n\n```\nUnexpected key(s) in state_dict: "
            '"decoder.layers.0.self_attention.core_attention._extra_state"\n```')
    assert "traceback" not in _keys(text, "S4", False)
    code = "Under ZeRO 3, this sequence fails:\n\n```\nengine.load_checkpoint()\nengine.save_checkpoint()\n```"
    assert "traceback" in _keys(code, "S4", False)


def test_zero_as_a_number_or_nccls_network_plugin_is_not_a_config_mention() -> None:
    for text in ("After epoch 1 GPU utilization drops to zero and training fails with an error.",
                 "I get the NCCL INFO NET/Plugin : No plugin found (libnccl-net.so). ERROR and it freezes.",
                 "argmax(): Expected reduction dim 1 to have non-zero size. The run fails."):
        assert "config" not in _keys(text, "S4", True, framework="deepspeed"), text
    for text in ("ZeRO3 checkpoint save/load loses frozen weights", "Memory leak with zero3 in rlhf",
                 "deepspeed.zero.Init() broken for big models"):
        assert "config" in _keys(text, "S4", True, framework="deepspeed"), text


def test_plugin_arguments_written_in_prose_or_settings_lines_are_the_config() -> None:
    for text in ("With LowLevelZeroPlugin, setting `initial_scale` to 2^20 together with `cpu_offload=True`"
                 " makes training fail.",
                 "Using Hybrid Parallel Plugin,zero_stage=1,zero_cpu_offload=true the run fails.",
                 "Runtime error with `use_fp8=True` in HybridParallelPlugin",
                 "Training with HybridParallelPlugin fails if pp_size>1\nSettings:\n```\npp=2\ntp=2\nsp=1\n"
                 "zero_stage=0\n```"):
        assert "config" not in _keys(text, "S4", True, framework="colossalai"), text
    assert "config" in _keys("Training with the gemini plugin fails with an error.", "S4", True,
                             framework="colossalai")


def test_a_config_listed_under_its_name_as_accelerate_env_prints_it_is_the_config() -> None:
    """`accelerate env` lists its config as bullets: asking for the config again was read as
    not having read the report."""
    env_dump = ("Inference hangs with ZeRO stage 3 and offload.\n```\n- `Accelerate` default config:\n"
                "        - distributed_type: DEEPSPEED\n        - num_processes: 3\n"
                "        - deepspeed_config: {'zero_stage': 3}\n```\n")
    assert "config" not in _keys(env_dump, "S4", True, framework="deepspeed")
    for heading in ("Environment:", "System config:"):  # versions, not a config
        bullets = (f"Inference hangs with ZeRO stage 3 and offload.\n{heading}\n- torch: 2.1\n"
                   "- deepspeed: 0.12\n- cuda: 12.1\n")
        assert "config" in _keys(bullets, "S4", True, framework="deepspeed"), heading


def test_a_hostfile_or_an_accelerate_multinode_config_is_the_launch_setup() -> None:
    for shown in ("hostfile:\n104.171.201.171  slots=8\n104.171.201.172  slots=8",
                  "```\ndistributed_type: DEEPSPEED\nnum_machines: 2\nnum_processes: 16\n```"):
        assert "launcher_command" not in _keys("Multi-node training fails.\n" + shown, "S2", True)


def test_steps_described_in_prose_are_a_repro() -> None:
    for prose in ("I followed the README.md and ran the training command; it fails with an NCCL error.",
                  "Running the training example with cifar10 breaks with a RuntimeError.",
                  "I'm pre-training a BERT model by following the Megatron-LM example and hit an error."):
        assert "repro" not in _keys(prose, "S4", False), prose


def test_a_build_without_cuda_is_not_asked_for_cuda_versions() -> None:
    text = "Compilation fails with USE_GLOO=OFF\nCMake flags: -DUSE_CUDA=OFF -DUSE_GLOO=OFF"
    assert "cuda" not in _keys(text, "S1", False)
    assert "cuda" in _keys("Compilation fails with USE_GLOO=OFF", "S1", False)


def test_a_named_network_or_cloud_instance_gives_the_hardware() -> None:
    for named in ("Both clusters use InfiniBand between nodes.", "The nodes talk over RoCE.",
                  "Environment: ec2 g4dn.12xl with 4 GPUs.", "Setup: Azure VM NC24s_v2.",
                  "Training on 2x 3090 hangs."):
        assert "hardware" not in _keys(f"Multi-node training fails with an error. {named}", "S2", True), named


def test_a_pytorch_release_before_torchrun_is_asked_for_its_own_launch_command() -> None:
    def launch(text: str) -> str:
        items = missing.missing_info(text, extract(text), "S2", True, framework="pytorch")
        return next(item.description for item in items if item.key == "launcher_command")

    old = launch("With PyTorch 1.2, training over 4 GPUs crashes with an NCCL error.")
    assert "torch.distributed.launch" in old and "torchrun" not in old
    assert missing.is_template(missing.MissingInfo(key="launcher_command", description=old))
    assert "torchrun" in launch("With PyTorch 2.1, training over 4 GPUs crashes with an NCCL error.")
    assert "torchrun" in launch("Training over 4 GPUs crashes with an NCCL error.")


def test_a_versions_section_answered_with_the_branch_alone_gives_the_version() -> None:
    text = "Look into OOM from the sharded grad scaler\nWe see an OOM with CPU offload.\n\nmain\n"
    assert "versions" not in _keys(text, "S4", True, framework="pytorch")


def test_a_report_that_says_it_is_not_a_bug_gets_no_checklist() -> None:
    text = "[Q] not a bug, looking for a solution\nMuch time is spent in forward_microstep."
    assert _keys(text, "S4", True, framework="deepspeed") == []


def test_a_named_example_is_a_repro() -> None:
    assert "repro" not in _keys("mnist_advanced example freezes after printing epoch 1/24", "S4", False)


def test_a_title_tagged_as_a_question_or_ending_in_a_question_mark_gets_no_checklist() -> None:
    for text in ("[QUESTION] CUDA graph support when world size > 1\nWith enable_cuda_graph set the "
                 "program stops because of a check on world size. Why can't it be used?",
                 "[BUG]: Questions about sequence parallel\nIs sequence parallelism applied in the main "
                 "code at all?",
                 "[BUG]: llama60b training reported at 58G max memory usage?\nThe README says max memory "
                 "usage: 58500.20 MB. There's no way the memory consumption can be that low."):
        assert _keys(text, "S4", True, framework="colossalai") == [], text
    # with an error it is a bug report, whatever the tag
    assert _keys("[QUESTION] Error when training with EP=4\nRuntimeError: shape mismatch", "S4", True)
    assert _keys('[BUG] How to fix "Invalidate trace cache"?\nI get this and cannot go on.', "S4", True)


def test_a_body_that_asks_whether_or_how_something_can_be_done_gets_no_checklist() -> None:
    for text in ("Running inference on multiple GPUs\nI only want to run inference across several "
                 "GPUs. Is that possible? If it can be done, how do I set it up?",
                 "Compatibility between Huggingface and Megatron-LM\nQuestion about compatibility "
                 "between Huggingface and Megatron-LM models.",
                 "Pipeline parallel example\nI'd like to see how a custom schedule can be specified."):
        assert _keys(text, "S4", True, framework="megatron") == [], text


def test_a_feature_request_behind_a_component_tag_or_a_test_issue_gets_no_checklist() -> None:
    for title in ("[FSDP][BE] Support for `MixedPrecision(param_dtype=torch.float32, ...)`",
                  "[FSDP] `use_orig_params=True`: support non-uniform `requires_grad` at init",
                  "Test", "Look into OOM from sharded gradscaler on CPU workloads"):
        assert missing.not_a_bug_text(title + "\nJust a test, it fails with an error."), title
        assert missing.probably_not_a_bug(make_triage(title=title)), title  # no advice either
    assert not missing.not_a_bug_text("[FSDP] Training fails: RuntimeError: support tensor missing")


def test_a_report_whose_author_found_the_cause_or_a_fix_gets_no_checklist() -> None:
    for text in ("Fused kernel compilation can hang\nThe program hangs at 'using torch.float16'. It "
                 "turned out to be stuck compiling fused_kernels, and deleting the build dir seems to "
                 "get rid of the problem. Posting this in case it's useful to someone.",
                 "Inference tutorial is out of date\nRunning it fails with an error. Adding "
                 "replace_with_kernel_inject=True makes the error disappear.",
                 "ZeRO3 checkpoint loses frozen weights\nThe cause is that some of the weights are "
                 "frozen and the checkpoint only stores optimizer states.",
                 # Megatron-LM#362: the option whose absence triggers it
                 "Index generation breaks\nIf `--bert-no-binary-head` isn't specified, the script "
                 "fails with an NCCL error or never finishes."):
        assert _keys(text, "S4", True, framework="deepspeed") == [], text


def test_a_report_pointing_at_source_lines_is_not_asked_for_a_traceback_or_the_hardware() -> None:
    text = ("Loss scaling is wrong with context parallel\nApplying the positional embeddings fails "
            "with a shape mismatch in multi_latent_attention.py on the nodes.")
    plain = _keys(text, "S4", True, framework="megatron")
    assert "traceback" in plain and "hardware" in plain
    cited = [i.key for i in missing.missing_info(text, extract(text), "S4", True, framework="megatron",
                                                 cites_source=True)]
    assert "traceback" not in cited and "hardware" not in cited


def test_a_failed_install_said_in_prose_is_not_asked_for_the_frameworks_report_tool() -> None:
    for text in ("Installing on an AMD ROCm system fails while building CUDA dependencies",
                 "Unable to install deepspeed on Windows", "Error when installing DeepSpeed with pip"):
        assert "ds_report" not in _keys(text, "S1", False, framework="deepspeed"), text
    installed = "After installing deepspeed 0.9.0, training fails with an error."
    assert "ds_report" in _keys(installed, "S4", False, framework="deepspeed")


def test_cuda_versions_are_asked_for_a_build_not_for_an_install_step() -> None:
    inference = ("GPT-J: RuntimeError while initializing the InferenceEngine\n1. Install the packages: "
                 "pip install deepspeed==0.6.4\nRuntimeError: view size is not compatible")
    assert "cuda" not in _keys(inference, "S5", False, framework="deepspeed")
    question = "What is coati, and how do I install it?\nModuleNotFoundError: No module named 'coati'"
    assert "cuda" not in _keys(question, "S1", False, framework="colossalai")
    assert "cuda" in _keys("The fused_adam extension fails to compile with an error", "S1", False)


def test_a_deepspeed_commit_gives_the_frameworks_version() -> None:
    text = ("ZeRO-3 rollout deadlocks at the next all-gather\nReproduced on 8 x NVIDIA H200, CUDA 12.6, "
            "PyTorch 2.7.0, DeepSpeed `cf443004`.")
    assert "ds_report" not in _keys(text, "S4", True, framework="deepspeed")


def test_settings_on_the_command_line_or_the_examples_own_config_are_the_config() -> None:
    for text in ("DISK-OFFLOAD runs out of CUDA memory\n```\ndeepspeed run_model.py --model "
                 "facebook/opt-6.7b --batch-size 4 --disk-offload\n```",
                 "Training fails with an error\n```\npython train.py --zero_stage 2 --deepspeed\n```",
                 "ZeRO-3 rollout deadlocks\n1. Use the DeepSpeedExamples OPSD Hybrid Engine "
                 "configuration with ZeRO stage 3."):
        assert "config" not in _keys(text, "S4", True, framework="deepspeed"), text
    assert "config" in _keys("Training with ZeRO stage 3 fails with an error.", "S4", True,
                             framework="deepspeed")


def test_plugin_settings_written_in_chinese_prose_are_the_config() -> None:
    text = "stable diffusion 训练效率的问题\n显存用到了21g。插件用的是gemini plugin，策略为auto。训练报错。"
    assert "config" not in _keys(text, "S4", True, framework="colossalai")


def test_rendezvous_settings_or_a_launch_script_below_are_the_launch_command() -> None:
    for shown in ('```\ninit_method="tcp://10.30.112.212:10087"\nrank=0\nworld_size=2\n```',
                  "```\nNUM_NODES=$n NODE_RANK=$rank MASTER_ADDR=$master nemo llm pretrain --yes\n```",
                  "2. Submit it with the Slurm batch script below."):
        text = "Multi-node training fails with an NCCL error.\n" + shown
        assert "launcher_command" not in _keys(text, "S2", True), shown


def test_a_log_the_reporter_says_is_attached_is_not_asked_for_again() -> None:
    text = "Multi-node training fails with NCCL errors between the nodes (full log attached)."
    assert "traceback" not in _keys(text, "S2", True)
    assert "traceback" in _keys("Multi-node training fails with NCCL errors between the nodes.", "S2", True)


def test_a_log_file_uploaded_to_the_issue_counts_as_the_traceback() -> None:
    """Megatron-LM#1576: "[run.log](https://github.com/user-attachments/files/20204314/run.log)"."""
    for link in ("[run.log](https://github.com/user-attachments/files/20204314/run.log)",
                 "https://github.com/horovod/horovod/files/3312345/err.txt"):
        text = f"Text generation fails with an error on 4 nodes.\n{link}"
        assert "traceback" not in _keys(text, "S5", True), link
    image = "Text generation fails with an error.\n![x](https://github.com/user-attachments/assets/1.png)"
    assert "traceback" in _keys(image, "S5", True)


def test_a_failing_colossalai_check_is_not_asked_for_its_own_output() -> None:
    text = "Error from colossalai check\nRunning the colossalai check gives me an error."
    items = missing.missing_info(text, extract(text), "S1", False, framework="colossalai")
    versions = next(i.description for i in items if i.key == "versions")
    assert "colossalai check" not in versions
    assert "repro" not in [i.key for i in items]  # the command is the step


def test_a_question_asked_in_chinese_gets_no_checklist_unless_it_reports_an_error() -> None:
    asking = ("stable diffusion 训练效率的问题\n我测的是512分辨率，batchsize 16时显存用到了21g。"
              "请问你们的训练效率测试结果是怎么测出来的？")
    assert _keys(asking, "S4", True, framework="colossalai") == []
    failing = asking + "\n训练时报错。"
    assert _keys(failing, "S4", True, framework="colossalai")


def test_a_root_cause_analysis_section_is_the_reporters_own_diagnosis() -> None:
    text = ("Fine-tuning deadlocks with EP=4\nEvery rank deadlocks after 92-852 steps.\n"
            "## Root Cause Analysis\nI patched progressively over 4 runs to locate where it blocks.")
    assert _keys(text, "S4", True, framework="megatron") == []


def test_a_regression_the_reporter_bisected_gets_no_checklist() -> None:
    text = ("DeepSpeedCPUAdam got much slower after upgrading from 0.5.3 to 0.5.8\nMy guess is that "
            "the regression comes from commit 8abdaee.")
    assert _keys(text, "S4", True, framework="deepspeed") == []


def test_a_rocm_build_is_not_asked_for_cuda_versions() -> None:
    text = "Installing on an AMD ROCm system fails while building the ops."
    assert "cuda" not in _keys(text, "S1", False, framework="deepspeed")


def test_when_deepspeed_itself_fails_to_import_ds_report_is_not_asked() -> None:
    text = ("DeepSpeed from pypi breaks with the newest numpy\n`import deepspeed` fails in an env "
            "with numpy>=2.0.0: cannot import name 'BUFSIZE' from 'numpy'")
    assert "ds_report" not in _keys(text, "S1", False, framework="deepspeed")


def test_the_out_of_memory_message_is_the_whole_error() -> None:
    text = ("CUDA out of memory error\nRunning the example script:\n```\nCUDA out of memory. Tried to "
            "allocate 25.10 GiB (GPU 0; 23.99 GiB total capacity)\n```")
    assert "traceback" not in _keys(text, "S4", True, framework="colossalai")


def test_a_memory_leak_is_not_asked_for_the_hardware() -> None:
    text = "Memory leak with ZeRO-3 in RLHF: after 600+ steps memory usage shoots up on the nodes."
    assert "hardware" not in _keys(text, "S4", True, framework="deepspeed")
    assert "hardware" in _keys("ZeRO-3 runs out of memory on the nodes.", "S4", True, framework="deepspeed")


def test_the_traceback_request_mentions_ranks_only_for_a_distributed_run_past_the_build() -> None:
    """"With several ranks, from the first that failed" asked of a single-GPU run or of a build
    was read as not having read the report."""
    from triagebot.domain import missing as m
    from triagebot.domain.models import Environment, MissingInfo

    text = "Training crashes with an error after a few steps."
    env = Environment()

    def traceback_of(stage: str, distributed: bool) -> str:
        items = m.missing_info(text, env, stage, distributed)
        return next(i.description for i in items if i.key == "traceback")

    assert "ranks" in traceback_of("S4", True)
    assert traceback_of("S4", False) == m.ONE_PROCESS_TRACEBACK
    assert traceback_of("S1", True) == m.ONE_PROCESS_TRACEBACK
    assert m.is_template(MissingInfo(key="traceback", description=m.ONE_PROCESS_TRACEBACK))


def test_the_cuda_versions_are_recorded_for_maintainers_but_never_asked() -> None:
    """Wrong 8 of 18 times in blind samples of posted requests: the engine still records the gap
    (review page, backtest ``missing_info``), the comment does not ask it."""
    assert "cuda" in _keys("The op fails to compile with nvcc", "S1", False)
    assert "cuda" not in _asked(["versions", "cuda", "traceback"], stage="S1", symptom="1.1")


def test_megatron_versions_leave_out_transformer_engine_when_the_report_says_it_is_not_installed() -> None:
    """Asking for the version of a package the report says is missing was read as not having
    read the report."""
    def versions(text: str) -> str:
        items = missing.missing_info(text, extract(text), "S3", False, framework="megatron")
        return next(item.description for item in items if item.key == "versions")

    assert "Transformer Engine" in versions("The GPT example fails to start.")
    for missing_te in ("transformer_engine is not installed on my machine; the GPT example fails.",
                       "ModuleNotFoundError: No module named 'transformer_engine'"):
        said = versions(missing_te)
        assert said == missing.MEGATRON_VERSIONS_WITHOUT_TE and missing.is_template(
            missing.MissingInfo(key="versions", description=said))


def test_an_error_shown_only_as_a_screenshot_is_asked_for_as_text() -> None:
    """DeepSpeed#4136: "Multi-node training gives me this error:" and an image. Cleaning drops
    the image, and the sentence's "error:" read as a pasted error line: no traceback was asked.
    A strict reader's first request was the error as text."""
    raw = ("Multi-node training gives me this error:\n"
           "![image](https://github.com/microsoft/DeepSpeed/assets/1/77bae865.png)")
    from triagebot.text import signal

    text = signal.full_text("Error in multi-node training", raw)
    assert missing.error_in_image(raw)
    items = missing.missing_info(text, extract(text), "S2", True, framework="deepspeed",
                                 error_image=missing.error_in_image(raw))
    traceback = next(item for item in items if item.key == "traceback")
    assert traceback.description == missing.IMAGE_TRACEBACK
    assert missing.is_template(traceback)
    # without an image, an introducing "error:" with nothing after it is still no error shown
    plain = missing.missing_info(text, extract(text), "S2", True, framework="deepspeed")
    assert next(i for i in plain if i.key == "traceback").description != missing.IMAGE_TRACEBACK


def test_an_error_line_after_error_colon_still_counts_as_shown() -> None:
    shown = "The build stops with\nerror: command 'gcc' failed with exit status 1"
    assert "traceback" not in _keys(shown, "S1", False)
    # the error pasted unfenced on the next lines is shown
    for pasted in ("Building fails with this error:\nnvcc fatal : Unsupported gpu architecture",
                   "It fails with the error:\n\nAssertion `srcIndex < srcSelectDimSize` failed."):
        assert "traceback" not in _keys(pasted, "S4", False)
    # ...a sentence introducing nothing is not
    assert "traceback" in _keys("Pretraining BERT, I run into this error:", "S4", False)


def test_prose_after_a_screenshot_of_the_error_is_not_the_error() -> None:
    """ColossalAI#1966: "I get an error:", a screenshot, then "What could be the cause?"."""
    raw = "Switching use_ema on, I get an error:\n![image](https://x.example/e.png)\n\nWhat could be the cause?"
    text = full_text("use_ema fails", raw)
    keys = [i.key for i in missing.missing_info(text, extract(text), "S4", False,
                                                error_image=missing.error_in_image(raw))]
    assert "traceback" in keys


def test_a_relative_error_between_two_runs_is_no_error_to_paste() -> None:
    text = ("Tensor parallel training gives losses that differ from one GPU by 47 (over 50% "
            "relative error).")
    assert "traceback" not in _keys(text, "S4", True)


def test_an_image_is_the_error_only_where_the_report_introduces_it_as_one() -> None:
    """A loss chart or a paper's table is no screenshot of an error (DeepSpeed#4047 was told
    its table was the error); markdown and HTML images count, a template's hint does not."""
    assert missing.error_in_image("Training fails with the error below:\n![shot](https://x.example/a.png)")
    assert missing.error_in_image('It crashes with this error:\n<img width="800" alt="Image" '
                                  'src="https://x.example/a.png" />')
    assert not missing.error_in_image("The paper's table is attached as an image.\n![t](https://x.example/t.png)")
    # a chart after a failure's verb, and DeepSpeed's template ("4. See error" above "Screenshots")
    assert not missing.error_in_image("The loss fails to converge.\nLoss curve:\n![c](https://x.example/c.png)")
    assert not missing.error_in_image("Training crashed.\nGPU memory graph:\n![g](https://x.example/g.png)")
    template = (Path(__file__).parents[1] / "fixtures" / "issue_templates"
                / "deepspeed_training_bug_report.md").read_text(encoding="utf-8")
    assert not missing.error_in_image(template + "\n![shot](https://x.example/s.png)")
    assert not missing.error_in_image("<!-- if you hit an error, paste a screenshot: ![](url) -->\nno image")
    assert not missing.error_in_image("")


def test_a_release_named_in_prose_gives_the_version() -> None:
    """DeepSpeed#2060: "With the latest release, v0.6.5, I built from source" was asked for the
    DeepSpeed version (a strict reader's 0); nvcc's "compilation tools, release 11.7" gives only
    CUDA's."""
    given = "With the latest release, v0.6.5, I built from source and `import deepspeed` fails."
    assert "versions" not in _keys(given, "S1", False, framework="deepspeed")
    nvcc = "import colossalai fails.\nCuda compilation tools, release 11.7, V11.7.99"
    assert "versions" in _keys(nvcc, "S1", False, framework="colossalai")


def test_an_error_word_in_a_links_address_does_not_make_an_image_the_error() -> None:
    """DeepSpeed#4047: the line above its only image (a paper's table) linked a forum thread
    whose address says "cuda-oom-error"; the line's own words name no error."""
    linked = ("I tried the suggestions of [link2](https://discuss.example/t/keep-getting-cuda-oom-"
              "error-with-pytorch/1) already.\n![image](https://x.example/t.png)")
    assert not missing.error_in_image(linked)
    assert missing.error_in_image("It fails with this error (see [docs](https://x.example/d)):\n"
                                  "![image](https://x.example/e.png)")


def test_a_crash_without_any_useful_error_output_is_not_asked_for_the_traceback() -> None:
    text = "The program crashes by itself without giving any useful error output."
    assert "traceback" not in _keys(text, "S4", True)


def test_ds_report_is_asked_only_for_the_half_the_report_lacks() -> None:
    """A report naming DeepSpeed's release (DeepSpeed#3836, "in v0.9.4") is asked for the
    PyTorch and CUDA versions; one naming PyTorch's (DeepSpeed#1595) for DeepSpeed's; a build
    still gets the whole report (its op table)."""
    def asked(text: str, stage: str) -> list[str]:
        return [i.description for i in missing.missing_info(text, extract(text), stage, True,
                                                            framework="deepspeed")
                if i.key == "ds_report"]
    own = "[BUG] GatheredParameters not working with zero3 in v0.9.4\nThe loss is far too large."
    assert asked(own, "S4") == [missing.DS_REPORT_TORCH]
    torch = "Sparse attention fails with an invalid image. I installed PyTorch 1.5 for CUDA 10.2."
    assert asked(torch, "S4") == [missing.DS_REPORT_FRAMEWORK]
    assert asked("ZeRO-3 training gives a wrong loss.", "S4") == [missing.describe("ds_report", "deepspeed")]
    assert asked("The fused_adam op build fails with PyTorch 2.1.", "S1") == [
        missing.describe("ds_report", "deepspeed")]
    assert missing.is_template(MissingInfo(key="ds_report", description=missing.DS_REPORT_TORCH))


def test_a_single_node_launch_is_asked_for_the_gpus_not_the_nodes() -> None:
    """pytorch#65288 showed `--nproc_per_node 2` on one machine and was asked for the number of
    nodes and the network between them."""
    def hardware(text: str) -> list[str]:
        return [i.description for i in missing.missing_info(text, extract(text), "S4", True)
                if i.key == "hardware"]
    one = 'CUDA_VISIBLE_DEVICES="0,1" python -m torch.distributed.launch --nproc_per_node 2 train.py is slow'
    assert hardware(one) == [missing.ONE_NODE_HARDWARE]
    assert hardware("torchrun --standalone --nnodes=1 --nproc_per_node=8 train.py on our nodes is slow") == [
        missing.ONE_NODE_HARDWARE]
    for many in (one + " on 2 nodes", "deepspeed --hostfile hosts --num_gpus 8 train.py is slow"):
        assert hardware(many) == [missing.describe("hardware", None)], many
    # pytorch#79388: "--nproc_per_node=1 --nnodes=2" gives the nodes and the GPUs per node
    for counted in ("torchrun --nnodes=2 --nproc_per_node=1 train.py times out",
                    one.replace("--nproc_per_node 2", "--nnodes=1:2 --nproc_per_node 2")):
        assert hardware(counted) == [missing.NODES_GIVEN_HARDWARE], counted


def test_a_rocm_report_is_asked_for_rocm_versions_not_cuda() -> None:
    text = "Installing on an AMD ROCm system fails with an error."
    versions = [i.description for i in missing.missing_info(text, extract(text), "S1", False)
                if i.key == "versions"]
    assert versions and "ROCm" in versions[0] and "CUDA" not in versions[0]


def test_asking_the_maintainers_to_share_their_settings_is_a_question() -> None:
    """ColossalAI#3702 ("Could you share the parameters and data used to get that result?")
    was asked for versions and a script; an error asked about still gets its checklist."""
    asking = ("Reward training ACC score\nThe readme shows a good acc, but I only get 50% acc. "
              "Could you share the parameters and data used to get that result?")
    assert _keys(asking, "S4", False) == []
    erroring = asking + "\nTraining also crashes with an error."
    assert _keys(erroring, "S4", False) != []


def test_versions_shown_where_cleaning_cannot_see_them_are_not_asked_for() -> None:
    """DeepSpeed#2923 showed its ds_report as a screenshot under the template's heading, and
    DeepSpeed#5718 a shortened paste under it (both asked for ds_report, strict readers' 0s);
    a paragraph that mentions a version before some other image shows none."""
    shot = "**ds_report output**\n<img width=\"723\" alt=\"image\" src=\"https://x.example/a.png\">"
    pasted = "**ds_report output**\n```\n[INFO] Setting ds_accelerator to cpu (auto detect)\n...\n```"
    assert missing.versions_shown(shot) and missing.versions_shown(pasted)
    assert missing.versions_shown("### Environment\n![env](https://x.example/e.png)")
    prose = ("Training failed with an assertion. Why is this happening? Could the megatron-energon "
             "version be the cause?\n![image](https://x.example/i.png)")
    assert not missing.versions_shown(prose) and not missing.versions_shown("**ds_report output**\n\n")
    text = "ZeRO-3 inference gives a wrong shape."
    asked = [i.key for i in missing.missing_info(text, extract(text), "S5", False, framework="deepspeed",
                                                   versions_raw=True)]
    assert "ds_report" not in asked and "versions" not in asked


def test_a_version_the_report_updates_to_is_given() -> None:
    """Megatron-LM's CI report ("Update transformer-engine version to 2.18.0") was asked for
    the Transformer Engine version; "compare with torch to 2 decimals" names none."""
    given = "Update transformer-engine version to 2.18.0: the CUDA graph tests now fail."
    assert "versions" not in _keys(given, "S4", False, framework="megatron")
    assert "versions" in _keys("The test compares torch to 2 decimals and fails.", "S4", False,
                               framework="megatron")


def test_what_the_review_of_these_rules_found_they_must_not_swallow() -> None:
    """A fresh review's counter-examples: each keeps the request it should."""
    def keys(text: str, stage: str = "S4", framework: str | None = "deepspeed") -> list[str]:
        return _keys(text, stage, True, framework=framework)
    # a bug asked about is no question
    assert keys("ZeRO-3 is slow\nZeRO-3 training is 3x slower than DDP on 8 GPUs. Could you explain why?") != []
    assert keys("NaN loss\nThe loss goes to nan with bf16. Can you provide a fix?") != []
    # a sentence that mentions a version before an image shows none
    assert not missing.versions_shown("After updating to the latest version I get this error:\n"
                                      "![image](https://x.example/e.png)")
    assert not missing.versions_shown("**ds_report output**\n```\n```")
    assert missing.versions_shown("**Environment:**\n![image](https://x.example/e.png)")
    # another package's release in the body is not DeepSpeed's
    upgraded = "ZeRO-3 fails to load the model.\nAfter I upgraded transformers to v4.36 with torch 2.1, it fails."
    asked = [i.description for i in missing.missing_info(upgraded, extract(upgraded), "S4", True,
                                                         framework="deepspeed") if i.key == "ds_report"]
    assert asked == [missing.DS_REPORT_FRAMEWORK]
    # a build keeps the whole ds_report (its op table) even with the versions in a screenshot
    built = "The fused_adam op build fails with an error."
    assert "ds_report" in [i.key for i in missing.missing_info(built, extract(built), "S1", False,
                                                              framework="deepspeed", versions_raw=True)]
    # a crash whose output is missing still has an error to paste
    assert "traceback" in _keys("Training crashes without producing the expected output files; "
                                "I then see an error in the log.", "S4", True)


def test_node_arguments_in_the_command_mean_several_nodes() -> None:
    def hardware(text: str) -> list[str]:
        return [i.description for i in missing.missing_info(text, extract(text), "S4", True)
                if i.key == "hardware"]
    for many in ("torchrun --nnodes=$NNODES --node_rank=$NODE_RANK --master_addr=$MASTER "
                 "--nproc_per_node=8 train.py is slow",
                 "srun -N 2 torchrun --nproc_per_node 4 train.py is slow",
                 "deepspeed --num_gpus 8 --node_rank 1 train.py is slow"):
        assert hardware(many) == [missing.describe("hardware", None)], many


def test_rocm_wording_leaves_a_frameworks_own_version_tool_alone() -> None:
    text = "Training on an AMD ROCm system fails with an error."
    versions = [i.description for i in missing.missing_info(text, extract(text), "S4", False,
                                                            framework="pytorch") if i.key == "versions"]
    assert versions == [missing.describe("versions", "pytorch")]


def test_a_bare_report_is_asked_what_it_shows_when_it_goes_wrong() -> None:
    # a sentence or two saying something goes wrong, and nothing else: what happened is the first
    # thing to ask (such reports were silent: no error was mentioned, so no traceback request)
    for title, body in (("[BUG]: Model doesn't work with GeminiDDP", "My model isn't compatible with GeminiDDP."),
                        ("[BUG]", "Bug report."),
                        ("[BUG] `export CUDA_VISIBLE_DEVICES=0,1,6,7` has no effect",
                         "Setting `export CUDA_VISIBLE_DEVICES=0,1,6,7` doesn't work.")):
        text = full_text(title, body)
        assert missing.bare_report(text), title
        items = missing.missing_info(text, extract(text), None, False, framework="colossalai")
        traceback = next(item for item in items if item.key == "traceback")
        assert traceback.description == missing.BARE_TRACEBACK
        assert missing.is_template(traceback)
        assert missing.specific(missing.asked(items, stage=None), None)


def test_a_bare_report_that_names_an_error_keeps_the_traceback_wording() -> None:
    text = full_text("[BUG] out of memory in model.load_checkpoint",
                     "Calling model.load_checkpoint fails.")
    items = missing.missing_info(text, extract(text), None, False, framework="deepspeed")
    assert next(i for i in items if i.key == "traceback").description != missing.BARE_TRACEBACK


def test_what_is_not_a_bare_report() -> None:
    cases = {
        "a question": ("Configuring fp8 training", "How should fp8 training be configured? It fails."),
        "a hang": ("[BUG] Training hangs", "Training with ZeRO-3 doesn't finish, it hangs."),
        "a slowdown": ("[BUG] Training got slower", "Training with pipeline parallelism is broken: slower."),
        "no error to show": ("Silent crash with cpu_offload", "Setting cpu_offload makes it crash silently."),
        "an error shown": ("[BUG]", "It fails with\nRuntimeError: CUDA error: invalid device ordinal"),
        "code shown": ("[BUG] wrong output", "It goes wrong:\n```\nmodel = init()\n```"),
        "nothing going wrong": ("Add ViT", "Please add a ViT example to the examples folder."),
        "a long report": ("[BUG] broken", "It does not work. " + "We train a 7B model on 8 GPUs. " * 10),
    }
    for name, (title, body) in cases.items():
        assert not missing.bare_report(full_text(title, body)), name


def test_a_report_that_found_what_makes_it_work_is_not_asked_for_versions_or_a_comparison() -> None:
    # the reporter's own A/B: a release it works on, a change that makes it work or triggers it
    for sentence in ("grad_norm and loss become nan with deepspeed==0.13.5 but are fine with "
                     "deepspeed==0.10.2.",
                     "After adding find_unused_parameters=True it works.",
                     "If I hardcode NCCL_SOCKET_IFNAME=ens5, the script works.",
                     "The script also works after downgrading to Torch 1.6.0 with CUDA 10.2.",
                     "Calling `get_state_dict_type()` works around it.",
                     "Either of these two things avoids the problem.",
                     "I see it on 0.5.1, but not on the big-science branch.",
                     "As soon as I uncomment the TensorBoard callback, training stops."):
        assert missing.narrowed_down(sentence), sentence
    text = ("Training on 8 GPUs fails: loss becomes nan with deepspeed==0.13.5 but is fine with "
            "deepspeed==0.10.2.")
    keys = _keys(text, "S4", True, framework="deepspeed")
    assert not set(keys) & missing.MOOT_WHEN_NARROWED
    # the error itself is still asked when the report does not show it
    assert "traceback" in _keys("As soon as I set the `tp-comm-overlap` flag to True, training "
                                "fails with an error.", "S4", True, framework="megatron")


def test_a_symptom_contrast_or_a_change_that_did_not_help_is_not_narrowing_down() -> None:
    for sentence in ("The same job runs fine on 4 GPUs but fails on 8.",
                     "It works with 7B models.",
                     "I hit this with the provided 13b training scripts, but not with the 1.3b ones.",
                     "If I change it to two GPUs, everything before the training step is fine, but "
                     "as soon as training starts it hangs.",
                     "It no longer works after upgrading to 0.10.2.",
                     "None of these fixed the problem.",
                     "I was fine-tuning with deepspeed 0.9.2 when it crashed."):
        assert not missing.narrowed_down(sentence), sentence


def test_pip_failing_to_choose_a_version_is_not_asked_for_build_output_or_cuda() -> None:
    text = ("pip install fails with CUDA_EXT=1\nCollecting colossalai\nDiscarding colossalai: "
            "Requested colossalai has inconsistent version: expected '0.2.0', but metadata has "
            "'0.2.0+torch1.13cu11.3'\nERROR: No matching distribution found for colossalai")
    keys = _keys(text, "S1", False, framework="colossalai")
    assert "build_log" not in keys and "cuda" not in keys
    # a compiler's error beside it: something was built
    built = text + "\nerror: command '/usr/bin/nvcc' failed with exit code 1"
    assert not symptom_requests.resolution_failed(built)


def test_a_slurm_job_is_asked_for_its_sbatch_script_not_a_torchrun_command() -> None:
    text = "Multi-node DDP training on SLURM hangs at 'Initializing distributed' with 2 nodes."
    items = missing.missing_info(text, extract(text), "S2", True, framework="pytorch")
    launch = next(item for item in items if item.key == "launcher_command")
    assert launch.description == missing.SLURM_LAUNCH and missing.is_template(launch)
    # a launcher named beside SLURM keeps its own wording; the job script attached is the command
    named = text + " I start it with srun torchrun --nnodes 2 train.py"
    assert all(i.description != missing.SLURM_LAUNCH
               for i in missing.missing_info(named, extract(named), "S2", True, framework="pytorch"))
    attached = text + "\nAttached: output.txt and multinode_trainer.slurm.txt"
    assert "launcher_command" not in _keys(attached, "S2", True, framework="pytorch")


def test_a_horovod_hang_without_nccl_is_asked_for_horovods_own_log() -> None:
    text = "Training hangs after the first epoch when TensorBoard is enabled on 4 workers."
    items = missing.missing_info(text, extract(text), "S4", True, framework="horovod")
    log = next(item for item in items if item.key == "nccl_debug")
    assert "HOROVOD_LOG_LEVEL=debug" in log.description and missing.is_template(log)
    with_nccl = text + " It runs its allreduce on NCCL 2.4."
    log = next(i for i in missing.missing_info(with_nccl, extract(with_nccl), "S4", True,
                                               framework="horovod") if i.key == "nccl_debug")
    assert "HOROVOD_LOG_LEVEL" not in log.description


def test_memory_that_runs_out_is_asked_for_the_gpus_memory_not_their_links() -> None:
    text = ("The step that adds padding back runs out of memory with the hybrid plugin on 8 GPUs "
            "(--nproc_per_node 8).")
    items = missing.missing_info(text, extract(text), "S4", True, framework="colossalai")
    hardware = next(item for item in items if item.key == "hardware")
    assert hardware.description == missing.MEMORY_HARDWARE and missing.is_template(hardware)
    # a hang beside it keeps the links in the request
    hang = text + " Sometimes it hangs instead."
    items = missing.missing_info(hang, extract(hang), "S4", True, framework="colossalai")
    assert next(i for i in items if i.key == "hardware").description != missing.MEMORY_HARDWARE


def test_slow_inference_is_asked_how_the_time_was_measured() -> None:
    text = "DeepSpeed inference with init_inference is slower than plain PyTorch on one GPU."
    items = missing.missing_info(text, extract(text), "S5", False, framework="deepspeed")
    profile = next(item for item in items if item.key == "profile")
    assert profile.description == symptom_requests.PROFILE_INFERENCE and missing.is_template(profile)
    training = "Training with ZeRO-2 is slower than DDP."
    items = missing.missing_info(training, extract(training), "S4", True, framework="deepspeed")
    assert next(i for i in items if i.key == "profile").description != symptom_requests.PROFILE_INFERENCE


# --- a question or a feature request is not asked for a bug's traceback, repro or versions -----

@pytest.mark.parametrize("text", [
    "Configuring fp8 training\nHow should fp8 training be configured in Megatron-LM?",
    "Problem with multi-node training under Slurm\nI want to train across nodes. Is there any "
    "resource on how to do that?",
    "Sequence lengths\nI'd like to ask how to handle lengths the sequence parallel size does not divide.",
    "CPUAdam warning\nDoes deepspeed work with AMD CPUs?",
])
def test_a_question_without_an_error_gets_no_checklist(text: str) -> None:
    assert missing.howto_question(text), text
    assert _keys(text, "S4", True, framework="deepspeed") == [], text


@pytest.mark.parametrize("text", [
    "Built-in SLURM support\nOut-of-the-box support for multi-node training on SLURM clusters "
    "would be handy.",
    "BF16 support\nIs support for bf16 training in deepspeed planned for the near future?",
    "Request to change the CUDA_VISIBLE_DEVICES handling in deepspeed/launcher/runner.py\nTraining "
    "on chosen GPUs kept failing because the launcher resets CUDA_VISIBLE_DEVICES.",
    "Customizable Tensorboard\nCould a utility be added that lets me plug in my own tensorboard?",
])
def test_a_feature_request_is_not_asked_for_a_bugs_traceback_repro_or_versions(text: str) -> None:
    assert missing.asks_for_a_feature(text), text
    keys = _keys(text, "S4", True, framework="deepspeed")
    assert not set(keys) & missing.BUG_STYLE, (text, keys)


@pytest.mark.parametrize("text", [
    # a bug reported with a question mark
    "How do I fix this? Training fails with RuntimeError: CUDA error: an illegal memory access.",
    "Why does ZeRO-3 crash with an error on 8 GPUs?",
    "ValueError: Only able to place 0 replicas, but 2 replicas were requested.\nHow do I fix this?",
    # a bug with a wish: its own failure is shown or named
    "FSDP gives random-level accuracy with param_init_fn; it would be great if FSDP supported "
    "this out of the box.",
    "Training crashes\n```\nTraceback (most recent call last):\nRuntimeError: boom\n```\nIt would be "
    "nice if the error were clearer.",
])
def test_a_bug_reported_with_a_question_or_a_wish_keeps_its_checklist(text: str) -> None:
    assert not missing.howto_question(text) and not missing.asks_for_a_feature(text), text
    assert set(_keys(text, "S4", True)) & missing.BUG_STYLE, text


def test_a_fix_the_reporter_made_in_the_frameworks_code_is_a_diagnosis() -> None:
    for text in ("FSDP training hangs when saving. Simply adding a `dist.barrier()` inside "
                 "`_pre_state_dict_hook` gets me past the problem.",
                 "pipeline_parallel doesn't work when pp_size > 2; the program hangs.\nWith my "
                 "modification:\n```\ndef _batched_p2p_ops(*, tensor_send_prev): ...\n```"):
        assert missing.reporter_diagnosed(text) and _keys(text, "S4", True) == [], text
    assert not missing.reporter_diagnosed("With torch 2.5 I can't get past this error: KeyError.")


def test_two_virtual_machines_with_a_gpu_each_are_several_processes():
    """horovod#3620: "2 VMs, each with 1 GPU" is a two-node run, whose NCCL log is worth asking
    for: the single GPU per machine does not make it one process."""
    text = "Horovod training hangs on 2 VMs, each with 1 GPU, at the first allreduce."
    assert not missing._one_process(text, extract(text))
