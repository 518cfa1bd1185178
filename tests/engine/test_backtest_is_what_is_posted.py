"""The backtest (``eval --predictions``) describes exactly the comment the service would post:
what it states is ``not abstained`` for every dimension of an engine's triage (one definition,
``Triage.stated``), ``posted`` is the service's ``worth_posting`` and ``comment_chars`` the length
of the rendered comment (#11). Fast: hashing embedder, the 32 fixture issues."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.engine import DATA, hashing_index, permissive_calibration, records
from triagebot.cli import main as cli
from triagebot.comment import render as comment
from triagebot.comment import sections
from triagebot.domain import missing
from triagebot.domain.models import Issue, Triage
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.triage import Engine, stated_as_offline

DIMS = ("stage", "symptom", "root_cause", "fix_pattern", "distributed_specific", "is_bug")
STRICT = 0.9  # under the fixture's calibration about half of the issues state nothing


@pytest.fixture(scope="module", params=[0.3, 0.6, STRICT])
def triages(request: pytest.FixtureRequest) -> list[Triage]:
    engine = Engine(hashing_index(calibration=permissive_calibration(request.param)), HashingEmbedder())
    return [engine.triage(r) for r in records()]


def test_stated_is_not_abstained_for_every_dimension_of_an_engine_triage(triages: list[Triage]) -> None:
    for triage in triages:
        for dim in DIMS:
            assert (triage.stated(dim) is not None) == (not triage.prediction(dim).abstained), (dim, triage)


def test_the_comment_names_exactly_what_is_stated(triages: list[Triage]) -> None:
    for triage in triages:
        for dim in ("stage", "symptom", "root_cause", "fix_pattern"):
            assert sections.choice(triage, dim) == triage.stated(dim)


def test_the_llm_path_never_states_a_symptom_without_its_stage() -> None:
    engine = Engine(hashing_index(calibration=permissive_calibration(0.2)), HashingEmbedder())
    offline = engine.triage(Issue(title="NCCL timeout", body="Watchdog caught collective operation timeout"))
    assert not offline.stage.abstained and not offline.symptom.abstained
    unsure_stage = offline.model_copy(update={"stage": offline.stage.model_copy(update={"abstained": True})})
    kept = stated_as_offline(offline, unsure_stage)
    assert kept.stage.abstained and kept.symptom.abstained and kept.root_cause.abstained
    assert all(kept.stated(d) is None for d in ("stage", "symptom", "root_cause"))


def test_a_cuda_mismatch_build_states_its_stage_even_under_a_strict_threshold() -> None:
    engine = Engine(hashing_index(calibration=permissive_calibration(STRICT)), HashingEmbedder())
    body = ("RuntimeError: Error building extension 'fused_adam'\n"
            "torch 2.1.0+cu118, torch.version.cuda 11.8\n"
            "nvcc --version: Cuda compilation tools, release 12.1, V12.1.105\n")
    result = engine.triage(Issue(title="fused_adam fails to build", body=body))
    assert result.stage.id == "S1" and result.stage.confidence < STRICT
    assert result.stated("stage") == "S1"
    assert result.symptom.confidence < STRICT and result.stated("symptom") is None


def test_eval_predictions_hold_what_the_service_would_post(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    index = hashing_index(calibration=permissive_calibration(STRICT))
    index.save(tmp_path / "index")
    out_file = tmp_path / "pred.jsonl"
    code = cli.main(["eval", "--data", str(DATA), "--index", str(tmp_path / "index"),
                     "--predictions", str(out_file), "--json"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["stated"]["posted"]["share"] < 1.0
    rows = [json.loads(line) for line in out_file.read_text().splitlines()]
    engine = Engine.load(tmp_path / "index")
    allowed = frozenset(engine.repos())
    posted = set()
    for record, row in zip(records(), rows):
        triage = engine.triage(record)
        assert row["posted"] == comment.worth_posting(triage, "useful")
        assert row["labelled"] == comment.worth_labelling(triage, "useful")  # what the job labels
        assert row["comment_chars"] == (len(comment.render(triage, allowed_repos=allowed)) if row["posted"] else 0)
        assert row["stated"] == {dim: triage.stated(dim) for dim in DIMS}
        assert row["missing"] == [m.key for m in missing.asked_in_comment(triage)]
        assert row["missing"] == [m.key for m in sections.asked_missing(triage)]
        posted.add(row["posted"])
    assert posted == {True, False}  # the fixture exercises both sides of the decision
