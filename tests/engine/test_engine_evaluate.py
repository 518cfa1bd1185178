"""Evaluation figures computed by hand on tiny examples; cross-validation never leaks; data files
fail with file:line."""
from __future__ import annotations

import json

import pytest

from support.engine import DATA, hashing_index, records
from triagebot.engine import crossfit, evaluate
from triagebot.engine.dataset import DataError, read_labelled
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.triage import Engine

# (truth, predicted, abstained)
PAIRS = [("a", "a", False), ("a", "b", False), ("b", "b", True), ("b", "b", False)]


def test_score_by_hand() -> None:
    got = evaluate.score(PAIRS)
    # accuracy: the abstained (b, b) counts as wrong -> 2/4
    # coverage 3/4; covered accuracy 2/3
    # macro-F1 over truth labels: a: tp1 fp0 fn1 -> 2/3; b: tp1 fp1 fn1 (the abstention) -> 1/2
    # kappa on best guesses (a,a)(a,b)(b,b)(b,b): po=3/4, pe=(2*1+2*3)/16=1/2 -> 1/2
    assert got == {"n": 4, "accuracy": 0.5, "forced_accuracy": 0.75, "macro_f1": round((2 / 3 + 1 / 2) / 2, 4),
                   "kappa": 0.5, "coverage": 0.75, "covered_accuracy": 0.6667}


def test_score_all_abstained_is_all_wrong() -> None:
    got = evaluate.score([("a", "a", True), ("b", "b", True)])
    assert got["accuracy"] == 0.0 and got["coverage"] == 0.0 and got["covered_accuracy"] == 0.0
    assert got["macro_f1"] == 0.0
    assert got["kappa"] == 1.0  # the best guesses themselves agree perfectly


def test_score_perfect_and_empty() -> None:
    perfect = evaluate.score([("a", "a", False), ("b", "b", False)])
    assert perfect == {"n": 2, "accuracy": 1.0, "forced_accuracy": 1.0, "macro_f1": 1.0, "kappa": 1.0, "coverage": 1.0,
                       "covered_accuracy": 1.0}
    assert evaluate.score([])["n"] == 0


def test_kappa_of_a_constant_guess_is_zero() -> None:
    got = evaluate.score([("a", "a", False), ("b", "a", False), ("c", "a", False), ("a", "a", False)])
    assert got["accuracy"] == 0.5 and got["kappa"] == 0.0


def test_kappa_when_everything_is_one_class() -> None:
    assert evaluate.score([("a", "a", False)] * 3)["kappa"] == 0.0  # expected agreement 1: undefined


def test_truth_skips_unknown_labels() -> None:
    question = next(r for r in records() if r.number == 120)
    assert evaluate.truth(question, "symptom") is None
    assert evaluate.truth(question, "stage") == "S4"
    assert evaluate.truth(question, "distributed_specific") == "no"
    request = next(r for r in records() if r.number == 307)
    assert evaluate.truth(request, "distributed_specific") is None


def test_folds_partition_the_records() -> None:
    folds = crossfit.folds(32, 5)
    assert sorted(i for fold in folds for i in fold) == list(range(32))
    assert max(map(len, folds)) - min(map(len, folds)) <= 1
    assert folds == crossfit.folds(32, 5)  # seeded


def test_cross_validation_never_trains_or_retrieves_a_test_issue(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen: list[tuple[str, int]] = []
    original = evaluate.predict

    def checked(record, analysed, index, classifier, hits, **kwargs):  # type: ignore[no-untyped-def]
        assert index.row_of(record.key) is None, f"{record.key} is in its own fold's index"
        fitted_on = {item.key for item in index.items}
        assert record.key not in fitted_on
        seen.append(record.key)
        result = original(record, analysed, index, classifier, hits, **kwargs)
        assert record.key not in {(s.repo, s.number) for s in result.similar}
        return result

    monkeypatch.setattr(evaluate, "predict", checked)
    recs = records()
    result = evaluate.cross_validate(recs, HashingEmbedder(), k=3)
    assert sorted(seen) == sorted(r.key for r in recs)  # every issue tested exactly once
    assert result["n"] == len(recs)
    assert set(result["baselines"]) == {"stage", "symptom", "root_cause", "fix_pattern"}


def test_cross_validation_does_not_memorise() -> None:
    """Each label is announced by a token only its own issue carries: a leaking CV would score 1.0."""
    recs = []
    for i, record in enumerate(records()):
        stage = "S1" if i % 2 else "S4"
        body = f"token{i}x unique marker zq{i}zq"
        recs.append(record.model_copy(update={"number": 1000 + i, "title": f"report {i}", "body": body,
                                              "labels": record.labels.model_copy(update={
                                                  "stage": stage, "symptom": "unknown", "root_cause": "unknown"})}))
    result = evaluate.cross_validate(recs, HashingEmbedder(), k=4)
    assert result["stage"]["accuracy"] < 0.9


def test_report_shape_and_hit_at_5() -> None:
    engine = Engine(hashing_index(), HashingEmbedder())
    recs = records()[:6]
    result = evaluate.evaluate_on_index(engine, recs)
    assert set(result) == {"n", *evaluate.EVAL_DIMENSIONS, "retrieval", "predictions", "stated"}
    assert result["n"] == 6
    for dim in evaluate.EVAL_DIMENSIONS:
        assert set(result[dim]) == {"n", "accuracy", "forced_accuracy", "macro_f1", "kappa", "coverage",
                                    "covered_accuracy"}
        assert 0.0 <= result[dim]["accuracy"] <= result[dim]["coverage"] + 1e-9 or result[dim]["n"] == 0
    assert 0.0 <= result["retrieval"]["hit_at_5"] <= 1.0


# -- data files ------------------------------------------------------------------------------------

def _write(tmp_path, lines: list[str]):  # type: ignore[no-untyped-def]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_fixture_reads_back() -> None:
    recs = read_labelled(DATA)
    assert len(recs) == 32 and len({r.key for r in recs}) == 32


def test_not_json_line_names_file_and_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = DATA.read_text().splitlines()[:2]
    path = _write(tmp_path, [*good, "{this is not json"])
    with pytest.raises(DataError, match=rf"^{path}:3: not JSON"):
        read_labelled(path)


def test_bad_label_names_file_line_and_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    record = json.loads(DATA.read_text().splitlines()[0])
    record["labels"]["stage"] = "S9"
    path = _write(tmp_path, ["", json.dumps(record)])
    with pytest.raises(DataError, match=rf"^{path}:2: labels.stage: .*S9"):
        read_labelled(path)


def test_missing_field_names_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path, [json.dumps({"repo": "a/b", "title": "t", "labels": {"stage": "S1"}})])
    with pytest.raises(DataError, match=rf"^{path}:1: number: "):
        read_labelled(path)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xff\xfe\x00garbage"])
def test_empty_or_undecodable_file(tmp_path, content: bytes) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "data.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataError, match=str(path)):
        read_labelled(path)


def test_missing_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DataError, match="cannot read"):
        read_labelled(tmp_path / "nope.jsonl")


def test_closed_issue_with_a_resolution_counts_as_completed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    record = json.loads(DATA.read_text().splitlines()[0])
    del record["close_reason"]
    path = _write(tmp_path, [json.dumps(record)])
    assert read_labelled(path)[0].close_reason == "completed"
