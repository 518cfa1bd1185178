"""The engine carries the diagnoses of the report's error into the triage and, for the few measured
right on >= 0.9 of >= 3 shared issues (``Diagnosis.states``), states their implied ids where the
classifier states nothing, quoting the error line; never against a stage the classifier states."""
from __future__ import annotations

import pytest

from support.engine import DS_REPO, hashing_index
from triagebot.domain import diagnoses
from triagebot.domain.models import Diagnosed, Issue, Prediction
from triagebot.engine.calibration import Calibration
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.triage import Engine, _stated_by_diagnoses

IMPORT_LOG = (
    "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
    "    from colossalai.zero import ColoInitContext\n"
    "ImportError: cannot import name 'ColoInitContext' from 'colossalai.zero' "
    "(/envs/c/lib/python3.9/site-packages/colossalai/zero/__init__.py)")


@pytest.fixture(scope="module")
def silent_engine() -> Engine:
    """An index with no calibration record: the classifier states nothing by itself."""
    return Engine(hashing_index(calibration=Calibration()), HashingEmbedder())


def test_a_measured_diagnosis_states_its_ids_where_the_classifier_states_nothing(
        silent_engine: Engine) -> None:
    triage = silent_engine.triage(Issue(repo=DS_REPO, title="example fails to start",
                                        body=f"```\n{IMPORT_LOG}\n```"))
    assert [d.id for d in triage.diagnoses] == ["import_name"]
    assert triage.diagnoses[0].values == {"package": "colossalai"}
    assert (triage.stated("stage"), triage.stated("root_cause"), triage.stated("fix_pattern")) \
        == ("S1", "R1.1", "F2")
    assert triage.stated("symptom") is None  # 1.2 agreed on 10 of 12: under the bar
    assert any("cannot import name 'ColoInitContext'" in q for q in triage.stage.evidence)


def test_a_diagnosis_without_a_measured_bar_states_nothing(silent_engine: Engine) -> None:
    body = ("```\n[ERROR] [launch.py:321:sigkill_handler] ['python', 'train.py'] exits with "
            "return code = -9\n```")
    triage = silent_engine.triage(Issue(repo=DS_REPO, title="training killed", body=body))
    assert [d.id for d in triage.diagnoses] == ["sigkill"]
    assert all(triage.stated(dim) is None for dim in ("stage", "root_cause", "fix_pattern"))


def test_a_stage_the_classifier_states_is_never_overridden() -> None:
    def pred(label_id: str, abstained: bool) -> Prediction:
        return Prediction(id=label_id, name=label_id, confidence=0.5, abstained=abstained)

    preds = {"stage": pred("S5", False), "symptom": pred("5.11", True),
             "root_cause": pred("R5.3", True), "fix_pattern": pred("F6", True),
             "distributed_specific": pred("no", True), "is_bug": pred("yes", True)}
    found = [Diagnosed(id="import_name")]
    kept = _stated_by_diagnoses(preds, {}, found, IMPORT_LOG)
    assert kept["stage"] is preds["stage"]
    assert kept["root_cause"].abstained  # R1.1 lies outside the stated S5
    assert kept["fix_pattern"].id == "F2" and not kept["fix_pattern"].abstained
    assert kept["fix_pattern"].alternatives[0][0] == "F6"


def test_every_stated_dimension_was_measured_on_enough_issues() -> None:
    """The entries that state ids are those measured >= 0.9 over >= 3 (the report script)."""
    assert {d.id for d in diagnoses.DIAGNOSES if d.states} == {
        "import_name", "port_in_use", "libaio_missing", "colossalai_moved"}
    # colossalai_moved: S1 and 1.2 on 6 of 6, its root causes varied (R1.4 2, R1.1 2), so none
    assert diagnoses.BY_ID["colossalai_moved"].states == {"stage", "symptom"}


def test_an_entry_kept_for_its_message_alone_is_shown_and_states_nothing(
        silent_engine: Engine) -> None:
    """The entries added for frequent tracker errors match no or one shared issue: the triage
    carries them (the comment shows their text) without stating a label for them."""
    body = ("```\n[rank0]: torch.distributed.DistStoreError: Timed out after 1801 seconds waiting "
            "for clients. 8/16 clients joined.\n```")
    triage = silent_engine.triage(Issue(repo=DS_REPO, title="two nodes: rank 0 times out",
                                        body=body))
    assert [d.id for d in triage.diagnoses] == ["store_wait_clients"]
    assert not diagnoses.BY_ID["store_wait_clients"].states
    assert all(triage.stated(dim) is None for dim in ("stage", "root_cause", "fix_pattern"))
