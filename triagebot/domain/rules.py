"""Domain knowledge as code: error signatures (``signatures``) turned into features, evidence,
a keyword baseline classifier and a "is this distributed?" guess. Pure.

The learned classifier reads ``features``; the comment shows ``evidence`` so a maintainer sees
*why* a label was suggested; ``classify`` is the baseline the evaluation must beat. Where a
signature appears matters: the title and the final exception line of a log say more than a
keyword buried in a 5,000-line dump, so each signal is counted in all three places.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np

from triagebot.domain import taxonomy
from triagebot.domain.environment import extract
from triagebot.domain.models import Environment
from triagebot.domain.signatures import FIX_OF_ROOT_CAUSE, SIGNALS
from triagebot.text.signal import error_lines

MAX_CHARS = 100_000
MAX_COUNT = 20  # occurrences beyond this add nothing and cost time
SNIPPET_CHARS = 160
MAX_LINE = 2_000
_DIGITS = re.compile(r"\d+")
_BY_NAME = {s.name: s for s in SIGNALS}
# Signals whose presence in the final exception line is a strong, specific tell.
_LAST_ERROR_SIGNALS = [
    "build_compiler", "import_error", "shared_object", "gpu_oom", "nccl", "connection",
    "coll_timeout", "python_exc", "shape_mismatch", "dtype_mismatch", "file_missing",
    "cuda_kernel", "checkpoint", "meta_tensor",
]
_ENV_FEATURES = [
    "env:cuda_mismatch", "env:framework_version", "env:torch_version", "env:cuda_version",
    "env:gpu_model", "env:multi_gpu", "env:multi_node", "env:launcher_present", "env:windows",
    "env:fw_deepspeed", "env:fw_colossalai", "env:fw_megatron", "env:fw_pytorch", "env:fw_horovod",
    "ctx:has_traceback", "ctx:code_block", "ctx:length", "ctx:short_text",
    "ctx:inference_context", "ctx:training_context", "ctx:build_context", "ctx:setup_context",
]
FEATURE_NAMES: list[str] = (
    [f"body:{s.name}" for s in SIGNALS]
    + [f"title:{s.name}" for s in SIGNALS]
    + [f"last_error:{name}" for name in _LAST_ERROR_SIGNALS]
    + _ENV_FEATURES
)
# Labels about versions: only for these may a bare version list ("- deepspeed 0.12.3, torch 2.1.0,
# CUDA 12.1") be quoted as evidence; for any other label it is the template's system info, not why.
VERSION_LABELS = frozenset({"R1.1", "R2.2", "R3.4", "R5.3", "F2"})
_VERSION_ITEM = re.compile(r"^[A-Za-z][\w .+/()\-]{0,60}?[\s:=.]+v?\d+(?:\.\d+)*[\w.+\-]*$")
_BULLET = re.compile(r"^[\s\-*•>]+")
# A failed build, install or compile said in words ("fails to build", "Error building extension").
_BUILD_FAILURE = re.compile(
    r"\b(?:fail\w*|error\w*|unable|cannot|can't|could ?n[o']t)\W+(?:\w+\W+){0,3}?"
    r"(?:build|compil|install)|\b(?:build|compil\w*|install\w*)\W+(?:\w+\W+){0,2}?(?:fail|error)",
    re.I,
)
# With torch built for another CUDA than nvcc, a build/install context makes the mismatch the cause.
MISMATCH_BUILD_VOTES = (("S1", 3.0), ("1.1", 3.0), ("R1.1", 3.0), ("F2", 2.0))
_EXCEPTION_LINE = re.compile(r"^[^\n]{0,200}?\b[A-Z]\w{0,60}?(?:Error|Exception|Failure)\b:?[^\n]{0,300}$", re.M)


class Hits:
    """How often each signal fires in the body, and whether it fires in the title / last error."""

    def __init__(self, text: str) -> None:
        text = _bounded(text)
        self.title = text.split("\n", 1)[0]
        self.last_error = _last_error_line(text)
        self.text = text
        self.spans = {s.name: _spans(s.pattern, text) for s in SIGNALS}
        self.body = {name: len(spans) for name, spans in self.spans.items()}
        self.in_title = {s.name: bool(s.pattern.search(self.title)) for s in SIGNALS}
        self.in_last = {n: bool(_BY_NAME[n].pattern.search(self.last_error)) for n in _LAST_ERROR_SIGNALS}
        self.length = len(text)
        self.code_block = "```" in text or bool(re.search(r"^ {4}\S", text[:20_000], re.M))

    def strength(self, name: str) -> float:
        """0 when absent; grows with repetition, and more for title or final-error presence."""
        count = self.body[name]
        return count / (count + 1.0) + 1.0 * self.in_title[name] + 0.5 * self.in_last.get(name, False)


def _bounded(text: str) -> str:
    """The text the rules read: repeated log lines once, giant lines cut, at most ``MAX_CHARS``.

    Logs repeat the same line per rank and per iteration; counting it 800 times says nothing
    new and costs time, and a 50 KB single-line tensor dump hides no error message past its head."""
    if not isinstance(text, str):
        return ""
    seen: set[str] = set()
    kept: list[str] = []
    for line in text.split("\n"):
        if len(line) > MAX_LINE:
            line = line[: MAX_LINE - 500] + " … " + line[-500:]
        key = _DIGITS.sub("#", line.strip())
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(line)
    text = "\n".join(kept)
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS // 2] + "\n" + text[-MAX_CHARS // 2:]


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Where the pattern fires, first ``MAX_COUNT`` times (kept for evidence, counted for features)."""
    found: list[tuple[int, int]] = []
    for match in pattern.finditer(text):
        found.append(match.span())
        if len(found) >= MAX_COUNT:
            break
    return found


def _last_error_line(text: str) -> str:
    last = ""
    for match in _EXCEPTION_LINE.finditer(text):
        last = match.group(0)
    return last


@lru_cache(maxsize=32)
def _hits(text: str) -> Hits:
    return Hits(text)


def features(text: str, env: Environment) -> np.ndarray:
    """A fixed-length float32 vector of rule hits (0/1 or counts squashed to [0, 1])."""
    hits = _hits(_bounded(text))
    values = [min(hits.body[s.name] / 3.0, 1.0) for s in SIGNALS]
    values += [float(hits.in_title[s.name]) for s in SIGNALS]
    values += [float(hits.in_last[n]) for n in _LAST_ERROR_SIGNALS]
    values += list(_env_values(hits, env).values())
    return np.clip(np.asarray(values, dtype=np.float32), 0.0, 1.0)


def _env_values(hits: Hits, env: Environment) -> dict[str, float]:
    framework = env.framework or ""
    values: dict[str, float] = {
        "env:cuda_mismatch": env.cuda_mismatch(),
        "env:framework_version": env.framework_version is not None,
        "env:torch_version": env.torch is not None,
        "env:cuda_version": bool(env.cuda_torch or env.cuda_nvcc),
        "env:gpu_model": env.gpu_model is not None,
        "env:multi_gpu": (env.gpu_count or 0) > 1,
        "env:multi_node": (env.nodes or 0) > 1 or hits.body["multi_node"] > 0,
        "env:launcher_present": env.launcher is not None,
        "env:windows": "windows" in (env.os or "").lower() or hits.in_title["platform"],
    }
    values.update({f"env:fw_{fw}": framework == fw
                   for fw in ("deepspeed", "colossalai", "megatron", "pytorch", "horovod")})
    values.update({
        "ctx:has_traceback": hits.body["traceback"] > 0,
        "ctx:code_block": hits.code_block,
        "ctx:length": min(math.log10(hits.length + 1) / 5.0, 1.0),
        "ctx:short_text": hits.length < 300,
        "ctx:inference_context": _context(hits, ("inference",)) >= 1.0,
        "ctx:training_context": _context(hits, ("training", "training_started", "numerics")) >= 1.0,
        "ctx:build_context": _context(hits, ("build_compiler", "build_tooling", "build_ops")) >= 1.0,
        "ctx:setup_context": _context(hits, ("launcher_flags", "pg_init", "rank_env")) >= 1.0,
    })
    return {name: float(values[name]) for name in _ENV_FEATURES}


def _context(hits: Hits, names: tuple[str, ...]) -> float:
    return sum(hits.strength(n) for n in names)


def _scores(hits: Hits, env: Environment) -> dict[str, float]:
    """Summed votes of every firing signal, plus facts from the environment."""
    scores: dict[str, float] = {}
    started = hits.body["training_started"] > 0
    for signal in SIGNALS:
        strength = hits.strength(signal.name)
        votes = signal.in_training if started and signal.in_training else signal.votes
        if strength:
            for label_id, weight in votes.items():
                scores[label_id] = scores.get(label_id, 0.0) + weight * strength
    if env.cuda_mismatch():
        for label_id, weight in (("S1", 1.0), ("1.1", 1.0), ("R1.1", 3.0), ("F2", 2.0)):
            scores[label_id] = scores.get(label_id, 0.0) + weight
        if _build_context(hits):
            for label_id, weight in MISMATCH_BUILD_VOTES:
                scores[label_id] = scores.get(label_id, 0.0) + weight
    return scores


def decisive(text: str, env: Environment) -> bool:
    """Torch built for one CUDA major version, nvcc another, while something is built or
    installed: whatever the reporter was doing around it (loading a model, a dataset), the build
    of the CUDA ops fails. Only a major mismatch: torch's extension builder refuses it, while a
    minor one (12.1 vs 12.3) only warns and DeepSpeed's op builder accepts it as compatible, so
    the build may well have failed for another reason (the one shared issue with a minor
    mismatch in a build failed on Windows)."""
    return env.cuda_mismatch() and _major(env.cuda_torch) != _major(env.cuda_nvcc) and \
        _build_context(_hits(_bounded(text)))


def _major(version: str | None) -> str:
    return (version or "").split(".")[0]


def _build_context(hits: Hits) -> bool:
    """The report is about building or installing: compiler or packaging output, the op builder
    named in the title or final error, or a failed build said in words. A pasted ds_report lists
    ops and nvcc on every report, so op names in the body alone do not count."""
    if hits.body["build_compiler"] or hits.body["build_tooling"]:
        return True
    if hits.in_title["build_ops"] or _BY_NAME["build_ops"].pattern.search(hits.last_error) or \
            "op_builder" in hits.text:
        return True
    return bool(_BUILD_FAILURE.search(hits.text))


def _best(dimension: str, candidates: list[str], scores: dict[str, float]) -> str:
    """Highest score; the paper's share breaks ties and decides when nothing fired."""
    def key(label_id: str) -> float:
        found = taxonomy.label(dimension, label_id)
        return scores.get(label_id, 0.0) + (found.share if found else 0.0) / 100.0
    return max(candidates, key=key)


def classify(text: str, env: Environment) -> dict[str, str]:
    """Keyword-rule baseline: one id per dimension (stage, symptom, root_cause, fix_pattern)."""
    hits = _hits(_bounded(text))
    scores = _scores(hits, env)
    stage = _best("stage", taxonomy.ids("stage"), scores)
    symptom = _best("symptom", taxonomy.in_stage("symptom", stage), scores)
    fired = env.cuda_mismatch() or any(hits.body[s.name] for s in SIGNALS if s.votes)
    if not fired:
        return {"stage": stage, "symptom": symptom, "root_cause": taxonomy.UNKNOWN,
                "fix_pattern": taxonomy.UNKNOWN}
    root = _best("root_cause", taxonomy.in_stage("root_cause", stage), scores)
    scores[FIX_OF_ROOT_CAUSE[root]] = scores.get(FIX_OF_ROOT_CAUSE[root], 0.0) + 2.0
    fix = _best("fix_pattern", taxonomy.ids("fix_pattern"), scores)
    return {"stage": stage, "symptom": symptom, "root_cause": root, "fix_pattern": fix}


def distributed(text: str, env: Environment) -> bool:
    """Baseline guess whether the bug only exists because work is spread over devices/nodes."""
    hits = _hits(_bounded(text))
    score = sum(s.distributed * hits.strength(s.name) for s in SIGNALS)
    score += 1.0 * ((env.nodes or 0) > 1) + 0.5 * ((env.gpu_count or 0) > 1) + 0.5 * bool(env.launcher)
    return score >= 1.5


def evidence(text: str, dimension: str, label_id: str, limit: int = 2) -> list[str]:
    """Short quotes of ``text`` (error lines, config names) that support ``label_id``."""
    if limit <= 0 or taxonomy.label(dimension, label_id) is None:
        return []
    hits = _hits(_bounded(text))
    supporters = sorted((s for s in SIGNALS if s.votes.get(label_id, 0) > 0),
                        key=lambda s: -s.votes[label_id])
    found: list[str] = []
    for signal in supporters:
        line = _matching_line(hits, signal.name, found, versions=label_id in VERSION_LABELS)
        if line:
            found.append(line)
        if len(found) >= limit:
            break
    return found[:limit]


def facts(text: str, dimension: str, label_id: str) -> list[str]:
    """Conclusions from the detected environment that support ``label_id``, in our own words
    (shown as prose, unlike the quotes of ``evidence``)."""
    if label_id not in ("S1", "1.1", "R1.1", "F2") or taxonomy.label(dimension, label_id) is None:
        return []
    env = _environment(_bounded(text))
    if not env.cuda_mismatch():
        return []
    return [f"PyTorch was built with CUDA {env.cuda_torch}, but nvcc reports CUDA {env.cuda_nvcc}"]


@lru_cache(maxsize=8)
def _environment(text: str) -> Environment:
    return extract(text)


def _matching_line(hits: Hits, name: str, taken: list[str], versions: bool = False) -> str | None:
    """A line where the signal fires, not yet taken: the last error-looking one (logs end with
    what matters), else the last one. Bare version lists are skipped unless ``versions``: the
    system-info line matches many keywords but explains nothing about other labels."""
    candidates = []
    for line in _lines_of(hits, name):
        snippet = line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…"
        if snippet and snippet not in taken and (versions or not version_list(line)):
            candidates.append((line, snippet))
    errors = [snippet for line, snippet in candidates if error_lines(line, 1)]
    preferred = errors or [snippet for _, snippet in candidates]
    return preferred[0] if preferred else None


def _lines_of(hits: Hits, name: str) -> list[str]:
    text, lines = hits.text, []  # the lines holding the signal's matches, last first
    for match_start, match_end in reversed(hits.spans[name]):
        start = text.rfind("\n", 0, match_start) + 1
        end = text.find("\n", match_end)
        lines.append(" ".join(text[start: end if end >= 0 else len(text)].split()))
    return lines


def version_list(line: str) -> bool:
    """A line that only lists versions ("- deepspeed 0.12.3, torch 2.1.0+cu121, CUDA 12.1")."""
    items = [i.strip() for i in re.split(r"[,;|]", _BULLET.sub("", line)) if i.strip()]
    return bool(items) and all(_VERSION_ITEM.match(i) for i in items)
