"""``triagebot model prepare`` does the ONNX export at set-up time, and an export says so in one
log line (it used to take ~10 s of the first triage in silence); the second run finds it done."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from triagebot.cli import main as cli


@pytest.mark.integration
def test_model_prepare_exports_once_and_says_so(tmp_path: Path, monkeypatch, caplog, capsys) -> None:
    monkeypatch.setenv("TRIAGEBOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TRIAGEBOT_EMBEDDER", raising=False)
    with caplog.at_level(logging.WARNING, logger="triagebot.engine.embed_onnx"):
        assert cli.main(["model", "prepare", "--backend", "onnx-int8"]) == 0
    [export] = [r.getMessage() for r in caplog.records if "exporting" in r.getMessage()]
    assert export.startswith("exporting all-MiniLM-L6-v2 to ONNX in ") and "about 10 s" in export
    assert list((tmp_path / "cache" / "onnx").glob("*/model.int8.onnx"))
    assert capsys.readouterr().out.startswith("model ready: all-MiniLM-L6-v2+onnx-int8 (384 dims)")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="triagebot.engine.embed_onnx"):
        assert cli.main(["model", "prepare"]) == 0
    assert not [r for r in caplog.records if "exporting" in r.getMessage()]
