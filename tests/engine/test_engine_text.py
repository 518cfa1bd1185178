"""Text handling on the inputs real reporters write: full templates, huge logs, other scripts."""
from __future__ import annotations

import time

import pytest

from support.engine import FINAL_ERROR, HEADINGS, TEMPLATE_HINTS, deepspeed_issue, training_log
from triagebot.text import signal as text


@pytest.fixture(scope="module")
def report() -> tuple[str, str, str]:
    title, body = deepspeed_issue()
    return title, body, text.signal_text(title, body)


def test_template_issue_keeps_title_first(report) -> None:
    title, _, signal = report
    assert signal.splitlines()[0] == title


def test_template_issue_keeps_the_final_exception_line(report) -> None:
    _, _, signal = report
    assert FINAL_ERROR in signal


def test_final_exception_comes_before_earlier_errors(report) -> None:
    _, _, signal = report
    assert signal.index(FINAL_ERROR) < signal.index("illegal memory access")


def test_template_headings_and_html_hints_dropped(report) -> None:
    _, _, signal = report
    for heading in HEADINGS:
        assert heading.strip("*:") not in signal, heading
    for hint in TEMPLATE_HINTS:
        assert hint not in signal
    assert "<!--" not in signal and "-->" not in signal


def test_reporters_prose_survives_the_template(report) -> None:
    _, _, signal = report
    assert "crashes after ~3000 steps in the backward pass" in signal


def test_signal_within_budget(report) -> None:
    _, body, signal = report
    assert len(body) > 300_000
    assert len(signal) <= text.SIGNAL_CHARS


def test_eight_ranks_same_error_kept_once(report) -> None:
    _, _, signal = report
    assert signal.count("illegal memory access") == 1


def test_error_lines_dedupes_ranks_and_skips_frames() -> None:
    lines = text.error_lines(training_log(50))
    assert sum("illegal memory access" in line for line in lines) == 1
    assert not any(line.startswith('File "') for line in lines)
    assert lines[-1] == FINAL_ERROR


def test_error_lines_prefers_the_end_of_the_log() -> None:
    log = "\n".join(f"RuntimeError: failure number {'x' * i}" for i in range(30))
    lines = text.error_lines(log, limit=3)
    assert lines == [f"RuntimeError: failure number {'x' * i}" for i in (27, 28, 29)]


def test_five_megabytes_is_fast_and_bounded() -> None:
    title, body = deepspeed_issue(log_lines=40_000)
    assert len(body) > 5_000_000
    start = time.perf_counter()
    signal = text.signal_text(title, body)
    elapsed = time.perf_counter() - start
    # a hang guard against catastrophic regex backtracking, not a speed measurement (that is
    # bench/'s job): linear work here takes well under a second on a quiet machine
    assert elapsed < 30.0, f"signal_text took {elapsed:.2f}s on {len(body)} chars"
    assert FINAL_ERROR in signal and len(signal) <= text.SIGNAL_CHARS


def test_clean_keeps_head_and_tail_of_overlong_text() -> None:
    title, body = deepspeed_issue(log_lines=20_000)
    cleaned = text.clean(body)
    assert len(cleaned) <= text.FULL_TEXT_CHARS + 10
    assert "crashes after ~3000 steps" in cleaned and FINAL_ERROR in cleaned


def test_overlong_title_still_within_budget() -> None:
    signal = text.signal_text("NCCL timeout " * 400, "RuntimeError: boom\n" * 10)
    assert len(signal) <= text.SIGNAL_CHARS


def test_chinese_body_kept_and_fullwidth_folded() -> None:
    body = (
        "训练时出现 ＮＣＣＬ 超时错误，两台机器各8张卡。\n<!-- 请描述问题 -->\n"
        "```\nRuntimeError: NCCL communicator was aborted on rank 3. 超时\n```\n"
    )
    signal = text.signal_text("多机训练 NCCL 超时", body)
    assert signal.startswith("多机训练 NCCL 超时")
    assert "训练时出现 NCCL 超时错误" in signal  # NFKC folds full-width Latin letters
    assert "RuntimeError: NCCL communicator was aborted on rank 3" in signal
    assert "请描述问题" not in signal


def test_emoji_survive_and_emoji_template_heading_dropped() -> None:
    body = "### 🐛 Describe the bug\n\nZeRO-3 hangs 🔥 at step 10\n"
    signal = text.signal_text("Hang with ZeRO-3 🚀", body)
    assert signal.startswith("Hang with ZeRO-3 🚀")
    assert "ZeRO-3 hangs 🔥 at step 10" in signal
    assert "Describe the bug" not in signal


@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u202a",
                                  "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067",
                                  "\u2068", "\u2069", "\ufeff", "\u00ad"])
def test_invisible_and_bidi_characters_removed(char: str) -> None:
    signal = text.signal_text(f"NC{char}CL timeout", f"Runtime{char}Error: NCCL{char} timed out")
    assert char not in signal
    assert "NCCL timeout" in signal and "RuntimeError: NCCL timed out" in signal


def test_ansi_and_control_characters_removed() -> None:
    cleaned = text.normalize("\x1b[31mERROR\x1b[0m oom\x00\x07\r\nnext")
    assert cleaned == "ERROR oom\nnext"


def test_markdown_images_urls_and_tags_removed() -> None:
    body = (
        "![screenshot](https://user-images.githubusercontent.com/1/2.png) "
        "see https://github.com/microsoft/DeepSpeed/issues/1234 and "
        '<img width="600" src="https://example.com/a.png"> '
        "<details><summary>log</summary>RuntimeError: CUDA out of memory</details>"
    )
    signal = text.signal_text("OOM", body)
    assert "http" not in signal and "screenshot" not in signal
    assert "<" not in signal and ">" not in signal
    assert "RuntimeError: CUDA out of memory" in signal


def test_signal_never_repeats_a_prose_line_as_an_error_line() -> None:
    body = "I get an NCCL timeout error after one hour on two nodes."
    signal = text.signal_text("NCCL timeout", body)
    assert signal.count("NCCL timeout error after one hour") == 1


def test_unclosed_fence_and_comment_do_not_break() -> None:
    signal = text.signal_text("t", "prose here\n```\nValueError: bad config\n<!-- unclosed")
    assert "ValueError: bad config" in signal and "prose here" in signal


def test_empty_inputs() -> None:
    assert text.signal_text("", "") == ""
    assert text.signal_text("only a title", "") == "only a title"


def test_names_picks_apis_config_keys_and_flags() -> None:
    found = text.names(
        "deepspeed.init_inference with offload_optimizer and --num_gpus 8: "
        "torch.cuda.OutOfMemoryError, again offload_optimizer"
    )
    assert found == ["deepspeed.init_inference", "offload_optimizer", "--num_gpus",
                     "torch.cuda.OutOfMemoryError"]
    assert len(text.names(" ".join(f"key_{i}" for i in range(50)))) == 12


def test_deterministic() -> None:
    title, body = deepspeed_issue(200)
    assert text.signal_text(title, body) == text.signal_text(title, body)
