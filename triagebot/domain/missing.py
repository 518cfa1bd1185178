"""The "what information is missing" checklist. Pure.

Half of a maintainer's first reply is usually a request for facts the reporter left out. Which
facts matter depends on the stage: a build failure is about versions and the CUDA toolkit, a
multi-node failure about the launch command and the machines. So each stage has its own priority
order, each item is asked only when the text really lacks it, and the list stays short (at most
``MAX_ITEMS``) so the reporter actually answers it.
"""
from __future__ import annotations

import re

from triagebot.domain.models import Environment, MissingInfo

MAX_ITEMS = 5

DESCRIPTIONS: dict[str, str] = {
    "versions": "The versions of the framework and of PyTorch (for example the output of "
    "pip list filtered for deepspeed, colossalai, megatron-core, torch and transformers).",
    "cuda": "The CUDA version PyTorch was built with (torch.version.cuda) and the toolkit version "
    "printed by nvcc --version.",
    "ds_report": "The full output of ds_report, which lists DeepSpeed, torch and CUDA versions and "
    "which native ops are compatible.",
    "traceback": "The complete error message and traceback (or the last lines of the log of the "
    "failing rank), pasted as text in a code block.",
    "launcher_command": "The exact command used to launch the job (deepspeed, torchrun, srun, "
    "mpirun, colossalai run ...), including the hostfile or node arguments.",
    "hardware": "The hardware: GPU model, GPUs per node and number of nodes, and how the nodes "
    "are connected if there are several.",
    "config": "The configuration in use: the DeepSpeed JSON config, the Colossal-AI plugin "
    "settings or the Megatron arguments.",
    "repro": "A minimal script or the steps that reproduce the problem.",
}

_ORDER: dict[str, list[str]] = {
    "S1": ["ds_report", "versions", "cuda", "traceback", "repro"],
    "S2": ["launcher_command", "hardware", "traceback", "ds_report", "versions", "cuda", "config"],
    "S3": ["traceback", "config", "ds_report", "versions", "repro"],
    "S4": ["traceback", "config", "ds_report", "versions", "hardware", "launcher_command", "cuda",
           "repro"],
    "S5": ["traceback", "ds_report", "versions", "hardware", "repro", "config", "cuda"],
}
# ds_report prints the framework, torch and CUDA versions, so asking for it covers these two.
_COVERED_BY_DS_REPORT = {"versions", "cuda"}
_NEEDS_DISTRIBUTED = {"launcher_command", "hardware"}

_ERROR_MENTION = re.compile(
    r"\b(?:error|exception|fail(?:s|ed|ure)?|crash(?:es|ed)?|segfault|traceback|raises?d?|abort(?:s|ed)?)\b",
    re.I,
)
_TRACE = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"\n]{1,300}\", line \d+|"
    r"\b[A-Z]\w{0,60}?(?:Error|Exception)\b\s*:|error:|\bERROR\b|Segmentation fault|core dumped",
)
_DS_REPORT = re.compile(r"DeepSpeed general environment info|deepspeed info\s*\.{3,}|op name\s*\.{3,}", re.I)
_CONFIG_MENTION = re.compile(
    r"ds_config|deepspeed[_ ]config|zero[_ ]optimization|\bZeRO\b|zero[_ ]stage|\bplugin\b|"
    r"offload|--deepspeed\b",
    re.I,
)
_CONFIG_BODY = re.compile(
    r"\{\s*\"\w+\"\s*:|\"(?:zero_optimization|train_batch_size|train_micro_batch_size_per_gpu|fp16|bf16|"
    r"optimizer)\"|^\s*zero_optimization\s*:|\b[A-Za-z]\w{0,40}Plugin\(|--(?:tensor|pipeline)-model-parallel-size|--micro-batch-size",
    re.I | re.M,
)
_REPRO = re.compile(
    r"```|^ {4}\S|\bimport \w+|\bpython3? [\w./-]+|\b(?:deepspeed|torchrun|srun|mpirun|bash|sh|"
    r"colossalai run|accelerate launch)\s+\S|to reproduce|steps?:|^\s*\d+\.\s+\S",
    re.I | re.M,
)
_LAUNCH_FLAGS = re.compile(r"--(?:hostfile|nnodes|nproc[_-]per[_-]node|num[_-]gpus|num[_-]nodes)\b")


def missing_info(text: str, env: Environment, stage: str | None, distributed: bool,
                 framework: str | None = None) -> list[MissingInfo]:
    """Items a maintainer would ask for first, given what the report already contains.

    ``framework`` is a hint from the repository (``deepspeed`` for deepspeedai/DeepSpeed); the
    text's own framework is used when it is absent."""
    text = text if isinstance(text, str) else ""
    checks = {
        "versions": lambda: not (env.framework_version or env.torch),
        "cuda": lambda: not (env.cuda_torch or env.cuda_nvcc),
        "ds_report": lambda: (framework or env.framework) == "deepspeed" and not _DS_REPORT.search(text),
        "traceback": lambda: bool(_ERROR_MENTION.search(text)) and not _TRACE.search(text),
        "launcher_command": lambda: env.launcher is None and not _LAUNCH_FLAGS.search(text),
        "hardware": lambda: env.gpu_model is None or (env.gpu_count is None and env.nodes is None),
        "config": lambda: bool(_CONFIG_MENTION.search(text)) and not _CONFIG_BODY.search(text),
        "repro": lambda: not _REPRO.search(text),
    }
    found: list[MissingInfo] = []
    for key in _ORDER.get(stage or "", _ORDER["S4"]):
        if key in _NEEDS_DISTRIBUTED and not distributed:
            continue
        if key in _COVERED_BY_DS_REPORT and any(item.key == "ds_report" for item in found):
            continue
        if checks[key]():
            found.append(MissingInfo(key=key, description=DESCRIPTIONS[key]))
        if len(found) >= MAX_ITEMS:
            break
    return found
