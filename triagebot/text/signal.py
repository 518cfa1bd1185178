"""Issue text handling: normalise untrusted text and select the part that carries signal.

The embedding model reads 256 word pieces (~1,000 characters of technical English), while real
reports carry templates, 5 MB logs and screenshots. So we keep, in this order: the title, the
reporter's own prose (template headings, hints, ``[e.g. ...]`` placeholders, ``_No response_``
and checklists removed), the error lines of logs and tracebacks (the final exception line is the
most telling), and the launcher/config names. Environment-tool dumps (ds_report, collect_env,
pip list, nvidia-smi) stay in the full text the environment parser reads, but not in the window.
Everything here is pure and deterministic.
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter

# The one set of invisible characters (RELIABILITY 41), for every reader of untrusted text: zero-width
# characters, bidi controls (Trojan Source), word joiner and invisible operators, BOM and soft hyphen.
# Never meaningful in a bug report, and a copy-paste carries them along.
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # keeps tab and newlines
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_HTML_COMMENT = re.compile(r"<!--.*?(-->|$)", re.S)
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]{0,500}>")
# bounded: unbounded, a body of 65 KB of "![" took seconds (issue bodies are attacker input)
_MD_IMAGE = re.compile(r"!\[[^\]\n]{0,500}\]\([^)\s]{0,4000}\)")
_URL = re.compile(r"https?://\S+")
_FENCE = re.compile(r"```[^\n]*\n?(.*?)(?:```|$)", re.S)
_CHECKBOX = re.compile(r"^\s*[-*]\s*\[[ xX]\]\s*", re.M)

# Headings and prompts that issue templates of DeepSpeed, Colossal-AI, Megatron-LM, Horovod,
# Accelerate and PyTorch put in every report (tests/fixtures/issue_templates/): they are identical
# across issues, so they only blur the embedding. Whole lines only, so a reporter's sentence that
# merely starts like one is kept.
_TEMPLATE_LINES = re.compile(
    # The whitespace before the heading is taken whole ("(?=(?P<lead>\s*))(?P=lead)", an atomic
    # group: a heading never starts with whitespace, so no shorter take could match): read as two
    # `\s*` around the optional "#", it was tried every way over a run of blank lines (cubic:
    # 400 blank lines took 7 s, a few thousand would hold a worker for hours).
    r"^(?=(?P<lead>\s*))(?P=lead)(?:#+|\*\*)?(?=(?P<gap>\s*))(?P=gap)("
    r"describe the bug|bug description|to reproduce|steps to reproduce( the behavior)?|"
    r"expected behaviou?r|actual behaviou?r|screenshots?|system info|ds_report output|"
    r"environment|additional context|launcher context|docker context|reproduction|"
    r"your environment|versions?|own code or official code|🐛 describe the bug|"
    r"a clear and concise description[^\n]*|if applicable, add[^\n]*|"
    r"please (run|provide|describe|list)[^\n]*|is your feature request related[^\n]*|"
    r"describe the solution you'd like|describe alternatives you've considered|"
    r"what is your question\??|question|motivation|pitch|alternatives|cc @[^\n]*|"
    r"are you (launching|using|running) [^\n]{0,200}\?|add any other context[^\n]*|"
    r"steps to reproduce the behaviou?r[^\n]*|a clear and concise[^\n]*|"
    # Megatron-LM, Horovod, Colossal-AI and Accelerate headings and hints. Not here, though also
    # template headings: "Your question", "Bug report:", "Stack trace/logs", "Steps/Code to
    # reproduce bug", "Proposed fix", "Describe the regression" -- the shared data keep them (38
    # issues), so the shipped index's vectors hold them; they go when the index is next rebuilt.
    r"checklist|(?<=#\s)(?:information|tasks)|previous performance|new performance|optional: affiliation|"
    r"is there an existing issue for this( bug)?\?|are you comfortable sharing a minimal script[^\n]*|"
    r"if you have a proposal for how to fix the issue[^\n]*|a helpful guide on on how to craft[^\n]*|"
    r"to get oncall's attention to this issue\.?|ask a clear and concise question[^\n]*|"
    r"please ask your question here\.?|what speed or accuracy did you previously see\.?|"
    r"what speed or accuracy do you see after the update\.?|_no response_"
    # (the spaces after it, then after its colon, taken whole too)
    # "System info (please complete ...):"
    r")(\s*\([^()\n]{0,80}\))?(?=(?P<sp>[ \t]*))(?P=sp)(?::(?=(?P<sp2>[ \t]*))(?P=sp2))?(\*\*)?\s*$",
    re.I | re.M,
)
# Lines of a template the reporter left as they were: the example steps, the options of the
# forms' checklists, Horovod's checklist questions, and a "key:" list item whose value was never
# filled in (after its ``[e.g. ...]`` placeholder is gone). A filled item ("- OS: Ubuntu 22.04")
# is kept: it is the reporter's answer.
_TEMPLATE_ITEM = re.compile(
    r"^\s*(?:4\.\s*\.\.\.|(?:[-*]\s*(?:\[[ xX]\]\s*)?|\d\.\s*)(?:"
    r"go to '\.\.\.'|click on '\.\.\.\.'|scroll down to '\.\.\.\.'|see error|"
    r"simple inference script to reproduce|what packages are required and their versions|"
    r"how to run the script|"
    r"i have searched the existing issues|yes, i will share a script below|"
    r"no, i prefer not to share \(then please describe[^\n]*|the official example scripts|"
    r"my own modified scripts|one of the scripts in the examples/ folder of accelerate[^\n]*|"
    r"my own task or dataset \(give details below\)|"
    r"did you search issues to find if somebody asked this question before\?|"
    r"if your question is about (?:hang|docker), did you read [^\n]{0,120}|"
    r"framework: \(tensorflow, keras, pytorch, mxnet\)|"
    r"(?:(?:previous|new) )?(?:os|os and version|python version|pytorch version|cuda version|nccl version|"
    r"mpi version|gcc version|horovod version|framework|framework version|megatron-lm commit id)\s*:?|"
    r"gpu count and types|interconnects \(if applicable\)|any other relevant info about your setup|"
    r"\(if applicable\) what \[?deepspeed-mii\b[^\n]*|\(if applicable\) hugging face transformers/[^\n]*"
    r"))\s*$",
    re.I | re.M,
)
# "[e.g. Ubuntu 18.04]", "[e.g., two machines connected with 100 Gbps IB]": a template's example
# answer, never the reporter's fact (read as one, it gave every report Ubuntu 18.04, A100s and
# two nodes).
_PLACEHOLDER = re.compile(r"\[e\.g\.,?[^\]\n]{0,160}\]", re.I)

# Output of environment tools (ds_report, python -m torch.utils.collect_env, accelerate env,
# horovodrun --check-build, pip list, nvidia-smi): the environment parser reads it from the full
# text, but in the 256-token window it is the same few hundred words in every report that pastes
# it, so it makes unrelated reports look alike. A line counts when it has one of these shapes...
_DUMP_LINE = re.compile(
    r"^\s*(?:"
    r"-{20,}|[+|][=+-]{10,}.*|"  # separators, nvidia-smi's table rules and its rows:
    r"\|.*(?:MiB|NVIDIA-SMI|Driver Version|Persistence-M|Pwr:Usage|Volatile|GPU-Util|Bus-Id|Processes:|"
    r"\d+W / \d+W|[0-9A-F]{8}:[0-9A-F]{2}:).*|"
    r"\w+ \.+ \[(?:OKAY|NO|YES)\].*|"  # ds_report: "cpu_adam ..... [NO] ....... [OKAY]", and its keys
    r"(?:op name|torch install path|torch version|deepspeed install path|deepspeed info|torch cuda version|"
    r"torch hip version|nvcc version|deepspeed wheel compiled w\.|shared memory \(/dev/shm\) size) \.+ .*|"
    r"DeepSpeed C\+\+/CUDA extension op report|DeepSpeed general environment info:|"
    r"NOTE: Ops not installed will be just-in-time \(JIT\) compiled at|"
    r"runtime if needed\. Op compatibility means that your system|"
    r"meet the required dependencies to JIT install the op\.|JIT compiled ops requires ninja|"
    r"\[WARNING\]  .*|\[[\d-]+ [\d:,]+\] \[INFO\] \[real_accelerator\.py.*|"
    r"Collecting environment information\.*|"
    r"(?:PyTorch version|Is debug build|CUDA used to build PyTorch|ROCM used to build PyTorch|OS|GCC version|"
    r"Clang version|CMake version|Libc version|Python version|Python platform|Is CUDA available|"
    r"CUDA runtime version|CUDA_MODULE_LOADING set to|GPU models and configuration|Nvidia driver version|"
    r"cuDNN version|HIP runtime version|MIOpen runtime version|Is XNNPACK available|CPU|Architecture|"
    r"CPU op-mode\(s\)|Address sizes|Byte Order|CPU\(s\)|On-line CPU\(s\) list|Vendor ID|Model name|"
    r"CPU family|Model|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Stepping|Frequency boost|"
    r"CPU (?:max|min) MHz|BogoMIPS|Flags|Virtualization|Hypervisor vendor|Virtualization type|"
    r"L[123][di]? cache|NUMA node\d*(?:\(s\)| CPU\(s\))|Vulnerability [\w ]+|GPU \d+|"
    r"Versions of relevant libraries):.*|"
    r"\[(?:pip3?|conda)\] .*|/usr/\S*libcudnn\S*|"
    r"- `?Accelerate`? (?:version|default config|config):.*|"
    r"- (?:Platform|`accelerate` bash location|Numpy version|PyTorch version \(GPU\?\)|PyTorch \w+ available|"
    r"System RAM|GPU type|Python version):.*|"
    r"- \w+: \S.*|"  # accelerate's default config, one "- key: value" a line
    r"Horovod v[\d.]+:|Available (?:Frameworks|Controllers|Tensor Operations):|\[[ X]\] \w+|"
    r"Package\s+Version(?:\s+\S+)?|[\w.-]+\s{2,}[\w.+-]+(?:\s+\S+)?"  # pip list
    r")\s*$",
)
# ...and it is removed only inside a run of at least this many such lines (blank lines between
# them allowed): a reporter's own "PyTorch version: 2.1" line among prose stays in the window.
DUMP_RUN = 8
# Warnings every torchrun / checkpointing job prints whatever went wrong: an IPv6-less host's
# c10d socket notice and checkpoint's use_reentrant notice. Never the failure being reported.
_BENIGN = re.compile(
    r"The server socket cannot be initialized on \[::\]|UserWarning: torch\.utils\.checkpoint: "
    r"(?:please pass in use_reentrant|the use_reentrant parameter should be passed)",
)

_ERROR_LINE = re.compile(
    r"(error|exception|traceback|fatal|failed|failure|killed|segmentation fault|core dumped|"
    r"out of memory|\boom\b|timeout|timed out|hang|stuck|nccl|assert|undefined symbol|"
    r"no such file|not found|cannot|can't|unable|mismatch|nan\b|overflow|deprecat|warning:)",
    re.I,
)
_FRAME_LINE = re.compile(r'^\s*(File ".*", line \d+|at [\w.$]+\(|\d+\s*\|)')
_NAME_TOKEN = re.compile(
    r"\b(?:[a-z_][a-z0-9_]*\.){1,}[a-z_][a-z0-9_]*\b|\b[a-z]+_[a-z0-9_]+\b|--[a-z][a-z0-9_-]+",
    re.I,
)

# A line (numbers aside) this many times in a report is a log's refrain, not something said again.
LOG_REPEATS = 4
_LETTERS = re.compile(r"[a-z]{2}")
SIGNAL_CHARS = 1_200  # ~256 word pieces of technical English
FULL_TEXT_CHARS = 100_000  # rules and environment parsing look at no more than this


def normalize(text: str) -> str:
    """NFKC, invisible and control characters removed, ANSI colours dropped, newlines unified."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _ANSI.sub("", text)
    text = unicodedata.normalize("NFKC", text)
    text = INVISIBLE.sub("", text)
    return _CONTROL.sub("", text)


def one_line(text: str) -> str:
    """One line for people to read (comments, terminals, resolution lines): NFKC, invisible
    characters removed, every control character (newlines, ESC, C1) a space, whitespace collapsed.
    An ANSI sequence keeps its harmless tail ("[31m") rather than being interpreted."""
    text = unicodedata.normalize("NFKC", text or "")
    text = INVISIBLE.sub("", text)
    return " ".join(_ANY_CONTROL.sub(" ", text).split())


_IMG_TAG = re.compile(r"<img\b", re.I)


def before_images(raw: str, chars: int = 300) -> list[str]:
    """What the raw report says just before each image it embeds (a markdown image or an
    ``<img>`` tag; not one inside a template's HTML comment), up to ``chars`` characters each.
    Cleaning drops images, so what a screenshot shows is lost to every reader after this point;
    the words before it say what it was ("gives me this error:", "the loss curve:")."""
    text = _HTML_COMMENT.sub("", raw if isinstance(raw, str) else "")
    starts = sorted(m.start() for rx in (_MD_IMAGE, _IMG_TAG) for m in rx.finditer(text))
    return [text[max(0, start - chars): start] for start in starts]


# What launchers put before every line of a rank's output: torchrun's ``[rank0]:`` (and
# ``[default0]:`` with ``--tee``/``--log-dir``), Open MPI's ``--tag-output`` ``[1,0]<stderr>:``
# (``[1,0] :`` once cleaning has taken ``<stderr>`` for an HTML tag), ``srun -l``'s ``0: ``. A
# message that spans lines (torch's "Missing key(s) ... Unexpected key(s)", a traceback's last
# frames) is matched only with them gone.
# (Each pattern starts with the newline before the line, not ``^``: a literal first character
# lets the regex engine skip to the next line at C speed -- 0.3 ms on a 100 KB log, not 1.5.)
# Prefixes stack ("[default0]:[rank0]: ", "0: [rank0]: "), so one or more come off.
_RANK_PREFIX = re.compile(
    r"\n(?:[ \t]*(?:(?:\[rank\d{1,5}\]|\[default\d{1,5}\]|\[\d{1,5},\d{1,5}\](?:<std(?:out|err)>| )?)"
    r":[ \t]?|\d{1,5}:[ \t]))+")
# pdsh's ``worker-1: `` (DeepSpeed's multi-node launcher): a host's name or address, taken as a
# prefix only when it starts more than one line. A host name has no underscore and, here, a
# digit (``node001``, ``worker-1``, ``ip-10-0-0-1``), dots only between lower-case labels; an
# exception's dotted name (``jinja2.exceptions.TemplateNotFound``), ``e.g.`` or ``eval_loss``
# is none.
_HOST_PREFIX = re.compile(r"\n([A-Za-z0-9][\w.-]{0,63}): ")
_HOST_LIKE = re.compile(r"localhost|\d{1,3}(?:\.\d{1,3}){3}|(?=[a-z0-9.-]*\d)[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*")
HOST_PREFIX_LINES = 2


def unprefixed(text: str) -> str:
    """``text`` without the per-line prefixes launchers add to each rank's output (a rank, a
    host, an MPI tag, stacked or not): the lines read as the program printed them."""
    text = _RANK_PREFIX.sub("\n", "\n" + (text if isinstance(text, str) else ""))
    hosts = Counter(name for name in _HOST_PREFIX.findall(text) if _HOST_LIKE.fullmatch(name))
    repeated = {name for name, count in hosts.items() if count >= HOST_PREFIX_LINES}
    if repeated:  # line by line: thousands of distinct names would make a slow alternation
        lines = text.split("\n")
        for i, line in enumerate(lines):
            name, sep, rest = line.partition(": ")
            if sep and name in repeated:
                lines[i] = rest
        text = _RANK_PREFIX.sub("\n", "\n".join(lines))  # a rank's prefix after the host's
    return text[1:]


def strip_markup(text: str) -> str:
    """Drop HTML comments (template hints), tags, images and bare URLs; keep the words."""
    text = _HTML_COMMENT.sub("", text)
    text = _MD_IMAGE.sub(" ", text)
    text = _HTML_TAG.sub(" ", text)
    return _URL.sub(" ", text)


def strip_template(text: str) -> str:
    """Remove template headings, prompts, example placeholders, unfilled items and checklist
    markers that carry no signal; what the reporter wrote into the template stays."""
    text = _TEMPLATE_LINES.sub("", text)
    if "[e.g" in text or "[E.g" in text:
        text = _PLACEHOLDER.sub("", text)
    text = _TEMPLATE_ITEM.sub("", text)
    return _CHECKBOX.sub("", text)


def strip_dumps(text: str, run: int = DUMP_RUN) -> str:
    """Drop runs of at least ``run`` lines of environment-tool output (``_DUMP_LINE``) from text
    meant for the embedding window; shorter runs and everything else are kept as they are."""
    lines = text.split("\n")
    keep = [True] * len(lines)
    start, count = -1, 0
    for i, line in enumerate([*lines, "\x00end"]):
        if i < len(lines) and (_DUMP_LINE.match(line) or (not line.strip() and count)):
            if count == 0:
                start = i
            count += bool(line.strip())
            continue
        if count >= run:
            for j in range(start, i):
                keep[j] = False
        start, count = -1, 0
    if all(keep):
        return text
    return "\n".join(line for line, kept in zip(lines, keep) if kept)


def reported(full: str) -> str:
    """What the reporter wrote of ``full`` (a ``full_text``): tool dumps (``strip_dumps``) and
    routine warnings (``_BENIGN``) gone, and a line that only repeats an earlier one but for its
    numbers (the same log line from every rank and step) kept once. The words model and the rule
    features read this, environment parsing still reads ``full``. Measured on 100 shared issues
    poured into their trackers' templates (``scripts/template_robustness.py``) with the window
    already clean, the full text's pasted dumps and rank logs withdrew 116 labels their clean
    versions state (the window, 2)."""
    lines = strip_dumps(full).split("\n")
    keys = [_line_key(" ".join(line.split())) for line in lines]  # right-aligned counters: spacing varies
    counts = Counter(keys)
    kept: list[str] = []
    seen: set[str] = set()
    for line, key in zip(lines, keys):
        if _BENIGN.search(line):
            continue
        if counts[key] >= LOG_REPEATS and _LETTERS.search(key):
            if key in seen:
                continue
            seen.add(key)
        kept.append(line)
    return "\n".join(kept)


def _line_key(line: str) -> str:
    """A log line with its numbers and rank prefix blanked: equal for the same line of every rank."""
    key = re.sub(r"\d+", "#", line.strip().lower())
    return re.sub(r"^\[?(rank|node)?\s*#\]?:?\s*", "", key)


# Two or more blank lines in a row (spaces allowed), read as one: the template patterns start at
# every line and take the blank lines before a heading, so a long run of them was scanned once
# per line (quadratic: 8,000 blank lines took 2.4 s, 100 KB of them minutes).
_BLANK_RUN = re.compile(r"\n(?:[ \t]*\n){2,}")


def clean(text: str) -> str:
    """Normalised, markup-free, template-free text, capped for the rule/environment parsers."""
    text = strip_template(_BLANK_RUN.sub("\n\n", strip_markup(normalize(text))))
    text = re.sub(r"\n{3,}", "\n\n", text)
    return _cap_middle(text.strip(), FULL_TEXT_CHARS)


def _cap_middle(text: str, limit: int) -> str:
    """Keep the head and the tail of an over-long text: logs end with the error that matters."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n…\n" + text[-half:]


def split_code(text: str) -> tuple[str, list[str]]:
    """Separate prose from fenced code/log blocks."""
    blocks = [m.group(1) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub("\n", text)
    return prose, blocks


def error_lines(text: str, limit: int = 8) -> list[str]:
    """The lines of logs/tracebacks that name the failure, last ones first-class.

    Traceback frames are skipped; the final exception line of each traceback is kept; repeated
    lines (the same error from 8 ranks) are kept once."""
    seen: set[str] = set()
    picked: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or len(line) > 400 or _FRAME_LINE.match(line):
            continue
        if not _ERROR_LINE.search(line) or _BENIGN.search(line):
            continue
        key = _line_key(line)
        if key in seen:
            continue
        seen.add(key)
        picked.append(line)
    # The end of a log is where the failure is reported; prefer the last lines.
    return picked[-limit:]


def names(text: str, limit: int = 12) -> list[str]:
    """Dotted API names, snake_case config keys and --flags: cheap, strong topical signal."""
    out: list[str] = []
    for token in _NAME_TOKEN.findall(text):
        if token.lower() not in (t.lower() for t in out) and len(token) <= 60:
            out.append(token)
        if len(out) >= limit:
            break
    return out


def signal_text(title: str, body: str, budget: int = SIGNAL_CHARS) -> str:
    """The text the embedding model reads: title, prose, error lines and names within ``budget``."""
    title = " ".join(normalize(title).split())
    cleaned = strip_dumps(clean(body))
    prose, blocks = split_code(cleaned)
    prose = " ".join(prose.split())
    errors = error_lines("\n".join(blocks) + "\n" + cleaned)
    parts = [title]
    remaining = budget - len(title)
    prose_share = max(remaining // 2, remaining - sum(len(e) + 1 for e in errors))
    prose = prose[: max(prose_share, 0)]
    if prose:
        parts.append(prose)
    # An error sentence written in the prose is already there; repeating it only wastes budget.
    errors = [e for e in errors if " ".join(e.split()) not in prose]
    for line in reversed(errors):  # the last error line is the most telling
        if remaining - sum(len(p) + 1 for p in parts) <= 40:
            break
        parts.append(line[:300])
    text = "\n".join(p for p in parts if p)
    return text[:budget]


def full_text(title: str, body: str) -> str:
    """Title plus cleaned body: what rules and environment extraction read."""
    return normalize(title).strip() + "\n" + clean(body)
