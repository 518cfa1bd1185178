"""Environment facts from the formats reporters really paste (see test_domain_support)."""
from __future__ import annotations

import pytest

import support.domain as s
from triagebot.domain.environment import extract, mentions


def test_ds_report() -> None:
    env = extract(s.DS_REPORT)
    assert (env.framework, env.framework_version) == ("deepspeed", "0.10.0")
    assert (env.torch, env.cuda_torch, env.cuda_nvcc) == ("2.0.1+cu117", "11.7", "12.1")
    assert env.python == "3.10"
    assert env.cuda_mismatch()


def test_collect_env() -> None:
    env = extract(s.COLLECT_ENV)
    assert (env.torch, env.cuda_torch, env.cuda_nvcc) == ("2.1.0+cu121", "12.1", "12.1")
    assert not env.cuda_mismatch()
    assert env.python == "3.10.12"
    assert env.os == "Ubuntu 22.04.3 LTS"
    assert env.gpu_model is not None and "A100" in env.gpu_model
    assert env.gpu_count == 4
    assert env.framework == "pytorch"


def test_pip_list_columns() -> None:
    env = extract(s.PIP_LIST)
    assert (env.framework, env.framework_version) == ("colossalai", "0.3.1")
    assert (env.torch, env.cuda_torch) == ("1.13.1+cu117", "11.7")
    assert (env.transformers, env.nccl) == ("4.31.0", "2.14.3")


def test_pip_freeze_prefers_deepspeed_over_megatron_core_mentions() -> None:
    env = extract(s.PIP_FREEZE)
    assert (env.framework, env.framework_version, env.torch) == ("deepspeed", "0.9.2", "2.1.2")
    assert env.transformers == "4.36.2"


def test_nvidia_smi_table_counts_gpus_and_ignores_driver_cuda() -> None:
    env = extract(s.NVIDIA_SMI)
    assert env.gpu_count == 4
    assert env.gpu_model is not None and env.gpu_model.endswith("H100 80GB")
    assert env.cuda_nvcc is None  # "CUDA Version: 12.2" is the driver's, not the toolkit's


def test_nvcc_version_output() -> None:
    assert extract(s.NVCC).cuda_nvcc == "11.8"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 nodes with 8 A100, torch 2.1, CUDA 11.8, python3.10",
         {"nodes": 2, "gpu_count": 8, "gpu_model": "A100", "torch": "2.1", "cuda_nvcc": "11.8",
          "python": "3.10"}),
        ("System info: HPC, ubuntu 22.04, 2nodesx8H100, LSF as scheduler",
         {"nodes": 2, "gpu_count": 8, "gpu_model": "H100", "os": "ubuntu 22.04"}),
        ("running on 4x V100 32GB with torch==1.12.1 and Python 3.8.10",
         {"gpu_count": 4, "torch": "1.12.1", "python": "3.8.10"}),
        ("colossalai 0.2.8 requires torch<2.0,>=1.11, but you have torch 2.1.0.dev20230525+cu121",
         {"framework": "colossalai", "torch": "2.1.0.dev20230525+cu121", "cuda_torch": "12.1"}),
        ("Megatron core_v0.19.0 on H200, srun python pretrain_gpt.py",
         {"framework": "megatron", "framework_version": "0.19.0", "launcher": "srun"}),
        ("module load cuda-12.1.1\nexport CUDA_HOME=/usr/local/cuda-12.1", {"cuda_nvcc": "12.1"}),
        ("NCCL INFO NCCL version 2.18.1+cuda12.1", {"nccl": "2.18.1", "cuda_nvcc": None}),
        ("Windows 11, pip install deepspeed fails", {"os": "Windows 11", "framework": "deepspeed"}),
    ],
)
def test_prose(text: str, expected: dict[str, object]) -> None:
    env = extract(text).model_dump()
    assert {k: env[k] for k in expected} == expected


@pytest.mark.parametrize(
    ("command", "launcher"),
    [
        ("deepspeed --num_gpus 8 train.py --deepspeed ds_config.json", "deepspeed"),
        ("$ deepspeed train.py", "deepspeed"),
        ("torchrun --nproc_per_node=8 --nnodes=2 train.py", "torchrun"),
        ("colossalai run --nproc_per_node 4 train.py", "colossalai run"),
        ("python -m torch.distributed.launch --nproc_per_node=4 main.py", "torch.distributed.launch"),
        ("srun -N 2 --gpus-per-node 8 python pretrain_gpt.py", "srun"),
        ("mpirun -np 16 -H a:8,b:8 python train.py", "mpirun"),
        ("accelerate launch --config_file zero3.yaml train.py", "accelerate launch"),
        ("horovodrun -np 4 python train.py", "horovodrun"),
        ("I use deepspeed 0.9.2 with zero stage 3", None),
    ],
)
def test_launchers(command: str, launcher: str | None) -> None:
    assert extract(command).launcher == launcher


def test_launch_flags_give_counts() -> None:
    env = extract("torchrun --nnodes=4 --nproc_per_node=8 train.py")
    assert (env.nodes, env.gpu_count) == (4, 8)


def test_deepspeed_report_inside_a_long_issue() -> None:
    text = "Describe the bug\nCUDA OOM\n" + "log line\n" * 5000 + s.DS_REPORT + "\nlaunch: torchrun x.py"
    env = extract(text)
    assert (env.framework_version, env.cuda_torch, env.launcher) == ("0.10.0", "11.7", "torchrun")


def test_nothing_found_in_plain_prose() -> None:
    env = extract("The loss does not go down after a while.")
    assert env.model_dump(exclude_none=True) == {}


# --- misreads named in #11 ------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # a commit hash that starts with digits followed by an A100-like run of characters
    "Reproduces on master (commit 37a1005f2c9e4b1d8a7e6f5c4b3a2918d7e6c5b4) with 8x A100 80GB.",
    "See https://github.com/microsoft/DeepSpeed/blob/c37a1002f0e9d8c7b6a5/deepspeed/runtime/zero "
    "and the screenshot ![img](https://user-images.githubusercontent.com/123/37a100-img.png). "
    "Running on 8 A100 GPUs.",
    "nvidia-smi -L\nGPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-37a10021-1fd6-a53b-8882-7d59735e0271)\n"
    "training on 8 x A100",
])
def test_hashes_urls_and_uuids_are_not_gpu_counts(text: str) -> None:
    env = extract(text)
    assert env.gpu_count in (1, 8) and env.gpu_count != 37
    assert env.gpu_model is not None and "A100" in env.gpu_model


def test_a_hash_alone_gives_no_gpu_count_or_model() -> None:
    env = extract("Fails since commit 37a1005f2c9e4b1d8a7e on the main branch.")
    assert (env.gpu_count, env.gpu_model) == (None, None)


@pytest.mark.parametrize(("text", "torch"), [
    ("I use the NGC container nvcr.io/nvidia/pytorch:25.06-py3 with Megatron-LM core_r0.13.0", None),
    ("Megatron-LM main in the PyTorch 25.06 container on 4 nodes", None),
    ("docker image: pytorch:21.09-py3 (pytorch 1.10.0, cuda 11.4, python 3.8)", "1.10.0"),
    ("NGC pytorch:24.10-py3, torch==2.5.0a0+e000cf0", "2.5.0a0+e000cf0"),
])
def test_ngc_container_tags_are_not_torch_versions(text: str, torch: str | None) -> None:
    env = extract(text)
    assert env.torch == torch
    assert env.framework_version in (None, "0.13.0")


def test_framework_of_repository() -> None:
    from triagebot.domain.environment import framework_of

    assert [framework_of(r) for r in ("deepspeedai/DeepSpeed", "NVIDIA/Megatron-LM",
                                      "hpcaitech/ColossalAI", "horovod/horovod", "pytorch/pytorch",
                                      "bigscience-workshop/Megatron-DeepSpeed", "org/repo", "")] == \
        ["deepspeed", "megatron", "colossalai", "horovod", "pytorch", "deepspeed", None, None]


def test_a_cpp_frames_address_is_no_gpu_count() -> None:
    """Megatron-LM#935's C++ frames ("+ 0xdc253 (0x7fe76a6b0253 in /usr/lib/...)") once read as
    6 GPUs ("6b025" as "6 x B025")."""
    frames = "frame #4:   + 0xdc253 (0x7fe76a6b0253 in /usr/lib/x86_64-linux-gnu/libstdc++.so.6)"
    assert extract(frames).gpu_count is None
    assert extract("one machine with x8 A100s").gpu_count == 8
    assert extract("trained on 8xA40s").gpu_count == 8


def test_nodes_times_gpus_per_node_gives_the_nodes() -> None:
    """ColossalAI#1184's "2*8 A100" is two nodes of eight, not one node."""
    env = extract("Pipeline 4 with 2D tensor parallel 4 hangs at init on 2*8 A100.")
    assert (env.nodes, env.gpu_count) == (2, 8)
    assert extract("a 2x8 GPUs cluster").nodes == 2
    assert extract("trained on 8xA40s").nodes is None
    assert extract("It runs fine with 1*8, 2*8 and 4*8 GPUs").nodes is None


def test_a_model_with_four_digits_and_a_batch_size_product_read_right() -> None:
    assert extract("one machine with x4 A6000s").gpu_count == 4
    assert extract("batch size 4 x 2 GPUs").nodes is None


def test_a_framework_is_mentioned_in_its_own_terms() -> None:
    """The one reading of "the report mentions DeepSpeed" (the framework hints); the checklist
    asks Accelerate's config with its deepspeed_config section on it."""
    assert mentions("training with ds_config.json", "deepspeed")
    assert mentions("Using DeepSpeed ZeRO-3", "deepspeed")
    assert not mentions("FSDP with full sharding", "deepspeed")
    assert not mentions("anything", "no-such-framework")
