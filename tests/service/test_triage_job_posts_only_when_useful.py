"""The triage job's posting decision (#11): ``comment: useful`` stays silent on the issue (no
comment, no labels) when nothing clears the bar, yet records the triage for the review page; a
stated label alone goes on the issue as a label, without a comment; ``always`` and ``never`` do
what they say."""
from __future__ import annotations

from pathlib import Path

import pytest

from support.service import Rig, issue_payload
from triagebot.domain import missing
from triagebot.domain.models import MissingInfo, Prediction, Triage
from triagebot.domain.repo_config import CONFIG_PATH

REPO = "org/repo"
APPLY = 'mode: apply\nlabel_map:\n  S4: "stage: training"\nthresholds: {stage: 0.0}\n'


def prediction(label_id: str, confidence: float, abstained: bool) -> Prediction:
    return Prediction(id=label_id, name=label_id, confidence=confidence, abstained=abstained)


def unsure_triage() -> Triage:
    return Triage(stage=prediction("S4", 0.3, True), symptom=prediction("4.2", 0.1, True),
                  root_cause=prediction("R4.5", 0.1, True), fix_pattern=prediction("F5", 0.1, True),
                  distributed_specific=prediction("yes", 0.5, True),
                  is_bug=prediction("yes", 0.5, True))


def sure_triage() -> Triage:
    return unsure_triage().model_copy(update={"stage": prediction("S4", 0.95, False)})


class Fixed:
    def __init__(self, triage: Triage) -> None:
        self.result = triage

    def triage(self, issue: object, **_how: object) -> Triage:
        return self.result


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return Rig(tmp_path)


def run(rig: Rig, triage: Triage, comment: str = "") -> None:
    rig.deps.engine = Fixed(triage)
    rig.gh.files[(REPO, CONFIG_PATH)] = APPLY + comment
    rig.deliver("issues", issue_payload("opened"))
    rig.drain()


def test_useful_is_silent_when_nothing_clears_the_bar_but_keeps_the_triage(rig: Rig) -> None:
    run(rig, unsure_triage())
    assert rig.gh.writes == []  # no comment, no label
    stored = rig.store.get_triage(REPO, 7)
    assert stored is not None and stored.comment_id is None and stored.triage.stage.abstained


def test_useful_labels_a_stated_label_without_a_comment(rig: Rig) -> None:
    run(rig, sure_triage())
    assert rig.gh.writes == [("add_labels", (REPO, 7, ["stage: training"]))]
    stored = rig.store.get_triage(REPO, 7)
    assert stored is not None and stored.comment_id is None


def test_useful_posts_and_labels_when_the_reporter_has_something_to_read(rig: Rig) -> None:
    config = MissingInfo(key="config", description=missing.describe("config", None))
    run(rig, sure_triage().model_copy(update={"missing_info": [config]}))
    assert rig.gh.writes[0][0] == "create_comment"
    assert rig.gh.writes[1] == ("add_labels", (REPO, 7, ["stage: training"]))


def test_always_posts_even_an_unsure_triage(rig: Rig) -> None:
    run(rig, unsure_triage(), "comment: always\n")
    assert [call for call, _ in rig.gh.writes] == ["create_comment"]  # nothing sure to label


def test_never_stays_silent_even_when_sure(rig: Rig) -> None:
    run(rig, sure_triage(), "comment: never\n")
    assert rig.gh.writes == [] and rig.store.get_triage(REPO, 7) is not None


def test_a_comment_already_posted_is_kept_current_when_the_new_triage_would_stay_silent(rig: Rig) -> None:
    """An edit that leaves nothing for the reporter edits our comment rather than leaving it
    showing what the bot no longer says."""
    config = MissingInfo(key="config", description=missing.describe("config", None))
    run(rig, sure_triage().model_copy(update={"missing_info": [config]}))
    rig.deps.engine = Fixed(unsure_triage())
    rig.clock.now += 10
    rig.deliver("issues", issue_payload("edited", changes={"body": {"from": "old"}}))
    rig.drain()
    assert [call for call, _ in rig.gh.writes] == ["create_comment", "add_labels", "edit_comment"]
    [ours] = rig.gh.bot_comments(REPO, 7)
    assert "Please add" not in ours.body
    stored = rig.store.get_triage(REPO, 7)
    assert stored is not None and stored.comment_id == ours.id
