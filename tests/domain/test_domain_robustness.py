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


# Texts aimed at the diagnoses' signatures that scan within a line or try several starts around a
# word (``diagnoses.Signature``): Windows paths without the package's folder, repeated words with
# nothing after them, a store's timeout message cut short. Each must stay linear.
DIAGNOSIS_HOSTILE = [
    "C:\\" * 40_000 + "\\colossalai\\x",
    "D:\\" + "a\\" * 50_000 + "colossalai\\x colossalai",
    ("export " * 15_000) + "\ncolossalai",
    "transformer_engine" * 5_000,
    "() got an unexpected keyword argument " * 2_500 + "colossalai",
    "connect [127." * 8_000,
    "Timed out after 1 seconds waiting for clients. " * 2_000,
    "Timed out after 1 seconds waiting for clients.\n   " * 2_000,
    "SO_ERROR: Connection refused, remote=[127." * 3_000,
    "CUDA driver error: system not yet initiali" * 3_000,
    "SignalException: Process " * 4_000 + " death signal" * 4_000,
    "cannot import name " * 5_000 + "no module named " * 5_000,
    "device-side assert " * 5_000,
    "undefined symbol: __nvJitLink" * 3_000,
]


@pytest.mark.parametrize("text", DIAGNOSIS_HOSTILE, ids=range(len(DIAGNOSIS_HOSTILE)))
def test_the_diagnoses_stay_fast_on_text_aimed_at_their_signatures(text: str) -> None:
    from triagebot.domain import diagnoses

    start = time.perf_counter()
    diagnoses.find(full_text("It fails", text))
    diagnoses.find(text)
    assert time.perf_counter() - start < 10.0  # hang guard (backtracking), not a benchmark


# The hang read from the text with no symptom stated, where it stops, and questions and feature
# requests: 100 KB of the units those patterns start from.
HANG_AND_QUESTION_UNITS = ["hang ", "a_a_", "?", "stuck ", "stuck at `", "I'm stuck trying ", "freezes the ",
                           "timeout ", "time out ", "when the ", "hangs in the ", "the hang ", "no longer ",
                           "doesn't hang ", "fixes the hang ", "got me past the ", "with my fix:",
                           "Watchdog caught collective operation timeout ", "Connection refused ",
                           "how should ", "how do ", "would be nice ", "could a ", "is there any ",
                           "does it work with ", "I'd like to ask ", "any plans to ", "planned ", "  ", "\n"]


@pytest.mark.parametrize("unit", HANG_AND_QUESTION_UNITS)
def test_hang_and_question_readings_are_fast_on_hostile_input(unit: str) -> None:
    from triagebot.domain import symptom_requests
    text = unit * (100_000 // len(unit))
    for pattern in (symptom_requests._HANG, symptom_requests._PERSON_AFTER, symptom_requests._COLLECTIVE_TIMEOUT,
                    symptom_requests._HANG_GONE, symptom_requests._NOTHING_TO_STACK,
                    symptom_requests._PLACE_IN_RUN, missing._FEATURE_ASK, missing._QUESTION_BODY,
                    missing._DIAGNOSED, missing._ZERO_STAGE):
        start = time.perf_counter()
        pattern.findall(text)
        assert time.perf_counter() - start < 0.5, (pattern.pattern[:40], unit)
    report = full_text("Training hangs on 8 GPUs", text)  # as the engine reads it (blank runs collapsed)
    start = time.perf_counter()
    symptom_requests.hang_gone(report)
    symptom_requests._says_where_it_stops(report)
    missing.asks_for_a_feature(report)
    missing.howto_question(report)
    assert time.perf_counter() - start < 1.0, unit
    start = time.perf_counter()
    missing.missing_info(report, extract(report), None, True, framework="deepspeed")
    assert time.perf_counter() - start < 10.0  # hang guard (backtracking), not a benchmark


# Inputs that made single patterns backtrack for seconds to minutes: a run of tags before "request
# to", a title of tags before a question, 100 KB of newlines at line starts, "stuck" with no
# sentence end before it. Each must stay well under a second.
@pytest.mark.parametrize("pattern_name, text", [
    ("_FEATURE_ASK", "[a]   " * 15),
    ("_FEATURE_ASK", "[a]   " * 5_000),
    ("_HOWTO_TITLE", "[a]   " * 64),
    ("_QUESTION_TITLE", "[a]   " * 64),
    ("_NOT_A_BUG_TAG", "[a]   " * 64),
    ("_TRACE", "\n" * 100_000),
])
def test_tag_runs_and_blank_lines_do_not_backtrack(pattern_name: str, text: str) -> None:
    pattern = getattr(missing, pattern_name)
    start = time.perf_counter()
    pattern.search(text)
    assert time.perf_counter() - start < 0.5, pattern_name


def test_a_long_text_of_stuck_without_a_full_stop_is_read_fast() -> None:
    from triagebot.domain import symptom_requests
    text = "I got stuck " * 8_333
    start = time.perf_counter()
    symptom_requests.hangs(text)
    symptom_requests.hang_gone(text)
    missing.asks_for_a_feature(text)
    missing.howto_question(text)
    assert time.perf_counter() - start < 0.5
