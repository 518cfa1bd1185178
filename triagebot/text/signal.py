"""Issue text handling: normalise untrusted text and select the part that carries signal.

The embedding model reads 256 word pieces (~1,000 characters of technical English), while real
reports carry templates, 5 MB logs and screenshots. So we keep, in this order: the title, the
reporter's own prose (template headings and checklists removed), the error lines of logs and
tracebacks (the final exception line is the most telling), and the launcher/config names.
Everything here is pure and deterministic.
"""
from __future__ import annotations

import re
import unicodedata

# The one set of invisible characters (RELIABILITY 41), for every reader of untrusted text: zero-width
# characters, bidi controls (Trojan Source), word joiner and invisible operators, BOM and soft hyphen.
# Never meaningful in a bug report, and a copy-paste carries them along.
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # keeps tab and newlines
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_HTML_COMMENT = re.compile(r"<!--.*?(-->|$)", re.S)
_HTML_TAG = re.compile(r"</?[a-zA-Z][^>]{0,500}>")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_FENCE = re.compile(r"```[^\n]*\n?(.*?)(?:```|$)", re.S)
_CHECKBOX = re.compile(r"^\s*[-*]\s*\[[ xX]\]\s*", re.M)

# Headings and prompts that issue templates of DeepSpeed, Colossal-AI, Megatron-LM and PyTorch put
# in every report: they are identical across issues, so they only blur the embedding.
_TEMPLATE_LINES = re.compile(
    r"^\s*(#+\s*|\*\*)?\s*("
    r"describe the bug|bug description|to reproduce|steps to reproduce( the behavior)?|"
    r"expected behaviou?r|actual behaviou?r|screenshots?|system info|ds_report output|"
    r"environment|additional context|launcher context|docker context|reproduction|"
    r"your environment|versions?|own code or official code|🐛 describe the bug|"
    r"a clear and concise description[^\n]*|if applicable, add[^\n]*|"
    r"please (run|provide|describe)[^\n]*|is your feature request related[^\n]*|"
    r"describe the solution you'd like|describe alternatives you've considered|"
    r"what is your question\??|question|motivation|pitch|alternatives|cc @[^\n]*|"
    r"are you (launching|using|running) [^\n]{0,200}\?|add any other context[^\n]*|"
    r"steps to reproduce the behaviou?r[^\n]*|a clear and concise[^\n]*"
    r")(\s*\([^()\n]{0,80}\))?\s*:?\s*(\*\*)?\s*$",  # "System info (please complete ...):"
    re.I | re.M,
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


def strip_markup(text: str) -> str:
    """Drop HTML comments (template hints), tags, images and bare URLs; keep the words."""
    text = _HTML_COMMENT.sub("", text)
    text = _MD_IMAGE.sub(" ", text)
    text = _HTML_TAG.sub(" ", text)
    return _URL.sub(" ", text)


def strip_template(text: str) -> str:
    """Remove template headings, prompts and checklist markers that carry no signal."""
    text = _TEMPLATE_LINES.sub("", text)
    return _CHECKBOX.sub("", text)


def clean(text: str) -> str:
    """Normalised, markup-free, template-free text, capped for the rule/environment parsers."""
    text = strip_template(strip_markup(normalize(text)))
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
        if not _ERROR_LINE.search(line):
            continue
        key = re.sub(r"\d+", "#", line.lower())
        key = re.sub(r"^\[?(rank|node)?\s*#\]?:?\s*", "", key)
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
    cleaned = clean(body)
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
