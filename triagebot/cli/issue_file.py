"""Reading one issue from a file a user names: JSON ({title, body, repo?, number?}) or Markdown
whose first line is the title. Refuses empty, binary and over-large input and an issue without a
title with a clear message; text that is not UTF-8 (a log saved as Latin-1) is read anyway, with a
warning, since refusing it loses the report."""
from __future__ import annotations

import json
import logging
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
    content = decode_leniently(raw, path)
    stripped = content.lstrip()
    if stripped.startswith("{") or str(path).endswith(".json"):
        return _from_json(path, content)
    return _from_markdown(path, content)


def decode_leniently(raw: bytes, path: str) -> str:
    """UTF-8 when it is; otherwise mostly-UTF-8 text (a log cut inside a character) keeps its
    UTF-8 with the bad bytes replaced, and anything else is read as Windows-1252 / Latin-1 (where
    every byte is a character). Either way a warning names the file and the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        first = exc.start
    lenient = raw.decode("utf-8", errors="replace")
    bad = lenient.count("\ufffd")
    good_non_ascii = sum(1 for ch in lenient if ord(ch) > 127) - bad
    if good_non_ascii > bad:
        text, how = lenient, f"UTF-8 with {bad} undecodable byte sequence(s) replaced by \ufffd"
    else:
        text, how = raw.decode("cp1252", errors="replace"), "Windows-1252 / Latin-1"
    logging.getLogger(__name__).warning("%s is not UTF-8 text (byte %d); read as %s", path, first, how)
    return text


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
    if not isinstance(data.get("title"), str) or not data["title"].strip():
        raise InputError(f'{path}: the issue has no "title"; give the issue\'s title (a body alone '
                         "is not how issues arrive)")
    if isinstance(data.get("body"), str):
        data["body"] = _cap(data["body"])
    try:
        return Issue.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InputError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from exc


def _from_markdown(path: str, content: str) -> Issue:
    title, _, body = content.strip().partition("\n")
    if not title.lstrip("# ").strip():
        raise InputError(f"{path}: the first line (the title) has no words; put the issue's title there")
    return Issue(title=title.lstrip("# ").strip()[:1000], body=_cap(body.strip()))


def _cap(body: str) -> str:
    """Keep the head (the report) and the tail (where a pasted log names the error) of a long body."""
    if len(body) <= MAX_BODY_CHARS:
        return body
    half = MAX_BODY_CHARS // 2 - 2
    return body[:half] + "\n…\n" + body[-half:]
