"""Job functions: what the worker does for each job kind. Side effects go through the GitHubPort
(writes paced per installation) and the store; everything else is decided by pure helpers.

Every job re-reads the issue first: deliveries arrive late and out of order, so the issue may be
closed, deleted or a pull request by now, and then the job does nothing."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import ValidationError

from triagebot.comment import render as comment
from triagebot.domain import repo_config
from triagebot.domain.models import Issue, Labels, Triage
from triagebot.domain.visibility import Access, Change, LLMPrivateRepos, Viewer, llm_allowed, owner_of, visible_to
from triagebot.github.errors import QuotaPaused, RateLimited, WritesPaced
from triagebot.github.port import GitHubPort, IssueState
from triagebot.learning import corrections
from triagebot.service import bot_comment, policy
from triagebot.store.queue import Job
from triagebot.store.records import Feedback, Store, StoredTriage

AUTHOR_LIMIT_PER_HOUR = 5
DIMENSIONS = ("stage", "symptom", "root_cause", "fix_pattern")
GITHUB_KINDS = frozenset({"triage", "index_add", "command"})  # jobs that call GitHub


class EngineLike(Protocol):
    def triage(self, issue: Issue, *, viewer: Viewer | None = None, llm: bool = True) -> Triage: ...


class KeeperLike(Protocol):
    """``learning.visibility.IndexKeeper``: applies visibility changes to the index."""

    def apply(self, change: Change) -> tuple[int, int]: ...

    def repos_of(self, installation_id: int) -> set[str]: ...


Indexer = Callable[..., None]  # (issue_state, labels, access=Access, llm=bool)


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
    keeper: KeeperLike | None = None  # keeps indexed items' visibility current
    forget_llm: Callable[[list[str]], int] | None = None  # deletes cached LLM answers of repos
    llm_private_repos: LLMPrivateRepos = "off"  # TRIAGEBOT_LLM_PRIVATE_REPOS (domain.visibility.llm_allowed)
    extra: dict[str, Any] = field(default_factory=dict)


def run(deps: Deps, job: Job) -> str:
    """Run one job; returns a short outcome for the log. GitHub errors propagate to the worker.

    A job that would call GitHub while its installation's quota is below the reserve waits for
    the reset instead of spending the last requests (RELIABILITY 27). A rate limit GitHub
    answered pauses the whole installation (recorded in the database, so every worker process
    sees it): the installation's other jobs wait without sending a request into the limit."""
    handler = JOBS.get(job.kind)
    if handler is None:
        return f"ignored: unknown kind {job.kind}"
    if job.kind in GITHUB_KINDS and job.repo and deps.store.forgotten(job.repo):
        return "skipped: repository removed from the installation (forgotten)"
    installation = job.installation_id
    if job.kind not in GITHUB_KINDS or installation is None:
        return handler(deps, job)
    wait = deps.paused(installation)
    if wait > 0:
        raise QuotaPaused(f"installation {installation} quota below 10%", wait)
    wait = deps.store.installation_pause(installation)
    if wait > 0:
        raise QuotaPaused(f"installation {installation} paused by GitHub's rate limit", wait)
    try:
        return handler(deps, job)
    except RateLimited as exc:
        if not isinstance(exc, WritesPaced):  # our own pacer is no limit GitHub imposed
            deps.store.pause_installation(installation, exc.retry_after, str(exc))
        raise


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
    if deps.store.get_triage(issue.repo, issue.number) is None and not deps.store.take_author_slot(
            issue.author, issue.repo, issue.number, deps.author_limit):
        return f"skipped: author over {deps.author_limit} triages/hour"
    access = job_access(job)
    llm = llm_allowed(access.visibility == "private", config.llm, deps.llm_private_repos)
    triage = deps.engine.triage(Issue(repo=issue.repo, number=issue.number, url=issue.url,
                                      title=issue.title, body=issue.body),
                                viewer=Viewer.of(issue.repo, job.installation_id), llm=llm)
    triage = triage.model_copy(update={"repo": issue.repo, "number": issue.number})
    triage = with_corrections(deps.store, triage)
    if deps.store.forgotten(issue.repo):  # removed from the installation while we worked
        return "skipped: repository removed from the installation (forgotten)"
    if not comment.worth_posting(triage, config.comment):  # silent: recorded for /review only
        deps.store.save_triage(triage, issue.author, None)
        return f"triaged silently: nothing clears the bar (comment: {config.comment})"
    comment_id = upsert_comment(deps, port, issue, triage)
    added = apply_labels(deps, port, issue, triage, config)
    deps.store.save_triage(triage, issue.author, comment_id)
    return f"triaged: comment {comment_id}, labels {added}"


def job_access(job: Job) -> Access:
    """Who may see the job's repository, as ``routing`` recorded it from the webhook payload. A
    job without it (queued by an older version, or made by hand) counts as private: its model
    consent is then the private default, and an item it indexes stays in its own repository."""
    if job.access is not None:
        return Access.model_validate(job.access)
    return Access(visibility="private", owner=owner_of(job.repo or ""),
                  installation_id=job.installation_id)


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
    return None


def _labels_touched_since(deps: Deps, issue: IssueState, since: float) -> bool:
    fbs = deps.store.feedback(issue.repo, issue.number, since)
    return any(fb.source == "label" for fb in fbs)


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
    port = deps.port_for(job.installation_id)
    issue = port.get_issue(job.repo or "", job.number or 0)
    if issue is None or issue.state != "closed" or issue.is_pull_request:
        return "skipped: not closed"
    if issue.state_reason not in (None, "completed") or deps.indexer is None:
        return "skipped: not completed or no indexer"
    if issue.repo != job.repo:
        return "skipped: issue transferred"
    config = repo_config.parse_repo_config(port.read_file(issue.repo, repo_config.CONFIG_PATH))
    access = job_access(job)
    private = access.visibility == "private"
    access = access.model_copy(update={"shared_with": config.private_issues_shown_to,
                                       "installation_id": job.installation_id})
    llm = llm_allowed(private, config.llm, deps.llm_private_repos)
    deps.indexer(issue, corrected_labels(deps.store, issue.repo, issue.number), access=access, llm=llm)
    return f"indexed ({access.visibility})"


def corrected_labels(store: Store, repo: str, number: int) -> Labels | None:
    """The stored triage's ids with human corrections (commands, review page) applied on top."""
    stored = store.get_triage(repo, number)
    if stored is None:
        return None
    ids = {dim: stored.triage.prediction(dim).id for dim in DIMENSIONS}
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
    fixed = still_visible(deps, corrections.apply_correction(stored.triage, dimension, new),
                          Viewer.of(stored.repo, job.installation_id))
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
    if triage is None or dimension not in DIMENSIONS + ("is_bug",):
        return None
    return triage.prediction(dimension).id


def still_visible(deps: Deps, triage: Triage, viewer: Viewer) -> Triage:
    """A stored triage re-posted later shows only neighbours ``viewer`` may still see: the
    repository of one may have gone private, or been removed, since it was stored."""
    index = getattr(deps.engine, "index", None)  # engines without an index (fakes) have nothing to hide
    if index is None or not triage.similar:
        return triage

    def shown(repo: str, number: int) -> bool:
        row = index.row_of((repo, number))
        return row is not None and visible_to(index.items[row], viewer)

    kept = [s for s in triage.similar if shown(s.repo, s.number)]
    return triage if len(kept) == len(triage.similar) else triage.model_copy(update={"similar": kept})


def installation_job(deps: Deps, job: Job) -> str:
    """Installations and their repositories. Removing the App (``deleted``) or a repository from
    it (``removed``) forgets: private indexed items, stored triages, comment ids, feedback, jobs
    and cached LLM answers of those repositories are deleted (``forget``). Adding one back
    (``created``, ``added``) lets jobs for it run again."""
    if job.installation_id is None:
        return "ignored: no installation id"
    action = job.payload.get("action")
    active = action not in ("deleted", "suspend")
    deps.store.set_installation(job.installation_id, job.payload.get("account", ""), active)
    added, removed = job.payload.get("added", []), job.payload.get("removed", [])
    if action == "deleted":
        note = forget(deps, job, added + removed, job.installation_id)
        return f"installation deleted; {note}"
    deps.store.set_repos(job.installation_id, added, removed)
    deps.store.unforget(added)
    if removed:
        return f"installation {action}; {forget(deps, job, removed, None)}"
    return f"installation {action}"


def forget(deps: Deps, job: Job, repos: list[str], installation_id: int | None) -> str:
    """Delete what we hold of these repositories (and, with ``installation_id``, of every
    repository we know under that installation): private index items, store rows, LLM answers."""
    everything = set(repos)
    if installation_id is not None:
        everything |= set(deps.store.repos_of_installation(installation_id))
        if deps.keeper is not None:
            everything |= deps.keeper.repos_of(installation_id)
    removed = 0
    if deps.keeper is not None:
        _, removed = deps.keeper.apply(Change(action="forget", repos=tuple(sorted(everything)),
                                              installation_id=installation_id))
    rows = deps.store.forget_repos(sorted(everything), installation_id, keep_job=job.id)
    answers = deps.forget_llm(sorted(everything)) if deps.forget_llm else 0
    return (f"forgot {len(everything)} repositories: {removed} private index items, "
            f"{sum(rows.values())} stored rows, {answers} LLM answers")


def visibility_job(deps: Deps, job: Job) -> str:
    """A repository made private or public, renamed, transferred or deleted; an issue deleted or
    transferred: the index follows (``learning.visibility``), and so do our records."""
    change = Change.model_validate(job.payload["change"])
    if change.action == "visibility" and job.installation_id is not None:
        change = _current_visibility(deps, job, change)
    updated, removed = deps.keeper.apply(change) if deps.keeper is not None else (0, 0)
    repo = change.repos[0] if change.repos else ""
    if change.action in ("delete_issue", "move_issue") and change.number is not None:
        deps.store.forget_issue(repo, change.number, keep_job=job.id)
    elif change.action == "delete_repo":
        deps.store.forget_repos([repo], keep_job=job.id)
        deps.store.unforget([repo])  # a new repository may take the name: not a tombstone
        if deps.forget_llm:
            deps.forget_llm([repo])
    elif change.action == "rename":
        deps.store.rename_repo(repo, change.new_repo)
        if deps.forget_llm:  # cached under the old name, which an uninstall could no longer find
            deps.forget_llm([repo])
    return f"{change.action}: {updated} index items updated, {removed} removed"


def _current_visibility(deps: Deps, job: Job, change: Change) -> Change:
    """Deliveries arrive out of order (privatized, then publicized, handled the other way round):
    the repository's visibility now, from the API, wins over the payload's."""
    try:
        info = deps.port_for(job.installation_id).repository(change.repos[0])
    except Exception:  # noqa: BLE001 - the payload's state is the next best thing
        return change
    if info is None or change.access is None:
        return change
    return change.model_copy(update={"access": change.access.model_copy(
        update={"visibility": "private" if info.private else "public"})})


JOBS: dict[str, Callable[[Deps, Job], str]] = {
    "triage": triage_job,
    "index_add": index_add_job,
    "feedback": feedback_job,
    "command": command_job,
    "installation": installation_job,
    "visibility": visibility_job,
}
