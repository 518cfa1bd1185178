"""One validated settings object: ``Settings.from_env`` is the only reader of the environment, the
LLM's part is nested in it, every variable it reads is documented in .env.example, and a bad value
of any of them is one line from any command."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from triagebot import settings as settings_module
from triagebot.cli import main as cli
from triagebot.settings import ENV_VARS, LLM_ENV_VARS, ConfigError, LLMConfigError, Settings

ROOT = Path(__file__).resolve().parents[1]


def test_only_settings_reads_the_environment() -> None:
    """``os.environ``/``getenv`` appear in settings.py only (model_files sets the Hugging Face
    libraries' own variables, which triagebot never reads)."""
    readers = {str(p.relative_to(ROOT)) for p in (ROOT / "triagebot").rglob("*.py")
               if re.search(r"os\.environ|getenv\(", p.read_text(encoding="utf-8"))}
    assert readers == {"triagebot/settings.py", "triagebot/engine/model_files.py"}
    code = (ROOT / "triagebot/engine/model_files.py").read_text(encoding="utf-8")
    assert re.findall(r"os\.environ\.(\w+)", code) == ["setdefault"]


def test_llm_settings_are_a_nested_part() -> None:
    env = {"TRIAGEBOT_LLM_BASE_URL": "http://127.0.0.1:9/v1", "TRIAGEBOT_LLM_MODEL": "m",
           "TRIAGEBOT_LLM_TIMEOUT": "5", "OPENAI_API_KEY": "sk-nested-0123456789",
           "TRIAGEBOT_PROMPTS_DIR": "/srv/prompts"}
    s = Settings.from_env(env)
    assert s.llm is not None and (s.llm.model, s.llm.timeout, s.llm.prompts_dir) == ("m", 5.0, "/srv/prompts")
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == env["OPENAI_API_KEY"]
    assert s.openai_api_key.get_secret_value() == env["OPENAI_API_KEY"]  # scanned in comments too
    assert "sk-nested" not in repr(s) and Settings.from_env({}).llm is None


def test_engine_and_logging_variables_are_settings() -> None:
    s = Settings.from_env({"TRIAGEBOT_EMBEDDER": "torch", "TRIAGEBOT_CACHE": "/tmp/c",
                           "TRIAGEBOT_LOG_LEVEL": "debug"})
    assert (s.embedder, s.cache_dir, s.log_level) == ("torch", Path("/tmp/c"), "DEBUG")
    with pytest.raises(ConfigError, match="TRIAGEBOT_LOG_LEVEL"):
        Settings.from_env({"TRIAGEBOT_LOG_LEVEL": "loud"})
    with pytest.raises(LLMConfigError, match="TRIAGEBOT_LLM_TIMEOUT"):
        Settings.from_env({"TRIAGEBOT_LLM_MODEL": "m", "TRIAGEBOT_LLM_TIMEOUT": "soon"})


def test_env_example_documents_the_llm_part_too() -> None:
    text = (ROOT / ".env.example").read_text(encoding="utf-8")
    for var in [*ENV_VARS, *LLM_ENV_VARS.values()]:
        assert re.search(rf"^#?\s*{var}=", text, re.M), var


def test_current_is_what_the_entry_point_put_in_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_EMBEDDER", "onnx")
    assert settings_module.current().embedder == "onnx"  # no entry point: the environment now
    with settings_module.in_effect(Settings.from_env({"TRIAGEBOT_EMBEDDER": "torch"})):
        monkeypatch.setenv("TRIAGEBOT_EMBEDDER", "onnx-int8")
        assert settings_module.current().embedder == "torch"  # read once, not again
    assert settings_module.current().embedder == "onnx-int8"


@pytest.mark.parametrize(("var", "value"), [
    ("TRIAGEBOT_LOG_LEVEL", "loud"), ("TRIAGEBOT_MAX_BODY_BYTES", "lots"),
    ("TRIAGEBOT_LLM_TIMEOUT", "soon"),
])
def test_a_bad_setting_is_one_line_from_any_command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                    var: str, value: str) -> None:
    monkeypatch.setenv("TRIAGEBOT_LLM_MODEL", "m")
    monkeypatch.setenv(var, value)
    assert cli.main(["index", "info"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"triagebot: error: {var}")
