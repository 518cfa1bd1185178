"""The missing-information checklist: stable keys, stage-specific, short, asks only for gaps."""
from __future__ import annotations

import support.domain as s
from triagebot.domain import missing
from triagebot.domain.environment import extract

KEYS = {"versions", "cuda", "ds_report", "traceback", "launcher_command", "hardware", "config", "repro"}


def _keys(text: str, stage: str, distributed: bool, framework: str | None = None) -> list[str]:
    items = missing.missing_info(text, extract(text), stage, distributed, framework=framework)
    return [item.key for item in items]


def test_every_key_has_a_plain_description() -> None:
    assert set(missing.DESCRIPTIONS) == KEYS
    assert all(d and "http" not in d and "@" not in d for d in missing.DESCRIPTIONS.values())


def test_vague_build_report_asks_for_versions_cuda_and_error() -> None:
    keys = _keys("pip install fails with an error", "S1", False)
    assert keys[:3] == ["versions", "cuda", "traceback"]
    assert "hardware" not in keys and "launcher_command" not in keys


def test_deepspeed_build_report_asks_for_ds_report_instead_of_versions() -> None:
    keys = _keys("pip install deepspeed fails with an error", "S1", False, framework="deepspeed")
    assert keys[0] == "ds_report" and "versions" not in keys and "cuda" not in keys


def test_ds_report_present_satisfies_versions_and_cuda() -> None:
    assert _keys(s.BUILD_FAILURE + s.DS_REPORT, "S1", False, framework="deepspeed") == []


def test_distributed_setup_failure_asks_for_launch_command_and_hardware() -> None:
    keys = _keys("Multi-node run fails, the second node cannot connect.", "S2", True)
    assert keys[:3] == ["launcher_command", "hardware", "traceback"]


def test_complete_setup_report_needs_nothing_about_launch() -> None:
    keys = _keys(s.NCCL_SETUP, "S2", True)
    assert "launcher_command" not in keys and "hardware" not in keys and "traceback" not in keys


def test_zero_config_mentioned_but_not_shown() -> None:
    text = "Training with ZeRO stage 3 and offload gives OOM at step 10\nRuntimeError: CUDA out of memory"
    assert "config" in _keys(text, "S4", True)
    shown = text + '\n```json\n{"zero_optimization": {"stage": 3}, "train_batch_size": 8}\n```'
    assert "config" not in _keys(shown, "S4", True)


def test_not_distributed_skips_launcher_and_hardware() -> None:
    keys = _keys("Training crashes with an error", "S4", False)
    assert "launcher_command" not in keys and "hardware" not in keys


def test_at_most_five_items_and_stable_for_unknown_stage() -> None:
    keys = _keys("it fails with an error", "S4", True, framework="deepspeed")
    assert len(keys) <= missing.MAX_ITEMS and set(keys) <= KEYS
    assert _keys("it fails with an error", "S9", True) == _keys("it fails with an error", "S4", True)


def test_repro_present_when_code_is_shown() -> None:
    assert "repro" not in _keys("```python\nimport deepspeed\n```", "S5", False)
    assert "repro" in _keys("inference gives wrong answers", "S5", False)
