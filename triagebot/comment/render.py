"""Triage -> the Markdown comment users read under their bug report. Pure.

The comment is built by code from fixed templates (RELIABILITY 32): headings and footer are the
constants below, label names come from ``taxonomy`` (never from a model), and every string that
came from users or stored data goes through ``sanitize``. The finished text is scanned for
secrets; on a hit, or when it cannot be made to fit, a minimal comment of taxonomy ids replaces it.
"""
from __future__ import annotations

from collections.abc import Iterable

from triagebot.comment.plain import render_text
from triagebot.comment.sections import (
    NOT_A_BUG_NOTE,
    QUOTES_NOTE,
    choice,
    details_block,
    evidence_lines,
    missing_lines,
    quotes_report,
    similar_line,
    split_similar,
    summary_lines,
    tips,
)
from triagebot.domain.models import Triage
from triagebot.text import sanitize

__all__ = ["MARKER", "NOT_A_BUG_NOTE", "render", "render_fallback", "render_text"]

MARKER = "<!-- triagebot:v1 -->"
MAX_CHARS = 10_000  # well under GitHub's 65,536 (RELIABILITY 39)

HEADING = "**Automated triage**"
TIPS_HEADING = "#### What to try first"
SIMILAR_HEADING = "#### How similar issues were fixed"
MISSING_HEADING = "#### Please add"
EVIDENCE_HEADING = "#### Why I think so"
FOOTER = (
    "---\n"
    "_How to correct me:_ maintainers can reply with `/triage symptom 4.2`, `/triage stage S4`, "
    "`/triage cause R4.2`, `/triage fix F2`, `/triage distributed yes` (or `no`), "
    "`/triage not-a-bug`, or just `/triage` to run the triage again. Ids follow the bug taxonomy of "
    "distributed training frameworks by Ma et al.; corrections improve later suggestions."
)
FALLBACK_TOO_LONG = "The full triage did not fit in a comment. Maintainers can re-run it with `/triage`."
FALLBACK_WITHHELD = "The full triage was withheld by a safety check. Maintainers can re-run it with `/triage`."


def render(
    triage: Triage,
    *,
    allowed_repos: frozenset[str] = frozenset(),
    max_chars: int = MAX_CHARS,
    secrets: Iterable[str] = (),
) -> str:
    """The whole comment, starting with ``MARKER`` so a re-triage edits it instead of duplicating.

    Over ``max_chars`` the details block goes first, then the similar issues; if it still does not
    fit, or the secret scan finds anything (``secrets``: configured values such as the webhook
    secret), the id-only fallback is returned instead."""
    allowed = _allowed(triage, allowed_repos)
    for level in ("full", "no_details", "no_similar"):
        body = _compose(triage, allowed, level)
        if len(body) <= max_chars:
            break
    else:
        return render_fallback(triage)
    if sanitize.scan_secrets(body, secrets):
        return render_fallback(triage, reason=FALLBACK_WITHHELD)
    return body


def render_fallback(triage: Triage, reason: str = FALLBACK_TOO_LONG) -> str:
    """Marker plus taxonomy ids only: what is posted after GitHub's 422 "body is too long" or when
    the full comment was withheld. Contains no text that came from users or stored issues."""
    parts = [
        f"stage {_id_or_unsure(triage, 'stage')}",
        f"symptom {_id_or_unsure(triage, 'symptom')}",
        f"root cause {_id_or_unsure(triage, 'root_cause')}",
        f"fix pattern {_id_or_unsure(triage, 'fix_pattern')}",
    ]
    return f"{MARKER}\n{HEADING}: {', '.join(parts)}.\n\n{reason}\n"


def _id_or_unsure(triage: Triage, dimension: str) -> str:
    label_id = choice(triage, dimension)
    return f"`{label_id}`" if label_id else "unsure"


def _allowed(triage: Triage, extra: Iterable[str]) -> frozenset[str]:
    """Links may point at the issue's own repo and at the configured repos, nowhere else."""
    repos = {r for r in extra if sanitize.valid_repo(r)}
    if sanitize.valid_repo(triage.repo):
        repos.add(triage.repo)
    return frozenset(repos)


def _compose(triage: Triage, allowed: frozenset[str], level: str) -> str:
    resolved, unresolved = split_similar(triage.similar)
    sections = [
        f"{MARKER}\n{HEADING}\n\n" + "\n".join(summary_lines(triage)),
        _section(TIPS_HEADING, [f"- {tip}" for tip in tips(triage)]),
    ]
    if level != "no_similar":
        lines = [similar_line(s, triage.repo, allowed, with_resolution=True) for s in resolved]
        sections.append(_section(SIMILAR_HEADING, lines))
    sections.append(_section(MISSING_HEADING, missing_lines(triage)))
    evidence = evidence_lines(triage)
    note = [QUOTES_NOTE] if evidence and quotes_report(triage) else []
    sections.append(_section(EVIDENCE_HEADING, note + evidence))
    if level == "full":
        sections.append(details_block(triage, unresolved, allowed))
    sections.append(FOOTER)
    return "\n\n".join(s for s in sections if s) + "\n"


def _section(heading: str, lines: list[str]) -> str:
    return f"{heading}\n" + "\n".join(lines) if lines else ""
