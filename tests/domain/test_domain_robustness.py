"""Nothing in the domain modules raises or crawls on hostile or odd input."""
from __future__ import annotations

import time

import pytest

import support.domain as s
from triagebot.domain import missing, rules, taxonomy
from triagebot.domain.environment import extract
from triagebot.text.signal import full_text

CHINESE = "使用 DeepSpeed ZeRO-3 训练时显存不足，报错 CUDA out of memory，请问如何解决？torch 2.1，8 张 A100"
HOSTILE = [
    "",
    " ",
    "\x00\x01\xff\ufffd" * 2000,
    bytes(range(256)).decode("latin-1") * 400,
    CHINESE,
    CHINESE * 3000,
    "a" * 100_000,
    "1." * 50_000,
    "Training is slow. " + "1." * 50_000,  # a speed report's numbers, read from every digit
    "torch " + "9." * 50_000,
    "cuda " * 20_000,
    "(" * 100_000,
    "Traceback (most recent call last)\n" * 3000,
    "|   0  NVIDIA " * 8000,
    "deepspeed --" * 8000,
    (s.DS_REPORT + s.COLLECT_ENV + s.NCCL_TRAINING) * 40,
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_nothing_raises_and_everything_is_fast(text: str) -> None:
    start = time.perf_counter()
    env = extract(text)
    vector = rules.features(text, env)
    labels = rules.classify(text, env)
    rules.distributed(text, env)
    for dimension in taxonomy.DIMENSIONS:
        rules.evidence(text, dimension, labels[dimension])
    missing.missing_info(text, env, labels["stage"], True, framework="deepspeed")
    assert time.perf_counter() - start < 30.0  # hang guard (backtracking), not a benchmark
    assert vector.shape == (len(rules.FEATURE_NAMES),)


def test_non_string_input_is_tolerated() -> None:
    assert extract(None).model_dump(exclude_none=True) == {}  # type: ignore[arg-type]
    assert missing.missing_info(None, extract(""), "S1", False)  # type: ignore[arg-type]


def test_chinese_report_still_yields_facts() -> None:
    env = extract(CHINESE)
    assert (env.framework, env.torch, env.gpu_model) == ("deepspeed", "2.1", "A100")
    assert rules.classify(CHINESE, env)["symptom"] in ("4.2", "3.4")


def test_hundred_kilobyte_issue_through_full_text() -> None:
    body = s.OOM_TRAINING + "\n```\n" + ("[rank3]: step 12 loss 2.31\n" * 4000) + "```\n" + s.DS_REPORT
    text = full_text("OOM with ZeRO-3", body)
    start = time.perf_counter()
    env = extract(text)
    labels = rules.classify(text, env)
    assert time.perf_counter() - start < 20.0  # hang guard (backtracking), not a benchmark
    assert env.framework_version == "0.10.0" and labels["stage"] == "S4"


# Whitespace the template patterns once tried every way: blank lines (cubic: 400 took 7 s),
# spaces after a heading, deep indentation.
BLANK = ["\n" * 100_000, "\n \n " * 25_000, "describe the bug" + " " * 5000 + "x\n" * 20,
         (" \n" + " " * 3000 + "x") * 30, "\n# " * 30_000, "\n* [ ] " * 15_000]


@pytest.mark.parametrize("body", BLANK, ids=range(len(BLANK)))
def test_runs_of_whitespace_are_cleaned_fast(body: str) -> None:
    start = time.perf_counter()
    text = full_text("Training is slow", "It hangs.\n" + body)
    missing.missing_info(text, extract(text), "S4", True, framework="deepspeed")
    assert time.perf_counter() - start < 30.0  # hang guard (backtracking), not a benchmark
