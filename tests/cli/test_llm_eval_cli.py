"""`triagebot eval --llm` goes through the configured OpenAI-compatible server (here the local
fake over real HTTP) and reports the same figures plus tokens and latency, as one JSON object."""
from __future__ import annotations

import json

from support.engine import DATA, write_index
from support.llm_fake import FakeLLM
from triagebot.cli import main as cli


def test_eval_with_llm_reports_figures_tokens_and_latency(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    index = write_index(tmp_path / "idx")
    with FakeLLM() as fake:
        monkeypatch.setenv("TRIAGEBOT_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("TRIAGEBOT_LLM_MODEL", "fake-model")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        assert cli.main(["eval", "--index", str(index), "--data", str(DATA), "--llm", "--json"]) == 0
        assert fake.requests, "the LLM server was never called"
    result = json.loads(capsys.readouterr().out)
    assert {"n", "stage", "symptom", "root_cause", "fix_pattern", "retrieval"} <= set(result)
    llm = result["llm"]
    assert llm["calls"] == result["n"] and llm["tokens_in"] > 0 and llm["latency_p50_ms"] > 0


def test_eval_llm_without_configuration_is_one_clear_error(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    for var in ("TRIAGEBOT_LLM_BASE_URL", "TRIAGEBOT_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    index = write_index(tmp_path / "idx")
    assert cli.main(["eval", "--index", str(index), "--data", str(DATA), "--llm"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("triagebot: error: --llm needs")
