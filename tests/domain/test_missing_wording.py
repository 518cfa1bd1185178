"""The checklist in the report's own terms: Accelerate's tools in its tracker, no "several ranks" for
one process, and only the versions a report lacks (blind audits s8 a1 and a2)."""
from __future__ import annotations

import time

import pytest

from triagebot.domain import missing, symptom_requests
from triagebot.domain.environment import extract, framework_of
from triagebot.domain.models import MissingInfo
from triagebot.text.signal import full_text

ACCELERATE = framework_of("huggingface/accelerate")


def _items(text: str, stage: str | None, distributed: bool = True,
           framework: str | None = None) -> dict[str, str]:
    items = missing.missing_info(text, extract(text), stage, distributed, framework=framework)
    return {item.key: item.description for item in items}


def test_the_accelerate_repository_is_its_own_framework() -> None:
    assert ACCELERATE == "accelerate"
    assert framework_of("deepspeedai/DeepSpeed") == "deepspeed"
    assert framework_of("huggingface/transformers") is None


def test_an_accelerate_report_is_asked_for_accelerate_env_and_its_config_not_ds_report_or_a_json() -> None:
    """accelerate#2885: ds_report and "the DeepSpeed config JSON" were read as the wrong tools."""
    text = full_text("Model saved with DeepSpeed ZeRO-3 does not load correctly",
                     "A model I saved after training with DeepSpeed ZeRO-3 cannot be loaded correctly "
                     "afterwards.")
    items = _items(text, "S5", framework=ACCELERATE)
    assert "ds_report" not in items
    assert "accelerate env" in items["versions"]
    assert items["config"] == missing.ACCELERATE_DEEPSPEED_CONFIG
    assert "DeepSpeed config JSON" not in " ".join(items.values())
    # ...while DeepSpeed's own tracker keeps its own tools for the same words
    deepspeed = _items(text, "S5", framework="deepspeed")
    assert "ds_report" in deepspeed and deepspeed["config"] == "The DeepSpeed config JSON."


def test_an_accelerate_config_without_deepspeed_is_asked_without_its_deepspeed_section() -> None:
    text = "FSDP run fails\nTraining with the plugin and cpu offload fails with an error."
    assert _items(text, "S3", framework=ACCELERATE)["config"] == missing.describe("config", ACCELERATE)


def test_an_accelerate_launch_is_asked_with_the_config_it_reads() -> None:
    """accelerate#2818 (what `accelerate config` writes for several machines) was asked for "the
    exact launch command, with the hostfile or node arguments"."""
    text = full_text("[Multi-node] accelerate config sets num_processes incorrectly",
                     "For a multi-node setup, `accelerate config` writes a wrong value for num_processes.")
    items = _items(text, "S2", framework=ACCELERATE)
    assert items["launcher_command"] == missing.ACCELERATE_LAUNCH_AND_CONFIG
    assert "config" not in items  # asked once, with the launch
    assert "accelerate env" in items["versions"]
    # a config shown (or answered question by question) leaves the command alone
    shown = text + "\n```\ncompute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\n```"
    assert _items(shown, "S2", framework=ACCELERATE)["launcher_command"] == \
        missing.describe("launcher_command", ACCELERATE)
    answers = ("Prepare hangs on one node\n## accelerate config answers\n"
               "Which type of machine are you using? ([0] No distributed training, [2] multi-GPU): 2\n"
               "Do you want to use DeepSpeed? [yes/NO]: No\n"
               "How many processes in total will you use? [1]: 2\n"
               "The script gets stuck at `accelerator.prepare`.")
    assert _items(answers, "S2", framework=ACCELERATE)["launcher_command"] == \
        missing.describe("launcher_command", ACCELERATE)


def test_an_accelerate_import_error_is_asked_for_accelerate_env() -> None:
    """accelerate#112: the accelerate version and how it was installed, not deepspeed's lines."""
    text = "cannot import name 'DeepSpeedPlugin' from 'accelerate'\nThis import fails:\n" \
           "```\nfrom accelerate import Accelerator, DeepSpeedPlugin\n```"
    items = _items(text, None, framework=ACCELERATE)
    assert items["pip_list"].startswith("The output of `accelerate env`")
    assert "ds_report" not in items


def test_accelerate_requests_are_templates() -> None:
    for text in (missing.ACCELERATE_LAUNCH_AND_CONFIG, missing.ACCELERATE_DEEPSPEED_CONFIG,
                 *missing.VERSIONS_WITHOUT_CUDA.values(),
                 *(missing.describe(key, ACCELERATE) for key in missing.DESCRIPTIONS),
                 symptom_requests.describe("pip_list", ACCELERATE)):
        assert len(text) <= 200 and text.count("`") % 2 == 0, text
        assert missing.is_template(MissingInfo(key="config", description=text)) or \
            missing.is_template(MissingInfo(key="pip_list", description=text))


@pytest.mark.parametrize("shown", [
    "```python\nworld_size = 1\nengine = deepspeed.init_inference(model, mp_size=world_size)\n```",
    "trainer:\n  accelerator: gpu\n  devices: 1\n",
    "torchrun --nnodes=1 --nproc_per_node=1 train.py",
    "I run the script with python train.py on a single GPU.",
    "@distributed_test(world_size=[1])",
])
def test_a_single_process_is_not_asked_for_the_traceback_of_several_ranks(shown: str) -> None:
    """DeepSpeed#2956 ("world_size = 1" before init_inference) was asked for "several ranks"."""
    text = f"Inference fails\n{shown}\nIt doesn't work, it fails with an error."
    assert _items(text, "S5")["traceback"] == missing.ONE_PROCESS_TRACEBACK


@pytest.mark.parametrize("several", [
    "world_size = 1 works, but world_size = 2 fails.",
    "It works on a single GPU but fails on 8 GPUs.",
    "It works on a single GPU, and fails with DDP.",
    "devices: 1 on each of the 2 nodes",
    "on a single GPU with deepspeed --num_gpus 1 --hostfile hosts train.py",
])
def test_a_report_that_speaks_of_several_processes_keeps_the_ranks(several: str) -> None:
    text = f"Training fails\nIt doesn't work, it fails with an error. {several}"
    assert _items(text, "S4")["traceback"] == missing.DESCRIPTIONS["traceback"]


def test_a_report_giving_the_cuda_version_is_asked_only_for_the_missing_versions() -> None:
    """ColossalAI#3076 gave nvcc's "release 11.7" and was asked for the CUDA version again."""
    text = ("Loading the model fails\nIt fails with an error.\n\nnvcc -V\n"
            "Cuda compilation tools, release 11.7, V11.7.99\n")
    assert _items(text, "S4", framework="colossalai")["versions"] == \
        "The Colossal-AI and PyTorch versions (the output of colossalai check -i)."
    assert _items(text, "S4")["versions"] == "The versions of the framework and PyTorch."
    bare = "Loading the model fails\nIt fails with an error."
    assert _items(bare, "S4", framework="colossalai")["versions"] == \
        missing.describe("versions", "colossalai")


UNITS = ["a_a_", "-a-a", "x1x1", "\n\n\n", "```", "?(", "?[", "? [yes/NO]: ", "world_size=", "devices: ",
         "--nproc_per_node=1 ", "11", " on a single GPU", "accelerate config ", "a?(b)", "]]]:"]


@pytest.mark.parametrize("unit", UNITS)
def test_the_new_patterns_are_fast_on_hostile_input(unit: str) -> None:
    text = unit * (100_000 // len(unit))
    for pattern in (missing._ONE_PROCESS, missing._ONE_GPU, missing._SEVERAL_PROCESSES,
                    missing._ACCELERATE_ANSWER, missing._ACCELERATE_CONFIG_MENTION, missing._ZERO_STAGE):
        start = time.perf_counter()
        pattern.findall(text)
        assert time.perf_counter() - start < 0.5, (pattern.pattern[:40], unit)
    report = full_text("Training fails", text)  # as the engine reads it (blank runs collapsed)
    start = time.perf_counter()
    missing.missing_info(report, extract(report), "S2", True, framework=ACCELERATE)
    assert time.perf_counter() - start < 10.0  # hang guard, not a benchmark


def test_accelerate_config_asks_for_its_deepspeed_section_when_deepspeed_or_a_zero_stage_runs_under_it() -> None:
    for text in ("accelerate launch with DeepSpeed fails with an error, ZeRO offload on.",
                 "accelerate launch with zero3 offload fails with an error."):
        items = missing.missing_info(text, extract(text), "S4", True, framework=ACCELERATE)
        config = [i for i in items if i.key == "config"]
        assert config and config[0].description == missing.ACCELERATE_DEEPSPEED_CONFIG, text
