"""Triage -> the Markdown comment users read under their bug report. Pure.

The comment is built by code from fixed templates (RELIABILITY 32): headings and footer are the
constants below, label names come from ``taxonomy`` (never from a model), and every string that
came from users or stored data goes through ``sanitize``. The finished text is scanned for
secrets; on a hit, or when it cannot be made to fit, a minimal comment of taxonomy ids replaces it.
"""
from __future__ import annotations

from typing import Iterable

from triagebot import sanitize, taxonomy
from triagebot.comment_parts import (
    NOT_A_BUG_NOTE,
    choice,
    details_block,
    evidence_lines,
    missing_lines,
    similar_line,
    split_similar,
    summary_line,
    tips,
)
from triagebot.models import Triage

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
        f"{MARKER}\n{HEADING}\n\n" + "\n".join(summary_line(triage)),
        _section(TIPS_HEADING, [f"- {tip}" for tip in tips(triage)]),
    ]
    if level != "no_similar":
        lines = [similar_line(s, triage.repo, allowed, with_resolution=True) for s in resolved]
        sections.append(_section(SIMILAR_HEADING, lines))
    sections.append(_section(MISSING_HEADING, missing_lines(triage)))
    sections.append(_section(EVIDENCE_HEADING, evidence_lines(triage)))
    if level == "full":
        sections.append(details_block(triage, unresolved, allowed))
    sections.append(FOOTER)
    return "\n\n".join(s for s in sections if s) + "\n"


def _section(heading: str, lines: list[str]) -> str:
    return f"{heading}\n" + "\n".join(lines) if lines else ""


def render_text(triage: Triage) -> str:
    """Human-readable plain text for the CLI: same facts, no Markdown, terminal-safe."""
    lines = [f"{_DIM_TITLES[d]:<14}{_plain_choice(triage, d)}" for d in _DIM_TITLES]
    advice = tips(triage, markdown=False)
    if advice:
        lines += ["", "What to try first:"] + [f"  - {t}" for t in advice]
    if triage.similar:
        lines += ["", "Similar issues:"] + [_plain_similar(s) for s in triage.similar[:5]]
    if triage.missing_info:
        lines += ["", "Missing information:"]
        lines += [f"  - {sanitize.plain(m.description, 160)}" for m in triage.missing_info[:8]]
    evidence = [
        f"  - {dim}: {sanitize.plain(snippet, 120)}"
        for dim in taxonomy.DIMENSIONS
        for snippet in triage.prediction(dim).evidence[:3]
    ]
    if evidence:
        lines += ["", "Evidence:"] + evidence
    lines += [""] + [f"note: {sanitize.plain(n, 200)}" for n in triage.notes[:5]]
    lines.append(f"source: {triage.source}")
    return "\n".join(lines) + "\n"


_DIM_TITLES = {
    "stage": "Stage:",
    "symptom": "Symptom:",
    "root_cause": "Root cause:",
    "fix_pattern": "Fix pattern:",
    "distributed_specific": "Distributed:",
    "is_bug": "Is a bug:",
}


def _plain_choice(triage: Triage, dimension: str) -> str:
    pred = triage.prediction(dimension)
    pct = f"{round(pred.confidence * 100)}%"
    if dimension in ("distributed_specific", "is_bug"):
        value = sanitize.plain(pred.id, 20)
    else:
        value = f"{taxonomy.name(dimension, pred.id)} ({sanitize.plain(pred.id, 10)})"
    return f"unsure (best guess {value}, {pct})" if pred.abstained else f"{value}, {pct}"


def _plain_similar(similar) -> str:  # type: ignore[no-untyped-def]
    state = "resolved" if similar.resolved else "no known fix"
    url = sanitize.issue_url(similar.repo, similar.number) or ""
    head = f"  - {sanitize.plain(similar.repo, 60)} {similar.number} [{state}, {similar.score:.2f}]"
    text = f"{head} {sanitize.plain(similar.title, 100)}"
    if similar.resolved:
        text += f" -- {sanitize.plain(similar.resolution, 200)}"
    return f"{text}\n      {url}" if url else text
