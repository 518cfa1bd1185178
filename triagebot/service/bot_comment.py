"""The bot's one comment per issue: find it again, edit it, or post it once.

A POST that answered 5xx may still have created the comment, so before posting we look for our
marker. The configured login (``<TRIAGEBOT_APP_SLUG>[bot]``) is the first proof of authorship;
because a wrong slug would silently disable that guard (and every retry would post again), a
Bot-authored comment that *starts* with our exact marker is also taken as ours, with a warning.
Human-authored comments quoting the marker are never ours."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from triagebot.comment import render as comment
from triagebot.domain.models import Triage
from triagebot.github.errors import Forbidden, NotFound, TooLong
from triagebot.github.port import CommentState, GitHubPort, IssueState
from triagebot.logs import emit
from triagebot.store.records import Store

log = logging.getLogger("triagebot.service.jobs")
_warned: set[str] = set()  # logins already reported as a likely misconfigured slug


@dataclass(frozen=True)
class ExistingComment:
    """Our comment on an issue as read before a job decides: its id (None: not posted yet) and
    whether the store knew it (``known``) or it was found by its marker."""

    id: int | None
    known: bool


def find_existing(store: Store, port: GitHubPort, issue: IssueState, bot_login: str) -> ExistingComment:
    """Read side: the stored comment id, else our marker among the issue's comments (a worker may
    have died after posting but before recording)."""
    known = store.comment_id(issue.repo, issue.number)
    if known:
        return ExistingComment(known, True)
    return ExistingComment(find_bot_comment(port.list_comments(issue.repo, issue.number), bot_login), False)


def write_comment(store: Store, port: GitHubPort, issue: IssueState, triage: Triage, body: str,
                  existing: ExistingComment) -> int:
    """Write side: edit ``existing`` if there is one, otherwise post once; remember the id."""
    if existing.id:
        try:
            _edit(port, issue, existing.id, triage, body)
            store.remember_comment(issue.repo, issue.number, existing.id)
            return existing.id
        except NotFound:  # someone deleted our comment: post a fresh one
            pass
        except Forbidden:  # a look-alike we may not edit (another App's): it was not ours
            if existing.known:
                raise
    new_id = post_comment(port, issue, triage, body)
    store.remember_comment(issue.repo, issue.number, new_id)
    return new_id


def find_bot_comment(comments: list[CommentState], bot_login: str) -> int | None:
    """Our comment: our marker by our exact login; failing that, a Bot's comment that starts with
    our exact marker (our own comment under a slug we were misconfigured with)."""
    exact = [c for c in comments if c.author == bot_login and comment.MARKER in c.body]
    if exact:
        return exact[0].id
    likely = [c for c in comments if _bot_marker_comment(c)]
    if not likely:
        return None
    if likely[0].author not in _warned:
        _warned.add(likely[0].author)
        emit(log, "marker comment by another bot login; is TRIAGEBOT_APP_SLUG right?",
             logging.WARNING, found=likely[0].author, configured=bot_login)
    return likely[0].id


def _bot_marker_comment(c: CommentState) -> bool:
    return c.author_type == "Bot" and c.author.endswith("[bot]") and c.body.startswith(comment.MARKER)


def post_comment(port: GitHubPort, issue: IssueState, triage: Triage, body: str) -> int:
    try:
        return port.create_comment(issue.repo, issue.number, body)
    except TooLong:  # 422: GitHub still found it too long; post the ids-only fallback
        return port.create_comment(issue.repo, issue.number, comment.render_fallback(triage))


def _edit(port: GitHubPort, issue: IssueState, comment_id: int, triage: Triage, body: str) -> None:
    try:
        port.edit_comment(issue.repo, comment_id, body)
    except TooLong:
        port.edit_comment(issue.repo, comment_id, comment.render_fallback(triage))
