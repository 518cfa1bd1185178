"""What the pipeline derives from an issue's text before looking anything up. Pure but for the
embedder, which is batched: indexing thousands of issues and triaging one share this code."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from triagebot.domain import diagnoses, environment, rules
from triagebot.domain.models import Diagnosed, Environment, Issue
from triagebot.engine.embed import Embedder
from triagebot.text import signal as text


@dataclass(frozen=True)
class Analysed:
    full: str  # cleaned title + body: what environment parsing, evidence and missing info read
    signal: str  # the ~256-token selection the embedding model reads
    env: Environment
    features: np.ndarray  # rule features (of ``words``), in rules.FEATURE_NAMES order
    vector: np.ndarray  # L2-normalised embedding of ``signal``
    # ``full`` less tool dumps and a log's repeated lines (``text.reported``): what the words
    # model and the rule features read, so a pasted ds_report or rank log cannot swamp the report
    words: str
    # every diagnosis whose error ``full`` shows (``diagnoses.find``, matched once): what the
    # comment shows and what the index keeps are both read from it
    diagnosed: tuple[Diagnosed, ...] = ()

    @property
    def signatures(self) -> tuple[str, ...]:
        """The ids of the errors it shows that mean the same problem wherever they occur
        (``diagnoses.linking``): kept by the index, matched against new reports."""
        return diagnoses.linking(self.diagnosed)


def analyse_many(issues: Sequence[Issue], embedder: Embedder) -> list[Analysed]:
    fulls = [text.full_text(i.title, i.body) for i in issues]
    words = [text.reported(f) for f in fulls]
    envs = [environment.extract(f) for f in fulls]
    signals = [text.signal_text(i.title, i.body) or "empty issue" for i in issues]
    vectors = embedder.encode(signals) if signals else np.zeros((0, embedder.dim), np.float32)
    return [
        Analysed(f, s, e, rules.features(w, e), v, w, diagnoses.find(f))
        for f, s, e, v, w in zip(fulls, signals, envs, vectors, words)
    ]


def analyse(issue: Issue, embedder: Embedder) -> Analysed:
    return analyse_many([issue], embedder)[0]


def stack(analysed: Sequence[Analysed], n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Vectors and features of many analysed issues as two matrices."""
    if not analysed:
        return np.zeros((0, 0), np.float32), np.zeros((0, n_features), np.float32)
    return np.stack([a.vector for a in analysed]), np.stack([a.features for a in analysed])
