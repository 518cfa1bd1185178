"""The second-stage confidence (``engine.confidence``): what it reads, what it learns, and that
an index without it (or fitted on another feature list) keeps the plain probability."""
from __future__ import annotations

import numpy as np

from support.engine import hashing_index
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.engine import confidence, crossfit
from triagebot.engine.calibration import Calibration
from triagebot.engine.classify import Choice


def _item(stage: str) -> IndexedIssue:
    return IndexedIssue(repo="o/r", number=1, url="https://github.com/o/r/issues/1", title="t",
                        labels=Labels(stage=stage, symptom="unknown", root_cause="unknown"))


def test_features_read_agreement_of_both_models_the_margin_and_the_neighbours() -> None:
    row = confidence.features("S4", 0.7, {"S4": 0.7, "S2": 0.2}, {"S4": 0.6, "S2": 0.4},
                              {"S2": 0.55, "S4": 0.45}, [("S4", 0.9), ("S2", 0.8), (None, 0.5)])
    assert dict(zip(confidence.FEATURES, row)) == {
        "probability": 0.7, "p_embedding": 0.6, "p_words": 0.45, "embedding_agrees": 1.0,
        "words_agrees": 0.0, "margin": 0.7 - 0.2, "neighbours_agree": 1 / 3,
        "neighbours_agree_weighted": 0.9 / 2.2}


def test_only_the_nearest_few_neighbours_count() -> None:
    far = [("S2", 0.9)] * confidence.NEIGHBOURS + [("S4", 0.9)] * 10
    row = confidence.features("S4", 0.5, {"S4": 0.5}, {}, {}, far)
    assert row[confidence.FEATURES.index("neighbours_agree")] == 0.0


def test_a_head_learns_that_agreeing_neighbours_mean_a_right_choice() -> None:
    rng = np.random.default_rng(0)
    pairs = []
    for _ in range(400):
        agree = float(rng.random())
        right = bool(rng.random() < agree)
        pairs.append(([0.6, 0.6, 0.5, 1.0, 1.0, 0.3, agree, agree], right))
    model = confidence.fit({"stage": pairs})
    sure = model.score("stage", [0.6, 0.6, 0.5, 1.0, 1.0, 0.3, 1.0, 1.0])
    doubtful = model.score("stage", [0.6, 0.6, 0.5, 1.0, 1.0, 0.3, 0.0, 0.0])
    assert sure > 0.8 > 0.2 > doubtful
    assert "symptom" not in model.heads  # symptom keeps its probability (no gain measured)


def test_without_a_head_or_with_another_feature_list_the_probability_stays() -> None:
    row = [0.42, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    assert confidence.ConfidenceModel().score("stage", row) == 0.42
    old = confidence.ConfidenceModel(heads={"stage": confidence.Head(weights=[1.0, 2.0], bias=0.0)})
    assert old.score("stage", row) == 0.42
    assert confidence.fit({"stage": [(row, True)] * 5}).heads == {}  # too little to learn from


def test_rescoring_changes_only_the_confidence_of_dimensions_with_a_head() -> None:
    choices = {"stage": Choice("S4", 0.5, [("S2", 0.3)]), "symptom": Choice("4.2", 0.4, [])}
    model = confidence.ConfidenceModel(heads={"stage": confidence.Head(weights=[0.0] * 8, bias=2.0)})
    rows = confidence.rows_of(choices, {"stage": {"S4": 0.5}}, {}, {}, [(_item("S4"), 0.9)])
    out = confidence.rescored(choices, rows, model)
    assert out["stage"].id == "S4" and out["stage"].alternatives == [("S2", 0.3)]
    assert abs(out["stage"].confidence - 1 / (1 + np.exp(-2.0))) < 1e-9
    assert out["symptom"] == choices["symptom"]


def test_the_calibration_record_carries_the_heads_and_reads_its_thresholds_on_their_score() -> None:
    index = hashing_index()
    record = crossfit.out_of_fold(index.items, index.vectors, index.features, index.embedder_name, k=4)
    calibration = record.calibration(index.items, range(len(index.items)))
    again = Calibration.model_validate_json(calibration.model_dump_json())
    assert again.confidence == calibration.confidence
    scored = [record.choices(index.items, pos, calibration.confidence)["stage"].confidence
              for pos in range(len(index.items))]
    assert sorted(calibration.outcomes["stage"].confidence, reverse=True) == sorted(
        (round(c, 5) for c in scored), reverse=True)
