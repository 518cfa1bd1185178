"""Structured logs: one JSON object per line, keyed by delivery id or job id. Callers pass fields,
never bodies or secrets; every secret shape of ``text.secrets`` is redacted anyway as a last line
of defence."""
from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from triagebot.text.secrets import redact


def emit(logger: logging.Logger, msg: str, level: int = logging.INFO, **fields: Any) -> None:
    """One JSON line. Each text field is redacted before encoding (JSON escaping would hide a quoted
    ``password="…"`` from the shapes), and the encoded line again (objects turned into text)."""
    record = {key: redact(value) if isinstance(value, str) else value
              for key, value in {"msg": msg, **fields}.items()}
    logger.log(level, redact(json.dumps(record, default=str, sort_keys=True)))


class JsonLineFormatter(logging.Formatter):
    """Wraps the already-JSON message with time, level and logger name."""

    def format(self, record: logging.LogRecord) -> str:
        try:
            body = json.loads(record.getMessage())
        except ValueError:  # a plain record (PyGithub, werkzeug): redacted before JSON escapes it
            body = {"msg": redact(record.getMessage())}
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
