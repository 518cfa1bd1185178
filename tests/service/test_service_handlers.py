"""Routing and job functions with a hand-written fake GitHub and a fixed engine: idempotent
comments, loop guard, out-of-order deliveries, author limit, 422 fallback, commands, retries."""
from __future__ import annotations

from pathlib import Path

import pytest

from support.service import BOT, Rig, command, issue_payload
from triagebot.comment import render as comment
from triagebot.github.errors import NotFound, RateLimited, TooLong, TransientError
from triagebot.service import bot_comment
from triagebot.service.routing import route


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return Rig(tmp_path)


def test_opened_posts_one_marked_comment_and_stores_triage(rig: Rig) -> None:
    rig.deliver("issues", issue_payload("opened"))
    assert rig.drain() == 1
    [posted] = rig.gh.bot_comments("org/repo", 7)
    assert posted.body.startswith(comment.MARKER)
    assert rig.store.get_triage("org/repo", 7).comment_id == posted.id


def test_two_deliveries_for_same_issue_yield_one_comment(rig: Rig) -> None:
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    rig.deliver("issues", issue_payload("opened"))
    rig.deliver("issues", issue_payload("reopened"))
    rig.drain()
    assert len(rig.gh.bot_comments("org/repo", 7)) == 1
    assert [c[0] for c in rig.gh.writes].count("create_comment") == 1


def test_existing_marker_comment_is_edited_when_store_lost_it(rig: Rig) -> None:
    """A worker died after posting but before recording: the marker finds our comment."""
    cid = rig.gh.create_comment("org/repo", 7, comment.MARKER + "\nold")
    rig.gh.calls.clear()
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    assert [c[0] for c in rig.gh.writes] == ["edit_comment"]
    assert rig.gh.bot_comments("org/repo", 7)[0].id == cid


def test_marker_copied_by_someone_else_is_not_ours(rig: Rig) -> None:
    """A human quoting the marker, or a bot's comment that merely contains it, is not ours; a
    Bot comment *starting* with it is (our own under a misconfigured slug), see
    tests/service/test_comment_lookup_and_corrections.py."""
    from triagebot.github.port import CommentState

    quoted = CommentState(id=5, body="see " + comment.MARKER, author="mallory[bot]", author_type="Bot")
    human = CommentState(id=6, body=comment.MARKER + " spoof", author="mallory")
    assert bot_comment.find_bot_comment([quoted, human], BOT) is None


def test_own_comment_and_label_events_cause_zero_writes(rig: Rig) -> None:
    """RELIABILITY 43: the bot's own events, and any bot's, are ignored."""
    for sender, kind in ((BOT, "Bot"), ("dependabot[bot]", "Bot"), (BOT, "User")):
        rig.deliver("issues", issue_payload("labeled", sender=sender, sender_type=kind,
                                            label={"name": "bug"}))
        rig.deliver("issues", issue_payload("edited", sender=sender, sender_type=kind,
                                            changes={"body": {"from": "x"}}))
        rig.deliver("issues", issue_payload("opened", sender=sender, sender_type=kind))
        rig.deliver("issue_comment", issue_payload(
            "created", sender=sender, sender_type=kind,
            comment={"body": "/triage rerun", "author_association": "OWNER", "user": {"login": sender}}))
    assert rig.queue.jobs() == [] and rig.drain() == 0 and rig.gh.writes == []


def end_state(tmp_path: Path, order: list[str]) -> tuple:
    """(bot comments, feedback rows, indexed) after delivering ``order`` and draining."""
    rig = Rig(tmp_path / "-".join(order))
    for action in order:
        if action == "closed":
            rig.gh.issues[("org/repo", 7)] = rig.gh.issues[("org/repo", 7)].model_copy(
                update={"state": "closed", "state_reason": "completed"})
        extra = {"label": {"name": "bug"}} if action == "labeled" else {}
        rig.deliver("issues", issue_payload(action, **extra))
    rig.drain()
    return (len(rig.gh.bot_comments("org/repo", 7)), len(rig.store.feedback("org/repo", 7)),
            len(rig.indexed))


def test_labeled_before_opened_same_end_state(tmp_path: Path) -> None:
    assert end_state(tmp_path, ["labeled", "opened"]) == end_state(tmp_path, ["opened", "labeled"])
    assert end_state(tmp_path / "x", ["labeled", "opened"]) == (1, 1, 0)


def test_closed_before_opened_same_end_state_as_closed_alone(tmp_path: Path) -> None:
    """The worker re-reads the issue: once it is closed, a late ``opened`` posts nothing."""
    assert end_state(tmp_path, ["closed", "opened"]) == end_state(tmp_path, ["closed"]) == (0, 0, 1)


def test_opened_then_closed_before_worker_runs_posts_nothing(rig: Rig) -> None:
    rig.deliver("issues", issue_payload("opened"))
    rig.gh.issues[("org/repo", 7)] = rig.gh.issues[("org/repo", 7)].model_copy(
        update={"state": "closed", "state_reason": "completed"})
    rig.deliver("issues", issue_payload("closed"))
    rig.drain()
    assert rig.gh.writes == [] and len(rig.indexed) == 1
    assert len(rig.queue.jobs("cancelled")) == 1


@pytest.mark.parametrize("change", [None, {"is_pull_request": True}, {"repo": "other/repo"}])
def test_gone_pr_or_transferred_issues_are_skipped(rig: Rig, change: dict | None) -> None:
    if change is None:
        del rig.gh.issues[("org/repo", 7)]
    else:
        issue = rig.gh.issues[("org/repo", 7)]
        rig.gh.issues[("org/repo", 7)] = issue.model_copy(update=change)
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    assert rig.gh.writes == [] and rig.queue.jobs("done")


def test_edit_retriages_unless_a_human_relabelled(rig: Rig) -> None:
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    rig.clock.now += 10
    rig.deliver("issues", issue_payload("edited", changes={"title": {"from": "old"}}))
    rig.drain()
    assert [c[0] for c in rig.gh.writes] == ["create_comment", "edit_comment"]
    rig.clock.now += 10
    rig.deliver("issues", issue_payload("labeled", sender="maint", label={"name": "bug"}))
    rig.deliver("issues", issue_payload("edited", changes={"body": {"from": "old"}}))
    rig.drain()
    assert [c[0] for c in rig.gh.writes] == ["create_comment", "edit_comment"]
    rig.deliver("issues", issue_payload("edited", changes={"labels": {}}))
    assert len(rig.queue.jobs()) == 4  # the label-only edit made no job


def test_author_limited_to_five_triages_per_hour(rig: Rig) -> None:
    for n in range(1, 8):
        rig.gh.add_issue("org/repo", 100 + n)
        rig.deliver("issues", issue_payload("opened", number=100 + n))
    rig.drain()
    assert sum(len(rig.gh.bot_comments("org/repo", 100 + n)) for n in range(1, 8)) == 5
    rig.clock.now += 3601
    rig.deliver("issues", issue_payload("reopened", number=107))
    rig.drain()
    assert len(rig.gh.bot_comments("org/repo", 107)) == 1


def test_long_comment_is_capped_and_422_posts_fallback(rig: Rig) -> None:
    rig.deps.render = lambda t: comment.MARKER + "\n```\n" + "x\n" * 20_000
    rig.gh.fail["create_comment"] = [TooLong("body is too long")]
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    [posted] = rig.gh.bot_comments("org/repo", 7)
    assert posted.body == comment.render_fallback(rig.store.get_triage("org/repo", 7).triage)


def test_rate_limited_then_transient_then_success_is_one_comment(rig: Rig) -> None:
    rig.gh.fail["create_comment"] = [RateLimited(retry_after=120.0), TransientError("502")]
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    [job] = rig.queue.jobs("queued")
    assert "RateLimited" in job.last_error and rig.drain() == 0  # waits for GitHub's 120 s
    rig.clock.now += 120
    rig.drain()
    rig.clock.now += 60
    rig.drain()
    assert len(rig.gh.bot_comments("org/repo", 7)) == 1 and rig.queue.jobs("done")


def test_persistent_server_errors_wait_a_day_then_dead_letter(rig: Rig) -> None:
    """A 5xx is GitHub's trouble, not the job's: no attempt is spent (the budget is 3), the job
    keeps waiting for 24 h from its first failure, and only then dead-letters (issue #13)."""
    rig.gh.fail["get_issue"] = [TransientError("502 Bad Gateway")] * 1000
    rig.deliver("issues", issue_payload("opened"))
    start = rig.clock.now
    while not rig.queue.jobs("dead"):
        rig.drain()
        assert rig.clock.now - start < 25 * 3600, "still not dead-lettered after 25 h"
        rig.clock.now += 300
    [dead] = rig.queue.jobs("dead")
    assert rig.clock.now - start >= 24 * 3600
    assert dead.attempts <= 1 and "502" in dead.last_error and rig.gh.writes == []


def test_not_found_finishes_the_job(rig: Rig) -> None:
    rig.gh.fail["get_issue"] = [NotFound("gone")]
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    assert rig.queue.jobs("done") and rig.gh.writes == []


def test_commands_from_maintainers_only(rig: Rig) -> None:
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    rig.deliver("issue_comment", command("/triage stage S2"))
    rig.deliver("issue_comment", command("/triage stage S3", association="NONE", who="rando"))
    rig.deliver("issue_comment", command("thanks!"))
    rig.drain()
    [fb] = rig.store.feedback("org/repo", 7)
    assert (fb.dimension, fb.old_id, fb.new_id, fb.source) == ("stage", "S4", "S2", "command")
    rig.deliver("issue_comment", command("/triage rerun"))
    rig.drain()  # the correction re-rendered the comment, the re-run edited it again
    assert [c[0] for c in rig.gh.writes] == ["create_comment", "edit_comment", "edit_comment"]


def test_closed_completed_indexes_with_corrected_labels(rig: Rig) -> None:
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    rig.deliver("issue_comment", command("/triage stage S2"))
    rig.gh.issues[("org/repo", 7)] = rig.gh.issues[("org/repo", 7)].model_copy(
        update={"state": "closed", "state_reason": "completed"})
    rig.deliver("issues", issue_payload("closed"))
    rig.drain()
    [(issue, labels)] = rig.indexed
    # symptom 4.2 belongs to S4, so the stage correction leaves it unknown (kept consistent)
    assert issue.number == 7 and labels.stage == "S2" and labels.symptom == "unknown"


def test_installation_events_update_enabled_repos(rig: Rig) -> None:
    inst = {"id": 9, "account": {"login": "org"}}
    rig.deliver("installation", {"action": "created", "installation": inst, "sender": {"login": "o"},
                                 "repositories": [{"full_name": "org/a"}, {"full_name": "org/b"}]})
    rig.deliver("installation_repositories", {"action": "removed", "installation": inst,
                                              "repositories_removed": [{"full_name": "org/a"}]})
    rig.drain()
    assert rig.store.enabled_repos(9) == ["org/b"]


def test_unknown_events_and_actions_route_to_nothing() -> None:
    assert route("issues", issue_payload("frobnicated"), BOT) == []
    assert route("star", {"action": "created"}, BOT) == []
    assert route("issues", {"action": "opened", "issue": {"number": 1, "pull_request": {}},
                            "repository": {"full_name": "a/b"}}, BOT) == []
