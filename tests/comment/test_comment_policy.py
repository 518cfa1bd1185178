"""Label policy per mode, and the maintainer commands."""
from __future__ import annotations

import pytest

from support.comment import make_triage, prediction
from triagebot.domain.repo_config import RepoConfig
from triagebot.service.policy import Command, confident_keys, labels_to_apply, may_command, parse_command

LABEL_MAP = {"S4": "stage: training", "4.2": "memory", "R4.5": "resources", "F5": "fix: memory",
             "S5": "stage: inference", "distributed_specific": "distributed", "not_a_bug": "question"}
REPO_LABELS = ["bug", "Memory", "stage: training", "resources", "fix: memory", "distributed",
               "triage: needs-review", "question", "stage: inference"]


def config(mode: str, **extra) -> RepoConfig:
    return RepoConfig(mode=mode, label_map=LABEL_MAP, **extra)


def apply(triage=None, cfg=None, current=(), removed=(), repo_labels=REPO_LABELS):
    return labels_to_apply(triage or make_triage(), cfg or config("apply"), list(current), list(removed),
                           list(repo_labels))


def test_mode_off_and_disabled_add_nothing():
    assert apply(cfg=config("off")) == []
    assert apply(cfg=config("apply", enabled=False)) == []


def test_mode_suggest_adds_only_needs_review():
    assert apply(cfg=config("suggest")) == ["triage: needs-review"]
    assert apply(cfg=config("suggest"), current=["Triage: Needs-Review"]) == []


def test_mode_apply_adds_confident_mapped_labels_in_repo_spelling():
    # F5 at 0.48 >= 0.4; R4.5 at 0.55; 4.2 spelled "Memory" in the repo
    assert apply() == ["stage: training", "Memory", "resources", "fix: memory", "distributed"]


def test_apply_respects_thresholds_and_abstention():
    triage = make_triage(symptom=prediction("4.2", 0.9, abstained=True), fix_pattern=prediction("F5", 0.3),
                         distributed_specific=prediction("yes", 0.55))
    assert apply(triage) == ["stage: training", "resources"]
    strict = config("apply", thresholds={"root_cause": 0.9})
    assert "resources" not in apply(cfg=strict)


def test_apply_falls_back_to_needs_review_when_nothing_is_confident():
    triage = make_triage(stage=prediction("S4", 0.2, abstained=True), fix_pattern=prediction("F5", 0.1),
                         distributed_specific=prediction("no", 0.9))
    assert apply(triage) == ["triage: needs-review"]


def test_symptom_and_cause_need_the_confident_stage():
    triage = make_triage(stage=prediction("S5", 0.9), distributed_specific=prediction("no", 0.9))
    assert apply(triage) == ["stage: inference", "fix: memory"]
    assert "4.2" not in confident_keys(triage, config("apply"))


def test_never_readds_human_removed_labels_or_present_ones():
    got = apply(removed=["memory", "Distributed"], current=["stage: training"])
    assert got == ["resources", "fix: memory"]


def test_only_existing_allow_listed_labels():
    assert apply(repo_labels=["memory", "bug"]) == ["memory"]
    hostile = config("apply", needs_review_label="bug")
    triage = make_triage(stage=prediction("S4", 0.1, abstained=True), fix_pattern=prediction("F5", 0.1),
                         distributed_specific=prediction("no", 0.9))
    assert apply(triage, hostile) == ["bug"]  # configured by the repo itself, so allowed
    assert apply(repo_labels=[]) == []


def test_not_a_bug_label():
    triage = make_triage(is_bug=prediction("no", 0.8))
    assert "question" in apply(triage)
    assert "question" not in apply(make_triage(is_bug=prediction("no", 0.8, abstained=True)))


@pytest.mark.parametrize("assoc,ok", [("OWNER", True), ("member", True), ("COLLABORATOR", True),
                                      ("CONTRIBUTOR", False), ("NONE", False), ("", False), (None, False),
                                      ("FIRST_TIME_CONTRIBUTOR", False)])
def test_may_command(assoc, ok):
    assert may_command(assoc) is ok


@pytest.mark.parametrize("body,expected", [
    ("/triage", Command(action="rerun")),
    ("  /triage  \nthanks", Command(action="rerun")),
    ("/triage symptom 4.2", Command(action="set", dimension="symptom", value="4.2")),
    ("/triage symptom 4.10", Command(action="set", dimension="symptom", value="4.10")),
    ("/TRIAGE Stage s4", Command(action="set", dimension="stage", value="S4")),
    ("/triage root_cause R4.2", Command(action="set", dimension="root_cause", value="R4.2")),
    ("/triage cause r4.2", Command(action="set", dimension="root_cause", value="R4.2")),
    ("/triage cause unknown", Command(action="set", dimension="root_cause", value="unknown")),
    ("/triage fix F2", Command(action="set", dimension="fix_pattern", value="F2")),
    ("/triage fix_pattern f6", Command(action="set", dimension="fix_pattern", value="F6")),
    ("/triage distributed yes", Command(action="set", dimension="distributed_specific", value=True)),
    ("/triage distributed no", Command(action="set", dimension="distributed_specific", value=False)),
    ("/triage not-a-bug", Command(action="not_a_bug")),
    ("Looks like memory.\n\n/triage symptom 4.2\n", Command(action="set", dimension="symptom", value="4.2")),
])
def test_parse_command(body, expected):
    assert parse_command(body) == expected


@pytest.mark.parametrize("body", [
    "", None, "hello", "/triaged", "/triage symptom", "/triage symptom 9.9", "/triage symptom unknown",
    "/triage symptom R4.2", "/triage stage S9", "/triage stage unknown", "/triage cause 4.2",
    "/triage fix F7", "/triage distributed maybe", "/triage symptom 4.2 extra", "/triage please",
    "> /triage symptom 4.2", "```\n/triage symptom 4.2\n```", "see /triage symptom 4.2",
    "/triage symptom <img>",
])
def test_parse_command_garbage(body):
    assert parse_command(body) is None
