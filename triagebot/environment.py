"""Setup facts from free issue text (ds_report, collect_env, pip lists, prose). Pure.

STUB: interface fixed; implementation to follow."""
from __future__ import annotations

from triagebot.models import Environment


def extract(text: str) -> Environment:
    """Versions, hardware and launcher facts found in ``text`` (cleaned issue title + body)."""
    return Environment()
