"""Offline vs offline+LLM on a held-out split (a script, not a test).

    PYTHONPATH=. python bench/llm_eval.py [--data ../shared/data/issues.jsonl] [--base-url URL --model M]

Builds an index from 80% of the labelled issues (seeded split), evaluates the other 20% with the
offline engine and again with the LLM refiner. Without --base-url it starts the local
OpenAI-compatible fake (tests/support/llm_fake.py, deterministic keyword answers): that measures the
plumbing and the combination rule, not a real model's quality."""
from __future__ import annotations

import argparse
import json
import random
import sys
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from triagebot.engine import evaluate  # noqa: E402
from triagebot.engine.build import build_index  # noqa: E402
from triagebot.engine.classify import THRESHOLDS  # noqa: E402
from triagebot.engine.dataset import read_labelled  # noqa: E402
from triagebot.engine.embed import MiniLMEmbedder  # noqa: E402
from triagebot.engine.triage import Engine  # noqa: E402
from triagebot.llm.client import build_refiner  # noqa: E402

DIMS = ("stage", "symptom", "root_cause", "fix_pattern", "distributed_specific")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared/data/issues.jsonl"))
    parser.add_argument("--base-url", default="")
    parser.add_argument("--model", default="fake-model")
    args = parser.parse_args()
    records = read_labelled(args.data)
    order = list(range(len(records)))
    random.Random(7).shuffle(order)
    cut = len(order) * 4 // 5
    train, test = [records[i] for i in order[:cut]], [records[i] for i in order[cut:]]
    embedder = MiniLMEmbedder()
    index, _ = build_index(train, embedder)
    offline = evaluate.evaluate_on_index(Engine(index, embedder), test)
    with ExitStack() as stack:
        base_url = args.base_url
        if not base_url:
            from support.llm_fake import FakeLLM

            base_url = stack.enter_context(FakeLLM(model=args.model)).base_url
        env = {"TRIAGEBOT_LLM_BASE_URL": base_url, "TRIAGEBOT_LLM_MODEL": args.model,
               "OPENAI_API_KEY": "unused", "TRIAGEBOT_LLM_CALLS_PER_HOUR": "100000"}
        refiner = build_refiner(env, thresholds=THRESHOLDS)
        engine = Engine(index, embedder, classifier=None, refiner=refiner)
        with_llm = evaluate.evaluate_on_index(engine, test)
        stats = refiner.stats() if refiner else {}
    print(f"held-out n={len(test)} (index built from {len(train)}); LLM at {'fake' if not args.base_url else base_url}")
    print(f"{'dimension':<22}{'offline acc':>12}{'+LLM acc':>10}{'offline cov':>12}{'+LLM cov':>10}")
    for dim in DIMS:
        a, b = offline[dim], with_llm[dim]
        print(f"{dim:<22}{a['accuracy']:>12.3f}{b['accuracy']:>10.3f}{a['coverage']:>12.3f}{b['coverage']:>10.3f}")
    print("llm stats:", json.dumps(stats, default=str))


if __name__ == "__main__":
    main()
