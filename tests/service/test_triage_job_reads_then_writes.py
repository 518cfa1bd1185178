"""The triage job as read -> decide (pure) -> write: every read (GitHub and store) comes before the
first write, feedback is read once, the decision is a pure function of what was read, and the live
engine reloads only when a job calls ``refresh()`` first, never as a side effect of reading it."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.review import closed_issue, live_engine, make_index
from support.service import BOT, Rig, fixed_triage, issue_payload
from triagebot.domain.repo_config import RepoConfig
from triagebot.domain.visibility import Viewer
from triagebot.github.port import IssueState
from triagebot.learning import live as learning
from triagebot.service import jobs
from triagebot.service.bot_comment import ExistingComment
from triagebot.store.records import Feedback

GITHUB_READS = ("get_issue", "read_file", "repo_labels", "list_comments")
STORE_READS = ("get_triage", "feedback", "author_triages_since", "comment_id")
STORE_WRITES = ("save_triage", "add_feedback", "remember_comment")


def record_store(rig: Rig) -> None:
    """Store calls join the fake GitHub's call log, so one list shows the job's order."""
    for name in STORE_READS + STORE_WRITES:
        method: Callable[..., Any] = getattr(rig.store, name)

        def recorded(*args: Any, _name: str = name, _method: Callable[..., Any] = method) -> Any:
            rig.gh.calls.append((f"store.{_name}", args))
            return _method(*args)

        setattr(rig.store, name, recorded)


def test_every_read_comes_before_the_first_write_and_feedback_is_read_once(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    rig.gh.files[("org/repo", ".github/triagebot.yml")] = "mode: apply\nlabel_map:\n  S4: \"stage: training\"\n"
    rig.store.add_feedback(Feedback(repo="org/repo", number=7, dimension="stage", new_id="S2",
                                    who="maint", source="command"))
    record_store(rig)
    refreshed: list[int] = []
    rig.deps.refresh = lambda: refreshed.append(len(rig.gh.calls))
    rig.deliver("issues", issue_payload("opened"))
    assert rig.drain() == 1
    names = [name for name, _ in rig.gh.calls]
    reads = [i for i, n in enumerate(names) if n in GITHUB_READS or n.removeprefix("store.") in STORE_READS]
    writes = [i for i, n in enumerate(names) if n in ("create_comment", "edit_comment", "add_labels")
              or n.removeprefix("store.") in STORE_WRITES]
    assert reads and writes and max(reads) < min(writes), names
    assert names.count("store.feedback") == 1 and refreshed == [0]  # refreshed first, once
    assert names[-1] == "store.save_triage"  # the store last: a retried job repeats no store write
    stored = rig.store.get_triage("org/repo", 7)
    assert stored is not None and stored.triage.stage.id == "S2"  # the correction read once, applied


def inputs(**changes: Any) -> jobs.TriageInputs:
    base: dict[str, Any] = {
        "issue": IssueState(repo="org/repo", number=7, labels=["stage: training"], author="alice"),
        "config": RepoConfig.model_validate({"mode": "apply", "label_map": {"S4": "stage: training",
                                                                            "4.2": "symptom: memory"}}),
        "repo_labels": ["stage: training", "symptom: memory", "triage: needs-review"],
        "comment": ExistingComment(None, False), "stored": None, "feedback": [],
        "viewer": Viewer.of("org/repo", 1), "llm": True}
    return jobs.TriageInputs(**{**base, **changes})


def test_the_decision_is_a_pure_function_of_what_was_read() -> None:
    rendered: list[Any] = []

    def render(triage: Any) -> str:
        rendered.append(triage)
        return f"body for {triage.stage.id}"

    plan = jobs.plan_triage(inputs(), fixed_triage(), render)
    assert plan == jobs.plan_triage(inputs(), fixed_triage(), render)  # same inputs, same writes
    assert (plan.triage.repo, plan.triage.number, plan.body) == ("org/repo", 7, "body for S4")
    assert plan.labels == ["symptom: memory"]  # "stage: training" is already on the issue
    removed = Feedback(repo="org/repo", number=7, dimension="label", old_id="symptom: memory",
                       source="label", who="maint")
    assert jobs.plan_triage(inputs(feedback=[removed]), fixed_triage(), render).labels == []
    corrected = Feedback(repo="org/repo", number=7, dimension="stage", new_id="S2", source="page",
                         who="maint")
    assert jobs.plan_triage(inputs(feedback=[corrected]), fixed_triage(), render).body == "body for S2"


def test_store_skip_is_decided_from_what_was_read() -> None:
    assert jobs.store_skip("opened", None, [], recent_by_author=5, author_limit=5) == \
        "author over 5 triages/hour"
    assert jobs.store_skip("opened", None, [], recent_by_author=4, author_limit=5) is None
    assert jobs.issue_skip(None, "org/repo") == "issue gone"
    moved = IssueState(repo="other/repo", number=7)
    assert jobs.issue_skip(moved, "org/repo") == "issue transferred"


def test_a_live_engine_reloads_only_when_refreshed(tmp_path: Path) -> None:
    directory = make_index(tmp_path / "index")
    engine = live_engine(directory)
    before_index, before_engine = engine.index, engine.engine
    other = learning.LiveIndex(directory)  # another process (the review page, a sync) writes
    with other.writing() as index:
        learning.add_closed_issue(index, engine.embedder, closed_issue(501, "nccl timeout"),
                                  index.items[0].labels)
    (directory / learning.RETRAIN_STAMP).write_text("now\n")
    assert engine.engine is before_engine and engine.index is before_index  # reading changes nothing
    assert engine.index.row_of(("org/repo", 501)) is None
    engine.refresh()
    assert engine.index.row_of(("org/repo", 501)) is not None
    assert engine.engine.classifier is not before_engine.classifier  # retrain was asked for


def test_refresh_is_wired_from_the_live_engine(tmp_path: Path) -> None:
    from triagebot.service import wiring
    from triagebot.settings import Settings
    from triagebot.store.records import Store

    directory = make_index(tmp_path / "index")
    engine = live_engine(directory)
    deps = wiring.build_deps(Settings(db=str(tmp_path / "d.sqlite3"), index=directory),
                             Store(tmp_path / "d.sqlite3"), engine=engine, port_for=lambda _i: None)
    assert deps.refresh == engine.refresh and deps.bot_login == BOT
