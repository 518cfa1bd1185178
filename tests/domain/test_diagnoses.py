"""Diagnoses from the report's own error (``domain/diagnoses.py``): each kept signature fires on a
real-looking log and not on the near-misses that read alike but mean something else; quoted
values are only short, strict and sanitized; the table is consistent with the taxonomy."""
from __future__ import annotations

import re

import pytest

from triagebot.domain import diagnoses, environment, taxonomy
from triagebot.domain.models import Diagnosed, Environment, Triage
from triagebot.text.signal import full_text

NOISE = "\n".join(
    f"[2024-03-0{i % 9 + 1} 12:{i % 60:02d}:07,148] [INFO] [engine.py:{100 + i}:step] "
    f"step={i}, skipped=0, lr=[2.9e-05], mom=[(0.9, 0.999)] rank={i % 8}"
    for i in range(400))


def report(title: str, log: str, prose: str = "It fails, see the log.") -> str:
    """A GitHub-template report with a long log around the error, cleaned as the engine reads it."""
    body = (f"**Describe the bug**\n{prose}\n\n**Logs**\n```\n{NOISE}\n{log}\n{NOISE}\n```\n\n"
            "**System info**\n- deepspeed 0.14.2, torch 2.3.0+cu121, Python 3.10, 8x A100\n")
    return full_text(title, body)


def ids(text: str, env: Environment | None = None) -> list[str]:
    return [d.id for d in diagnoses.diagnose(text, env or environment.extract(text))]


LOGS = {
    "cuda_mismatch": (
        "[BUG] pip install deepspeed fails",
        "      File \"/tmp/pip-install-x/deepspeed_1/op_builder/builder.py\", line 97, in "
        "assert_no_cuda_mismatch\n        raise CUDAMismatchException(\n"
        "    op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA "
        "version 12.1 does not match the version torch was compiled with 11.8, unable to "
        "compile cuda/cpp extensions without a matching cuda version.\n"
        "    [end of output]"),
    "cuda_toolkit_missing": (
        "fused_adam build error",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/cpp_extension.py\", line "
        "2416, in _join_cuda_home\n    raise OSError('CUDA_HOME environment variable is not set. '\n"
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install "
        "root."),
    "torch_abi": (
        "ImportError when importing the op",
        "ImportError: /root/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi"),
    "import_name": (
        "Running the example fails",
        "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
        "    from colossalai.zero import ColoInitContext\n"
        "ImportError: cannot import name 'ColoInitContext' from 'colossalai.zero' "
        "(/home/u/miniconda3/envs/c/lib/python3.9/site-packages/colossalai/zero/__init__.py)"),
    "launcher_env": (
        "launch_from_torch error",
        "  File \"/usr/lib/python3.10/os.py\", line 680, in __getitem__\n"
        "    raise KeyError(key) from None\nKeyError: 'LOCAL_RANK'"),
    "port_in_use": (
        "torchrun fails on the second job",
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 "
        "(errno: 98 - Address already in use).\n[E socket.cpp:472] [c10d] The server socket "
        "has failed to listen on any local network address.\n"
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any "
        "local network address."),
    "local_rank_arg": (
        "finetune.py rejects an argument",
        "[2024-01-02 10:00:01,000] [INFO] [launch.py:163:main] dist_world_size=2\n"
        "usage: finetune.py [-h] [--model MODEL] [--epochs EPOCHS]\n"
        "finetune.py: error: unrecognized arguments: --local_rank=1"),
    "duplicate_gpu": (
        "NCCL invalid usage at barrier",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1691, invalid usage, NCCL version 2.19.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000"),
    "ddp_unused": (
        "DDP error with two heads",
        "RuntimeError: Expected to have finished reduction in the prior iteration before "
        "starting a new one. This error indicates that your module has parameters that were "
        "not used in producing loss."),
    "zero3_partitioned": (
        "stage 3 inference breaks",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py\", line 2233, "
        "in embedding\n    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, "
        "sparse)\nRuntimeError: 'weight' must be 2-D\nconfig: {\"zero_optimization\": "
        "{\"stage\": 3}}"),
    "sigkill": (
        "training dies after loading",
        "[2024-05-01 10:11:12,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess "
        "1234\n[2024-05-01 10:11:12,001] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/"
        "python', '-u', 'train.py', '--local_rank=0'] exits with return code = -9"),
    "not_divisible": (
        "pretrain_gpt assertion",
        "  File \"/workspace/megatron/core/utils.py\", line 31, in ensure_divisibility\n"
        "    assert numerator % denominator == 0, '{} is not divisible by {}'.format(\n"
        "AssertionError: 32 is not divisible by 3"),
}

NEAR_MISSES = {
    # the warning DeepSpeed prints when it accepts the pair: the build goes on
    "cuda_mismatch": "Installed CUDA version 12.3 does not match the version torch was compiled "
                     "with 12.1 but since the APIs are compatible, accepting this combination",
    # a warning printed on machines without a GPU, with the toolkit found
    "cuda_toolkit_missing": "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
    # a symbol of CUDA's own libraries: a link bug of the op, not another torch
    "torch_abi": "ImportError: transformer_inference.so: undefined symbol: curandCreateGenerator",
    # a circular import, often a local file named like the package
    "import_name": "ImportError: cannot import name 'deepspeed' from partially initialized "
                   "module 'deepspeed' (most likely due to a circular import)",
    "launcher_env": "KeyError: 'RANKING_LOSS'\nI exported RANK=0 and WORLD_SIZE=1 myself.",
    # a web server of an inference setup, no rendezvous
    "port_in_use": "ERROR: [Errno 98] error while attempting to bind on address "
                   "('0.0.0.0', 8000): address already in use (uvicorn, gradio demo)",
    "local_rank_arg": "train.py: error: unrecognized arguments: --lr_warmup 100",
    "duplicate_gpu": "I detected a duplicate entry in the GPU list of my hostfile.",
    "ddp_unused": "RuntimeError: Expected all tensors to be on the same device, but found at "
                  "least two devices, cuda:0 and cpu!",
    # an ordinary shape bug, no ZeRO-3
    "zero3_partitioned": "RuntimeError: 'weight' must be 2-D\nplain DDP, no DeepSpeed",
    # the watchdog took the process down, not the OOM killer
    "sigkill": "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3424, "
               "OpType=ALLGATHER, Timeout(ms)=1800000)\nERROR:torch.distributed.elastic."
               "multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 12076)",
    "not_divisible": "Note that the hidden size is not divisible by the number of heads in my "
                     "custom config, is that allowed?",
}


@pytest.mark.parametrize("diagnosis_id", sorted(LOGS))
def test_each_signature_is_recognised_in_a_long_messy_log(diagnosis_id: str) -> None:
    title, log = LOGS[diagnosis_id]
    assert ids(report(title, log)) == [diagnosis_id]


@pytest.mark.parametrize("diagnosis_id", sorted(NEAR_MISSES))
def test_a_near_miss_that_reads_alike_is_not_diagnosed(diagnosis_id: str) -> None:
    assert ids(report("It fails", NEAR_MISSES[diagnosis_id])) == []


def test_every_kept_signature_has_a_log_and_a_near_miss() -> None:
    assert set(LOGS) == set(NEAR_MISSES) == set(diagnoses.BY_ID)


def test_a_cuda_mismatch_in_the_report_is_quoted_as_two_versions() -> None:
    found = diagnoses.diagnose(report(*LOGS["cuda_mismatch"]))
    assert found[0].values == {"nvcc_cuda": "12.1", "torch_cuda": "11.8"}
    shown = diagnoses.text_of(found[0]) or ""
    assert "built with CUDA 11.8" in shown and "CUDA 12.1" in shown


def test_torchs_own_mismatch_message_names_the_versions_the_other_way_round() -> None:
    text = report("build", "RuntimeError:\nThe detected CUDA version (12.1) mismatches the "
                  "version that was used to compile\nPyTorch (11.8). Please make sure to use "
                  "the same CUDA versions.")
    assert diagnoses.diagnose(text)[0].values == {"nvcc_cuda": "12.1", "torch_cuda": "11.8"}


def test_torch_and_nvcc_of_different_major_versions_while_building_is_a_mismatch() -> None:
    text = full_text("[BUG] fused_adam fails to build", "RuntimeError: Error building extension "
                     "'fused_adam'\n- deepspeed 0.12.6, torch 2.1.0+cu118, nvcc 12.1")
    found = diagnoses.diagnose(text, environment.extract(text))
    assert [d.id for d in found] == ["cuda_mismatch"]
    assert found[0].values == {"torch_cuda": "11.8", "nvcc_cuda": "12.1"}


def test_a_minor_version_difference_proves_nothing() -> None:
    """torch only warns on it, DeepSpeed accepts known pairs: the build failed for another reason."""
    text = full_text("[BUG] fused_adam fails to build", "RuntimeError: Error building extension "
                     "'fused_adam'\n- deepspeed 0.12.6, torch 2.1.0+cu121, nvcc 12.3")
    assert environment.extract(text).cuda_mismatch()
    assert ids(text) == []


def test_the_package_quoted_is_the_top_level_name_only() -> None:
    found = diagnoses.diagnose(report(*LOGS["import_name"]))
    assert found[0].values == {"package": "colossalai"}
    assert (diagnoses.text_of(found[0]) or "").startswith("The installed `colossalai` does not")


def test_an_import_without_from_gets_the_template_without_a_package() -> None:
    found = diagnoses.diagnose(report("x", "ImportError: cannot import name 'OrderedDict'"))
    assert found[0].values == {}
    assert diagnoses.text_of(found[0]) == diagnoses.BY_ID["import_name"].text


@pytest.mark.parametrize("value", ["@octocat", "evil.example.com", "x" * 41, "a b", "1.2; rm -rf",
                                   "https://x.io", "colossal`ai"])
def test_a_value_that_is_not_short_and_strict_is_never_quoted(value: str) -> None:
    """Also from a stored or hand-made triage: rendering checks the values again."""
    assert diagnoses.values_of({"package": value}) == {}
    shown = diagnoses.text_of(Diagnosed(id="import_name", values={"package": value})) or ""
    assert value not in shown and shown == diagnoses.BY_ID["import_name"].text


def test_a_value_is_quoted_only_for_a_template_that_names_it() -> None:
    assert diagnoses.values_of({"nvcc_cuda": "12.1", "other": "12.1"}) == {"nvcc_cuda": "12.1"}
    bad = Diagnosed(id="cuda_mismatch", values={"torch_cuda": "11.8", "nvcc_cuda": "12.1 or @x"})
    assert diagnoses.text_of(bad) == diagnoses.BY_ID["cuda_mismatch"].text


def test_an_unknown_id_shows_nothing() -> None:
    assert diagnoses.text_of(Diagnosed(id="made_up")) is None
    assert diagnoses.moot([Diagnosed(id="made_up")]) == frozenset()


def test_at_most_two_diagnoses_in_table_order() -> None:
    text = report("many", "\n".join(LOGS[i][1] for i in ("sigkill", "import_name", "port_in_use")))
    assert ids(text) == ["import_name", "port_in_use"]


def test_the_table_implies_only_valid_ids_with_the_hierarchy_kept() -> None:
    for entry in diagnoses.DIAGNOSES:
        assert entry.states <= set(entry.implies), entry.id
        for dim, label_id in entry.implies.items():
            assert taxonomy.label(dim, label_id) is not None, (entry.id, dim, label_id)
            if dim in taxonomy.IN_STAGE:
                assert taxonomy.stage_of(dim, label_id) == entry.implies["stage"], entry.id


def test_templates_are_our_own_words_without_mentions_or_links() -> None:
    for entry in diagnoses.DIAGNOSES:
        for text in (entry.text, entry.detailed):
            assert "@" not in text and not re.search(r"https?://|www\.|#\d", text), entry.id
            assert text.count("`") % 2 == 0, entry.id


def test_a_triage_stored_before_diagnoses_existed_still_loads() -> None:
    stored = Triage.model_validate_json(
        '{"stage": {"id": "S1", "name": "Package Build & Import", "confidence": 0.9},'
        ' "symptom": {"id": "1.1", "name": "x", "confidence": 0.5},'
        ' "root_cause": {"id": "R1.1", "name": "x", "confidence": 0.5},'
        ' "fix_pattern": {"id": "F2", "name": "x", "confidence": 0.5},'
        ' "distributed_specific": {"id": "no", "name": "x", "confidence": 0.5},'
        ' "is_bug": {"id": "yes", "name": "x", "confidence": 0.5}}')
    assert stored.diagnoses == []


def test_every_moot_request_is_a_request_the_bot_makes() -> None:
    from triagebot.domain import missing, symptom_requests

    known = set(missing.DESCRIPTIONS) | set(symptom_requests.KEYS)
    for entry in diagnoses.DIAGNOSES:
        assert entry.moot <= known, (entry.id, entry.moot - known)
