"""Reading labelled issues (the ``issues.jsonl`` format) with one clear error per bad line."""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from triagebot.domain.models import LabelledIssue


class DataError(ValueError):
    """A data file a user gave us is unusable; the message names the file and line."""


def read_labelled(path: str | Path) -> list[LabelledIssue]:
    """All records of a JSON-lines file; extra keys are ignored, ``body`` may be empty."""
    records: list[LabelledIssue] = []
    try:
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if line.strip():
                    records.append(_parse(line, path, number))
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from exc
    if not records:
        raise DataError(f"{path} holds no labelled issues")
    return records


def _parse(line: str, path: str | Path, number: int) -> LabelledIssue:
    try:
        record = LabelledIssue.model_validate(json.loads(line))
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DataError(f"{path}:{number}: {where}: {first['msg']}") from exc
    if record.state == "closed" and record.close_reason == "unknown":
        record.close_reason = "completed" if record.resolution != "unresolved" else "unknown"
    return record
