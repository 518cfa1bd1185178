"""Token redaction for logs (RELIABILITY 22-23).

PyGithub logs whole responses at DEBUG, including the body of POST .../access_tokens that carries
the installation token, so the filter is attached to the library's loggers, not only to ours.
No assumption about token length: the new stateless ``ghs_`` tokens are not 40 characters."""
from __future__ import annotations

import logging
import re

TOKEN_RE = re.compile(r"\b(?:ghs|ghp|gho|ghu|ghr|github_pat)_[A-Za-z0-9_.\-]+")
BEARER_RE = re.compile(r"(?i)\b(bearer|token)\s+[A-Za-z0-9_.\-]{20,}")
MASK = "[REDACTED]"
LOGGERS = ("github", "github.Requester", "github.GithubRetry", "urllib3", "triagebot")


def redact(text: str) -> str:
    """Mask GitHub tokens and long bearer credentials (JWTs) inside any text."""
    return BEARER_RE.sub(lambda m: f"{m.group(1)} {MASK}", TOKEN_RE.sub(MASK, text))


class RedactingFilter(logging.Filter):
    """Rewrites a record's final message; a filter on a logger runs before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return True


_FILTER = RedactingFilter()


def install(logger_names: tuple[str, ...] = LOGGERS) -> None:
    """Attach the filter to every logger that may see tokens (idempotent)."""
    for name in logger_names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
