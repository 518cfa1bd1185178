"""Triage -> the Markdown comment users read under their bug report. Pure.

The comment is built by code from fixed templates (RELIABILITY 32): headings and footer are the
constants below, label names come from ``taxonomy`` (never from a model), and every string that
came from users or stored data goes through ``sanitize``. The finished text is scanned for
secrets; on a hit, or when it cannot be made to fit, a minimal comment of taxonomy ids replaces it.
"""
from __future__ import annotations

from collections.abc import Iterable

from triagebot.comment.plain import render_text
from triagebot.comment.posting import CommentMode, posting_reasons, worth_labelling, worth_posting
from triagebot.comment.sections import (
    COMMANDS,
    EVIDENCE_HEADING,
    HEADING,
    NOT_A_BUG_NOTE,
    choice,
    details_block,
    diagnosis_lines,
    missing_lines,
    similar_line,
    split_similar,
    summary_lines,
    tips,
)
from triagebot.domain.models import Triage
from triagebot.text import sanitize

__all__ = ["EVIDENCE_HEADING", "HEADING", "MARKER", "NOT_A_BUG_NOTE", "CommentMode", "render",
           "render_fallback", "render_text", "worth_labelling", "worth_posting", "posting_reasons"]

MARKER = "<!-- triagebot:v1 -->"
MAX_CHARS = 10_000  # well under GitHub's 65,536 (RELIABILITY 39)
# The length a comment should stay under to be read (#11). Over it, the least useful parts go
# first, one more at each step: the runner-up labels and the detected environment (both restate
# what a maintainer sees anyway), evidence quotes beyond one per label, the second tip, the
# neighbour counts in the evidence, the related issues' titles beyond their first words (a fix
# held back keeps its resolution), then the titles of the fixes offered (their resolutions
# always stay whole), and last the related issues' first words, only where that brings the
# comment under the budget (a comment over it anyway keeps them).
TARGET_CHARS = 1_500
SHED_ORDER = ("alternatives", "environment", "one_quote", "second_tip", "agreement",
              "related_titles", "short_links", "related_bare")
SHEDDING = tuple(frozenset(SHED_ORDER[:n]) for n in range(len(SHED_ORDER) + 1))

DIAGNOSIS_HEADING = "#### What the error says"
SIMILAR_HEADING = "#### How similar issues were fixed"
TIPS_HEADING = "#### What to try first"
MISSING_HEADING = "#### Please add"
RELATED_PUBLIC_HEADING = "#### Possibly the same problem (no known fix yet)"
# The correction commands: the last line of the maintainers' block, or of the comment when that
# block had to be dropped for size.
FOOTER = COMMANDS
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

    Over ``TARGET_CHARS`` parts go in the order of ``SHEDDING``; over ``max_chars`` the details
    block goes, then the similar issues; if it still does not fit, or the secret scan finds
    anything (``secrets``: configured values such as the webhook secret), the id-only fallback is
    returned instead."""
    allowed = _allowed(triage, allowed_repos)
    for shed in SHEDDING:
        body = _compose(triage, allowed, "full", shed)
        if len(body) < TARGET_CHARS and len(body) <= max_chars:
            break
    else:  # the last resort only where it brings the comment under the budget
        shed = SHEDDING[-2]
    for level in ("full", "no_details", "no_similar"):
        body = _compose(triage, allowed, level, shed)
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


def _compose(triage: Triage, allowed: frozenset[str], level: str,
             shed: frozenset[str] = frozenset()) -> str:
    """The reporter's block (the heading, what the error says, fixes of relevant resolved
    issues, what to try, what to add), then the maintainers' collapsed block, which also carries
    the correction commands."""
    offered, others = split_similar(triage.similar)
    short = "short_links" in shed
    sections = [f"{MARKER}\n" + "\n".join(summary_lines(triage))]
    diagnosed = diagnosis_lines(triage)  # first: what a maintainer would say at a glance
    advice = tips(triage, limit=1 if "second_tip" in shed else 2)
    asked = missing_lines(triage)
    # Related threads with no known fix show above the fold only when vouched for
    # (``Similar.for_reporter``); the others, and fixes held back, wait in the details.
    public = [s for s in others if s.for_reporter]
    if level == "no_similar":
        offered, public = [], []
    others = [s for s in others if s not in public]
    sections.append(_section(DIAGNOSIS_HEADING, [f"- {line}" for line in diagnosed]))
    sections.append(_section(SIMILAR_HEADING, [
        similar_line(s, triage.repo, allowed, with_resolution=True, short=short) for s in offered]))
    sections.append(_section(RELATED_PUBLIC_HEADING, [
        similar_line(s, triage.repo, allowed, with_resolution=False, short=short) for s in public]))
    sections.append(_section(TIPS_HEADING, [f"- {tip}" for tip in advice]))
    sections.append(_section(MISSING_HEADING, asked))
    sections.append(details_block(triage, others, allowed, shed) if level == "full" else FOOTER)
    return "\n\n".join(s for s in sections if s) + "\n"


def _section(heading: str, lines: list[str]) -> str:
    return f"{heading}\n" + "\n".join(lines) if lines else ""
