"""Building an index from labelled issues: analyse each text once, keep vectors, features and
metadata (never the body), and the out-of-fold record that says how sure is sure enough."""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from triagebot.domain import rules
from triagebot.domain.models import LabelledIssue, LabelStatus
from triagebot.engine import crossfit
from triagebot.engine.analysis import analyse_many, stack
from triagebot.engine.calibration import Calibration
from triagebot.engine.classify import fit_words
from triagebot.engine.embed import Embedder
from triagebot.engine.index import IssueIndex

MIN_CALIBRATION = 50  # fewer labelled issues than this cannot vouch for any threshold


def build_index(
    records: list[LabelledIssue], embedder: Embedder, status: LabelStatus = "confirmed",
    fold_vectors: Sequence[np.ndarray] | None = None,
    parts: Sequence[Sequence[int]] | None = None,
) -> tuple[IssueIndex, float]:
    """A new index over ``records``; returns it with the measured issues/s (embedding and
    indexing only; the calibration that follows is not counted)."""
    start = time.perf_counter()
    analysed = analyse_many(records, embedder)
    vectors, features = stack(analysed, len(rules.FEATURE_NAMES))
    index = IssueIndex(embedder.name, embedder.dim, len(rules.FEATURE_NAMES))
    index.add([r.to_indexed(status, a.signatures) for r, a in zip(records, analysed)], vectors,
              features)
    elapsed = time.perf_counter() - start
    if len(records) >= MIN_CALIBRATION:
        index.calibration = calibrate(index, fold_vectors, parts, [a.words for a in analysed])
    return index, (len(records) / elapsed if elapsed > 0 else float("inf"))


def calibrate(index: IssueIndex, fold_vectors: Sequence[np.ndarray] | None = None,
              parts: Sequence[Sequence[int]] | None = None,
              texts: Sequence[str] | None = None) -> Calibration:
    """The index's own out-of-fold record (``crossfit``): what ``predict`` reads thresholds from.
    With an encoder fine-tuned on these issues, pass its per-fold vectors and folds: the index's
    own vectors were made by an encoder that saw every label, and would vouch for too much.
    With ``texts`` (the issues' cleaned titles and bodies, aligned with the index) the words model
    is fitted on all of them and kept in the record; its out-of-fold twins vouch for it."""
    record = crossfit.out_of_fold(index.items, index.vectors, index.features, index.embedder_name,
                                  fold_vectors=fold_vectors, parts=parts, texts=texts)
    covered = crossfit.held_out(parts) if parts is not None else range(len(index.items))
    calibration = record.calibration(index.items, covered)
    if texts:
        calibration.words = fit_words(texts, index.items)
    return calibration
