"""The "what information is missing" checklist. Pure.

Half of a maintainer's first reply is usually a request for facts the reporter left out. Which
facts matter depends on the stage and on the framework: a build failure is about versions and the
CUDA toolkit, a multi-node failure about the launch command and the machines, and only DeepSpeed
has ``ds_report``. Two steps, with one owner each:

- ``missing_info`` (called by the engine) lists what the text really lacks, in the priority order
  of the engine's best-guess stage, worded for the repository's framework;
- ``asked`` (called by the comment) keeps at most ``MAX_ASKED`` of them that fit what the comment
  *states*: the stated stage's own items, or only the generic ones when the stage is not stated.

A request for something the report already contains is worse than no request (the reporter
learns the bot did not read it), so every check errs towards "present".
"""
from __future__ import annotations

import re

from triagebot.domain.models import Environment, MissingInfo, Triage

MAX_ITEMS = 5   # gaps the engine records (review page, backtest)
MAX_ASKED = 3   # requests one public comment makes: a reporter answers three, not eight

DESCRIPTIONS: dict[str, str] = {
    "versions": "The versions of the framework, PyTorch and CUDA.",
    "cuda": "The CUDA version PyTorch was built with (torch.version.cuda) and nvcc --version.",
    "ds_report": "The full output of ds_report.",
    "traceback": "The full error and traceback as text (with several ranks, from the first that "
    "failed).",
    "launcher_command": "The exact launch command, with the hostfile or node arguments.",
    "hardware": "The GPU model, GPUs per node, number of nodes and the network between them.",
    "config": "The configuration in use (config file or arguments).",
    "repro": "A minimal script or the exact steps that reproduce it.",
}
# The same request in each framework's own terms, so a Megatron-LM reporter is never asked for a
# DeepSpeed config or tool.
FRAMEWORK_DESCRIPTIONS: dict[tuple[str, str], str] = {
    ("versions", "deepspeed"): "The versions of DeepSpeed, PyTorch and CUDA.",
    ("versions", "colossalai"): "The output of colossalai check -i (Colossal-AI, PyTorch and CUDA "
    "versions).",
    ("versions", "megatron"): "The Megatron-LM commit or release and the PyTorch, Transformer "
    "Engine and CUDA versions (or the NGC container tag).",
    ("versions", "horovod"): "The versions of Horovod and PyTorch or TensorFlow, and the output of "
    "horovodrun --check-build.",
    ("versions", "pytorch"): "The output of python -m torch.utils.collect_env.",
    ("config", "deepspeed"): "The DeepSpeed config JSON.",
    ("config", "colossalai"): "The plugin and Booster settings (the plugin's arguments).",
    ("config", "megatron"): "The full Megatron arguments (parallel sizes, batch sizes, precision).",
    ("config", "horovod"): "The Horovod settings (the HOROVOD_ environment variables, fusion and "
    "compression).",
    ("launcher_command", "deepspeed"): "The exact deepspeed launch command (and the hostfile for "
    "several nodes).",
    ("launcher_command", "colossalai"): "The exact colossalai run or torchrun command (and the "
    "hostfile for several nodes).",
    ("launcher_command", "megatron"): "The exact torchrun or srun command with its node arguments.",
    ("launcher_command", "horovod"): "The exact horovodrun or mpirun command, with the hosts.",
    ("launcher_command", "pytorch"): "The exact torchrun command with its node arguments.",
}

_ORDER: dict[str, list[str]] = {
    "S1": ["ds_report", "versions", "cuda", "traceback", "repro"],
    "S2": ["launcher_command", "hardware", "traceback", "ds_report", "versions", "config"],
    "S3": ["traceback", "config", "ds_report", "versions", "repro"],
    "S4": ["traceback", "config", "ds_report", "versions", "hardware", "launcher_command", "repro"],
    "S5": ["traceback", "ds_report", "versions", "hardware", "repro", "config", "cuda"],
}
# What may be asked while the stage is not stated: requests that fit any report.
GENERIC_ORDER = ["traceback", "versions", "config", "repro"]
# Items the text itself calls for (an error mentioned but not pasted, a config mentioned but not
# shown): specific to this report even when nothing else is stated.
TEXT_TRIGGERED = frozenset({"traceback", "config"})
# ds_report prints the framework, torch and CUDA versions, so asking for it covers these two.
_COVERED_BY_DS_REPORT = {"versions", "cuda"}
_NEEDS_DISTRIBUTED = {"launcher_command", "hardware"}
# Symptoms without an error to paste (slow, hanging, wrong numbers) and import errors, where the
# CUDA toolkit plays no part.
_NO_TRACEBACK_SYMPTOMS = frozenset({"4.1", "4.11", "5.3", "5.4", "5.9"})
_NO_CUDA_SYMPTOMS = frozenset({"1.2", "1.3", "5.11"})
# The machines matter only for these symptoms (connections between GPUs and nodes, memory, speed,
# collectives, hangs, kills, serving), the launch command outside communication setup only for
# the last few; a checkpoint or shape bug needs neither, a launcher bug no GPU model.
_HARDWARE_SYMPTOMS = frozenset({"2.2", "3.4", "4.1", "4.2", "4.7", "4.8", "4.9", "4.11", "5.2",
                                "5.4", "5.7", "5.10"})
_LAUNCH_SYMPTOMS = frozenset({"4.7", "4.8", "4.9", "4.11", "5.10"})

_ERROR_MENTION = re.compile(
    r"\b(?:error|exception|fail(?:s|ed|ure)?|crash(?:es|ed)?|segfault|traceback|raises?d?|abort(?:s|ed)?)\b",
    re.I,
)
_NO_ERROR = re.compile(
    r"\bno (?:\w+ )?(?:error|traceback|exception|stack ?trace)s?\b|"
    r"\bwithout (?:any |an )?(?:\w+ ){0,2}(?:error|traceback|exception|message|output)s?\b|"
    r"\b(?:does ?n[o']t|did ?n[o']t|never|nothing) (?:\w+ )?(?:throws?|raises?|shows?|prints?|gives?|"
    r"reports?|logs?)\b[^.\n]{0,30}\b(?:error|exception|traceback)|\bsilently\b|"
    r"\bno (?:output|logs?|messages?) (?:at all|whatsoever)\b",
    re.I,
)
_TRACE = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"\n]{1,300}\", line \d+|"
    r"\b[A-Z]\w{0,60}?(?:Error|Exception)\b\s*:|error:|\bERROR\b|Segmentation fault|core dumped|"
    r"^\s*\[E[ \]]|NCCL WARN|\bnccl\w*Error\b|CUDA error|terminate called|what\(\):|"
    r"exit ?code|exit status|\bKilled\b|signal \d+|SIG(?:KILL|SEGV|ABRT|TERM)\b",
    re.M,
)
_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
# A block the reporter introduces as what the program printed ("The output is:", "**Logs**").
_OUTPUT_BLOCK = re.compile(
    r"\b(?:output|logs?|errors?|trace(?:back)?|prints?|printed|shows?|says?)\b[^\n]{0,40}\n\s*```",
    re.I,
)
_DS_REPORT = re.compile(r"DeepSpeed general environment info|deepspeed info\s*\.{3,}|op name\s*\.{3,}", re.I)
_CONTAINER = re.compile(
    r"nvcr\.io/|\b(?:pytorch|nemo|tensorflow)\s*:\s*\d{2}\.\d{2}|\bNGC\b[^\n]{0,40}\b\d{2}\.\d{2}\b", re.I)
_COLLECT_ENV = re.compile(
    r"PyTorch version:|Is debug build:|collect_env|__version__|"
    r"\b(?:from|on) (?:the )?(?:latest )?(?:\w+ )?(?:master|main) branch\b",
    re.I,
)
# A "Versions" / "Environment" section of an issue template that the reporter filled in.
_VERSION_SECTION = re.compile(
    r"^#{1,4}\s*(?:versions?|environment|system info)\s*\n(?:[^#\n]*\n){0,15}?[^#\n]*\d+\.\d+",
    re.I | re.M,
)
_BUILD_MENTION = re.compile(
    r"\b(?:nvcc|compil\w*|build\w*|extension|op_builder|setup\.py|wheel|ninja|gcc|g\+\+|cuda_home|"
    r"undefined symbol|cannot open shared object|install\w*)",
    re.I,
)
_CONFIG_MENTION = re.compile(
    r"ds_config|deepspeed[_ ]config|zero[_ ]optimization|\bZeRO\b|zero[_ ]stage|\bplugin\b|"
    r"offload|--deepspeed\b",
    re.I,
)
_CONFIG_BODY = re.compile(
    r"\{\s*\"\w+\"\s*:|\"(?:zero_optimization|train_batch_size|train_micro_batch_size_per_gpu|fp16|bf16|"
    r"optimizer)\"|^\s*zero_optimization\s*:|\b[A-Za-z]\w{0,40}Plugin\s*\(|--(?:tensor|pipeline)-model-parallel-size|--micro-batch-size|"
    r"--plugin[ =]\w+",
    re.I | re.M,
)
_REPRO = re.compile(
    r"```|^ {4}\S|\bimport \w+|\bpython3? [\w./-]+|\b(?:deepspeed|torchrun|srun|mpirun|bash|sh|"
    r"colossalai run|accelerate launch)\s+\S|to reproduce|steps?:|^\s*\d+\.\s+\S|"
    r"\b(?:examples?|scripts?|tests?)/[\w./-]+|\b\w[\w-]*\.(?:py|sh)\b",
    re.I | re.M,
)
_LAUNCH_FLAGS = re.compile(r"--(?:hostfile|nnodes|nproc[_-]per[_-]node|num[_-]gpus|num[_-]nodes)\b")
# A command line that starts the job (``CUDA_VISIBLE_DEVICES=3 python main.py``, ``bash run.sh``):
# the reporter has shown how they launch, even without a distributed launcher.
_COMMAND_LINE = re.compile(
    r"(?:^|[\s`$>])(?:python3?|bash|sh)\s+(?:-m\s+)?[\w./-]+(?:\.py|\.sh)?\b|"
    # any launcher with arguments: the reporter has shown how the job starts, whatever starts it
    r"\b(?:torchx\s+run|torchrun|colossalai\s+run|deepspeed|accelerate\s+launch|srun|mpirun|"
    r"horovodrun|kubectl\s+apply|sbatch)\s+-{0,2}[\w./=-]+", re.M)


def missing_info(text: str, env: Environment, stage: str | None, distributed: bool,
                 framework: str | None = None) -> list[MissingInfo]:
    """Items a maintainer would ask for first, given what the report already contains.

    ``framework`` is a hint from the repository (``deepspeed`` for deepspeedai/DeepSpeed); the
    text's own framework is used when it is absent."""
    text = text if isinstance(text, str) else ""
    framework = framework or env.framework
    checks = {
        "versions": lambda: not (env.framework_version or env.torch or _versions_elsewhere(text)),
        "cuda": lambda: not (env.cuda_torch or env.cuda_nvcc) and bool(_BUILD_MENTION.search(text)),
        "ds_report": lambda: framework == "deepspeed" and not _DS_REPORT.search(text)
        and (stage == "S1" or not (env.framework_version and env.torch)),
        "traceback": lambda: _error_without_trace(text),
        "launcher_command": lambda: env.launcher is None and not _LAUNCH_FLAGS.search(text)
        and not _COMMAND_LINE.search(text),
        # the GPU model is what the answer turns on; a report that names it and not the count
        # was read as already giving the hardware
        "hardware": lambda: env.gpu_model is None,
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
            found.append(MissingInfo(key=key, description=describe(key, framework)))
        if len(found) >= MAX_ITEMS:
            break
    return found


def describe(key: str, framework: str | None) -> str:
    """The request in the framework's own terms (the generic wording for other repositories)."""
    return FRAMEWORK_DESCRIPTIONS.get((key, framework or ""), DESCRIPTIONS.get(key, ""))


def asked(items: list[MissingInfo], stage: str | None, symptom: str | None = None,
          distributed: bool | None = None, question: bool = False) -> list[MissingInfo]:
    """The requests one public comment makes, given what it states (None: not stated).

    A stated stage asks its own items in its priority order; with no stated stage only the
    generic ones (traceback, versions, config, repro). The launch command only for communication
    setup or a distributed symptom it explains (collectives, hangs), the hardware only for a
    stated symptom it explains (connections, memory, speed), no CUDA for an import error, no
    traceback for a slow, hanging or wrong-output report, nothing for a stated question."""
    if question:
        return []
    allowed = set(_ORDER.get(stage or "", GENERIC_ORDER))
    picked: list[MissingInfo] = []
    for item in items:  # already in the stage's priority order (``missing_info``)
        if item.key not in allowed or item.key in (p.key for p in picked):
            continue
        if item.key in _NEEDS_DISTRIBUTED and not (stage == "S2" or distributed):
            continue
        if item.key == "hardware" and symptom not in _HARDWARE_SYMPTOMS:
            continue
        if item.key == "launcher_command" and stage != "S2" and symptom not in _LAUNCH_SYMPTOMS:
            continue
        if item.key == "cuda" and symptom in _NO_CUDA_SYMPTOMS:
            continue
        if item.key == "traceback" and symptom in _NO_TRACEBACK_SYMPTOMS:
            continue
        picked.append(item)
    return picked[:MAX_ASKED]


def asked_in_comment(triage: Triage) -> list[MissingInfo]:
    """The requests the public comment makes for ``triage``: ``asked`` given what it states
    (``Triage.stated``). Shared by the comment and the backtest's ``missing``."""
    stage, symptom = triage.stated("stage"), triage.stated("symptom")
    distributed = triage.stated("distributed_specific")
    return asked(triage.missing_info, stage=stage if isinstance(stage, str) else None,
                 symptom=symptom if isinstance(symptom, str) else None,
                 distributed=distributed if isinstance(distributed, bool) else None,
                 question=_probably_not_a_bug(triage))


# Titles the reporter tagged as a documentation or feature request (11 of the 12 such titles in
# the shared data are no bug; "[QUESTION]" is not among them: Megatron-LM's template puts it on
# bug reports).
_NOT_A_BUG_TAG = re.compile(
    r"^\s*(?:\[(?:doc|docs|documentation|feature|feature request|rfc|enhancement|proposal)\]|"
    r"feature request\s*:)", re.I)


def _probably_not_a_bug(triage: Triage) -> bool:
    """A bug checklist (traceback, repro, versions) under a documentation or feature request
    reads as not having read it: none when "not a bug" is stated or the title says so."""
    return triage.stated("is_bug") is False or bool(_NOT_A_BUG_TAG.search(triage.title or ""))


def specific(items: list[MissingInfo], stage: str | None) -> bool:
    """Whether these requests are worth a comment on their own: asked because of the stated stage,
    or because the text itself calls for them (an error mentioned but not pasted)."""
    return any(stage is not None or item.key in TEXT_TRIGGERED for item in items)


def _error_without_trace(text: str) -> bool:
    """The report mentions an error but shows none (and does not say there is none)."""
    if not _ERROR_MENTION.search(text) or _NO_ERROR.search(text) or _TRACE.search(text):
        return False
    if _OUTPUT_BLOCK.search(text):  # what the program printed is there, even without a traceback
        return False
    return not any(_ERROR_MENTION.search(block) for block in _FENCE.findall(text))


def _versions_elsewhere(text: str) -> bool:
    """Versions given in a form the environment reader leaves alone: an NGC container tag, which
    fixes every version in it, the output of collect_env or of ``__version__``, a build "from the
    master branch", or a filled-in "Versions" section."""
    return bool(_CONTAINER.search(text) or _COLLECT_ENV.search(text)
                or _VERSION_SECTION.search(text))
