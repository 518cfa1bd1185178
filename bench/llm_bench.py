"""Throughput and latency of the LLM path against the local fake server (a script, not a test).

    PYTHONPATH=. python bench/llm_bench.py --calls 200 --threads 4

Measures the whole refine(): prompt building, the real openai client over HTTP on 127.0.0.1,
strict parsing, validation and combination. A second pass repeats the same issues to show the
cost of a cache hit. The fake answers instantly, so this is the bot's own overhead, not a model's.
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support.llm_fake import FakeLLM, neighbour, offline_triage  # noqa: E402
from triagebot.domain.models import Issue  # noqa: E402
from triagebot.llm.client import LLMClassifier, LLMSettings  # noqa: E402
from triagebot.llm.store import percentile  # noqa: E402

BODY = ("Training a 7B model with ZeRO-3 on 8 A100s.\n```\n" + "step log line\n" * 300
        + "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n```\n")


def issues(count: int) -> list[Issue]:
    return [Issue(repo="org/repo", number=1000 + i, title=f"OOM at step {i}", body=BODY)
            for i in range(count)]


def timed_pass(clf: LLMClassifier, batch: list[Issue], threads: int) -> tuple[float, list[float]]:
    neighbours = [neighbour(3), neighbour(4), neighbour(5)]
    offline = offline_triage()

    def one(issue: Issue) -> float:
        started = time.perf_counter()
        result = clf.refine(issue, offline, neighbours)
        if result.source != "offline+llm":
            raise SystemExit(f"unexpected fallback: {result.notes[-1]}")
        return (time.perf_counter() - started) * 1000

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        latencies = sorted(pool.map(one, batch))
    return time.perf_counter() - started, latencies


def report(label: str, elapsed: float, latencies: list[float]) -> None:
    rate = len(latencies) / elapsed if elapsed else 0.0
    print(f"{label:<11} {len(latencies):>6} calls  {rate:>8.1f} calls/s  "
          f"p50 {percentile(latencies, 50):>7.2f} ms  p99 {percentile(latencies, 99):>7.2f} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    batch = issues(args.calls)
    with FakeLLM() as server:
        settings = LLMSettings(model="fake-model", base_url=server.base_url, timeout=10,
                               calls_per_hour=args.calls * 2)
        clf = LLMClassifier(settings)
        try:
            report("cache miss", *timed_pass(clf, batch, args.threads))
            report("cache hit", *timed_pass(clf, batch, args.threads))
            stats = clf.stats()
        finally:
            clf.close()
    print(f"http calls {stats.calls}  tokens in/out {stats.tokens_in}/{stats.tokens_out}  "
          f"http p50 {stats.latency_p50_ms:.2f} ms  fallbacks {stats.fallbacks or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
