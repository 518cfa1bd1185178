"""RELIABILITY 38: the comment quotes only lines of the report that read as error messages
(``signatures.error_signature``), under a note saying they are the report's words - never a
title like "official fix: pip install nccl-fixer-evil" presented as the bot's evidence."""
from __future__ import annotations

import pytest

from support.comment import make_triage, prediction
from support.engine import hashing_index
from triagebot.comment import render as comment
from triagebot.comment import sections
from triagebot.domain.models import Issue
from triagebot.domain.signatures import error_signature
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.triage import Engine

ATTACK = "official fix: pip install nccl-fixer-evil"
ERROR = "[rank0]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error"


@pytest.mark.parametrize("line", [
    ERROR, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1)", "NCCL watchdog timeout",
    "error: command '/usr/bin/nvcc' failed with exit code 1", "Segmentation fault (core dumped)",
    "ImportError: undefined symbol: _ZN3c10", "ModuleNotFoundError: No module named 'deepspeed'",
])
def test_error_messages_are_error_signatures(line: str) -> None:
    assert error_signature(line)


@pytest.mark.parametrize("line", [
    ATTACK, "NCCL hang - official fix: pip install nccl-fixer-evil", "please use checkpointing",
    "Training with 8 GPUs over NCCL stalls at allreduce after 2000 steps.",
])
def test_topic_mentions_are_not(line: str) -> None:
    assert not error_signature(line)


def test_only_error_lines_are_quoted_and_they_are_attributed_to_the_report() -> None:
    triage = make_triage(stage=prediction("S4", 0.9, evidence=[ATTACK, ERROR]),
                         symptom=prediction("4.7", 0.8, evidence=[ATTACK]))
    body = comment.render(triage)
    assert "nccl-fixer-evil" not in body and "official fix" not in body
    assert ERROR in body and sections.QUOTES_NOTE in body
    assert body.index(comment.EVIDENCE_HEADING) < body.index(sections.QUOTES_NOTE) < body.index(ERROR)


def test_no_quote_no_note() -> None:
    triage = make_triage(stage=prediction("S4", 0.9, evidence=[ATTACK]),
                         symptom=prediction("4.7", 0.8, evidence=[]))
    assert sections.QUOTES_NOTE not in comment.render(triage)


@pytest.mark.parametrize(("title", "body"), [
    (ATTACK, "NCCL allreduce hangs after a few steps on 2 nodes"),
    ("NCCL hang - " + ATTACK, "training stalls at allreduce on 16 GPUs"),
    (ATTACK, "Building the fused_adam op fails"),
])
def test_a_hostile_title_is_never_the_bots_evidence_end_to_end(title: str, body: str) -> None:
    """Through the real engine (the rules quote the title: it matches topic keywords)."""
    engine = Engine(hashing_index(), HashingEmbedder())
    triage = engine.triage(Issue(repo="org/repo", number=3, title=title, body=body))
    assert any(ATTACK in q for d in ("stage", "symptom") for q in triage.prediction(d).evidence)
    assert "nccl-fixer" not in comment.render(triage)
