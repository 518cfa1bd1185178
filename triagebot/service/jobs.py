"""Job functions: what the worker does for each job kind. Side effects go through the GitHubPort
(writes paced per installation) and the store; everything else is decided by pure helpers.

Every job re-reads the issue first: deliveries arrive late and out of order, so the issue may be
closed, deleted or a pull request by now, and then the job does nothing."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from pydantic import ValidationError

from triagebot.service import bot_comment
from triagebot.comment import render as comment
from triagebot.learning import corrections
from triagebot.service import policy
from triagebot.domain import repo_config
from triagebot.domain import taxonomy
from triagebot.github.errors import QuotaPaused
from triagebot.domain.models import Issue, Labels, Triage
from triagebot.github.port import GitHubPort, IssueState
from triagebot.store.queue import Job
from triagebot.store.records import Feedback, Store, StoredTriage

AUTHOR_LIMIT_PER_HOUR = 5
GITHUB_KINDS = frozenset({"triage", "index_add", "command"})  # jobs that call GitHub


class EngineLike(Protocol):
    def triage(self, issue: Issue) -> Triage: ...


Indexer = Callable[[IssueState, Labels | None], None]


@dataclass
class Deps:
    """What jobs need, built once per process by the server (or by a test with fakes)."""

    store: Store
    port_for: Callable[[int | None], GitHubPort]
    engine: EngineLike
    bot_login: str
    render: Callable[[Triage], str] = comment.render
    indexer: Indexer | None = None
    clock: Callable[[], float] = time.time
    author_limit: int = AUTHOR_LIMIT_PER_HOUR
    paused: Callable[[int], float] = lambda _installation: 0.0  # QuotaTracker.resume_in
    extra: dict[str, Any] = field(default_factory=dict)


def run(deps: Deps, job: Job) -> str:
    """Run one job; returns a short outcome for the log. GitHub errors propagate to the worker.

    A job that would call GitHub while its installation's quota is below the reserve waits for
    the reset instead of spending the last requests (RELIABILITY 27)."""
    handler = JOBS.get(job.kind)
    if handler is None:
        return f"ignored: unknown kind {job.kind}"
    if job.kind in GITHUB_KINDS and job.installation_id is not None:
        wait = deps.paused(job.installation_id)
        if wait > 0:
            raise QuotaPaused(f"installation {job.installation_id} quota below 10%", wait)
    return handler(deps, job)


# triage -------------------------------------------------------------------------------------
def triage_job(deps: Deps, job: Job) -> str:
    port = deps.port_for(job.installation_id)
    issue = port.get_issue(job.repo or "", job.number or 0)
    skip = _skip_reason(deps, job, issue)
    if skip:
        return f"skipped: {skip}"
    assert issue is not None
    config = repo_config.parse_repo_config(port.read_file(issue.repo, repo_config.CONFIG_PATH))
    if config.mode == "off" or not config.enabled:
        return "skipped: disabled in .github/triagebot.yml"
    triage = deps.engine.triage(issue.to_issue())
    triage = triage.model_copy(update={"repo": issue.repo, "number": issue.number})
    triage = with_corrections(deps.store, triage)
    comment_id = upsert_comment(deps, port, issue, triage)
    added = apply_labels(deps, port, issue, triage, config)
    deps.store.save_triage(triage, issue.author, comment_id)
    return f"triaged: comment {comment_id}, labels {added}"


def _skip_reason(deps: Deps, job: Job, issue: IssueState | None) -> str | None:
    if issue is None:
        return "issue gone"
    if issue.is_pull_request or issue.state != "open":
        return "not an open issue"
    if issue.repo != job.repo:
        return "issue transferred"
    stored = deps.store.get_triage(issue.repo, issue.number)
    reason = job.payload.get("reason")
    if reason == "edited" and stored and _labels_touched_since(deps, issue, stored.updated_at):
        return "a human changed labels since the last triage"
    if stored is None and _author_over_limit(deps, issue):
        return f"author over {deps.author_limit} triages/hour"
    return None


def _labels_touched_since(deps: Deps, issue: IssueState, since: float) -> bool:
    fbs = deps.store.feedback(issue.repo, issue.number, since)
    return any(fb.source == "label" for fb in fbs)


def _author_over_limit(deps: Deps, issue: IssueState) -> bool:
    since = deps.clock() - 3600
    done = deps.store.author_triages_since(issue.author, since, (issue.repo, issue.number))
    return done >= deps.author_limit


def upsert_comment(deps: Deps, port: GitHubPort, issue: IssueState, triage: Triage) -> int:
    """Our one comment, showing ``triage`` (edited in place, or posted once)."""
    return bot_comment.upsert_comment(deps.store, port, issue, deps.bot_login, triage,
                                      deps.render(triage))


def with_corrections(store: Store, triage: Triage) -> Triage:
    """A re-triage keeps what maintainers set (commands, review page), oldest first."""
    for fb in store.feedback(triage.repo, triage.number or 0):
        if fb.source in ("command", "page"):
            triage = corrections.apply_correction(triage, fb.dimension, fb.new_id)
    return triage


def apply_labels(deps: Deps, port: GitHubPort, issue: IssueState, triage: Triage,
                 config: Any) -> list[str]:
    """Whatever the policy allows for the repo's mode (``suggest``: the review label only).
    Labels we applied are remembered (feedback source ``bot``), so one missing from the issue now
    counts as removed by a human even when that ``unlabeled`` delivery never reached us."""
    removed = human_removed(deps.store.feedback(issue.repo, issue.number), issue.labels)
    wanted = policy.labels_to_apply(triage, config, issue.labels, removed, port.repo_labels(issue.repo))
    new = [label for label in wanted if label not in issue.labels]
    if new:
        port.add_labels(issue.repo, issue.number, new)
        for label in new:
            deps.store.add_feedback(Feedback(repo=issue.repo, number=issue.number, source="bot",
                                             dimension="label", new_id=label, who=deps.bot_login))
    return new


def human_removed(feedback: list[Feedback], current: list[str]) -> set[str]:
    """Labels a human took off: seen in an ``unlabeled`` delivery, or applied by us and gone."""
    on_issue = {name.casefold() for name in current}
    removed = {fb.old_id for fb in feedback if fb.source == "label" and fb.old_id and not fb.new_id}
    return removed | {fb.new_id for fb in feedback if fb.source == "bot" and fb.new_id
                      and fb.new_id.casefold() not in on_issue}


# index, feedback, commands, installations ---------------------------------------------------
def index_add_job(deps: Deps, job: Job) -> str:
    issue = deps.port_for(job.installation_id).get_issue(job.repo or "", job.number or 0)
    if issue is None or issue.state != "closed" or issue.is_pull_request:
        return "skipped: not closed"
    if issue.state_reason not in (None, "completed") or deps.indexer is None:
        return "skipped: not completed or no indexer"
    deps.indexer(issue, corrected_labels(deps.store, issue.repo, issue.number))
    return "indexed"


def corrected_labels(store: Store, repo: str, number: int) -> Labels | None:
    """The stored triage's ids with human corrections (commands, review page) applied on top."""
    stored = store.get_triage(repo, number)
    if stored is None:
        return None
    ids = {dim: stored.triage.prediction(dim).id for dim in taxonomy.DIMENSIONS}
    for fb in store.feedback(repo, number):
        if fb.dimension in ids and fb.new_id and fb.source in ("command", "page"):
            ids[fb.dimension] = fb.new_id
    try:
        return Labels(**ids)
    except ValidationError:
        return None


def feedback_job(deps: Deps, job: Job) -> str:
    label, added = job.payload["label"], job.payload["action"] == "labeled"
    deps.store.add_feedback(Feedback(
        repo=job.repo or "", number=job.number or 0, dimension="label", source="label",
        old_id=None if added else label, new_id=label if added else None,
        who=job.payload.get("who", "")))
    return "recorded label feedback"


def command_job(deps: Deps, job: Job) -> str:
    if job.payload.get("who") == deps.bot_login:
        return "ignored: own comment"
    if not policy.may_command(job.payload.get("association", "NONE")):
        return "ignored: not allowed"
    cmd = policy.parse_command(job.payload.get("body", ""))
    if cmd is None:
        return "ignored: not a command"
    if cmd.action == "rerun":  # routed as a triage job now; only jobs queued before that get here
        return triage_job(deps, job.model_copy(update={"payload": {"reason": "command"}}))
    stored = deps.store.get_triage(job.repo or "", job.number or 0)
    dimension = "is_bug" if cmd.action == "not_a_bug" else cmd.dimension
    old = _old_id(stored.triage if stored else None, dimension)
    new = "no" if cmd.action == "not_a_bug" else _command_value(cmd.value)
    fixed = show_correction(deps, job, stored, dimension or "", new)
    deps.store.add_feedback(Feedback(repo=job.repo or "", number=job.number or 0,
                                     dimension=dimension or "", old_id=old, new_id=new,
                                     who=job.payload.get("who", ""), source="command"))
    if fixed is not None and stored is not None:
        deps.store.save_triage(fixed, stored.author, deps.store.comment_id(stored.repo, stored.number))
    return f"recorded correction {dimension}={new}"


def show_correction(deps: Deps, job: Job, stored: StoredTriage | None, dimension: str,
                    new: str | None) -> Triage | None:
    """Re-render our comment with the correction (and, in ``apply`` mode, add its mapped label);
    returns the corrected triage to store, None when there is nothing to correct. GitHub first,
    the store after, so a retried job records the feedback once."""
    if stored is None:
        return None
    fixed = corrections.apply_correction(stored.triage, dimension, new)
    port = deps.port_for(job.installation_id)
    issue = port.get_issue(stored.repo, stored.number)
    if issue is None or issue.repo != stored.repo or issue.is_pull_request:
        return fixed
    config = repo_config.parse_repo_config(port.read_file(issue.repo, repo_config.CONFIG_PATH))
    if config.mode == "off" or not config.enabled:
        return fixed
    upsert_comment(deps, port, issue, fixed)
    if config.mode == "apply":
        apply_labels(deps, port, issue, fixed, config)
    return fixed


def _command_value(value: str | bool | None) -> str | None:
    """Commands carry bools for yes/no dimensions; predictions spell them ``yes``/``no``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value


def _old_id(triage: Triage | None, dimension: str | None) -> str | None:
    if triage is None or dimension not in taxonomy.DIMENSIONS + ("is_bug",):
        return None
    return triage.prediction(dimension).id


def installation_job(deps: Deps, job: Job) -> str:
    if job.installation_id is None:
        return "ignored: no installation id"
    action = job.payload.get("action")
    active = action not in ("deleted", "suspend")
    deps.store.set_installation(job.installation_id, job.payload.get("account", ""), active)
    deps.store.set_repos(job.installation_id, job.payload.get("added", []),
                         job.payload.get("removed", []))
    return f"installation {action}"


JOBS: dict[str, Callable[[Deps, Job], str]] = {
    "triage": triage_job,
    "index_add": index_add_job,
    "feedback": feedback_job,
    "command": command_job,
    "installation": installation_job,
}
