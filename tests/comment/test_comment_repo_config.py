"""Parsing .github/triagebot.yml: defaults, per-field fallbacks, never an exception."""
from __future__ import annotations

import pytest

from triagebot.domain.repo_config import RepoConfig, Thresholds, parse_repo_config


def test_defaults():
    for text in (None, "", "   \n"):
        cfg = parse_repo_config(text)
        assert cfg == RepoConfig() and cfg.errors == []
    cfg = RepoConfig()
    assert (cfg.mode, cfg.enabled, cfg.label_map, cfg.needs_review_label) == (
        "suggest", True, {}, "triage: needs-review")
    assert cfg.thresholds == Thresholds(stage=0.5, symptom=0.4, root_cause=0.35, fix_pattern=0.4,
                                        distributed_specific=0.6)


def test_full_config():
    cfg = parse_repo_config("""
mode: apply
enabled: yes
label_map:
  4.10: checkpoint
  4.1: "perf"
  S1: build
  R4.2: " interaction "
  distributed_specific: distributed
needs_review_label: needs triage
thresholds:
  symptom: 0.55
  stage: 1
allowed_repos: [hpcaitech/ColossalAI, NVIDIA/Megatron-LM]
""")
    assert cfg.errors == []
    assert cfg.mode == "apply" and cfg.enabled is True
    # 4.10 must not collapse into the float 4.1
    assert cfg.label_map == {"4.10": "checkpoint", "4.1": "perf", "S1": "build", "R4.2": "interaction",
                             "distributed_specific": "distributed"}
    assert cfg.thresholds.symptom == 0.55 and cfg.thresholds.stage == 1.0 and cfg.thresholds.root_cause == 0.35
    assert cfg.needs_review_label == "needs triage"
    assert cfg.allowed_repos == ["hpcaitech/ColossalAI", "NVIDIA/Megatron-LM"]


@pytest.mark.parametrize("text", [
    "mode: [unclosed", "label_map: {a: b", "\tmode: apply\n  x", "!!python/object/apply:os.system ['true']",
    "- just\n- a list", "42", "mode: !!binary aGVsbG8=",
])
def test_bad_yaml_gives_defaults_and_an_error(text):
    cfg = parse_repo_config(text)
    assert cfg.mode == "suggest" and cfg.label_map == {}
    assert cfg.errors


def test_bad_fields_fall_back_one_by_one():
    cfg = parse_repo_config("""
mode: yolo
enabled: false
thresholds: {symptom: 2}
colour: blue
allowed_repos: ["not a repo"]
errors: ["injected"]
label_map:
  "4.2": memory
  "9.9": nope
  S4: ""
  R4.1: [list]
""")
    assert cfg.mode == "suggest" and cfg.enabled is False
    assert cfg.thresholds == Thresholds() and cfg.allowed_repos == []
    assert cfg.label_map == {"4.2": "memory"}
    joined = "\n".join(cfg.errors)
    for word in ("mode", "thresholds", "colour", "allowed_repos", "'9.9'", "'S4'", "'R4.1'", "errors"):
        assert word in joined, word
    assert "injected" not in joined


def test_label_map_not_a_mapping():
    cfg = parse_repo_config("label_map: [a, b]\nmode: off")
    assert cfg.label_map == {} and cfg.mode == "off" and cfg.errors


def test_oversized_file_is_ignored():
    cfg = parse_repo_config("mode: apply\n" + "#" * 70_000)
    assert cfg.mode == "suggest" and cfg.errors


def test_errors_are_not_serialised():
    assert "errors" not in parse_repo_config("mode: nope").model_dump()


def test_bare_off_is_mode_off():
    assert parse_repo_config("mode: off").mode == "off"
    assert parse_repo_config("mode: on").errors
