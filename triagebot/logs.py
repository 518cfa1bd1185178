"""Structured logs: one JSON object per line, keyed by delivery id or job id. Callers pass fields,
never bodies or secrets; token-shaped strings are redacted anyway as a last line of defence."""
from __future__ import annotations

import json
import logging
import re
import sys
import time
from typing import Any

TOKEN = re.compile(r"(ghs_|ghp_|gho_|github_pat_|sk-)[A-Za-z0-9_.\-]+")


def redact(text: str) -> str:
    return TOKEN.sub(lambda m: m.group(1) + "[redacted]", text)


def emit(logger: logging.Logger, msg: str, level: int = logging.INFO, **fields: Any) -> None:
    record = {"msg": msg, **fields}
    logger.log(level, redact(json.dumps(record, default=str, sort_keys=True)))


class JsonLineFormatter(logging.Formatter):
    """Wraps the already-JSON message with time, level and logger name."""

    def format(self, record: logging.LogRecord) -> str:
        try:
            body = json.loads(record.getMessage())
        except ValueError:
            body = {"msg": record.getMessage()}
        head = {"ts": round(time.time(), 3), "level": record.levelname, "logger": record.name}
        return redact(json.dumps({**head, **body}, default=str))


def setup(level: int = logging.INFO) -> None:
    """Called by ``serve``/the worker entry point only, never at import."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger("triagebot")
    root.handlers[:] = [handler]
    root.setLevel(level)
    root.propagate = False
