"""Threshold selection from out-of-fold outcomes, on synthetic records with known answers, and
the link relevance score."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from support.engine import hashing_index, records
from triagebot.domain.models import IndexedIssue, Labels
from triagebot.engine import crossfit, relevance
from triagebot.engine.calibration import DEFAULT_TARGETS, MIN_STATED, NEVER, Calibration, Outcomes, threshold


def test_threshold_is_the_lowest_confidence_whose_tail_reaches_the_target() -> None:
    # 20 right at 0.9, then 10 at 0.6 of which 5 right, then 10 wrong at 0.3
    conf = [0.9] * 20 + [0.6] * 10 + [0.3] * 10
    right = [True] * 20 + [True, False] * 5 + [False] * 10
    # tails: >= 0.9 -> 20/20; >= 0.6 -> 25/30 = 0.833; >= 0.3 -> 25/40 = 0.625
    assert threshold(conf, right, 0.9) == 0.9
    assert threshold(conf, right, 0.8) == 0.6
    assert threshold(conf, right, 0.95) == 0.9
    assert threshold(conf, right, 0.5) == 0.3


def test_threshold_by_hand_small_cases() -> None:
    conf = [0.9] * 20 + [0.6] * 10
    right = [True] * 20 + [True, False] * 5
    assert threshold(conf, right, 0.84) == pytest.approx(0.9)  # 25/30 = 0.833 < 0.84
    assert threshold(conf, right, 0.83) == pytest.approx(0.6)
    assert threshold(conf, right, 0.85) == pytest.approx(0.9)


def test_ties_are_never_split() -> None:
    conf = [0.5] * 40
    right = [True] * 30 + [False] * 10  # 0.75 overall; no prefix of a tie may be taken
    assert threshold(conf, right, 0.8) == NEVER
    assert threshold(conf, right, 0.75) == 0.5


def test_a_small_tail_must_clear_its_target_by_a_standard_error() -> None:
    conf = [0.9] * 20 + [0.1] * 20
    right = [True] * 19 + [False] + [False] * 20  # 0.95 over 20 guesses: SE 0.049
    assert threshold(conf, right, 0.9) == 0.9
    assert threshold(conf, right, 0.92, z=1.0) == NEVER
    assert threshold(conf * 10, right * 10, 0.92, z=1.0) == 0.9  # 190/200: SE 0.015


def test_too_few_right_guesses_never_open_the_gate() -> None:
    conf = [0.99] * (MIN_STATED - 1) + [0.1] * 50
    right = [True] * (MIN_STATED - 1) + [False] * 50
    assert threshold(conf, right, 0.9) == NEVER


def test_selected_precision_is_met_on_a_synthetic_calibrated_model() -> None:
    """Confidences that are true probabilities: the chosen tail is right ~target of the time on
    fresh draws from the same model."""
    rng = random.Random(7)
    def draw(n: int) -> list[tuple[float, bool]]:
        out = []
        for _ in range(n):
            p = rng.random()
            out.append((p, rng.random() < p))
        return out
    record = Outcomes.of(draw(4000))
    t = record.threshold(0.9, margin=0.0)
    fresh = [ok for p, ok in draw(20000) if p >= t]
    assert 0.86 <= sum(fresh) / len(fresh) <= 0.97
    assert 0.75 < t < 0.9  # the tail [t, 1] of a uniform calibrated score averages (1 + t) / 2


def test_calibration_without_a_record_states_nothing() -> None:
    empty = Calibration()
    assert empty.threshold("stage") == NEVER
    assert all(math.isinf(t) for t in empty.thresholds().values())


def test_targets_can_be_overridden_per_repository() -> None:
    conf = [0.9] * 400 + [0.5] * 400
    right = [True] * 400 + [True] * 240 + [False] * 160  # tail at 0.5: 640/800 = 0.8
    calibration = Calibration(outcomes={"stage": Outcomes.of(list(zip(conf, right)))})
    assert calibration.threshold("stage", 0.75) == 0.5
    assert calibration.threshold("stage", 0.9) == 0.9
    assert calibration.thresholds({"stage": 0.75})["stage"] == 0.5


def test_precision_coverage_reads_the_record() -> None:
    record = Outcomes.of([(0.9, True)] * 3 + [(0.2, False)])
    assert record.precision_coverage(0.5) == (1.0, 0.75)
    assert math.isnan(record.precision_coverage(0.95)[0])


def test_relevance_score_learns_that_agreement_matters() -> None:
    rng = np.random.default_rng(0)
    rows = rng.random((600, len(relevance.FEATURES)))
    relevant = rows[:, relevance.FEATURES.index("p_symptom")] > 0.6
    model = relevance.fit(rows, relevant)
    scores = model.score(rows)
    assert scores[relevant].mean() > scores[~relevant].mean() + 0.3
    assert relevance.fit(rows[:0], relevant[:0]).score(rows[:2]).tolist() == [0.5, 0.5]


def test_relevance_score_learns_a_conjunction_a_plain_sum_cannot() -> None:
    """Same problem when the neighbour is close *and* its symptom believed, or neither (an
    exclusive-or pattern): only the pairwise products separate it."""
    rng = np.random.default_rng(1)
    rows = rng.random((800, len(relevance.FEATURES)))
    cosine, believed = (rows[:, relevance.FEATURES.index(n)] > 0.5 for n in ("cosine", "p_symptom"))
    relevant = cosine == believed
    paired = relevance.fit(rows, relevant).score(rows)
    plain = relevance.fit(rows, relevant, pairwise=False).score(rows)
    assert ((paired > 0.5) == relevant).mean() > 0.9
    assert ((plain > 0.5) == relevant).mean() < 0.7


def test_pairwise_inputs_are_the_standardised_row_and_its_products() -> None:
    x = np.array([[1.0, 2.0, 3.0]])
    assert relevance.with_products(x).tolist() == [[1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0]]
    model = relevance.RelevanceModel(weights=[0.0] * 9, mean=[1.0, 1.0, 1.0], scale=[1.0, 1.0, 2.0],
                                     pairwise=True)
    assert model.inputs(x).tolist() == [[0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0]]


def test_a_relevance_record_of_an_older_index_still_scores_its_plain_weights() -> None:
    """Records saved before the pairwise score (weights over ``FEATURES``, no scaling) load and
    score as they did."""
    old = relevance.RelevanceModel.model_validate(
        {"weights": [1.0] + [0.0] * (len(relevance.FEATURES) - 1), "bias": 0.0})
    assert old.score(np.zeros((1, len(relevance.FEATURES)))).tolist() == [0.5]


def test_the_link_record_is_scored_by_relevance_fitted_without_the_issue(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The link thresholds come from scores of a model that saw neither the issue's own
    candidates nor any pair with the issue as the candidate: the same pairs scored in sample
    would look surer than they are."""
    index = hashing_index()
    record = crossfit.out_of_fold(index.items, index.vectors, index.features, index.embedder_name, k=4)
    positions = list(range(len(index.items)))
    trained: list[tuple[list[int], frozenset[int]]] = []
    seen_by = record.relevance_training

    def spy(items, used, unseen=frozenset()):  # type: ignore[no-untyped-def]
        trained.append((list(used), frozenset(unseen)))
        return seen_by(items, used, unseen)

    monkeypatch.setattr(record, "relevance_training", spy)
    calibration = record.calibration(index.items, positions)
    groups = [set(positions[g::crossfit.FOLDS]) for g in range(crossfit.FOLDS)]
    assert len(trained) == 1 + crossfit.FOLDS
    for group, (used, unseen) in zip(groups, trained[1:]):  # the first fit is the shipped score
        assert not group & set(used) and unseen == group
    monkeypatch.undo()
    in_sample: list[tuple[float, bool]] = []
    grouped = [p for g in range(crossfit.FOLDS) for p in positions[g::crossfit.FOLDS]]
    record.link_pairs(index.items, grouped, calibration.relevance, in_sample, [])
    assert len(in_sample) == len(calibration.outcomes["link"].confidence)
    recorded = calibration.outcomes["link"].confidence
    assert sorted(round(s, 5) for s, _ in in_sample) != sorted(recorded)


def test_out_of_fold_record_never_uses_an_issue_to_predict_itself() -> None:
    index = hashing_index()
    record = crossfit.out_of_fold(index.items, index.vectors, index.features, index.embedder_name, k=4)
    for pos, candidates in enumerate(record.candidates):
        assert all(record.fold_of[c] != record.fold_of[pos] for c, _ in candidates)
    for number, model in enumerate(record.models):
        assert all(record.fold_of[row] != number for row in model.rows)
    calibration = record.calibration(index.items, range(len(index.items)))
    assert set(calibration.outcomes) >= {"stage", "symptom", "link", "fix_link"}
    assert len(calibration.outcomes["stage"].confidence) == len(records())
    # links offered as fixes are a subset of the links: resolved ones whose fix fits the report
    fixes, links = calibration.outcomes["fix_link"], calibration.outcomes["link"]
    assert 0 < len(fixes.confidence) <= len(links.confidence)


def test_same_problem_needs_the_symptom_and_a_compatible_root_cause() -> None:
    from triagebot.domain.models import Labels

    def labels(symptom: str, cause: str) -> Labels:
        stage = "S4" if symptom == "unknown" else f"S{symptom[0]}"
        return Labels(stage=stage, symptom=symptom, root_cause=cause)

    assert relevance.same_problem(labels("4.2", "R4.1"), labels("4.2", "R4.1"))
    assert relevance.same_problem(labels("4.2", "R4.1"), labels("4.2", "unknown"))
    assert not relevance.same_problem(labels("4.2", "R4.1"), labels("4.2", "R4.3"))
    assert not relevance.same_problem(labels("4.2", "R4.1"), labels("4.1", "R4.1"))
    assert not relevance.same_problem(labels("unknown", "unknown"), labels("unknown", "unknown"))


def test_title_overlap_counts_distinctive_words_only() -> None:
    a = relevance.title_words("ZeRO-3 hangs in allgather_fn with offload_param")
    b = relevance.title_words("Training hangs at allgather_fn when offload_param is on")
    assert {"allgather_fn", "offload_param", "hangs"} <= a & b
    assert "training" not in b and "when" not in b
    assert 0 < relevance.overlap(a, b) < 1
    assert relevance.overlap(a, frozenset()) == 0.0


def test_candidate_rows_carry_root_cause_belief_framework_and_title_overlap() -> None:
    from triagebot.domain.models import IndexedIssue, Labels

    items = [IndexedIssue(repo="deepspeedai/DeepSpeed", number=1, title="allgather_fn hangs",
                          labels=Labels(stage="S4", symptom="4.1", root_cause="R4.2")),
             IndexedIssue(repo="NVIDIA/Megatron-LM", number=2, title="loss is nan",
                          labels=Labels(stage="S4", symptom="4.3", root_cause="R4.1"))]
    dists = {"symptom": {"4.1": 0.7}, "stage": {"S4": 0.9}, "root_cause": {"R4.2": 0.4}}
    rows = relevance.candidate_features([(0, 0.8), (1, 0.6)], items, "microsoft/Megatron-DeepSpeed",
                                        dists, np.zeros(3), np.zeros((2, 3)), "hang in allgather_fn")
    col = {name: i for i, name in enumerate(relevance.FEATURES)}
    assert rows.shape == (2, len(relevance.FEATURES))
    assert rows[0, col["p_root_cause"]] == 0.4 and rows[1, col["p_root_cause"]] == 0.0
    assert rows[0, col["same_framework"]] == 1.0 and rows[1, col["same_framework"]] == 0.0
    assert rows[0, col["title_overlap"]] > 0 and rows[1, col["title_overlap"]] == 0


def test_a_relevance_record_from_another_feature_list_links_nothing() -> None:
    old = relevance.RelevanceModel(weights=[1.0] * 8, bias=0.0)
    scores = old.score(np.ones((3, len(relevance.FEATURES))))
    assert scores.tolist() == [0.0, 0.0, 0.0]


def test_a_neighbour_is_not_linked_when_what_the_model_is_sure_of_contradicts_it() -> None:
    from triagebot.domain.models import IndexedIssue, Labels

    def item(title: str, cause: str, repo: str = "horovod/horovod") -> IndexedIssue:
        return IndexedIssue(repo=repo, number=1, title=title, resolution="unresolved",
                            labels=Labels(stage="S4", symptom="4.11", root_cause=cause))

    sure_nccl = {"root_cause": {"R4.7": 0.9, "R4.1": 0.01}}
    assert relevance.linkable("horovod/horovod", item("Hang after hours with NCCL", "R4.7"), sure_nccl)
    assert not relevance.linkable("horovod/horovod", item("TensorBoard callback hangs", "R4.1"), sure_nccl)
    unsure = {"root_cause": {"R4.7": 0.5, "R4.1": 0.01}}
    assert relevance.linkable("horovod/horovod", item("TensorBoard callback hangs", "R4.1"), unsure)
    assert not relevance.linkable("horovod/horovod", item("[BUG]", "R4.7"), sure_nccl)
    # another tracker's thread without a known fix is never offered (an unknown framework is
    # another tracker); the same framework's, a fork's or a renamed repository's may be
    assert not relevance.linkable("horovod/horovod", item("Hang after hours", "R4.7", "hpcaitech/ColossalAI"))
    assert not relevance.linkable("huggingface/accelerate", item("Hang after hours", "R4.7",
                                                                 "deepspeedai/DeepSpeed"))
    assert relevance.linkable("microsoft/DeepSpeed", item("Hang after hours", "R4.7", "deepspeedai/DeepSpeed"))
    # ...and an organisation's other repositories' (Accelerate's under a Transformers report)
    assert relevance.linkable("huggingface/transformers", item("Hang after hours", "R4.7",
                                                               "huggingface/accelerate"))
    assert relevance.linkable("", item("Hang after hours", "R4.7", "hpcaitech/ColossalAI"))  # no repo known


def test_a_fix_about_things_the_report_never_mentions_is_not_offered() -> None:
    tensorboard = IndexedIssue(repo="horovod/horovod", number=297, labels=Labels(stage="S4"),
                               resolution="Dropping the histogram options from the "
                               "`TensorBoard` callback let training run.")
    assert relevance.fix_names(tensorboard.resolution) == {"tensorboard"}
    assert not relevance.fix_fits(tensorboard, "NCCL allreduce hangs after 3 hours, GPUs at 100%")
    assert relevance.fix_fits(tensorboard, "hangs with the TensorBoard callback on rank 0")
    assert relevance.fix_fits(tensorboard, "")  # no text, no check


def test_a_fix_that_names_nothing_specific_or_no_fix_at_all_is_not_held_back() -> None:
    plain = IndexedIssue(repo="o/r", number=1, labels=Labels(stage="S4"),
                         resolution="Upgrading to the latest release fixed it.")
    unresolved = IndexedIssue(repo="o/r", number=2, labels=Labels(stage="S4"),
                              resolution="unresolved")
    assert relevance.fix_fits(plain, "anything at all")
    assert relevance.fix_fits(unresolved, "anything at all")


def test_an_index_without_a_fix_link_record_gates_fixes_like_links() -> None:
    links = Outcomes.of([(0.9, True)] * 30 + [(0.3, False)] * 30)
    record = Calibration(outcomes={"link": links})
    assert record.threshold("fix_link") == record.threshold("link", DEFAULT_TARGETS["fix_link"])
    assert record.threshold("fix_link") == 0.9
    own = Calibration(outcomes={"link": links, "fix_link": Outcomes.of([(0.5, False)] * 20)})
    assert own.threshold("fix_link") == NEVER


def test_links_shown_to_the_reporter_ask_the_link_record_for_a_higher_precision() -> None:
    """``reporter_link`` has no record of its own: the links' record at its higher target."""
    links = Outcomes.of([(0.9, True)] * 40 + [(0.7, True)] * 30 + [(0.7, False)] * 20
                        + [(0.3, False)] * 30)
    record = Calibration(outcomes={"link": links})
    assert DEFAULT_TARGETS["reporter_link"] > DEFAULT_TARGETS["link"]
    assert record.threshold("reporter_link") == record.threshold("link", DEFAULT_TARGETS["reporter_link"])
    assert record.threshold("link") == 0.7 and record.threshold("reporter_link") == 0.9


def test_candidate_rows_carry_the_joint_belief_the_top_symptom_and_the_neighbours_vote() -> None:
    """Same problem is symptom *and* root cause: the row carries their joint probability, whether
    the candidate's symptom is the classifier's first choice, and how many of the nearest issues
    share it (an outlier among its neighbours is rarely the same problem)."""
    from triagebot.domain.models import IndexedIssue, Labels

    def item(number: int, symptom: str, cause: str) -> IndexedIssue:
        return IndexedIssue(repo="deepspeedai/DeepSpeed", number=number, title=f"issue {number}",
                            labels=Labels(stage="S4", symptom=symptom, root_cause=cause))

    items = [item(1, "4.1", "R4.2"), item(2, "4.1", "R4.1"), item(3, "4.3", "R4.1")]
    dists = {"symptom": {"4.1": 0.6, "4.3": 0.3}, "root_cause": {"R4.2": 0.5, "R4.1": 0.2}}
    rows = relevance.candidate_features([(0, 0.9), (1, 0.8), (2, 0.7)], items,
                                        "deepspeedai/DeepSpeed", dists, np.zeros(3),
                                        np.zeros((3, 3)))
    col = {name: i for i, name in enumerate(relevance.FEATURES)}
    assert rows[:, col["p_symptom_and_cause"]].tolist() == pytest.approx([0.3, 0.12, 0.06])
    assert rows[:, col["top_symptom"]].tolist() == [1.0, 1.0, 0.0]
    assert rows[:, col["neighbours_sharing_symptom"]].tolist() == pytest.approx(
        [2 / relevance.VOTERS, 2 / relevance.VOTERS, 1 / relevance.VOTERS])


def test_reports_read_as_questions_are_left_out_of_the_symptom_record() -> None:
    """A symptom or root cause is never stated on a report read as "not a bug", so those reports
    do not lower (or raise) the threshold it is stated at elsewhere; the stage keeps them."""
    from triagebot.domain.models import IndexedIssue, Labels

    def item(number: int) -> IndexedIssue:
        return IndexedIssue(repo="o/r", number=number, title=f"issue {number}",
                            labels=Labels(stage="S4", symptom="4.2", root_cause="R4.1"))

    def dists(bug: str) -> dict[str, dict[str, float]]:
        return {"stage": {"S4": 0.9}, "symptom": {"4.2": 0.8}, "root_cause": {"R4.1": 0.7},
                "is_bug": {bug: 0.9}}

    items = [item(1), item(2)]
    record = crossfit.OutOfFold(fold_of=[0, 1], dists=[dists("no"), dists("yes")],
                                candidates=[[], []], candidate_rows=[np.zeros((0, 1))] * 2)
    outcomes = record.outcomes(items, [0, 1])
    assert len(outcomes["stage"].confidence) == 2
    assert len(outcomes["symptom"].confidence) == 1 and len(outcomes["root_cause"].confidence) == 1

