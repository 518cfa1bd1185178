"""Time of ``diagnoses.find`` on a long pasted log, in total and per entry of the table.

    .venv/bin/python bench/diagnoses_speed.py [--runs 7] [--kb 100] [--top 15]

``find`` runs every entry of ``DIAGNOSES`` over an issue's cleaned text once per triage, so on a
long log it is paid on every report. The log is synthetic but made of what reports paste: a
``ds_report`` dump, a pip list, NCCL INFO lines and repeated rank-prefixed training lines, with
the near misses of ``tests/domain/test_diagnoses.py`` (lines that read like a kept error) spread
through it, then errors of its ``LOGS``: two (a typical failing run), or every one of them (each
entry then finds its error after reading the whole log, and runs its ``context`` and ``unless``
too). It goes through ``full_text`` as a report body, as the engine reads it, and is cut to the
engine's 100 KB.

Per entry: ``diagnoses._match`` on the text lower-cased once beforehand, as ``find`` does (that
lower-casing is a row of its own); the total is one ``find`` call. Medians of --runs, the entries
timed in turn within each run so that load from other jobs falls on all alike. No assertions: a
measurement, not a test."""
from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from _common import machine, median, table
from triagebot.domain import diagnoses
from triagebot.text.signal import FULL_TEXT_CHARS, full_text

_PACKAGES = ("accelerate 0.30.1", "aiohttp 3.9.5", "bitsandbytes 0.43.1", "datasets 2.19.1",
             "deepspeed 0.14.2", "einops 0.8.0", "flash-attn 2.5.8", "huggingface-hub 0.23.0",
             "ninja 1.11.1.1", "numpy 1.26.4", "nvidia-nccl-cu12 2.20.5", "peft 0.11.1",
             "protobuf 4.25.3", "safetensors 0.4.3", "sentencepiece 0.2.0", "tokenizers 0.19.1",
             "torch 2.3.0", "torchvision 0.18.0", "transformers 4.41.0", "triton 2.3.0",
             "wandb 0.17.0", "xformers 0.0.26.post1")


def synthetic_log(kb: int = 100, errors: Sequence[str] = ("import_name", "sigkill")) -> str:
    """A report whose cleaned text is about ``kb`` KB, as described in the module doc, ending
    with the ``errors`` (ids of ``LOGS``) after the training lines."""
    from domain.test_diagnoses import LOGS, NEAR_MISSES  # tests/ is on sys.path (``_common``)

    from support.domain import DS_REPORT  # the test suite's own pasted ds_report

    head = [DS_REPORT, "Package                  Version", "------------------------ ----------"]
    head += [f"{name:<24} {version}" for name, version in (p.split() for p in _PACKAGES * 6)]
    tail = [LOGS[e][1] for e in errors]
    misses = list(NEAR_MISSES.values())
    lines: list[str] = []
    size = sum(len(x) + 1 for x in head + tail)
    i = 0
    # no more than the engine reads: a longer text is cut in two (see below), so --kb above ~100
    # measures the same text
    while size < min(kb * 1000, FULL_TEXT_CHARS - 1000):
        rank = i % 8
        new = [f"[rank{rank}]: iteration {1200 + i} | loss {2.31 - i * 1e-4:.4f} | lr 1e-4 | grad norm "
               f"{0.8 + (i % 7) / 10:.2f} | elapsed time per iteration (ms): {512.3 + i % 13:.1f} | "
               f"tokens per second {12345 + i % 97}"]
        if i % 40 == 0:
            new.append(f"node0{rank}:2710{rank}:2730{rank} [{rank}] NCCL INFO Channel 0{i % 4}/0 : "
                       f"{rank}[{rank}] -> {(rank + 1) % 8}[{(rank + 1) % 8}] via P2P/IPC/read")
        if i % 60 == 0:
            new.append(f"[2024-05-01 10:{i % 60:02d}:12,000] [INFO] [logging.py:96:log_dist] "
                       f"[Rank 0] step={i}, skipped=0, lr=[0.0001], mom=[(0.9, 0.95)]")
        if i % 25 == 0:
            new.append(misses[(i // 25) % len(misses)])
        lines += new
        size += sum(len(x) + 1 for x in new)
        i += 1
    def report(kept: list[str]) -> str:
        body = ("**Describe the bug**\nTraining on 2 nodes crashes after a few hours; the full log "
                "is below.\n\n**Logs**\n```\n" + "\n".join(head + kept + tail) + "\n```\n\n"
                "**System info**\n- deepspeed 0.14.2, torch 2.3.0+cu121, Python 3.10, 16x A100\n")
        return full_text("Training crashes after a few hours on 2 nodes", body)

    # Within the engine's cut: a text over it is cut in two around a "…", and that one non-ASCII
    # character makes lower-casing and every search of it about twice as slow (the bench would
    # then time the cut, not the table).
    text = report(lines)
    while len(text) >= FULL_TEXT_CHARS and lines:
        del lines[-max(1, (len(text) - FULL_TEXT_CHARS) // 120):]
        text = report(lines)
    return text


def _timed(text: str, runs: int) -> tuple[list[float], dict[str, list[float]]]:
    """``find``'s time per run, and each entry's (after the text is lower-cased once, as ``find``
    does), in ms."""
    totals: list[float] = []
    fold = "(lower-casing the text, once)"
    per_entry: dict[str, list[float]] = {fold: [], **{d.id: [] for d in diagnoses.DIAGNOSES}}
    for _ in range(runs):
        start = time.perf_counter()
        diagnoses.find(text)
        totals.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        folded = diagnoses._fold(text)
        per_entry[fold].append((time.perf_counter() - start) * 1000)
        for entry in diagnoses.DIAGNOSES:
            start = time.perf_counter()
            diagnoses._match(entry, text, folded)
            per_entry[entry.id].append((time.perf_counter() - start) * 1000)
    return totals, per_entry


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--kb", type=int, default=100, help="the log's size before the engine's 100 KB cap")
    parser.add_argument("--top", type=int, default=15, help="entries shown, costliest first")
    args = parser.parse_args()
    print(machine())
    logs = {"two errors at the end": synthetic_log(args.kb),
            "every error of LOGS at the end": synthetic_log(args.kb, errors=sorted(diagnoses.BY_ID))}
    results = {}
    for name, text in logs.items():
        print(f"{name}: {len(text):,} characters, {len(diagnoses.find(text))} diagnoses found")
        results[name] = _timed(text, args.runs)
    first = next(iter(results.values()))[1]
    rows = [[entry] + [median(per_entry[entry]) for _, per_entry in results.values()] for entry in first]
    rows.sort(key=lambda r: -max(r[1:]))
    print(table(["entry", *(f"ms, {name}" for name in results)], rows[: args.top]))
    print()
    for name, (totals, per_entry) in results.items():
        print(f"find, {name}: median {median(totals)} ms over {args.runs} runs (min {min(totals):.2f}, "
              f"max {max(totals):.2f}); sum of every row's median {sum(median(v) for v in per_entry.values()):.2f} ms")


if __name__ == "__main__":
    main()
