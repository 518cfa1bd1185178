"""Regression tests for the comment path: our comment is found again after a 5xx POST even under
a misconfigured slug; maintainers' corrections show in the comment and labels; GitHub's 422 gets
the ids-only fallback, not a cut Markdown body."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from support.service import BOT, Rig, command, issue_payload
from triagebot.comment import render as comment
from triagebot.domain import taxonomy
from triagebot.github.errors import Forbidden, TooLong, TransientError
from triagebot.github.port import CommentState
from triagebot.service import bot_comment
from triagebot.service import jobs as handlers

CONFIG = ".github/triagebot.yml"
APPLY = "mode: apply\nlabel_map:\n  S4: 'stage: training'\n  '4.1': 'symptom: memory'\n"


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return Rig(tmp_path)


def created_then_502(rig: Rig) -> None:
    """The next POST stores the comment on GitHub but answers 502 (RELIABILITY 12)."""
    real = rig.gh.create_comment

    def flaky(repo: str, number: int, body: str) -> int:
        rig.gh.create_comment = real  # type: ignore[method-assign]
        real(repo, number, body)
        raise TransientError("502 Bad Gateway")

    rig.gh.create_comment = flaky  # type: ignore[method-assign]


def test_5xx_post_found_again_under_a_misconfigured_slug(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    rig.deps.bot_login = "wrong-slug[bot]"  # TRIAGEBOT_APP_SLUG does not match the App
    created_then_502(rig)
    rig.deliver("issues", issue_payload("opened"))
    with caplog.at_level(logging.WARNING, logger="triagebot.service.jobs"):
        rig.drain()
        rig.clock.now += 60
        rig.drain()
    assert len(rig.gh.bot_comments("org/repo", 7)) == 1 and rig.queue.jobs("done")
    assert [c[0] for c in rig.gh.writes] == ["create_comment", "edit_comment"]
    assert sum("TRIAGEBOT_APP_SLUG" in r.getMessage() for r in caplog.records) == 1


def test_slug_warning_is_logged_once_per_login(caplog: pytest.LogCaptureFixture) -> None:
    ours = CommentState(id=9, body=comment.MARKER + "\nx", author="once-only[bot]", author_type="Bot")
    with caplog.at_level(logging.WARNING, logger="triagebot.service.jobs"):
        assert bot_comment.find_bot_comment([ours], BOT) == 9
        assert bot_comment.find_bot_comment([ours], BOT) == 9
    assert sum("once-only[bot]" in r.getMessage() for r in caplog.records) == 1


def test_exact_login_wins_and_humans_are_never_ours() -> None:
    human = CommentState(id=1, body=comment.MARKER + " copy", author="mallory", author_type="User")
    fake_bot = CommentState(id=2, body=comment.MARKER, author="mallory", author_type="Bot")
    other = CommentState(id=3, body=comment.MARKER, author="other[bot]", author_type="Bot")
    ours = CommentState(id=4, body=comment.MARKER, author=BOT, author_type="Bot")
    assert bot_comment.find_bot_comment([human, fake_bot], BOT) is None
    assert bot_comment.find_bot_comment([human, other, ours], BOT) == 4


def test_another_apps_marker_comment_we_cannot_edit_gets_our_own(rig: Rig) -> None:
    rig.gh.comments[("org/repo", 7)] = [CommentState(
        id=5, body=comment.MARKER + "\nnot ours", author="other-app[bot]", author_type="Bot")]
    rig.gh.fail["edit_comment"] = [Forbidden("Resource not accessible by integration")]
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    assert [c[0] for c in rig.gh.writes] == ["edit_comment", "create_comment"]
    assert len(rig.gh.bot_comments("org/repo", 7)) == 1 and rig.queue.jobs("done")
    assert rig.store.comment_id("org/repo", 7) != 5


# corrections ------------------------------------------------------------------------------------
def triaged(rig: Rig, config: str | None = None) -> None:
    if config is not None:
        rig.gh.files[("org/repo", CONFIG)] = config
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()


def test_symptom_correction_edits_comment_and_stored_triage(rig: Rig) -> None:
    triaged(rig)
    rig.deliver("issue_comment", command("/triage symptom 4.1"))
    rig.drain()
    stored = rig.store.get_triage("org/repo", 7)
    symptom = stored.triage.symptom
    assert (symptom.id, symptom.confidence, symptom.abstained) == ("4.1", 1.0, False)
    assert symptom.evidence == ["set by a maintainer"] and stored.triage.stage.id == "S4"
    [ours] = rig.gh.bot_comments("org/repo", 7)
    assert ours.body == rig.deps.render(stored.triage)
    assert f"{taxonomy.name('symptom', '4.1')} (`4.1`, 100%)" in ours.body
    assert [c[0] for c in rig.gh.writes] == ["create_comment", "edit_comment"]
    [fb] = rig.store.feedback("org/repo", 7)
    assert (fb.dimension, fb.old_id, fb.new_id) == ("symptom", "4.2", "4.1")


def test_stage_correction_drops_symptom_of_another_stage(rig: Rig) -> None:
    triaged(rig)
    rig.deliver("issue_comment", command("/triage stage S2"))
    rig.drain()
    fixed = rig.store.get_triage("org/repo", 7).triage
    assert (fixed.stage.id, fixed.stage.confidence) == ("S2", 1.0)
    assert (fixed.symptom.id, fixed.symptom.abstained) == ("unknown", True)
    body = rig.gh.bot_comments("org/repo", 7)[0].body
    assert taxonomy.name("stage", "S2") in body and taxonomy.name("symptom", "4.2") not in body
    rig.deliver("issue_comment", command("/triage symptom 4.3"))  # brings its stage along
    rig.deliver("issue_comment", command("/triage"))  # a re-run keeps the maintainers' answer
    rig.drain()
    again = rig.store.get_triage("org/repo", 7).triage
    assert (again.stage.id, again.symptom.id) == ("S4", "4.3")
    assert taxonomy.name("symptom", "4.3") in rig.gh.bot_comments("org/repo", 7)[0].body


def test_correction_in_apply_mode_adds_the_mapped_label(rig: Rig) -> None:
    triaged(rig, APPLY)
    assert rig.gh.issues[("org/repo", 7)].labels == ["stage: training"]
    rig.deliver("issue_comment", command("/triage symptom 4.1"))
    rig.drain()
    assert rig.gh.issues[("org/repo", 7)].labels == ["stage: training", "symptom: memory"]
    rig.deliver("issue_comment", command("/triage cause R4.1"))  # unmapped: no label, no error
    rig.drain()
    assert [c[0] for c in rig.gh.writes].count("add_labels") == 2


def test_correction_in_suggest_mode_adds_no_label(rig: Rig) -> None:
    triaged(rig, APPLY.replace("apply", "suggest"))
    before = [c for c in rig.gh.writes if c[0] == "add_labels"]
    rig.deliver("issue_comment", command("/triage symptom 4.1"))
    rig.drain()
    assert [c for c in rig.gh.writes if c[0] == "add_labels"] == before


def test_correction_before_any_triage_is_only_recorded(rig: Rig) -> None:
    rig.deliver("issue_comment", command("/triage stage S2"))
    rig.drain()
    assert rig.gh.writes == [] and len(rig.store.feedback("org/repo", 7)) == 1


# 422 ---------------------------------------------------------------------------------------------
def test_too_long_posts_render_fallback_not_cut_markdown(rig: Rig) -> None:
    rig.gh.fail["create_comment"] = [TooLong("body is too long")]
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()
    [posted] = rig.gh.bot_comments("org/repo", 7)
    assert posted.body == comment.render_fallback(rig.store.get_triage("org/repo", 7).triage)
    assert "<details>" not in posted.body
    assert not hasattr(handlers, "fit_comment") and not hasattr(handlers, "MAX_COMMENT_CHARS")


def test_too_long_edit_uses_render_fallback(rig: Rig) -> None:
    triaged(rig)
    rig.gh.fail["edit_comment"] = [TooLong("body is too long")]
    rig.deliver("issue_comment", command("/triage"))
    rig.drain()
    [ours] = rig.gh.bot_comments("org/repo", 7)
    assert ours.body == comment.render_fallback(rig.store.get_triage("org/repo", 7).triage)


# a label the bot applied and a human removed ------------------------------------------------------
def test_bot_label_removed_without_unlabeled_delivery_is_not_readded(rig: Rig) -> None:
    triaged(rig, APPLY)
    assert rig.gh.issues[("org/repo", 7)].labels == ["stage: training"]
    issue = rig.gh.issues[("org/repo", 7)]  # a maintainer removes it; the delivery is lost
    rig.gh.issues[("org/repo", 7)] = issue.model_copy(update={"labels": []})
    rig.deliver("issue_comment", command("/triage"))
    rig.drain()
    assert rig.gh.issues[("org/repo", 7)].labels == []
    assert [c[0] for c in rig.gh.writes].count("add_labels") == 1
    assert handlers.human_removed(rig.store.feedback("org/repo", 7), ["Stage: Training"]) == set()
