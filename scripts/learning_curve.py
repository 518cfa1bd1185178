"""Learning curve of the offline engine: forced-choice accuracy when each fold's classifier (and
words model) is fitted on 25/50/75/100% of its training issues.

Why: to tell whether more labelled issues or a better model is what the engine needs. The
vectors come from ``--fold-vectors`` (per-fold encoders, ``scripts/train_encoder.py``): those
encoders were fine-tuned on *all* of each fold's training issues, so below 100% the curve shows
the heads' appetite for data, not the encoder's; pass base-model vectors (one file per fold, all
the same) to see the curve with no fine-tuning at all.

    .venv/bin/python scripts/learning_curve.py --data ../shared/data/issues.jsonl \
        --fold-vectors build/encoder-folds [--fractions 0.25,0.5,0.75,1]
"""
from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triagebot.domain import rules  # noqa: E402
from triagebot.domain.models import IndexedIssue  # noqa: E402
from triagebot.engine import crossfit  # noqa: E402
from triagebot.engine.analysis import analyse_many, stack  # noqa: E402
from triagebot.engine.classify import Classifier, decide, fit_words, label_value  # noqa: E402
from triagebot.engine.dataset import read_labelled  # noqa: E402
from triagebot.engine.evaluate import NoVectors  # noqa: E402

DIMENSIONS = ("stage", "symptom", "root_cause", "fix_pattern")


def curve(texts: Sequence[str], features: np.ndarray, items: list[IndexedIssue], parts: Sequence[Sequence[int]],
          vectors: Sequence[np.ndarray], fractions: Sequence[float], seed: int = 0
          ) -> dict[float, dict[str, float]]:
    """Forced-choice accuracy per fraction and dimension, over every held-out issue."""
    out = {}
    for fraction in fractions:
        right: dict[str, list[bool]] = {d: [] for d in DIMENSIONS}
        for number, held in enumerate(parts):
            held_set = set(held)
            train = [i for i in range(len(items)) if i not in held_set]
            random.Random(seed + number).shuffle(train)
            train = sorted(train[: max(2, round(fraction * len(train)))])
            words = fit_words([texts[i] for i in train], [items[i] for i in train])
            vecs = vectors[number]
            model = Classifier.fit(vecs[train], features[train], [items[i] for i in train], words)
            dists = model.distributions(vecs[list(held)], features[list(held)],
                                        [texts[i] for i in held])
            for pos, dist in zip(held, dists):
                choice = decide(dist)
                for dim in DIMENSIONS:
                    truth = label_value(items[pos], dim)
                    if truth is not None:
                        right[dim].append(choice[dim].id == truth)
        out[fraction] = {d: float(np.mean(v)) for d, v in right.items()}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--fold-vectors", required=True)
    parser.add_argument("--fractions", default="0.25,0.5,0.75,1")
    args = parser.parse_args(argv)
    records = read_labelled(args.data)
    parts, vectors = crossfit.load_fold_vectors(args.fold_vectors, len(records))
    analysed = analyse_many(records, NoVectors(vectors[0].shape[1], "fold vectors"))
    _, features = stack(analysed, len(rules.FEATURE_NAMES))
    texts = [a.words for a in analysed]
    items = [r.to_indexed() for r in records]
    fractions = [float(f) for f in args.fractions.split(",")]
    n_train = round(np.mean([len(records) - len(p) for p in parts]))
    print(f"{'share of training issues':>26} " + " ".join(f"{d:>11}" for d in DIMENSIONS))
    for fraction, acc in curve(texts, features, items, parts, vectors, fractions).items():
        label = f"{fraction:.0%} (~{round(fraction * n_train)})"
        print(f"{label:>26} " + " ".join(f"{acc[d]:>11.3f}" for d in DIMENSIONS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
