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
    split_similar,
    states_a_label,
    tips,
)
from triagebot.domain import missing
from triagebot.domain.models import Triage

CommentMode = Literal["useful", "always", "never"]


def worth_posting(triage: Triage, mode: CommentMode = "useful") -> bool:
    """Whether the bot comments on the issue, per the repository's ``comment:`` setting. The one
    decision the service and the backtest share.

    ``always`` posts every triage, ``never`` none (triages are still recorded for the review
    page). ``useful`` posts only when something clears the bar for the reporter
    (``posting_reasons``): a wrong or empty comment on every issue teaches reporters to ignore
    the bot."""
    if mode == "never":
        return False
    return mode == "always" or bool(posting_reasons(triage))


def worth_labelling(triage: Triage, mode: CommentMode = "useful") -> bool:
    """Whether the bot puts labels on the issue (as the repository's ``mode`` allows): with its
    comment, and also on a silent issue where it states a label. Labels are the maintainers'
    channel: a comment whose only content was the stated stage and symptom told the reporter
    nothing (maintainers' read M: the public label line never helped a reporter and caused 2 of
    its 3 zeros), so a stated label alone no longer earns a comment, only the label."""
    if mode == "never":
        return False
    return states_a_label(triage) or worth_posting(triage, mode)


def posting_reasons(triage: Triage) -> list[str]:
    """What in this triage is worth a comment to the reporter: advice grounded in the stated fix
    pattern, a diagnosis of the report's own error (``domain.diagnoses``: each measured right on
    essentially every shared issue it matched), a relevant link, or a request specific to this
    report. A stated label is not: labels are for maintainers (``worth_labelling``) and sit in
    their collapsed block. Nor is "not a bug" alone: a comment that only says a report reads like
    a question was read by maintainers as dismissive (on a report that quoted the faulty line),
    and it helps nobody; it still appears beside anything else worth saying."""
    reasons = []
    # The fix pattern's name is not shown to the reporter, only the advice it grounds.
    if choice(triage, "fix_pattern") and tips(triage):
        reasons.append("advice for the stated fix pattern")
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


