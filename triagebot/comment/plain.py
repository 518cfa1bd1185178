"""Triage -> plain text for the CLI (``triagebot triage``). Pure.

The same rules as the comment, without Markdown, and terminal-safe: user-derived text loses its
control characters, so a title carrying ANSI escapes cannot repaint the maintainer's terminal.
A dimension is shown as the comment states it, or as "unsure" with the best guess behind it (what
the comment keeps in its maintainers' block); the advice, links and requests are exactly the
comment's, and a last line says whether the bot would post at all.
"""
from __future__ import annotations

from triagebot.comment.posting import worth_labelling, worth_posting
from triagebot.comment.sections import (
    asked_missing,
    choice,
    diagnosis_lines,
    flag,
    missing_plain,
    pct,
    split_similar,
    tips,
)
from triagebot.domain import taxonomy
from triagebot.domain.models import Similar, Triage
from triagebot.text import sanitize

_TITLES = {
    "stage": "Stage:",
    "symptom": "Symptom:",
    "root_cause": "Root cause:",
    "fix_pattern": "Fix pattern:",
    "distributed_specific": "Distributed:",
    "is_bug": "Is a bug:",
}


def render_text(triage: Triage) -> str:
    """Human-readable plain text for the CLI: one line per dimension, then the lists, then
    whether the bot would comment with the default ``comment: useful``."""
    lines = [f"{title:<14}{_choice(triage, dim)}" for dim, title in _TITLES.items()]
    resolved, unresolved = split_similar(triage.similar)
    lines += _block("What the error says:", diagnosis_lines(triage, markdown=False))
    lines += _block("What to try first:", tips(triage, markdown=False))
    lines += _block("Similar issues:", [_similar(s) for s in resolved + unresolved])
    lines += _block("Missing information:",
                    [missing_plain(m) for m in asked_missing(triage)])
    lines += _block("Evidence:", _evidence(triage))
    lines += _block("Notes:", [sanitize.plain(n, 200) for n in triage.notes[:5]])
    posted = "yes" if worth_posting(triage) else "no, nothing for the reporter clears the bar"
    labelled = "yes" if worth_labelling(triage) else "no"
    return "\n".join(lines + ["", f"would comment (comment: useful): {posted}",
                               f"would label: {labelled}", f"source: {triage.source}"]) + "\n"


def _block(title: str, items: list[str]) -> list[str]:
    return ["", title] + [f"  - {item}" for item in items] if items else []


def _stated(triage: Triage, dimension: str) -> bool:
    if dimension in taxonomy.FLAGS:
        return flag(triage, dimension) is not None
    return choice(triage, dimension) is not None


def _choice(triage: Triage, dimension: str) -> str:
    pred = triage.prediction(dimension)
    if dimension in taxonomy.FLAGS:
        value = sanitize.plain(pred.id, 20)
    else:
        value = f"{taxonomy.name(dimension, pred.id)} ({sanitize.plain(pred.id, 10)})"
    conf = pct(pred.confidence)
    return f"{value}, {conf}" if _stated(triage, dimension) else f"unsure (best guess {value}, {conf})"


def _similar(similar: Similar) -> str:
    state = ("resolved, fix for maintainers only" if similar.fix_held_back else "resolved") \
        if similar.resolved else "no known fix"
    url = sanitize.issue_url(similar.repo, similar.number) or ""
    text = f"{sanitize.plain(similar.repo, 60)} {similar.number} [{state}, {similar.score:.2f}] "
    text += sanitize.plain(similar.title, 100)
    if similar.resolved:
        text += f" -- {sanitize.plain(similar.resolution, 200)}"
    return f"{text}\n      {url}" if url else text


def _evidence(triage: Triage) -> list[str]:
    """Each supporting line once, under the first dimension it supports (as in the comment)."""
    lines, seen = [], set()
    for dim in taxonomy.DIMENSIONS:
        prediction = triage.prediction(dim)
        for snippet in (prediction.facts + prediction.evidence)[:3]:
            if snippet not in seen:
                seen.add(snippet)
                lines.append(f"{dim}: {sanitize.plain(snippet, 120)}")
    return lines
