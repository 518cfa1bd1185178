"""bench/llm_eval.py end to end on a small labelled set: held-out fold, the local fake LLM, real
faiss and the engine's own calibration. It proves the recipe runs and that the LLM only withholds."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from support.engine import DATA
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.evaluate import EVAL_DIMENSIONS

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def llm_eval():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location("llm_eval_bench", BENCH / "llm_eval.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fold_set(tmp_path_factory) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """96 labelled issues (the fixture three times, renumbered: enough to calibrate) in 3 folds, and
    per-fold vectors as scripts/train_encoder.py writes them."""
    folder = tmp_path_factory.mktemp("folds")
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    copies = [{**row, "number": row["number"] + 10_000 * c} for c in (1, 2) for row in rows]
    data = folder / "issues.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows + copies))
    n = len(rows) * 3
    (folder / "folds.json").write_text(json.dumps([list(range(k, n, 3)) for k in range(3)]))
    from triagebot.engine.analysis import analyse_many
    from triagebot.engine.dataset import read_labelled

    vectors = np.stack([a.vector for a in analyse_many(read_labelled(data), HashingEmbedder())])
    for k in range(3):
        np.save(folder / f"vectors_fold{k}.npy", vectors)
    return data, folder


def test_llm_path_on_held_out_fold_only_withholds_statements(llm_eval, fold_set) -> None:  # type: ignore[no-untyped-def]
    data, folder = fold_set
    from triagebot.engine.dataset import read_labelled

    records = read_labelled(data)
    engine, test, source = llm_eval.held_out_index(records, folder)
    held = set(json.loads((folder / "folds.json").read_text())[0])
    assert {(r.repo, r.number) for r in test} == {(records[i].repo, records[i].number) for i in held}
    assert len(engine.index) == len(records) - len(held)  # built without the held-out fold
    assert engine.index.calibration.outcomes  # calibrated from the other folds
    assert "vectors_fold0" in source

    result = llm_eval.measure(engine, test, "", "fake-model")

    assert result["stats"]["calls"] == len(test) and not result["stats"]["fallbacks"]
    assert any(result["offline"]["stated"][dim]["stated"] for dim in EVAL_DIMENSIONS)  # not vacuous
    for before, after in zip(result["offline"]["predictions"], result["llm"]["predictions"]):
        for dim in EVAL_DIMENSIONS:  # the LLM may withhold a statement, never add or change one
            assert after["stated"][dim] in (None, before["stated"][dim])
    text = llm_eval.format_result(result)
    for dim in llm_eval.DIMS:
        assert dim in text
    assert "calls" in text and "added by the LLM path" in text


def test_fold_vectors_that_do_not_fit_are_one_clear_error(llm_eval, fold_set, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    data, _ = fold_set
    (tmp_path / "folds.json").write_text(json.dumps([[0, 1], [2]]))

    assert llm_eval.main(["--data", str(data), "--fold-vectors", str(tmp_path)]) == 2

    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: --fold-vectors:") and "partition" in err[-1]


def test_real_server_needs_a_model(llm_eval, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as exit_info:
        llm_eval.main(["--base-url", "http://127.0.0.1:9/v1"])
    assert exit_info.value.code == 2
    assert "--base-url needs --model" in capsys.readouterr().err
