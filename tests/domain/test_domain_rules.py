"""Rules on representative error lines: features, baseline labels, evidence, distributed guess."""
from __future__ import annotations

import numpy as np
import pytest

import support.domain as s
from triagebot.domain import rules, taxonomy
from triagebot.domain.environment import extract
from triagebot.domain.models import Environment


def _classify(text: str) -> dict[str, str]:
    return rules.classify(text, extract(text))


def test_feature_vector_shape_range_and_names() -> None:
    assert 60 <= len(rules.FEATURE_NAMES) <= 150
    assert len(set(rules.FEATURE_NAMES)) == len(rules.FEATURE_NAMES)
    for name in ("env:cuda_mismatch", "ctx:has_traceback", "env:launcher_present", "env:multi_node",
                 "env:multi_gpu", "ctx:inference_context", "ctx:training_context", "ctx:build_context"):
        assert name in rules.FEATURE_NAMES
    vector = rules.features(s.DS_REPORT + s.NCCL_TRAINING, extract(s.DS_REPORT))
    assert vector.dtype == np.float32 and vector.shape == (len(rules.FEATURE_NAMES),)
    assert float(vector.min()) >= 0.0 and float(vector.max()) <= 1.0
    assert vector[rules.FEATURE_NAMES.index("env:cuda_mismatch")] == 1.0


def test_features_are_deterministic() -> None:
    env = extract(s.OOM_TRAINING)
    assert np.array_equal(rules.features(s.OOM_TRAINING, env), rules.features(s.OOM_TRAINING, env))


@pytest.mark.parametrize(
    ("text", "stage", "symptom"),
    [
        ("pip install deepspeed fails\nerror: command 'gcc' failed with exit status 1", "S1", "1.1"),
        ("Building fused_adam with ninja fails: CUDA_HOME does not exist, unable to compile", "S1", "1.1"),
        ("import colossalai fails\nModuleNotFoundError: No module named 'colossalai._C'", "S1", "1.2"),
        ("ImportError: cannot import name 'get_accelerator' from 'deepspeed.accelerator'", "S1", "1.2"),
        (s.BUILD_FAILURE, "S1", "1.1"),
        (s.NCCL_SETUP, "S2", "2.2"),
        ("torchrun on 2 nodes: init_process_group never returns, MASTER_ADDR and MASTER_PORT set",
         "S2", "2.1"),
        (s.NCCL_TRAINING, "S4", "4.7"),
        (s.OOM_TRAINING, "S4", "4.2"),
        (s.OOM_INFERENCE, "S5", "5.2"),
        ("Training is stuck at iteration 0, all ranks hang and GPU util is 100%", "S4", "4.11"),
        ("zero_to_fp32.py fails: load_checkpoint cannot find the optim_states files", "S4", "4.10"),
        ("Training throughput with ZeRO-3 is only 40 TFLOPs, much slower than DDP", "S4", "4.1"),
        ("fp16 training: loss scale keeps dropping, Attempted loss scale: 1, reducing to 1, nan loss",
         "S4", "4.1"),
        ("During training: AttributeError: 'DeepSpeedEngine' object has no attribute 'foo'", "S4", "4.3"),
        ("init_inference with kernel_inject produces garbage output, different from huggingface",
         "S5", "5.3"),
    ],
)
def test_baseline_on_representative_errors(text: str, stage: str, symptom: str) -> None:
    labels = _classify(text)
    assert (labels["stage"], labels["symptom"]) == (stage, symptom)


def test_cuda_mismatch_points_to_versions() -> None:
    labels = _classify(s.BUILD_FAILURE)
    assert labels["root_cause"] in ("R1.1", "R1.2") and labels["fix_pattern"] == "F2"
    env = Environment(cuda_torch="11.7", cuda_nvcc="12.1")
    assert rules.classify("nvcc build of the op failed", env)["root_cause"] == "R1.1"


@pytest.mark.parametrize("text", ["", "hello", "深度学习", s.PIP_LIST, s.NVIDIA_SMI, s.DS_REPORT])
def test_baseline_is_always_valid_and_consistent(text: str) -> None:
    labels = _classify(text)
    assert set(labels) == set(taxonomy.DIMENSIONS)
    for dimension, value in labels.items():
        assert taxonomy.is_valid(dimension, value) or value in taxonomy.STAGES
    assert taxonomy.consistent(labels["stage"], labels["symptom"], labels["root_cause"])


def test_empty_text_gives_unknown_cause_and_fix() -> None:
    labels = _classify("")
    assert labels["root_cause"] == labels["fix_pattern"] == taxonomy.UNKNOWN


def test_evidence_quotes_the_error_line() -> None:
    snippets = rules.evidence(s.OOM_TRAINING, "symptom", "4.2")
    assert any("CUDA out of memory" in line for line in snippets)
    assert 1 <= len(snippets) <= 2 and all(len(line) <= 160 for line in snippets)


def test_evidence_names_the_cuda_mismatch() -> None:
    facts = rules.facts(s.DS_REPORT, "root_cause", "R1.1")
    assert facts == ["PyTorch was built with CUDA 11.7, but nvcc reports CUDA 12.1"]
    assert facts[0] not in rules.evidence(s.DS_REPORT, "root_cause", "R1.1", limit=3)


def test_evidence_truncates_long_lines_and_handles_foreign_ids() -> None:
    text = "RuntimeError: NCCL error " + "x" * 1000
    (line,) = rules.evidence(text, "symptom", "2.2", limit=1)
    assert len(line) == 160 and line.endswith("…")
    assert rules.evidence(text, "symptom", "9.9") == []
    assert rules.evidence(text, "symptom", "unknown") == []
    assert rules.evidence(text, "symptom", "2.2", limit=0) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (s.NCCL_SETUP, True),
        (s.NCCL_TRAINING, True),
        ("ZeRO-3 with offload_param to nvme gives wrong gradients on 8 GPUs", True),
        ("ModuleNotFoundError: No module named 'einops'", False),
        ("The tokenizer vocab file is missing from the example folder", False),
    ],
)
def test_distributed_guess(text: str, expected: bool) -> None:
    assert rules.distributed(text, extract(text)) is expected


def test_baseline_script_reports_accuracy_per_dimension(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    import importlib.util
    import json
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "rules_baseline.py"
    spec = importlib.util.spec_from_file_location("rules_baseline", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    row = {"title": "pip install deepspeed fails", "body": "error: command 'gcc' failed",
           "labels": {"stage": "S1", "symptom": "1.1", "root_cause": "unknown", "fix_pattern": "F2",
                      "distributed_specific": False}}
    data = tmp_path / "issues.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    module.main(data)
    out = capsys.readouterr().out
    assert "stage" in out and "100.0%" in out and "root_cause" in out and "(n=0)" in out
