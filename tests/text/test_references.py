"""The issues a report names itself (``text.references.cited``) and why they are never linked
back: the reporter has read them ("I went through #889 and #2268, but they didn't help")."""
from __future__ import annotations

import time

import pytest

from triagebot.text.references import cited, names

DS = "deepspeedai/DeepSpeed"


def test_a_bare_number_is_the_reports_own_repository() -> None:
    assert cited("This is similar to #2113, fixed in #2198.", DS) == {
        ("deepspeed", 2113), ("deepspeed", 2198)}


def test_a_link_to_a_moved_repository_names_the_same_issue() -> None:
    found = cited("I went through [#889](https://github.com/microsoft/DeepSpeed/issues/889)", DS)
    assert names(found, DS, 889)
    assert names(cited("see hpcaitech/ColossalAI#3534", DS), "hpcaitech/ColossalAI", 3534)


@pytest.mark.parametrize("text", [
    "an HTML entity &#64;user", "step#3 of the loop", "ops/op_builder.py#L12",
    "https://github.com/o/r/issues/7#issuecomment-99 is a comment", "# 1 heading",
])
def test_what_only_looks_like_a_reference_is_not_one(text: str) -> None:
    assert cited(text, DS) <= {("r", 7)}


@pytest.mark.parametrize("unit", ["/a", "/", "#1", "a#", "github.com/", "/" + "a" * 99])
def test_hostile_text_is_read_in_linear_time(unit: str) -> None:
    start = time.perf_counter()
    cited(unit * (100_000 // len(unit)), DS)
    assert time.perf_counter() - start < 1.0



@pytest.mark.parametrize("log", [
    "frame #0: c10::Error::Error\nframe #12: at::native::foo",
    "#3  0x00007f1e in __GI_raise\n#4 0x00007f1e in abort", "GPU #1 and rank #3 fail",
    "```\nsee #2113 in the log\n```",
])
def test_a_stack_frame_or_a_fenced_log_cites_no_issue(log: str) -> None:
    assert cited(log, DS) == frozenset()
