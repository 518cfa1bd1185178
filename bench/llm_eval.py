"""Offline vs offline+LLM on held-out issues, as the comment states them (a script, not a test).

    PYTHONPATH=. python bench/llm_eval.py --fold-vectors build/encoder-folds            # the local fake
    OPENAI_API_KEY=... PYTHONPATH=. python bench/llm_eval.py --fold-vectors build/encoder-folds \\
        --base-url https://api.openai.com/v1 --model gpt-4o-mini                         # a real server

Held out: fold 0 of ``--fold-vectors DIR/folds.json`` (``scripts/train_encoder.py --folds-dir``).
The index, its classifier and its calibration are built from the other folds only
(``engine.build.build_index`` with those folds' own vectors, as ``triagebot index build
--fold-vectors`` does), every vector coming from ``vectors_fold0.npy`` (an encoder fine-tuned
without fold 0), so nothing measured has seen a held-out label. Each held-out issue is then triaged
by the service's ``Engine`` twice: offline, and with the LLM refiner of ``llm.client.build_refiner``
(the combination ``engine.triage.stated_as_offline``: the LLM may withhold a statement, never add
one). Printed per dimension: forced-choice accuracy, and precision / coverage of what the comment
states (``Triage.stated``, via ``engine.evaluate``), offline and with the LLM; then calls,
fallbacks, tokens, the LLM's call latency and the bot's added time per issue.

Without ``--base-url`` it starts the local OpenAI-compatible fake (tests/support/llm_fake.py): a
deliberately weak keyword reader, so the figures prove the plumbing and the combination rule, not
a model's quality. Without ``--fold-vectors`` it falls back to the shipped encoder (fine-tuned on
every labelled issue, the held-out ones included) and says its figures are flattered."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from _common import DATA, machine  # first: puts the repo and tests/ on sys.path
from triagebot.domain import taxonomy  # noqa: E402
from triagebot.domain.models import Issue, LabelledIssue, Similar, Triage  # noqa: E402
from triagebot.engine import evaluate  # noqa: E402
from triagebot.engine.analysis import analyse_many  # noqa: E402
from triagebot.engine.build import build_index  # noqa: E402
from triagebot.engine.crossfit import load_fold_vectors  # noqa: E402
from triagebot.engine.dataset import read_labelled  # noqa: E402
from triagebot.engine.embed import Embedder, default_embedder  # noqa: E402
from triagebot.engine.triage import Engine, Refiner  # noqa: E402
from triagebot.llm.client import build_refiner  # noqa: E402
from triagebot.settings import LLM_ENV_VARS  # noqa: E402

DIMS = (*taxonomy.DIMENSIONS, "distributed_specific")
HELD_OUT_FOLD = 0


class StoredVectors:
    """An embedder that returns the stored vector of each known issue (``cross_validate``'s
    ``NoVectors``, but per issue): the engine's own analysis asks for the vectors, so the texts
    it embeds are found by running that analysis once with a recording stand-in."""

    def __init__(self, records: Sequence[Issue], vectors: np.ndarray, name: str) -> None:
        self.dim, self.name = int(vectors.shape[1]), name
        probe = _Recorder(self.dim)
        analyse_many(list(records), probe)
        self._by_text = dict(zip(probe.texts, vectors.astype(np.float32)))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self._by_text]
        if missing:
            raise KeyError(f"no stored vector for {len(missing)} text(s), e.g. {missing[0][:60]!r}")
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._by_text[t] for t in texts])


class _Recorder(evaluate.NoVectors):
    """``NoVectors`` that remembers which texts it was asked to embed."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim, "recorder")
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().encode(texts)


def held_out_index(records: list[LabelledIssue], fold_dir: Path | None) -> tuple[Engine, list[LabelledIssue], str]:
    """The offline engine built without the held-out fold, the held-out issues, and a line that
    says where the vectors came from."""
    if fold_dir is None:
        embedder: Embedder = default_embedder()
        parts = _folds(len(records))
        test_rows = set(parts[HELD_OUT_FOLD])
        train = [r for i, r in enumerate(records) if i not in test_rows]
        index, _ = build_index(train, embedder)
        return (Engine(index, embedder), [records[i] for i in sorted(test_rows)],
                f"shipped encoder {embedder.name} (no --fold-vectors: it was fine-tuned on the "
                "held-out issues too, so these figures are flattered)")
    parts, vectors = load_fold_vectors(fold_dir, len(records))
    if not (fold_dir / f"vectors_fold{HELD_OUT_FOLD}.npy").is_file():
        raise ValueError(f"{fold_dir}: no vectors_fold{HELD_OUT_FOLD}.npy")
    # load_fold_vectors keeps the folds whose vectors exist, in order: fold 0 is the first.
    test_rows = set(parts[HELD_OUT_FOLD])
    train_rows = [i for i in range(len(records)) if i not in test_rows]
    position = {row: pos for pos, row in enumerate(train_rows)}
    # The calibration's own folds: the other folds, each with its own encoder's vectors (that
    # encoder saw fold 0's labels, but its thresholds are read on its own unseen fold only).
    cal_parts = [[position[i] for i in p] for p in parts[1:]]
    cal_vectors = [v[train_rows] for v in vectors[1:]]
    stored = StoredVectors(records, vectors[HELD_OUT_FOLD], f"{fold_dir.name}/vectors_fold{HELD_OUT_FOLD}")
    index, _ = build_index([records[i] for i in train_rows], stored,
                           fold_vectors=cal_vectors or None, parts=cal_parts or None)
    return (Engine(index, stored), [records[i] for i in sorted(test_rows)],
            f"{fold_dir}/vectors_fold{HELD_OUT_FOLD}.npy (an encoder fine-tuned without fold "
            f"{HELD_OUT_FOLD}); calibration cross-fitted on the other {len(cal_parts)} folds")


def _folds(n: int) -> list[list[int]]:
    from triagebot.engine.crossfit import folds

    return folds(n, 5)


class Timed:
    """A ``Triager`` that records how long each whole triage took (ms)."""

    def __init__(self, engine: Engine) -> None:
        self.engine, self.ms = engine, []  # type: ignore[var-annotated]

    def triage(self, issue: Issue) -> Triage:
        start = time.perf_counter()
        try:
            return self.engine.triage(issue)
        finally:
            self.ms.append((time.perf_counter() - start) * 1000)


class TimedRefiner:
    """The refiner with a stopwatch: the time the LLM path adds to one triage (prompt, call,
    parsing, combination), measured inside it rather than as a difference of two noisy runs."""

    def __init__(self, refiner: Refiner) -> None:
        self.refiner, self.ms = refiner, []  # type: ignore[var-annotated]

    def refine(self, issue: Issue, offline: Triage, neighbours: list[Similar]) -> Triage:
        start = time.perf_counter()
        try:
            return self.refiner.refine(issue, offline, neighbours)
        finally:
            self.ms.append((time.perf_counter() - start) * 1000)


def llm_env(base_url: str, model: str, environ: dict[str, str]) -> dict[str, str]:
    """The refiner's settings: the caller's TRIAGEBOT_LLM_* / OPENAI_API_KEY, then ours."""
    env = {k: v for k, v in environ.items() if k in LLM_ENV_VARS.values()}
    env.update({LLM_ENV_VARS["base_url"]: base_url, LLM_ENV_VARS["model"]: model})
    env.setdefault(LLM_ENV_VARS["api_key"], "unused")
    env.setdefault("TRIAGEBOT_LLM_CALLS_PER_HOUR", "1000000")
    return env


def measure(engine: Engine, test: list[LabelledIssue], base_url: str, model: str) -> dict[str, Any]:
    """Offline, then with the LLM, on the same engine and issues."""
    offline_timer = Timed(engine)
    offline = evaluate.evaluate_on_index(offline_timer, test)
    with ExitStack() as stack:
        if not base_url:
            from support.llm_fake import FakeLLM

            base_url = stack.enter_context(FakeLLM(model=model)).base_url
        refiner = build_refiner(llm_env(base_url, model, dict(os.environ)))
        assert refiner is not None  # a base URL and a model are set
        stack.callback(refiner.close)
        timed = TimedRefiner(refiner)
        engine.refiner = timed
        try:
            with_llm = evaluate.evaluate_on_index(engine, test)
        finally:
            engine.refiner = None
        stats = refiner.stats().model_dump()
    return {"offline": offline, "llm": with_llm, "stats": stats,
            "offline_ms_p50": round(float(np.percentile(offline_timer.ms, 50)), 1),
            "added_ms_p50": round(float(np.percentile(timed.ms, 50)), 1),
            "added_ms_p99": round(float(np.percentile(timed.ms, 99)), 1)}


def format_result(result: dict[str, Any]) -> str:
    def pct(value: float | None) -> str:
        return "   -" if value is None else f"{value:.3f}"

    off, llm = result["offline"], result["llm"]
    lines = [f"{'dimension':<22}{'forced acc':>11}{'+LLM':>7}{'stated prec':>13}{'+LLM':>7}"
             f"{'coverage':>10}{'+LLM':>7}"]
    for dim in DIMS:
        a, b, sa, sb = off[dim], llm[dim], off["stated"][dim], llm["stated"][dim]
        lines.append(f"{dim:<22}{a['forced_accuracy']:>11.3f}{b['forced_accuracy']:>7.3f}"
                     f"{pct(sa['precision']):>13}{pct(sb['precision']):>7}"
                     f"{sa['coverage']:>10.3f}{sb['coverage']:>7.3f}")
    s = result["stats"]
    calls = max(1, s["calls"])
    lines.append(
        f"LLM: {s['calls']} calls, {s['cache_hits']} cache hits, {s['refined']} refined, fallbacks "
        f"{json.dumps(s['fallbacks'])}; {s['tokens_in'] / calls:.0f} prompt + {s['tokens_out'] / calls:.0f} "
        f"answer tokens per call; call latency p50 {s['latency_p50_ms']:.1f} ms / p99 "
        f"{s['latency_p99_ms']:.1f} ms")
    lines.append(f"time per issue: offline p50 {result['offline_ms_p50']} ms; added by the LLM path "
                 f"p50 {result['added_ms_p50']} ms / p99 {result['added_ms_p99']} ms")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="labelled issues, one JSON a line")
    parser.add_argument("--fold-vectors", type=Path, default=None, metavar="DIR",
                        help="folds.json and vectors_fold*.npy of scripts/train_encoder.py")
    parser.add_argument("--base-url", default="", help="an OpenAI-compatible server (default: the local fake)")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    if args.base_url and args.model == "fake-model":
        parser.error("--base-url needs --model")
    records = read_labelled(args.data)
    if args.fold_vectors is None:
        print("warning: no --fold-vectors; using the shipped encoder, which was fine-tuned on the "
              "held-out issues too: the figures are flattered", file=sys.stderr)
    try:
        engine, test, source = held_out_index(records, args.fold_vectors)
    except (OSError, ValueError) as exc:
        print(f"error: --fold-vectors: {exc}", file=sys.stderr)
        return 2
    result = measure(engine, test, args.base_url, args.model)
    if args.json:
        print(json.dumps({k: v if k not in ("offline", "llm") else
                          {d: {**v[d], "stated": v["stated"][d]} for d in DIMS}
                          for k, v in result.items()}))
        return 0
    print(f"held out: fold {HELD_OUT_FOLD}, n={len(test)}; index and calibration from the other "
          f"{len(engine.index)} issues; vectors: {source}")
    print(f"machine: {machine()}")
    print(f"LLM: {args.base_url or 'the local keyword fake (tests/support/llm_fake.py)'}, model {args.model}")
    print(format_result(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
