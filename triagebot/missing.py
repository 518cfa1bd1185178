"""The "what information is missing" checklist. Pure.

STUB: interface fixed; implementation to follow."""
from __future__ import annotations

from triagebot.models import Environment, MissingInfo


def missing_info(text: str, env: Environment, stage: str, distributed: bool) -> list[MissingInfo]:
    """Items a maintainer would ask for first, given what the report already contains."""
    return []
