"""Diagnoses a maintainer gives at a glance from the report's own error message. Pure.

Some errors name their cause: ``KeyError: 'RANK'`` means no distributed launcher started the
script, ``Address already in use`` on the rendezvous port means another process holds it. The
classifier learns labels, not such mechanisms, and a comment that only says "Communication
Setup" beside them tells the reporter less than any maintainer would. This table maps an error
signature (a regex over ``Analysed.full``, the cleaned text the engine reads) to a ``Diagnosis``:
what the error means and what to try, in our own words.

Why a table and not the model: each entry is a fact about how the software fails, written once,
and each was measured on the 977 labelled issues of the shared data before it was kept
(``scripts/diagnoses_report.py`` prints the table below from the data, with our reading of every
matched issue's resolution). An entry is kept only when it matched at least two issues and was
right on essentially all of them (>= 0.9), or matched one and the mechanism is certain (the
error message itself states it). Signatures that were tried and dropped are listed in the
script, with why.

Measured (matched issues / right, by the annotators' labels and the resolution text):

===================  =======  =====  ==============================================================
id                   matched  right  implied ids and their agreement with the labels
===================  =======  =====  ==============================================================
cuda_mismatch        2        2      S1 2/2, R1.1 2/2, F2 1/1 (+ the env rule: 0 in the data)
cuda_toolkit_missing 2        2      S1 2/2, R1.4 2/2, F1 2/2
torch_abi            2        2      S1 2/2
import_name          12       12     S1 11/12, R1.1 11/12, F2 8/8  -> stated (1.2: 10/12)
launcher_env         1        1      S2, R2.1, F1 (certain: the variable is read and absent)
port_in_use          5        5      S2 5/5, 2.1 5/5, R2.1 5/5, F1 3/3  -> stated
local_rank_arg       1        1      S2 (certain: argparse names the argument it refuses)
duplicate_gpu        1        1      S2, R2.1 (certain: NCCL's own check)
ddp_unused           1        1      S4 (certain: the message names the cause)
zero3_partitioned    2        2      (stages differ: S4, S5)
sigkill              5        5      (stages differ: S3, S4, S5; 2 confirmed by the resolution,
                                      3 by a resource root cause or memory symptom label)
not_divisible        2        2      (stages differ: S3, S4)
===================  =======  =====  ==============================================================

The shown text is a template; the only values quoted from the report are short ones matching
a strict pattern (a CUDA version, a top-level package name), after ``sanitize``
(``values_of``), re-checked when rendered so a stored or hand-made triage cannot smuggle text in.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from triagebot.domain import rules, taxonomy
from triagebot.domain.models import Diagnosed, Environment
from triagebot.text import sanitize

MAX_SHOWN = 2  # a comment states at most two: more would bury the first under the rest
# What a quoted value may look like (after ``sanitize.neutral``); anything else is not quoted.
VALUE_PATTERNS: Mapping[str, re.Pattern[str]] = MappingProxyType({
    "torch_cuda": re.compile(r"\d{1,2}\.\d{1,2}"),
    "nvcc_cuda": re.compile(r"\d{1,2}\.\d{1,2}"),
    "package": re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}"),
})
_Q = r"""['"‘’`]?"""  # rewritten and pasted reports quote names with any of these, or none
_LAUNCHER_VARS = r"(?:RANK|LOCAL_RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT)"
# Requests a named build refusal makes pointless: the error says what is wrong and with which
# toolkit, so a log, a traceback or a script to reproduce it would tell nothing more.
_BUILD_ANSWERED = frozenset({"cuda", "ds_report", "versions", "build_log", "traceback", "repro"})
# Requests a launch-time clash makes pointless: versions, hardware and config play no part in it.
_NOT_ABOUT_VERSIONS = frozenset({"versions", "ds_report", "cuda", "hardware", "config"})


@dataclass(frozen=True)
class Diagnosis:
    """One error signature and what it means.

    ``pattern`` must match the report; ``context`` (if set) must also occur anywhere in it and
    ``unless`` must not (a port clash outside a rendezvous, a kill after a collective timeout).
    ``text`` is shown as is; ``detailed`` instead when every value it names was quoted.
    ``implies``: the taxonomy ids the mechanism implies (what the report script measures);
    ``states``: the dimensions whose implied id may be stated when the classifier does not
    state it, only those measured >= 0.9 over >= 3 matched issues. ``moot``: the requests
    (``missing`` keys) the diagnosis makes pointless."""

    id: str
    pattern: re.Pattern[str]
    text: str
    detailed: str = ""
    context: re.Pattern[str] | None = None
    unless: re.Pattern[str] | None = None
    implies: Mapping[str, str] = field(default_factory=dict)
    states: frozenset[str] = frozenset()
    moot: frozenset[str] = frozenset()


def _re(pattern: str, flags: int = re.I) -> re.Pattern[str]:
    return re.compile(pattern, flags)


DIAGNOSES: tuple[Diagnosis, ...] = (
    # DeepSpeed's op builder and torch's cpp_extension refuse to compile with a toolkit of
    # another CUDA version than torch's (torch: another major; DeepSpeed: outside its table of
    # compatible minors). The same message ending "but since the APIs are compatible, accepting
    # this combination" is a warning the build goes past (3 shared issues: a Windows build
    # failure, an offload bug, one unresolved), so it is excluded.
    Diagnosis(
        "cuda_mismatch",
        _re(r"Installed CUDA version (?P<nvcc_cuda>\d+\.\d+) does not match the version torch "
            r"was compiled with (?P<torch_cuda>\d+\.\d+)(?![^\n]{0,12}but since)"
            r"|detected CUDA version \((?P<nvcc_cuda2>\d+\.\d+)\) mismatches the version that "
            r"was used to compile\s+PyTorch \((?P<torch_cuda2>\d+\.\d+)\)"),
        "PyTorch was built with one CUDA version and the toolkit that compiles the extension "
        "(`nvcc`) is another, which the build refuses. Install the PyTorch build for your "
        "toolkit's CUDA version, or point `CUDA_HOME` at a toolkit matching "
        "`torch.version.cuda`, then build again.",
        detailed="PyTorch was built with CUDA {torch_cuda}, but the toolkit that compiles the "
        "extension (`nvcc`) is CUDA {nvcc_cuda}, which the build refuses. Install the PyTorch "
        "build for CUDA {nvcc_cuda}, or point `CUDA_HOME` at a CUDA {torch_cuda} toolkit, then "
        "build again.",
        implies={"stage": "S1", "root_cause": "R1.1", "fix_pattern": "F2"},
        moot=_BUILD_ANSWERED,
    ),
    Diagnosis(
        "cuda_toolkit_missing",
        _re(r"CUDA_HOME does not exist|CUDA_HOME environment variable is not set"
            r"|\bnvcc:? (?:command )?not found|(?:unable|failed) to find nvcc"
            r"|(?:could ?n[o']t|cannot|can't) find nvcc"
            r"|No such file or directory:? ['\"][^'\"\n]{0,200}/nvcc(?:\.exe)?['\"]"),
        "The build could not find the CUDA compiler: no CUDA toolkit is installed, or "
        "`CUDA_HOME` does not point at one. Install the toolkit matching `torch.version.cuda` "
        "and set `CUDA_HOME` to its directory (the one holding `bin/nvcc`), then build again.",
        implies={"stage": "S1", "root_cause": "R1.4", "fix_pattern": "F1"},
        moot=_BUILD_ANSWERED,
    ),
    # Mangled names of PyTorch's C++ namespaces (c10, at, torch). Other undefined symbols were
    # tried and dropped: curand ones were a link bug of the op itself, TensorFlow ones (Horovod)
    # once a broken nightly, so "rebuild" was right on 3 of 6.
    Diagnosis(
        "torch_abi",
        _re(r"undefined symbol:?\s*_ZN[KVRO]*(?:3c10|2at|5torch)", 0),
        "A compiled extension calls PyTorch C++ functions that the imported PyTorch does not "
        "have: it was built against another PyTorch version, or another copy of PyTorch is "
        "being imported. Rebuild it against the installed one (`pip install --no-cache-dir "
        "--no-build-isolation`; for ops built at run time, delete `~/.cache/torch_extensions`) "
        "and check that only one PyTorch is importable.",
        implies={"stage": "S1"},
    ),
    # "from partially initialized module" is a circular import (often a local file named like
    # the package), not another release.
    Diagnosis(
        "import_name",
        _re(rf"\bcannot import name {_Q}\w+{_Q}(?![^\n]{{0,80}}(?:partially initiali[sz]ed|"
            rf"circular import))(?:,? from {_Q}(?P<package>\w+)[\w.]*)?"),
        "The installed package does not provide a name the code imports, so the code was "
        "written for another release of it (often a newer one than the latest on PyPI, or an "
        "older one if the name has since been removed). Install the release the code was "
        "written for, from source if it is not released yet, or use the code that matches "
        "your installed version.",
        detailed="The installed `{package}` does not provide a name the code imports, so the "
        "code was written for another release of it (often a newer one than the latest on "
        "PyPI, or an older one if the name has since been removed). Install the release the "
        "code was written for, from source if it is not released yet, or use the code that "
        "matches your installed version.",
        implies={"stage": "S1", "symptom": "1.2", "root_cause": "R1.1", "fix_pattern": "F2"},
        states=frozenset({"stage", "root_cause", "fix_pattern"}),
        moot=frozenset({"cuda", "hardware", "launcher_command"}),
    ),
    Diagnosis(
        "launcher_env",
        _re(rf"KeyError:\s*{_Q}{_LAUNCHER_VARS}{_Q}(?!\w)"
            rf"|environment variable {_LAUNCHER_VARS} expected,? but not set"
            rf"|Could not find {_Q}{_LAUNCHER_VARS}{_Q} in the torch environment", 0),
        "The variables a distributed launcher sets for every process (`RANK`, `LOCAL_RANK`, "
        "`WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`) are missing, which usually means the "
        "script was started with plain `python`. Start it with `torchrun`, the `deepspeed` "
        "launcher or `colossalai run`, or set these variables yourself.",
        implies={"stage": "S2", "root_cause": "R2.1", "fix_pattern": "F1"},
        moot=_NOT_ABOUT_VERSIONS | {"launcher_command"},
    ),
    # Only at a rendezvous: a web server of an inference setup clashes on its port for
    # other reasons and is fixed elsewhere. Not the frameworks' names: nearly every report
    # names one in its system info.
    Diagnosis(
        "port_in_use",
        _re(r"Address already in use|\bEADDRINUSE\b"),
        "Another process is already listening on the rendezvous port (`MASTER_PORT`, 29500 "
        "unless set): usually a second job on the same machine or a leftover process of an "
        "earlier run. Give each job its own port (`--master_port` for `torchrun` and "
        "`deepspeed`, `--main_process_port` for `accelerate launch`), or end the leftover "
        "process.",
        context=_re(r"\bc10d\b|TCPStore|server socket|MASTER_PORT|master[_-]port|"
                    r"main_process_port|rendezvous|init_process_group|torchrun|"
                    r"torch\.distributed|\bDDP\b|accelerate (?:launch|test)|Accelerator\(|"
                    r"tcp://|dist_url"),
        implies={"stage": "S2", "symptom": "2.1", "root_cause": "R2.1", "fix_pattern": "F1"},
        states=frozenset(taxonomy.DIMENSIONS),
        moot=_NOT_ABOUT_VERSIONS | {"launcher_command"},
    ),
    Diagnosis(
        "local_rank_arg",
        _re(r"unrecognized arguments:[^\n]{0,300}?--local[_-]rank\b"),
        "The launcher passes every process a `--local_rank` argument (`--local-rank` from the "
        "`torch.distributed.launch` of PyTorch 2), and the script's argument parser does not "
        "accept it. Add it to the parser (both spellings), or start the script with "
        "`torchrun`, which only sets the `LOCAL_RANK` environment variable.",
        implies={"stage": "S2"},
    ),
    Diagnosis(
        "duplicate_gpu",
        _re(r"Duplicate GPU detected"),
        "Two ranks were placed on the same GPU, which NCCL refuses. Start no more processes "
        "per node than there are visible GPUs (`--nproc_per_node`, `CUDA_VISIBLE_DEVICES`), "
        "and make each process select its own GPU (`torch.cuda.set_device(local_rank)`) "
        "before it creates the process group.",
        implies={"stage": "S2", "root_cause": "R2.1"},
    ),
    Diagnosis(
        "ddp_unused",
        _re(r"Expected to have finished reduction in the prior iteration"),
        "Some parameters got no gradient in an iteration (they did not contribute to the "
        "loss), so DistributedDataParallel's gradient reduction never finished. Pass "
        "`find_unused_parameters=True` to `DistributedDataParallel`, or make every output of "
        "`forward` take part in the loss.",
        implies={"stage": "S4"},
        moot=frozenset({"hardware", "launcher_command"}),
    ),
    # Only with ZeRO-3 named: "must be 2-D" elsewhere is an ordinary shape bug.
    Diagnosis(
        "zero3_partitioned",
        _re(r"must be 2-?D\b"),
        "Under ZeRO-3 each rank holds only a shard of every parameter, and outside the "
        "engine's forward pass a parameter is an empty placeholder, so code that uses or saves "
        "the weights directly sees a tensor of the wrong shape. Gather them first "
        "(`deepspeed.zero.GatheredParameters`), or save full weights with "
        "`stage3_gather_16bit_weights_on_model_save` or `zero_to_fp32.py`.",
        context=_re(r"\bzero[-_ ]?(?:stage[-_ ]?)?3(?!\d)|\bstage[-_ ]?3(?!\d)|"
                    r"['\"]stage['\"]\s*:\s*3(?!\d)|zero_stage\s*[=:]?\s*3(?!\d)|\bzero3"),
    ),
    # A kill after a collective timeout is the watchdog's doing, not memory's.
    Diagnosis(
        "sigkill",
        _re(r"return code\s*=?\s*-9\b|exit ?code:?\s*-9\b|exited with (?:exit )?code -9\b|"
            r"Signals\.SIGKILL|killed by signal 9\b"),
        "Exit code -9 means the process was killed from outside with SIGKILL, most often by "
        "the operating system's out-of-memory killer when host (CPU) memory runs out, for "
        "example with CPU offload or when every rank loads the full checkpoint. Check `dmesg` "
        "for an out-of-memory message and watch host memory while it runs.",
        unless=_re(r"Watchdog caught collective operation timeout|collective operation "
                   r"timeout|NCCL error|ncclInternalError|ncclSystemError"),
        moot=frozenset({"traceback"}),
    ),
    # Megatron-LM's and Colossal-AI's ``ensure_divisibility`` and the parallel-size checks.
    Diagnosis(
        "not_divisible",
        _re(r"(?:Error|Exception)\b:?[^\n]{0,160}?\bis not divisible by\b"),
        "A size that has to be split evenly (attention heads, layers, vocabulary, batch or the "
        "number of GPUs) is not a multiple of what it is split into, usually a tensor, "
        "pipeline or data parallel size. Choose parallel sizes (or batch sizes) that divide "
        "it evenly.",
    ),
)
BY_ID: Mapping[str, Diagnosis] = MappingProxyType({d.id: d for d in DIAGNOSES})


def diagnose(text: str, env: Environment | None = None) -> list[Diagnosed]:
    """The diagnoses the report's error implies, in table order (most specific first), at most
    ``MAX_SHOWN``. ``env`` adds the one that needs no message: torch and nvcc of different
    CUDA major versions while something is built (``rules.decisive``), which torch's
    extension builder always refuses."""
    text = text if isinstance(text, str) else ""
    found: list[Diagnosed] = []
    for diagnosis in DIAGNOSES:
        match = _match(diagnosis, text)
        if match is not None:
            found.append(Diagnosed(id=diagnosis.id, values=values_of(match.groupdict())))
        elif diagnosis.id == "cuda_mismatch" and env is not None and rules.decisive(text, env):
            found.append(Diagnosed(id=diagnosis.id, values=values_of(
                {"torch_cuda": env.cuda_torch, "nvcc_cuda": env.cuda_nvcc})))
    return found[:MAX_SHOWN]


def _match(diagnosis: Diagnosis, text: str) -> re.Match[str] | None:
    match = diagnosis.pattern.search(text)
    if match is None:
        return None
    if diagnosis.context is not None and not diagnosis.context.search(text):
        return None
    if diagnosis.unless is not None and diagnosis.unless.search(text):
        return None
    return match


def values_of(groups: Mapping[str, str | None]) -> dict[str, str]:
    """The quotable values among a match's groups: sanitized, then kept only if the whole value
    matches its strict pattern (``VALUE_PATTERNS``); a group named ``x2`` is an alternative
    spelling of ``x``."""
    values: dict[str, str] = {}
    for name, raw in groups.items():
        key = name.rstrip("0123456789")
        if raw and key in VALUE_PATTERNS and key not in values:
            clean = sanitize.neutral(raw).strip()
            if VALUE_PATTERNS[key].fullmatch(clean):
                values[key] = clean
    return values


def text_of(diagnosed: Diagnosed) -> str | None:
    """The diagnosis as shown: our template, with the quoted values when all it names are
    present and still match their patterns (checked again: the triage may be a stored or
    hand-made one); None for an id the table does not know."""
    diagnosis = BY_ID.get(diagnosed.id)
    if diagnosis is None:
        return None
    if diagnosis.detailed:
        values = values_of(diagnosed.values)
        names = set(re.findall(r"\{(\w+)\}", diagnosis.detailed))
        if names and names <= values.keys():
            return diagnosis.detailed.format(**{k: values[k] for k in names})
    return diagnosis.text


def moot(found: list[Diagnosed]) -> frozenset[str]:
    """The request keys (``missing``) that the diagnoses make pointless."""
    return frozenset().union(*(BY_ID[d.id].moot for d in found if d.id in BY_ID))


def quote(text: str, diagnosis_id: str) -> str | None:
    """The report's line holding the diagnosis's error, cut to ``rules.SNIPPET_CHARS``: the
    evidence behind an id the diagnosis states."""
    diagnosis = BY_ID.get(diagnosis_id)
    match = _match(diagnosis, text) if diagnosis is not None else None
    if match is None:
        return None
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    line = " ".join(text[start: end if end >= 0 else len(text)].split())
    return line if len(line) <= rules.SNIPPET_CHARS else line[: rules.SNIPPET_CHARS - 1] + "…"
