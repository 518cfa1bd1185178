"""Whether a triage is worth a public comment. Pure.

One decision shared by the service (``service/jobs.py``: comment and labels, or silence) and the
backtest (``posted`` in ``eval --predictions``), so both measure and do the same thing. A comment
that states nothing right and links nothing relevant costs the reporter's attention and teaches
them to ignore the bot; with ``comment: useful`` (the default) the bot stays silent then, and the
triage is still recorded for the review page.
"""
from __future__ import annotations

from typing import Literal

from triagebot.comment.sections import (
    asked_missing,
    choice,
    diagnosis_texts,
    names_a_label,
    split_similar,
    tips,
)
from triagebot.domain import missing
from triagebot.domain.models import Triage

CommentMode = Literal["useful", "always", "never"]


def worth_posting(triage: Triage, mode: CommentMode = "useful") -> bool:
    """Whether the bot speaks on the issue at all (comment and labels), per the repository's
    ``comment:`` setting. The one decision the service and the backtest share.

    ``always`` posts every triage, ``never`` none (triages are still recorded for the review
    page). ``useful`` posts only when something clears the bar (``posting_reasons``): a wrong or
    empty comment on every issue teaches reporters to ignore the bot."""
    if mode == "never":
        return False
    return mode == "always" or bool(posting_reasons(triage))


def posting_reasons(triage: Triage) -> list[str]:
    """What in this triage is worth a public comment: a stated label (stage, symptom, root cause
    or fix pattern), a diagnosis of the report's own error (``domain.diagnoses``: each measured
    right on essentially every shared issue it matched), a relevant link, or a request specific
    to this report. The distributed flag alone is not: it tells the reporter nothing they can act
    on. Nor is "not a bug" alone: a comment that only says a report reads like a question was
    read by maintainers as dismissive (on a report that quoted the faulty line), and it helps
    nobody; it still appears beside anything else worth saying."""
    reasons = []
    # The fix pattern's name is not shown to the reporter, only the advice it grounds: a stated
    # fix pattern with no advice for it would post a bare heading.
    if names_a_label(triage) or (choice(triage, "fix_pattern") and tips(triage)):
        reasons.append("a stated label")
    if diagnosis_texts(triage):
        reasons.append("a diagnosis of the error")
    # a fix offered, or a thread relevant enough to show the reporter (``Similar.for_reporter``);
    # a thread only maintainers would weigh does not earn a comment on its own (read with the
    # requests gone, a documentation issue showed its reporter an unrelated DDP hang)
    resolved, related = split_similar(triage.similar)
    if resolved or any(s.for_reporter for s in related):
        reasons.append("a relevant link")
    if missing.specific(asked_missing(triage), choice(triage, "stage")):
        reasons.append("specific missing information")
    return reasons


