"""Triage -> the Markdown comment users read. Pure; templates and taxonomy ids only.

STUB: interface fixed; implementation to follow."""
from __future__ import annotations

from triagebot.models import Triage

MARKER = "<!-- triagebot:v1 -->"


def render(triage: Triage, *, allowed_repos: frozenset[str] = frozenset()) -> str:
    """The whole comment, starting with ``MARKER`` so a re-triage edits it instead of duplicating."""
    return f"{MARKER}\nLikely stage: {triage.stage.name}\n"


def render_text(triage: Triage) -> str:
    """Plain-text triage for the terminal."""
    return "\n".join(f"{d}: {triage.prediction(d).id} {triage.prediction(d).name} "
                     f"({triage.prediction(d).confidence:.0%})" for d in ("stage", "symptom"))
