"""Engine invariants: hierarchy, never itself, resolved first, duplicates -> original, cross-repo,
abstention under the thresholds. Fast: hashing embedder, 32 labelled fixture issues."""
from __future__ import annotations

import json

import pytest

from support.engine import DS_REPO, deepspeed_issue, hashing_index, records, write_index
from triagebot.domain import taxonomy
from triagebot.domain.models import Issue, Similar, Triage
from triagebot.engine.classify import THRESHOLDS, Classifier, blend, knn_vote, within_stage
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IndexError_
from triagebot.engine.triage import SIMILAR_SHOWN, Engine, _prediction, similar_issues

DIMS = ("stage", "symptom", "root_cause", "fix_pattern", "distributed_specific", "is_bug")
ODD_INPUTS = [
    Issue(title="", body=""),
    Issue(title="hello", body="world"),
    Issue(title="训练卡住", body="多机训练 NCCL 超时"),
    Issue(title="\u202eevil\u202c", body="\x00\x1b[31m" * 100),
    Issue(title="OOM", body="CUDA out of memory " * 5_000),
]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(hashing_index(), HashingEmbedder())


@pytest.fixture(scope="module")
def triages(engine: Engine) -> list[tuple[Issue, Triage]]:
    title, body = deepspeed_issue(300)
    inputs = [*records(), *ODD_INPUTS, Issue(repo=DS_REPO, title=title, body=body)]
    return [(issue, engine.triage(issue)) for issue in inputs]


def test_symptom_and_root_cause_always_inside_the_stage(triages) -> None:  # type: ignore[no-untyped-def]
    for _, result in triages:
        for dim in ("symptom", "root_cause"):
            value = result.prediction(dim).id
            assert value == taxonomy.UNKNOWN or taxonomy.stage_of(dim, value) == result.stage.id
            assert all(taxonomy.stage_of(dim, alt) == result.stage.id
                       for alt, _ in result.prediction(dim).alternatives)


def test_every_prediction_is_a_valid_id_with_its_name(triages) -> None:  # type: ignore[no-untyped-def]
    for _, result in triages:
        assert result.stage.id in taxonomy.STAGES
        for dim in ("symptom", "root_cause", "fix_pattern"):
            pred = result.prediction(dim)
            assert taxonomy.is_valid(dim, pred.id)
            assert pred.name == taxonomy.name(dim, pred.id)
        assert result.distributed_specific.id in ("yes", "no")
        assert result.is_bug.id in ("yes", "no")


def test_abstains_exactly_below_thresholds(triages) -> None:  # type: ignore[no-untyped-def]
    for _, result in triages:
        for dim in DIMS:
            pred = result.prediction(dim)
            assert 0.0 <= pred.confidence <= 1.0
            assert pred.abstained == (pred.confidence < THRESHOLDS[dim]), (dim, pred)


def test_symptom_confidence_never_exceeds_stage_confidence(triages) -> None:  # type: ignore[no-untyped-def]
    for _, result in triages:
        assert result.symptom.confidence <= result.stage.confidence + 1e-4
        assert result.root_cause.confidence <= result.stage.confidence + 1e-4


def test_never_returns_the_issue_itself(triages) -> None:  # type: ignore[no-untyped-def]
    for issue, result in triages:
        assert issue.key not in {(s.repo, s.number) for s in result.similar} or issue.number is None


def test_exclude_removes_more_issues(engine: Engine) -> None:
    record = records()[16]  # the ZeRO-3 OOM report
    first = engine.triage(record)
    banned = frozenset((s.repo, s.number) for s in first.similar[:2])
    second = engine.triage(record, exclude=banned)
    assert banned.isdisjoint((s.repo, s.number) for s in second.similar)
    assert record.key not in {(s.repo, s.number) for s in second.similar}


def test_resolved_neighbours_first_then_by_score(triages) -> None:  # type: ignore[no-untyped-def]
    for _, result in triages:
        shown = result.similar
        assert len(shown) <= SIMILAR_SHOWN
        assert len({(s.repo, s.number) for s in shown}) == len(shown)
        flags = [s.resolved for s in shown]
        assert flags == sorted(flags, reverse=True), flags
        for group in (True, False):
            scores = [s.score for s in shown if s.resolved is group]
            assert scores == sorted(scores, reverse=True)


def test_unresolved_issue_listed_after_resolved_even_when_closer() -> None:
    index = hashing_index()
    rows = [index.row_of((repo, n)) for repo, n in
            [("hpcaitech/ColossalAI", 205), (DS_REPO, 110), (DS_REPO, 104), (DS_REPO, 101)]]
    shown = similar_issues(index, list(zip(rows, [0.8, 0.5, 0.45, 0.4])), DS_REPO)
    assert [s.number for s in shown] == [110, 101, 205, 104]
    assert [s.resolved for s in shown] == [True, True, False, False]


def test_near_duplicate_stays_first_and_dissimilar_neighbours_are_dropped() -> None:
    index = hashing_index()
    rows = [index.row_of((repo, n)) for repo, n in
            [("hpcaitech/ColossalAI", 205), (DS_REPO, 110), (DS_REPO, 104), (DS_REPO, 101)]]
    shown = similar_issues(index, list(zip(rows, [0.99, 0.5, 0.45, 0.1])), DS_REPO)
    assert [s.number for s in shown] == [205, 110, 104]  # 101 at 0.1 is noise, not a match


def test_duplicate_neighbour_points_to_its_original() -> None:
    index = hashing_index()
    dup_key = (DS_REPO, 116)
    dup = index.items[index.row_of(dup_key)]
    index.update_labels(dup_key, dup.model_copy(update={"close_reason": "duplicate", "duplicate_of": 110}))
    engine = Engine(index, HashingEmbedder())
    record = next(r for r in records() if r.number == 116)
    result = engine.triage(Issue(repo=DS_REPO, title=record.title, body=record.body))
    numbers = [(s.repo, s.number) for s in result.similar]
    assert dup_key not in numbers
    assert numbers.count((DS_REPO, 110)) == 1
    original = result.similar[numbers.index((DS_REPO, 110))]
    assert original.resolved and "micro_batch" in original.resolution


def test_duplicate_of_a_missing_original_is_kept() -> None:
    index = hashing_index()
    dup_key = (DS_REPO, 116)
    dup = index.items[index.row_of(dup_key)]
    index.update_labels(dup_key, dup.model_copy(update={"close_reason": "duplicate", "duplicate_of": 99_999}))
    shown = similar_issues(index, [(index.row_of(dup_key), 0.9)], DS_REPO)
    assert [(s.repo, s.number) for s in shown] == [dup_key]


def test_duplicate_and_original_both_hit_are_shown_once() -> None:
    index = hashing_index()
    dup_key = (DS_REPO, 116)
    dup = index.items[index.row_of(dup_key)]
    index.update_labels(dup_key, dup.model_copy(update={"close_reason": "duplicate", "duplicate_of": 110}))
    hits = [(index.row_of(dup_key), 0.9), (index.row_of((DS_REPO, 110)), 0.8)]
    shown = similar_issues(index, hits, DS_REPO)
    assert [s.number for s in shown] == [110]
    assert shown[0].score == 0.9  # the duplicate's closeness carries over to the original


def test_cross_repo_flag(engine: Engine) -> None:
    record = next(r for r in records() if r.number == 202)  # ColossalAI NCCL error
    result = engine.triage(Issue(repo=DS_REPO, title=record.title, body=record.body))
    assert result.similar
    for s in result.similar:
        assert s.cross_repo == (s.repo != DS_REPO)
    assert any(s.cross_repo for s in result.similar)
    no_repo = engine.triage(Issue(title=record.title, body=record.body))
    assert not any(s.cross_repo for s in no_repo.similar)


def test_similar_carries_index_metadata(engine: Engine) -> None:
    result = engine.triage(Issue(title="NCCL timeout", body="Watchdog caught collective operation timeout"))
    by_key = {i.key: i for i in engine.index.items}
    for s in result.similar:
        item = by_key[(s.repo, s.number)]
        assert (s.url, s.title, s.labels, s.resolution) == (item.url, item.title, item.labels, item.resolution)
        assert -1.0 <= s.score <= 1.0001


def test_output_is_deterministic(engine: Engine) -> None:
    issue = Issue(title="fused_adam build fails", body="nvcc 12.1 but torch cu118")
    assert engine.triage(issue) == engine.triage(issue)


def test_refiner_receives_the_offline_answer(engine: Engine) -> None:
    seen: list[tuple[Triage, list[Similar]]] = []

    class Recorder:
        def refine(self, issue: Issue, offline: Triage, neighbours: list[Similar]) -> Triage:
            seen.append((offline, neighbours))
            return offline.model_copy(update={"source": "offline+llm"})

    refined = Engine(engine.index, engine.embedder, engine.classifier, refiner=Recorder())
    result = refined.triage(Issue(title="NCCL timeout", body="two nodes hang"))
    assert result.source == "offline+llm"
    assert seen[0][0].source == "offline" and seen[0][1] == seen[0][0].similar


def test_retrain_learns_a_maintainers_correction() -> None:
    index = hashing_index()
    engine = Engine(index, HashingEmbedder())
    record = next(r for r in records() if r.number == 119)
    key = record.key
    item = index.items[index.row_of(key)]
    index.update_labels(key, item.model_copy(update={"labels": item.labels.model_copy(
        update={"stage": "S1", "symptom": "1.1", "root_cause": "R1.2"})}))
    engine.retrain()
    vote = knn_vote(index, index.search(index.vectors[index.row_of(key)], k=3), "stage")
    assert vote.get("S1", 0) > 0
    assert "S1" in engine.classifier.models["stage"].classes


def test_load_from_a_directory_picks_the_recorded_embedder(tmp_path) -> None:  # type: ignore[no-untyped-def]
    engine = Engine.load(write_index(tmp_path / "idx"))
    assert isinstance(engine.embedder, HashingEmbedder)
    assert len(engine.index) == len(records())


def test_load_refuses_an_index_built_with_other_rule_features(tmp_path) -> None:  # type: ignore[no-untyped-def]
    directory = write_index(tmp_path / "idx")
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["n_features"] > 0
    manifest["features_id"] = "built-by-older-rules"
    (directory / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexError_, match="rebuild"):
        Engine.load(directory)


def test_prediction_of_nothing_is_unknown_and_abstains() -> None:
    pred = _prediction("symptom", {}, "")
    assert (pred.id, pred.confidence, pred.abstained) == (taxonomy.UNKNOWN, 0.0, True)


def test_flat_stage_distribution_abstains() -> None:
    pred = _prediction("stage", {s: 0.2 for s in taxonomy.STAGES}, "")
    assert pred.abstained and pred.id == "S1"  # ties break by id, deterministically


def test_scaled_prediction_abstains_under_an_unsure_stage() -> None:
    assert not _prediction("symptom", {"4.2": 0.9, "4.3": 0.1}, "").abstained
    assert _prediction("symptom", {"4.2": 0.9, "4.3": 0.1}, "", scale=0.2).abstained


def test_blend_by_hand() -> None:
    mixed = blend({"a": 0.8, "b": 0.2}, {"b": 1.0}, weight=0.35)
    assert mixed == pytest.approx({"a": 0.52, "b": 0.48})
    assert blend({"a": 1.0}, {}) == {"a": 1.0}


def test_within_stage_renormalises_and_drops_other_stages() -> None:
    dist = {"4.2": 0.3, "4.3": 0.1, "2.2": 0.6}
    assert within_stage(dist, "symptom", "S4") == pytest.approx({"4.2": 0.75, "4.3": 0.25})
    assert within_stage(dist, "symptom", "S5") == {}


def test_non_bugs_vote_on_stage_but_not_on_symptom() -> None:
    index = hashing_index()
    question = index.row_of(("microsoft/DeepSpeed", 120))
    assert knn_vote(index, [(question, 0.9)], "stage") == {"S4": 1.0}
    assert knn_vote(index, [(question, 0.9)], "symptom") == {}
    assert knn_vote(index, [(question, 0.9)], "is_bug") == {"no": 1.0}


def test_classifier_never_trains_on_unknown_labels() -> None:
    classifier = Classifier.fit(hashing_index())
    for dim in ("symptom", "root_cause", "fix_pattern"):
        assert taxonomy.UNKNOWN not in classifier.models[dim].classes


def test_tiny_index_with_one_class_still_triages() -> None:
    recs = [r for r in records() if r.labels.stage == "S2"][:2]
    engine = Engine(hashing_index(recs), HashingEmbedder())
    result = engine.triage(Issue(title="NCCL timeout", body="init hangs"))
    assert result.stage.id == "S2"
    assert taxonomy.consistent(result.stage.id, result.symptom.id, result.root_cause.id)
