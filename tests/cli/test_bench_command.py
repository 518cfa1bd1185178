"""``triagebot bench triage`` runs end to end on a small index and prints its figures."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triagebot.cli import main as cli
from triagebot.engine.build import build_index
from triagebot.engine.dataset import read_labelled
from triagebot.engine.embed import HashingEmbedder

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "issues.jsonl"


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Path]:
    if not DATA.exists():
        pytest.skip("dev data set not present")
    lines = DATA.read_text(encoding="utf-8").splitlines()[:60]
    data = tmp_path / "issues.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index, _ = build_index(read_labelled(data)[:40], HashingEmbedder())
    index.save(tmp_path / "index")
    return tmp_path / "index", data


def test_bench_triage_json(small: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    index, data = small
    assert cli.main(["bench", "triage", "--index", str(index), "--data", str(data), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n"] == 60 and result["embedder"] == "hashing-test"
    assert 0 < result["p50_ms"] <= result["p95_ms"] <= result["p99_ms"] <= result["max_ms"]
    assert result["issues_per_s"] > 0
    assert set(result["mean_ms_by_stage"]) == {"embed", "search", "other"}


def test_bench_triage_text_and_limit(small: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    index, data = small
    assert cli.main(["bench", "triage", "--index", str(index), "--data", str(data), "--limit", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("5 issues, embedder hashing-test") and "p99" in out and "issues/s" in out


def test_bench_missing_index_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not DATA.exists():
        pytest.skip("dev data set not present")
    data = tmp_path / "i.jsonl"
    data.write_text(DATA.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert cli.main(["bench", "triage", "--index", str(tmp_path / "nope"), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("triagebot: error:") and len(err.strip().splitlines()) == 1
