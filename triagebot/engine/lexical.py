"""The words of a report, as a second opinion beside its embedding.

A sentence embedding reads ~256 tokens of a report and compresses them into 384 numbers; the exact
words that tell two problems apart (``NCCL``, ``OOM``, ``fused_adam``, ``zero3``, an API name in a
traceback) are often lost there. A linear model over hashed word counts keeps them. Mixed into the
classifier's distributions it raised, on 5-fold CV of the shared data with the per-fold encoders
(``triagebot eval --cv 5 --fold-vectors``), forced-choice accuracy and above all the coverage the
precision targets allow (the README's ablation table has the figures).

Why this shape:
- **Hashed, not a vocabulary.** Words are hashed into ``N_FEATURES`` buckets (CRC-32), so the model
  holds numbers only, never a string of the issues it was fitted on.
- **Fitted when the index is built, from the labelled texts, and kept in the calibration record**
  (``Calibration.lexical``): an index stores no bodies, so nothing could refit it later; it travels
  wherever that record goes (index directory, database artifact, export). Corrections and newly
  indexed issues teach the embedding model, not this one, until the next ``index build``.
- Pure numpy at triage time (a few hundred microseconds per issue)."""
from __future__ import annotations

import base64
import re
import zlib
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, Field, PrivateAttr

N_FEATURES = 4096
TOKEN = re.compile(r"\b\w\w+\b")

Distribution = dict[str, float]


def hashed(texts: Sequence[str], idf: np.ndarray | None = None) -> np.ndarray:
    """Rows of sublinear word and word-pair counts in ``N_FEATURES`` buckets, times ``idf`` when
    given, L2-normalised."""
    out = np.zeros((len(texts), N_FEATURES), np.float32)
    for row, text in enumerate(texts):
        words = TOKEN.findall(text.lower())
        grams = words + [f"{a} {b}" for a, b in zip(words, words[1:])]
        for gram in grams:
            out[row, zlib.crc32(gram.encode("utf-8")) & (N_FEATURES - 1)] += 1.0
    np.log1p(out, out=out)
    if idf is not None:
        out *= idf
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def inverse_document_frequency(counts: np.ndarray) -> np.ndarray:
    """Smoothed idf of each bucket over the rows of ``counts`` (as scikit-learn's)."""
    df = (counts > 0).sum(axis=0)
    return (np.log((1 + len(counts)) / (1 + df)) + 1).astype(np.float32)


class Head(BaseModel):
    """One dimension's softmax over hashed features, weights stored as base64 float16."""

    classes: list[str]
    weights: str
    bias: list[float]
    _matrix: np.ndarray | None = PrivateAttr(default=None)

    def matrix(self) -> np.ndarray:
        """The weights as a (N_FEATURES, classes) array, decoded once."""
        if self._matrix is None:
            raw = np.frombuffer(base64.b64decode(self.weights), np.float16)
            self._matrix = raw.reshape(N_FEATURES, len(self.classes)).astype(np.float32)
        return self._matrix


class LexicalModel(BaseModel):
    """Per dimension, P(label | the report's words)."""

    idf: str = ""  # base64 float16, N_FEATURES values
    heads: dict[str, Head] = Field(default_factory=dict)
    _idf: np.ndarray | None = PrivateAttr(default=None)

    def idf_values(self) -> np.ndarray:
        """The idf as float32, decoded once (a triage reads it for every issue)."""
        if self._idf is None:
            self._idf = np.frombuffer(base64.b64decode(self.idf), np.float16).astype(np.float32)
        return self._idf

    def distributions(self, texts: Sequence[str]) -> list[dict[str, Distribution]]:
        """Per text, every fitted dimension's distribution."""
        if not self.heads or not texts:
            return [{} for _ in texts]
        x = hashed(texts, self.idf_values())
        out: list[dict[str, Distribution]] = [{} for _ in texts]
        for dim, head in self.heads.items():
            logits = x @ head.matrix() + np.asarray(head.bias, np.float32)
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            for row in range(len(texts)):
                out[row][dim] = dict(zip(head.classes, p[row].tolist()))
        return out


def encode(values: np.ndarray) -> str:
    """Numbers as base64 float16: half the size, and the model's precision needs no more."""
    return base64.b64encode(np.asarray(values, np.float16).tobytes()).decode("ascii")

