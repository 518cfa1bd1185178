"""Reading one issue from a file a user names: JSON ({title, body, repo?, number?}) or Markdown
whose first line is the title. Refuses empty, binary and over-large input with a clear message."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import ValidationError

from triagebot.domain.models import MAX_BODY_CHARS, Issue


class InputError(ValueError):
    """The issue file is unusable; the message says why in one line."""


def read_issue(path: str, max_bytes: int) -> Issue:
    raw = _read_bytes(path, max_bytes)
    if not raw.strip():
        raise InputError(f"{path} is empty")
    if b"\x00" in raw[:8192]:
        raise InputError(f"{path} looks binary; give a JSON or Markdown issue")
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (byte {exc.start})") from exc
    stripped = content.lstrip()
    if stripped.startswith("{") or str(path).endswith(".json"):
        return _from_json(path, content)
    return _from_markdown(content)


def _read_bytes(path: str, max_bytes: int) -> bytes:
    try:
        if path == "-":
            data = sys.stdin.buffer.read(max_bytes + 1)
        else:
            with open(Path(path), "rb") as fh:
                data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > max_bytes:
        raise InputError(f"{path} is larger than {max_bytes // (1024 * 1024)} MiB; trim the logs")
    return data


def _from_json(path: str, content: str) -> Issue:
    try:
        data = json.loads(content)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object with 'title' and 'body'")
    if not (data.get("title") or data.get("body")):
        raise InputError(f"{path}: the issue has neither a title nor a body")
    if isinstance(data.get("body"), str):
        data["body"] = _cap(data["body"])
    try:
        return Issue.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from exc


def _from_markdown(content: str) -> Issue:
    title, _, body = content.strip().partition("\n")
    return Issue(title=title.lstrip("# ").strip()[:1000], body=_cap(body.strip()))


def _cap(body: str) -> str:
    """Keep the head (the report) and the tail (where a pasted log names the error) of a long body."""
    if len(body) <= MAX_BODY_CHARS:
        return body
    half = MAX_BODY_CHARS // 2 - 2
    return body[:half] + "\n…\n" + body[-half:]
