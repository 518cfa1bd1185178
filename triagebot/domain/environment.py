"""Setup facts from free issue text (ds_report, collect_env, pip lists, nvidia-smi, prose). Pure.

Maintainers' first question is almost always "which versions, which GPUs, how did you launch?".
Reporters answer it in a handful of well-known formats, so each fact is read by a short list of
patterns tried from the most to the least trustworthy source (tool output before prose). Every
pattern is linear (no nested quantifiers) and the text is capped, so a 100 KB log parses in
milliseconds, and nothing here raises on odd input.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from triagebot.domain.models import Environment

MAX_CHARS = 100_000
_V = r"v?(\d+\.\d+(?:\.\d+)?(?:[.+-]?(?:dev|rc|post|a|b|cu|rocm)?[\w.+]*)?)"
_SEP = r"(?:[\s_-]*version)?\s*(?:==|>=|~=|:|=|\.{2,}|\s)\s*\.*\s*"  # name, then ==, :, dots or blanks


def _pkg(name: str) -> re.Pattern[str]:
    """Version of one package as pip list/freeze, ds_report, conda or prose writes it."""
    return re.compile(rf"(?<![\w./-]){name}(?![\w/-]){_SEP}{_V}", re.I)


_TORCH = [
    re.compile(rf"PyTorch version:\s*{_V}", re.I),
    re.compile(rf"torch version\s*\.+\s*{_V}", re.I),
    _pkg(r"torch"),
    _pkg(r"pytorch"),
    re.compile(rf"(?<![\w./-])(?:py)?torch{_V}", re.I),  # prose: "tested torch1.10 ~ torch2.1.0"
]
_FRAMEWORK_VERSION = {
    "deepspeed": [re.compile(rf"deepspeed info\s*\.+\s*{_V}", re.I), _pkg(r"deepspeed")],
    "colossalai": [_pkg(r"colossal-?ai")],
    "megatron": [_pkg(r"megatron[-_]core"), _pkg(r"megatron(?:-lm)?"),
                 re.compile(rf"\bcore_r?{_V}", re.I)],
    "horovod": [_pkg(r"horovod")],
}
_CUDA_TORCH = [
    re.compile(r"CUDA used to build PyTorch:\s*(\d+\.\d+)", re.I),
    re.compile(r"torch cuda version\s*\.+\s*(\d+\.\d+)", re.I),
    re.compile(r"torch\.version\.cuda\W{1,6}(\d+\.\d+)", re.I),
]
_CUDA_NVCC = [
    re.compile(r"nvcc version\s*[.:]+\s*(\d+\.\d+)", re.I),
    re.compile(r"Cuda compilation tools, release (\d+\.\d+)", re.I),
    re.compile(r"CUDA runtime version:\s*(\d+\.\d+)", re.I),
    re.compile(r"\bnvcc\b[^\n\d]{0,20}(\d{2}\.\d)\b", re.I),
]
# Prose such as "CUDA 11.8" or "cuda-12.1" names the system toolkit; the nvidia-smi header
# ("Driver Version: ... CUDA Version: 12.2") names only what the driver supports, so it is skipped.
_CUDA_PROSE = re.compile(r"(?<![\w.])cuda(?:[ _-]?toolkit)?(?:\s*version)?\s*[:=-]?\s*v?(\d{1,2}\.\d)\b", re.I)
_DRIVER_LINE = re.compile(r"driver version|used to build|torch cuda|hip version|nccl", re.I)
_CU_SUFFIX = re.compile(r"\+cu(\d{2,3})\b")
_NCCL = re.compile(r"(?<![\w.])nccl(?:-cu\d+)?(?:\s*version)?\s*(?:==|:|\s)\s*v?(\d+\.\d+(?:\.\d+)?)", re.I)
_PYTHON = [
    re.compile(r"Python version:\s*(3\.\d{1,2}(?:\.\d+)?)", re.I),
    re.compile(r"(?<![\w-])python\s*(?:version)?\s*[:=]?=?\s*v?(3\.\d{1,2}(?:\.\d+)?)\b", re.I),
    re.compile(r"python(3\.\d{1,2})\b", re.I),
]
_TRANSFORMERS = [_pkg(r"transformers")]
_OS_LINE = re.compile(r"^\s*OS:\s*([^\n(]{3,60})", re.I | re.M)
_OS_PROSE = re.compile(
    r"\b(Ubuntu\s*\d{2}\.\d{2}|CentOS(?:\s*Linux)?\s*\d+|Rocky\s*Linux\s*\d+|Red\s*Hat[\w ]{0,20}\d+|"
    r"RHEL\s*\d+|Debian\s*\d+|Windows\s*(?:10|11|Server\s*\d+)?|WSL2?|macOS(?:\s*\d+)?|"
    r"Amazon Linux\s*\d*|SUSE[\w ]{0,15}\d*)",
    re.I,
)
_GPU = re.compile(
    r"(?<![a-z-])(?:NVIDIA\s+|Tesla\s+|GeForce\s+|Quadro\s+|AMD\s+Instinct\s+)?"
    r"(GB200|[ABH]100|[AH]800|H200|H20|B200|V100S?|P100|P40|T4|L40S?|L4|K80|A10G?|A30|A40|"
    r"RTX\s?A?\d{4}(?:\s?Ti)?|A[2456]000|GTX\s?\d{3,4}(?:\s?Ti)?|TITAN\s?(?:RTX|V|Xp?)|MI\d{3}X?|Gaudi\s?\d?)"
    r"(?:[- ](?:SXM\d?|PCIE|NVL|\d{2,3}\s?GB?)){0,3}(?![\w])",
    re.I,
)
_SMI_ROW = re.compile(r"^\|\s+(\d{1,2})\s+(?:NVIDIA|Tesla|GeForce|Quadro|AMD)[^|\n]{0,60}\|", re.M)
_ENV_GPU_ROW = re.compile(r"^\s*GPU (\d{1,2}):", re.M)
_COUNT_GPU = [
    re.compile(r"--(?:num_gpus|nproc_per_node|nproc-per-node|gpus_per_node|gpus-per-node|ngpus)[= ](\d{1,3})\b"),
    re.compile(r"(?<![\w.])(\d{1,3})\s*[x×*]?\s*(?:NVIDIA\s+|Tesla\s+)?"
               r"(?:[ABH]\d{3}|V100|P100|T4|L40S?|A10G?|A40|RTX\s?\w+|GPU)", re.I),
    # (a model's three digits end there: "6b0253" in a hex address is no "6 x B025")
    re.compile(r"(?<![\d.])(\d{1,3})\s*[x×*]?\s*(?:[ABH]\d{3}0?(?!\d)|V100)", re.I),
    re.compile(r"\b(\d{1,3})\s*(?:x\s*)?gpus?\b", re.I),
]
# Tokens that contain digits but never a hardware count: URLs (image links, blob/<sha> links),
# commit hashes and UUIDs. "37a100f" in a hash once read as "37 x A100" (gpu_count 37).
_NOT_HARDWARE = re.compile(
    r"https?://\S+|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b|\bGPU-[0-9a-f-]{8,}|"
    # a C++ frame's address ("+ 0xdc253 (0x7fe76a6b0253 in ...)", Megatron-LM#935: 6 GPUs)
    r"\b0x[0-9a-f]+\b", re.I,
)
# A YY.MM release tag (NGC containers: "nvcr.io/nvidia/pytorch:25.06-py3", "PyTorch 25.06
# container"). No package read here has a two-digit major version, so such a number is a tag.
_RELEASE_TAG = re.compile(r"\d{2,}\.")
_WORDS = {"two": 2, "three": 3, "four": 4, "eight": 8, "sixteen": 16}
_COUNT_NODES = [
    re.compile(r"--(?:nnodes|num_nodes|num-nodes|nodes)[= ](\d{1,4})\b"),
    re.compile(r"\b(\d{1,4}|two|three|four|eight|sixteen)\s*(?:x\s*)?(?:compute\s+|gpu\s+)?"
               r"(?:nodes|machines|hosts|servers)\b", re.I),
    re.compile(r"\b(\d{1,4})\s*nodes?\s*x", re.I),
    # nodes times GPUs per node ("2*8 A100", "2x8 GPUs": ColossalAI#1184, two nodes read as one),
    # not the last of a list of runs ("runs fine with 1*8, 2*8 and 4*8 GPUs")
    re.compile(r"(?<![\w.])(?<!, )(?<!and )(?<!or )(?<!size )(?<!batch )(\d{1,3})\s*[x×*]\s*\d{1,2}\s*(?:x\s*)?"
               r"(?:NVIDIA\s+)?(?:[ABH]\d{3}(?!\d)|V100|"
               r"GPUs?\b)", re.I),
]
_LAUNCHERS = [
    ("deepspeed", re.compile(r"(?:^|[\s`$>;&|(])deepspeed\s+(?:--[\w-]+|[\w./-]+\.py)|deepspeed\.launcher", re.M)),
    ("colossalai run", re.compile(r"\bcolossalai\s+run\b")),
    ("torchrun", re.compile(r"\btorchrun\b")),
    ("torch.distributed.launch", re.compile(r"\btorch\.distributed\.(?:launch|run)\b")),
    ("accelerate launch", re.compile(r"\baccelerate\s+launch\b")),
    ("horovodrun", re.compile(r"\bhorovodrun\b")),
    ("mpirun", re.compile(r"(?:^|[\s`$>;&|(])(?:mpirun|mpiexec)\s", re.M)),
    ("srun", re.compile(r"(?:^|[\s`$>;&|(])srun\s", re.M)),
]
_FRAMEWORK_HINTS = {
    "deepspeed": re.compile(r"deepspeed|ds_report|ds_config|zero_optimization", re.I),
    "colossalai": re.compile(r"colossal-?ai|colossalchat|gemini(?:ddp)?\b|booster", re.I),
    "megatron": re.compile(r"megatron|pretrain_gpt|tensor-model-parallel-size", re.I),
    "horovod": re.compile(r"horovod|hvd\.", re.I),
    "pytorch": re.compile(r"PyTorch version:|torch\.distributed|torchrun|\bFSDP\b|DistributedDataParallel"
                          r"|\bDDP\b|c10d", re.I),
}


def extract(text: str) -> Environment:
    """Versions, hardware and launcher facts found in ``text`` (cleaned issue title + body)."""
    if not isinstance(text, str) or not text:
        return Environment()
    text = _bounded(text)
    framework = _framework(text)
    torch = _first(_TORCH, text, _package_version)
    hardware = _NOT_HARDWARE.sub(" ", text)
    return Environment(
        framework=framework,
        framework_version=_framework_version(text, framework, torch),
        torch=torch,
        cuda_torch=_first(_CUDA_TORCH, text) or _cuda_from_suffix(torch),
        cuda_nvcc=_first(_CUDA_NVCC, text) or _cuda_prose(text),
        nccl=_first([_NCCL], text, _package_version),
        python=_first(_PYTHON, text),
        transformers=_first(_TRANSFORMERS, text, _package_version),
        gpu_model=_gpu_model(hardware),
        gpu_count=_gpu_count(hardware),
        nodes=_count(_COUNT_NODES, hardware),
        os=_os(text),
        launcher=_launcher(text),
    )


def _bounded(text: str) -> str:
    """Head and tail of an over-long text: versions sit at the top, the launch command near it."""
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS // 2] + "\n" + text[-MAX_CHARS // 2:]


def _first(patterns: list[re.Pattern[str]], text: str,
           accept: Callable[[str], bool] = lambda _value: True) -> str | None:
    """The first value (patterns in order of trust) that ``accept`` takes as real."""
    for pattern in patterns:
        for match in pattern.finditer(text):
            value = match.group(1).rstrip(".,;)'\"`")
            if accept(value):
                return value
    return None


def _package_version(value: str) -> bool:
    """False for a container release tag read as a package version (``25.06-py3``)."""
    return not _RELEASE_TAG.match(value)


def _framework(text: str) -> str | None:
    """The framework mentioned most often; ties go to the more specific one (dict order)."""
    counts = {name: _capped_count(p, text) for name, p in _FRAMEWORK_HINTS.items()}
    best = max(counts, key=lambda name: counts[name])
    return best if counts[best] else None


def mentions(text: str, framework: str) -> bool:
    """The text names ``framework`` in its own terms (``_FRAMEWORK_HINTS``: "deepspeed",
    "ds_config", "zero_optimization"): the one reading of "the report mentions DeepSpeed"."""
    hint = _FRAMEWORK_HINTS.get(framework)
    return bool(hint and hint.search(text))


def _capped_count(pattern: re.Pattern[str], text: str, cap: int = 50) -> int:
    count = 0
    for _ in pattern.finditer(text):
        count += 1
        if count >= cap:
            break
    return count


def _framework_version(text: str, framework: str | None, torch: str | None) -> str | None:
    if framework == "pytorch":
        return torch
    return _first(_FRAMEWORK_VERSION.get(framework or "", []), text, _package_version)


def _cuda_from_suffix(torch: str | None) -> str | None:
    """``2.0.1+cu117`` -> ``11.7``: the wheel tag names the CUDA torch was built with."""
    match = _CU_SUFFIX.search(torch or "")
    if not match:
        return None
    digits = match.group(1)
    return f"{digits[:-1]}.{digits[-1]}"


def _cuda_prose(text: str) -> str | None:
    for match in _CUDA_PROSE.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line = text[start: end if end >= 0 else len(text)]
        if not _DRIVER_LINE.search(line):
            return match.group(1)
    return None


def _gpu_model(text: str) -> str | None:
    match = _GPU.search(text)
    return re.sub(r"\s+", " ", match.group(0)).strip() if match else None


def _gpu_count(text: str) -> int | None:
    """GPUs per node where a tool lists them, else the number the reporter states."""
    for rows in (_SMI_ROW, _ENV_GPU_ROW):
        found = {m.group(1) for m in rows.finditer(text)}
        if found:
            return len(found)
    return _count(_COUNT_GPU, text)


def _count(patterns: list[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            raw = match.group(1).lower()
            value = _WORDS.get(raw) or (int(raw) if raw.isdigit() else 0)
            if 0 < value <= 100_000:
                return value
    return None


def _os(text: str) -> str | None:
    match = _OS_LINE.search(text) or _OS_PROSE.search(text)
    return " ".join(match.group(1).split()) if match else None


def _launcher(text: str) -> str | None:
    for name, pattern in _LAUNCHERS:
        if pattern.search(text):
            return name
    return None


# (Accelerate's own tools, ``accelerate env`` and its config YAML, are what its tracker asks for,
# whatever backend, DeepSpeed or FSDP, runs under it: asked for ds_report and "the DeepSpeed config
# JSON", accelerate#2885 was read as the wrong tool)
_REPO_FRAMEWORKS = (("deepspeed", "deepspeed"), ("colossal", "colossalai"), ("megatron", "megatron"),
                    ("horovod", "horovod"), ("huggingface/accelerate", "accelerate"), ("pytorch", "pytorch"))


def framework_of(repo: str) -> str | None:
    """The framework a repository is (``deepspeed`` for deepspeedai/DeepSpeed), so the checklist
    and the advice name its own tools (``ds_report`` only for DeepSpeed); None for other repos.
    Megatron-DeepSpeed counts as DeepSpeed: its reports are answered with DeepSpeed's tools."""
    name = (repo or "").lower()
    for key, framework in _REPO_FRAMEWORKS:
        if key in name:
            return framework
    return None
