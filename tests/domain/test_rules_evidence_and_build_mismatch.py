"""Review fixes in the rules: evidence lines that explain, and a CUDA mismatch while building
leaning to S1 / 1.1 / R1.1 / F2."""
from __future__ import annotations

import pytest

from triagebot.domain import environment, rules
from triagebot.text.signal import full_text

NCCL = """NCCL watchdog timeout in allreduce with ZeRO-3 on 2 nodes
Training runs for a few hundred steps, then every rank dies.
```
[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE) ran for 1800236 milliseconds before timing out.
RuntimeError: NCCL communicator was aborted on rank 3. Original reason for failure was: [Rank 3] Watchdog caught collective operation timeout
```
**System info**
- deepspeed 0.12.3, torch 2.1.0+cu121, CUDA 12.1, NCCL 2.18.1
- Python 3.10, Ubuntu 22.04
"""  # noqa: E501 - log lines kept verbatim, as users paste them
# A build failure surrounded by words of model loading, datasets and configs (S3 signals).
BUILD = """[BUG] fused_adam fails to build
I call deepspeed.initialize with my ds_config.json and the model loaded with from_pretrained,
training on my own dataset with a custom tokenizer.
```
engine, opt, _, _ = deepspeed.initialize(model=model, config="ds_config.json")
RuntimeError: Error building extension 'fused_adam'
```
System info
- deepspeed 0.12.6, torch 2.1.0+cu118, nvcc 12.1, Python 3.10
"""


def _text_env(raw: str):
    title, _, body = raw.partition("\n")
    text = full_text(title, body)
    return text, environment.extract(text)


@pytest.mark.parametrize("line", [
    "- deepspeed 0.12.3, torch 2.1.0+cu121, CUDA 12.1, NCCL 2.18.1",
    "Python 3.10, Ubuntu 22.04",
    "torch version .................... 2.1.0+cu118",
    "* transformers==4.35.2; accelerate: 0.24.1",
])
def test_version_lists_are_recognised(line):
    assert rules.version_list(line)


@pytest.mark.parametrize("line", [
    "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.18.1",
    "Training 13B with ZeRO-3 on 2 nodes",
    "",
])
def test_other_lines_are_not_version_lists(line):
    assert not rules.version_list(line)


def test_symptom_evidence_is_the_error_not_the_versions_line():
    text, _ = _text_env(NCCL)
    for dimension, label in (("stage", "S2"), ("symptom", "2.2"), ("symptom", "4.7")):
        quotes = rules.evidence(text, dimension, label, limit=3)
        assert quotes and not any(rules.version_list(q) for q in quotes), quotes
    assert any("Watchdog caught collective operation timeout" in q
               for q in rules.evidence(text, "symptom", "2.2"))


def test_versions_line_may_support_a_version_label():
    text = "Install fails\nversion mismatch between the wheel and torch\n- deepspeed 0.12.3, torch 2.1.0"
    quotes = rules.evidence(text, "root_cause", "R1.1", limit=3)
    assert "version mismatch between the wheel and torch" in quotes


def test_mismatch_is_a_fact_not_a_quote():
    text, _ = _text_env(BUILD)
    fact = "PyTorch was built with CUDA 11.8, but nvcc reports CUDA 12.1"
    for dimension, label in (("stage", "S1"), ("root_cause", "R1.1"), ("fix_pattern", "F2")):
        assert rules.facts(text, dimension, label) == [fact]
        assert fact not in rules.evidence(text, dimension, label, limit=3)
    assert rules.facts(text, "stage", "S3") == []


def test_cuda_mismatch_while_building_is_s1():
    text, env = _text_env(BUILD)
    assert env.cuda_mismatch() and rules.decisive(text, env)
    assert rules.classify(text, env) == {
        "stage": "S1", "symptom": "1.1", "root_cause": "R1.1", "fix_pattern": "F2"}


def test_a_minor_cuda_mismatch_while_building_is_not_decisive():
    text, env = _text_env(BUILD.replace("nvcc 12.1", "nvcc 11.7"))
    assert (env.cuda_torch, env.cuda_nvcc) == ("11.8", "11.7")
    assert env.cuda_mismatch() and not rules.decisive(text, env)


def test_cuda_mismatch_without_build_context_is_not_decisive():
    text, env = _text_env(NCCL.replace("CUDA 12.1, NCCL", "nvcc 11.8, NCCL"))
    assert env.cuda_mismatch() and not rules.decisive(text, env)
    assert rules.classify(text, env)["stage"] == "S2"


def test_ds_report_alone_is_no_build_context():
    text, env = _text_env("NCCL timeout at step 300\nfused_adam ....... [NO] ....... [OKAY]\n"
                          "torch cuda version ............... 11.8\nnvcc version ..................... 12.1\n"
                          "RuntimeError: NCCL communicator was aborted")
    assert env.cuda_mismatch() and not rules.decisive(text, env)
