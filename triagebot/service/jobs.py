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
from triagebot.domain import repo_config, taxonomy
from triagebot.domain.models import Issue, Labels, Triage
from triagebot.domain.repo_config import RepoConfig
from triagebot.domain.visibility import (
    Access,
    Change,
    LLMPrivateRepos,
    Viewer,
    llm_allowed,
    owner_of,
    visible_to,
)
from triagebot.engine.index import IssueIndex
from triagebot.github.errors import QuotaPaused, RateLimited, WritesPaced
from triagebot.github.port import GitHubPort, IssueState
from triagebot.learning import corrections
from triagebot.service import bot_comment, policy
from triagebot.store.queue import Job
from triagebot.store.records import Feedback, Store, StoredTriage

AUTHOR_LIMIT_PER_HOUR = 5
GITHUB_KINDS = frozenset({"triage", "index_add", "command"})  # jobs that call GitHub
FORGOTTEN = "repository removed from the installation (forgotten)"


class EngineLike(Protocol):
    def triage(self, issue: Issue, *, viewer: Viewer | None = None, llm: bool = True,
               targets: dict[str, float] | None = None) -> Triage: ...


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
    refresh: Callable[[], None] = lambda: None  # LiveEngine.refresh: follow the index on disk
    keeper: KeeperLike | None = None  # keeps indexed items' visibility current
    forget_llm: Callable[[list[str]], int] | None = None  # deletes cached LLM answers of repos
    llm_private_repos: LLMPrivateRepos = "off"  # Settings.llm_private_repos (domain.visibility.llm_allowed)
    # learning.live.correct_by_command on the live index: a command's correction of an indexed
    # issue becomes its neighbours' label for every worker (None: an engine without an index)
    correct: Callable[[str, int, str, str], bool] | None = None
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
        return f"skipped: {FORGOTTEN}"
    installation = job.installation_id
    if job.kind not in GITHUB_KINDS or installation is None:
        return handler(deps, job)
    wait = deps.paused(installation)  # reads, before the job decides anything
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
# Read -> decide -> write. ``read_triage`` makes every read (the issue; the store's view of it:
# stored triage, all feedback, the author's slots this hour; the repository's configuration and
# labels; our comment), stopping as soon as a pure check says the job has nothing to do; who may
# be shown as a neighbour and whether the model may read the issue follow, purely, from the job's
# access and the configuration. The engine answers from what was read; ``plan_triage`` (pure)
# turns that into the writes, and ``write_triage`` makes them: the author's slot (a guarded
# write: booked atomically, it refuses a job that lost a race), the comment, the labels, the stored
# triage last, so a job retried after a failed write repeats only steps that are safe to repeat.
# One read follows the engine, because the engine is slow: a repository removed from the
# installation meanwhile is forgotten, and nothing is written for it.
@dataclass(frozen=True)
class TriageInputs:
    """Everything a triage is decided from, read before anything is decided."""

    issue: IssueState
    config: RepoConfig
    repo_labels: list[str]
    comment: bot_comment.ExistingComment
    stored: StoredTriage | None
    feedback: list[Feedback]  # all of it, oldest first; read once
    viewer: Viewer  # neighbours are only those this repository's installation may see
    llm: bool  # the repository's consent to the model (``domain.visibility.llm_allowed``)


@dataclass(frozen=True)
class TriagePlan:
    """The writes of one triage, in the order they are made."""

    triage: Triage  # stored last, with the comment's id
    body: str  # our one comment, edited in place or posted once
    labels: list[str]  # added, and remembered as the bot's
    author_slot: bool = False  # book one of the author's hourly slots first (a first triage)
    post: bool = True  # False: no comment (``comment: useful``); labels only, recorded for /review


def triage_job(deps: Deps, job: Job) -> str:
    deps.refresh()  # the engine follows the index on disk: once, here, never during a decision
    port = deps.port_for(job.installation_id)
    inputs = read_triage(deps, port, job)
    if isinstance(inputs, str):
        return f"skipped: {inputs}"
    triage = deps.engine.triage(inputs.issue.to_issue(), viewer=inputs.viewer, llm=inputs.llm,
                                targets={str(k): v for k, v in inputs.config.precision.items()} or None)
    plan = plan_triage(inputs, triage, deps.render)
    if deps.store.forgotten(inputs.issue.repo):  # removed from the installation while we worked
        return f"skipped: {FORGOTTEN}"
    return write_triage(deps, port, inputs, plan)


def read_triage(deps: Deps, port: GitHubPort, job: Job) -> TriageInputs | str:
    """The inputs of a triage, or the reason to skip it (a str) as soon as one is known."""
    issue = port.get_issue(job.repo or "", job.number or 0)
    skip = issue_skip(issue, job.repo or "")
    if skip or issue is None:
        return skip or "issue gone"
    stored = deps.store.get_triage(issue.repo, issue.number)
    feedback = deps.store.feedback(issue.repo, issue.number)
    recent = 0 if stored else deps.store.author_triages_since(
        issue.author, deps.clock() - 3600, (issue.repo, issue.number))
    skip = store_skip(job.payload.get("reason"), stored, feedback, recent, deps.author_limit)
    if skip:
        return skip
    config = repo_config.parse_repo_config(port.read_file(issue.repo, repo_config.CONFIG_PATH))
    if config.mode == "off" or not config.enabled:
        return "disabled in .github/triagebot.yml"
    access = job_access(job)
    return TriageInputs(issue=issue, config=config, repo_labels=port.repo_labels(issue.repo),
                        comment=bot_comment.find_existing(deps.store, port, issue, deps.bot_login),
                        stored=stored, feedback=feedback,
                        viewer=Viewer.of(issue.repo, job.installation_id),
                        llm=llm_allowed(access.visibility == "private", config.llm,
                                        deps.llm_private_repos))


def job_access(job: Job) -> Access:
    """Who may see the job's repository, as ``routing`` recorded it from the webhook payload. A
    job without it (queued by an older version, or made by hand) counts as private: its model
    consent is then the private default, and an item it indexes stays in its own repository."""
    if job.access is not None:
        return Access.model_validate(job.access)
    return Access(visibility="private", owner=owner_of(job.repo or ""),
                  installation_id=job.installation_id)


def issue_skip(issue: IssueState | None, repo: str) -> str | None:
    """Deliveries arrive late and out of order: only an open issue still in ``repo`` is triaged."""
    if issue is None:
        return "issue gone"
    if issue.is_pull_request or issue.state != "open":
        return "not an open issue"
    if issue.repo != repo:
        return "issue transferred"
    return None


def store_skip(reason: str | None, stored: StoredTriage | None, feedback: list[Feedback],
               recent_by_author: int, author_limit: int) -> str | None:
    """An edit after a human changed labels keeps their labels; a new issue from an author past
    the hourly limit waits (flood control)."""
    if reason == "edited" and stored and any(
            fb.source == "label" and (fb.at or 0.0) >= stored.updated_at for fb in feedback):
        return "a human changed labels since the last triage"
    if stored is None and recent_by_author >= author_limit:
        return f"author over {author_limit} triages/hour"
    return None


def plan_triage(inputs: TriageInputs, triage: Triage, render: Callable[[Triage], str]) -> TriagePlan:
    """Pure: the engine's answer with maintainers' corrections, its comment and its labels; a
    first triage of the issue also books one of its author's hourly slots."""
    issue = inputs.issue
    triage = triage.model_copy(update={"repo": issue.repo, "number": issue.number})
    triage = with_corrections(triage, inputs.feedback)
    mode = inputs.config.comment
    post = comment.worth_posting(triage, mode)
    labels = (plan_labels(triage, inputs.config, issue, inputs.feedback, inputs.repo_labels)
              if post or comment.worth_labelling(triage, mode) else [])
    # A comment already on the issue is kept current even when the new triage would not earn
    # one: left as it was, it would go on showing what the bot no longer says.
    if not post and inputs.comment.id is None:
        return TriagePlan(triage=triage, body="", labels=labels, author_slot=inputs.stored is None,
                          post=False)
    return TriagePlan(triage=triage, body=render(triage), labels=labels,
                      author_slot=inputs.stored is None)


def write_triage(deps: Deps, port: GitHubPort, inputs: TriageInputs, plan: TriagePlan) -> str:
    """The writes, in order. The author's slot is a guarded write made first: the read count may
    be stale when workers race on an author's issues, and booking checks and takes the slot in
    one transaction, so a refused job writes nothing (a retried job keeps its slot)."""
    issue = inputs.issue
    if plan.author_slot and not deps.store.take_author_slot(issue.author, issue.repo, issue.number,
                                                            deps.author_limit):
        return f"skipped: author over {deps.author_limit} triages/hour"
    if not plan.post:  # no comment: the triage is kept for the review page, labels only
        write_labels(deps, port, issue, plan.labels)
        deps.store.save_triage(plan.triage, issue.author, None)
        return (f"triaged silently: nothing for the reporter clears the bar "
                f"(comment: {inputs.config.comment}), labels {plan.labels}")
    comment_id = bot_comment.write_comment(deps.store, port, issue, plan.triage, plan.body,
                                           inputs.comment)
    write_labels(deps, port, issue, plan.labels)
    deps.store.save_triage(plan.triage, issue.author, comment_id)
    return f"triaged: comment {comment_id}, labels {plan.labels}"


def with_corrections(triage: Triage, feedback: list[Feedback]) -> Triage:
    """A re-triage keeps what maintainers set (commands, review page), oldest first. Pure."""
    for fb in feedback:
        if fb.source in ("command", "page"):
            triage = corrections.apply_correction(triage, fb.dimension, fb.new_id)
    return triage


def plan_labels(triage: Triage, config: RepoConfig, issue: IssueState, feedback: list[Feedback],
                repo_labels: list[str]) -> list[str]:
    """Pure: the labels to add, whatever the policy allows for the repo's mode (``suggest``: the
    review label only), never one a human removed and none already on the issue."""
    removed = human_removed(feedback, issue.labels)
    wanted = policy.labels_to_apply(triage, config, issue.labels, removed, repo_labels)
    return [label for label in wanted if label not in issue.labels]


def write_labels(deps: Deps, port: GitHubPort, issue: IssueState, labels: list[str]) -> None:
    """Labels we apply are remembered (feedback source ``bot``), so one missing from the issue
    later counts as removed by a human even when that ``unlabeled`` delivery never reached us."""
    if not labels:
        return
    port.add_labels(issue.repo, issue.number, labels)
    for label in labels:
        deps.store.add_feedback(Feedback(repo=issue.repo, number=issue.number, source="bot",
                                         dimension="label", new_id=label, who=deps.bot_login))


def human_removed(feedback: list[Feedback], current: list[str]) -> set[str]:
    """Labels a human took off: seen in an ``unlabeled`` delivery, or applied by us and gone."""
    on_issue = {name.casefold() for name in current}
    removed = {fb.old_id for fb in feedback if fb.source == "label" and fb.old_id and not fb.new_id}
    return removed | {fb.new_id for fb in feedback if fb.source == "bot" and fb.new_id
                      and fb.new_id.casefold() not in on_issue}


# index, feedback, commands, installations ---------------------------------------------------
def index_add_job(deps: Deps, job: Job) -> str:
    """Read (the issue, the repository's configuration), decide who may see the item and whether
    the model may read it (pure), then index it (``deps.indexer`` triages it first when nobody
    labelled it, and writes the index)."""
    deps.refresh()
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
    deps.refresh()  # the re-posted comment's neighbours are checked against the index as it is now
    stored = deps.store.get_triage(job.repo or "", job.number or 0)
    dimension = "is_bug" if cmd.action == "not_a_bug" else cmd.dimension
    old = _old_id(stored.triage if stored else None, dimension)
    new = "no" if cmd.action == "not_a_bug" else _command_value(cmd.value)
    fixed = show_correction(deps, job, stored, dimension or "", new)
    deps.store.add_feedback(Feedback(repo=job.repo or "", number=job.number or 0,
                                     dimension=dimension or "", old_id=old, new_id=new,
                                     who=job.payload.get("who", ""), source="command"))
    if deps.correct is not None and dimension and new is not None:
        deps.correct(job.repo or "", job.number or 0, dimension, new)
    if fixed is not None and stored is not None:
        deps.store.save_triage(fixed, stored.author, deps.store.comment_id(stored.repo, stored.number))
    return f"recorded correction {dimension}={new}"


def show_correction(deps: Deps, job: Job, stored: StoredTriage | None, dimension: str,
                    new: str | None) -> Triage | None:
    """Re-render our comment with the correction (and, in ``apply`` mode, add its mapped label);
    returns the corrected triage to store, None when there is nothing to correct. Reads first,
    then GitHub writes, the store after, so a retried job records the feedback once. The comment
    keeps only neighbours the repository may still see (``still_visible``)."""
    if stored is None:
        return None
    fixed = still_visible(corrections.apply_correction(stored.triage, dimension, new),
                          getattr(deps.engine, "index", None),
                          Viewer.of(stored.repo, job.installation_id))
    port = deps.port_for(job.installation_id)
    issue = port.get_issue(stored.repo, stored.number)
    if issue is None or issue.repo != stored.repo or issue.is_pull_request:
        return fixed
    config = repo_config.parse_repo_config(port.read_file(issue.repo, repo_config.CONFIG_PATH))
    if config.mode == "off" or not config.enabled:
        return fixed
    existing = bot_comment.find_existing(deps.store, port, issue, deps.bot_login)
    labels = plan_labels(fixed, config, issue, deps.store.feedback(issue.repo, issue.number),
                         port.repo_labels(issue.repo)) if config.mode == "apply" else []
    bot_comment.write_comment(deps.store, port, issue, fixed, deps.render(fixed), existing)
    write_labels(deps, port, issue, labels)
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


def still_visible(triage: Triage, index: IssueIndex | None, viewer: Viewer) -> Triage:
    """Pure: a stored triage re-posted later shows only neighbours ``viewer`` may still see in
    ``index``: the repository of one may have gone private, or been removed, since it was stored.
    Without an index (an engine fake) there is nothing to hide."""
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
    (``created``, ``added``) lets jobs for it run again. What to forget is read first, then the
    writes are made."""
    if job.installation_id is None:
        return "ignored: no installation id"
    action = job.payload.get("action")
    added, removed = job.payload.get("added", []), job.payload.get("removed", [])
    deleted = action == "deleted"
    gone = repos_to_forget(deps, added + removed if deleted else removed,
                           job.installation_id if deleted else None)
    deps.store.set_installation(job.installation_id, job.payload.get("account", ""),
                                action not in ("deleted", "suspend"))
    if deleted:
        return f"installation deleted; {forget(deps, job, gone, job.installation_id)}"
    deps.store.set_repos(job.installation_id, added, removed)
    deps.store.unforget(added)
    if removed:
        return f"installation {action}; {forget(deps, job, gone, None)}"
    return f"installation {action}"


def repos_to_forget(deps: Deps, repos: list[str], installation_id: int | None) -> list[str]:
    """These repositories and, with ``installation_id``, every repository we know under that
    installation (in the store's records and in the index), sorted."""
    everything = set(repos)
    if installation_id is not None:
        everything |= set(deps.store.repos_of_installation(installation_id))
        if deps.keeper is not None:
            everything |= deps.keeper.repos_of(installation_id)
    return sorted(everything)


def forget(deps: Deps, job: Job, repos: list[str], installation_id: int | None) -> str:
    """Delete what we hold of ``repos`` (``repos_to_forget``): private index items (with
    ``installation_id``, every item indexed from it), store rows, LLM answers."""
    removed = 0
    if deps.keeper is not None:
        _, removed = deps.keeper.apply(Change(action="forget", repos=tuple(repos),
                                              installation_id=installation_id))
    rows = deps.store.forget_repos(repos, installation_id, keep_job=job.id)
    answers = deps.forget_llm(repos) if deps.forget_llm else 0
    return (f"forgot {len(repos)} repositories: {removed} private index items, "
            f"{sum(rows.values())} stored rows, {answers} LLM answers")


def visibility_job(deps: Deps, job: Job) -> str:
    """A repository made private or public, renamed, transferred or deleted; an issue deleted or
    transferred: the index follows (``learning.visibility``), and so do our records. Read (the
    repository's visibility now), decide the change, then write: index, store, LLM cache."""
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
