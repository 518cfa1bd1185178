"""Environment facts from the formats reporters really paste (see test_domain_support)."""
from __future__ import annotations

import pytest

import support.domain as s
from triagebot.domain.environment import extract


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
