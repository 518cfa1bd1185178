"""The one table of secret shapes, used by every path that leaves the process (RELIABILITY 22-23, 36):
log records (``install``, ``logs.emit``), public comments (``text.sanitize``), LLM prompts
(``llm.prompt``) and CLI output. A shape added here is redacted everywhere at once.

Each entry is the strictest of the four tables that used to exist (logs, comments, prompts, PyGithub
records) plus the shapes of other services' keys that reporters paste into issues: GitHub
``ghp_/gho_/ghu_/ghs_/ghr_`` and ``github_pat_``, OpenAI ``sk-``/``sk-proj-``, Hugging Face
``hf_``, AWS ``AKIA``/``ASIA``, Slack ``xox?-``, GitLab ``glpat-``, PEM private-key blocks (the
whole block, across lines; an unterminated block to the end of the text), and generic
``password=``/``token:``/``secret=``/``api_key=`` assignments, quoted or not.

No assumption about token length: the stateless ``ghs_`` tokens are not 40 characters, so GitHub
prefixes match with any tail. Shapes whose prefix is also an ordinary word (``sk-`` in "disk-offload",
``hf_`` in "hf_hub_download") need a word start and a key-like tail. Where a keyword introduces the
value (``Bearer …``, ``password=…``) only the value is masked, so a log line still says what it was.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

MASK = "[REDACTED]"
MIN_CONFIGURED_CHARS = 8  # shorter configured values would match ordinary words everywhere

# GitHub tokens: prefix and any tail (``ghs_`` tokens carry dots and dashes). Not preceded by a
# lower-case letter, so "laughs_at" keeps its words; "%3Dghp_…" (URL-encoded) is still caught.
TOKEN_RE = re.compile(r"(?<![a-z])(?:ghs|ghp|gho|ghu|ghr|github_pat)_[A-Za-z0-9_.\-]+")
_START = r"(?<![A-Za-z0-9])"
_ASSIGNED_KEYS = r"password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|secret[_\-]?key"

# kind -> pattern. A ``keep`` group (named ``<kind>_keep``) is left in place when masking.
SHAPES: dict[str, str] = {
    "private_key": r"(?s:-----BEGIN[^\n]{0,60}?PRIVATE KEY-----"
                   r"(?:.*?-----END[^\n]{0,60}?PRIVATE KEY-----|.*))",
    "pem_block": r"-----BEGIN[^\n]*",
    "github_app_token": r"(?<![a-z])ghs_[A-Za-z0-9_.\-]+",
    "github_pat": r"(?<![a-z])ghp_[A-Za-z0-9_.\-]+|github_pat_[A-Za-z0-9_.\-]+",
    "github_oauth_token": r"(?<![a-z])gho_[A-Za-z0-9_.\-]+",
    "github_user_token": r"(?<![a-z])ghu_[A-Za-z0-9_.\-]+",
    "github_refresh_token": r"(?<![a-z])ghr_[A-Za-z0-9_.\-]+",
    "openai_key": _START + r"sk-[A-Za-z0-9_\-]{8,}",
    "huggingface_token": _START + r"hf_[A-Za-z0-9]{20,}",
    "aws_access_key": _START + r"(?:AKIA|ASIA)[A-Z0-9]{16,}",
    "slack_token": _START + r"xox[abprs]-[A-Za-z0-9\-]{8,}",
    "gitlab_token": _START + r"glpat-[A-Za-z0-9_\-]{8,}",
    "bearer": r"(?i:(?P<bearer_keep>\b(?:bearer|token)\s+)[A-Za-z0-9_.\-]{20,})",
    "assignment": r"(?i:(?P<assignment_keep>(?:" + _ASSIGNED_KEYS + r")"
                  r"[\"']?\s*[:=]\s*)(?:\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'`\[\]<>,;]{4,}))",
}
_COMPILED = {kind: re.compile(pattern) for kind, pattern in SHAPES.items()}
_ANY = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in SHAPES.items()))


@dataclass(frozen=True)
class Finding:
    """Where a secret-looking string sits. The value itself is deliberately not kept, so a finding
    can be logged without leaking what it found."""

    kind: str
    start: int


def find(text: str, configured: Iterable[str] = ()) -> Iterator[Finding]:
    """Every shape found in ``text`` (each shape on its own, so overlapping kinds are all named),
    then every configured value (at least ``MIN_CONFIGURED_CHARS`` long) it contains."""
    for kind, pattern in _COMPILED.items():
        for match in pattern.finditer(text):
            yield Finding(kind, match.start())
    for value in _configured(configured):
        if value in text:
            yield Finding("configured_secret", text.index(value))


def redact(text: str, configured: Iterable[str] = (), mask: str = MASK) -> str:
    """``text`` with configured values, then every secret shape, replaced by ``mask`` (in one pass,
    leftmost first, so a mask is never masked again)."""
    for value in _configured(configured):
        text = text.replace(value, mask)
    return _ANY.sub(lambda m: _masked(m, mask), text)


def _masked(match: re.Match[str], mask: str) -> str:
    kind = match.lastgroup or ""
    keep = match.groupdict().get(f"{kind}_keep")
    return (keep or "") + mask


def _configured(values: Iterable[str]) -> list[str]:
    return sorted({v for v in values if v and len(v) >= MIN_CONFIGURED_CHARS}, key=len, reverse=True)


_installed = False


def install() -> None:
    """Redact every log record of the process at creation, whatever its logger or handler.

    PyGithub logs whole responses at DEBUG, including the body of POST .../access_tokens that
    carries the installation token, so redaction applies to every record of the process, not only
    to our loggers. A logging.Filter on a logger would miss records of its child loggers and
    handlers added later (e.g. by a test harness), so the record factory is wrapped instead
    (idempotent)."""
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return record

    logging.setLogRecordFactory(factory)
    _installed = True
