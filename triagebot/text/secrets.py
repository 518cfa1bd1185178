"""Token redaction for logs (RELIABILITY 22-23).

PyGithub logs whole responses at DEBUG, including the body of POST .../access_tokens that carries
the installation token, so redaction applies to every record of the process, not only to our loggers.
No assumption about token length: the new stateless ``ghs_`` tokens are not 40 characters."""
from __future__ import annotations

import logging
import re

TOKEN_RE = re.compile(r"\b(?:ghs|ghp|gho|ghu|ghr|github_pat)_[A-Za-z0-9_.\-]+")
BEARER_RE = re.compile(r"(?i)\b(bearer|token)\s+[A-Za-z0-9_.\-]{20,}")
MASK = "[REDACTED]"


def redact(text: str) -> str:
    """Mask GitHub tokens and long bearer credentials (JWTs) inside any text."""
    return BEARER_RE.sub(lambda m: f"{m.group(1)} {MASK}", TOKEN_RE.sub(MASK, text))


_installed = False


def install() -> None:
    """Redact every log record of the process at creation, whatever its logger or handler.

    A logging.Filter on a logger would miss records of its child loggers and handlers added
    later (e.g. by a test harness), so the record factory is wrapped instead (idempotent)."""
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
