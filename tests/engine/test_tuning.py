"""The encoder fine-tuning used by scripts/train_encoder.py: the contrastive loss rewards
same-label neighbours, and a tiny run on the real model changes it and still embeds unit vectors."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from triagebot.engine import tuning  # noqa: E402


def test_label_ids_leave_unknown_without_positives() -> None:
    ids, classes = tuning.label_ids(["4.2", "unknown", "2.1", "4.2"])
    assert classes == ["2.1", "4.2"]
    assert ids.tolist() == [1, -1, 0, 1]


def test_supcon_is_lower_when_same_labels_are_close() -> None:
    labels = torch.tensor([0, 0, 1, 1])
    clustered = torch.nn.functional.normalize(torch.tensor(
        [[1.0, 0.0], [0.99, 0.1], [0.0, 1.0], [0.1, 0.99]]), dim=-1)
    mixed = clustered[[0, 2, 1, 3]]
    assert tuning.supcon(clustered, clustered, labels, labels, 0.1) < \
        tuning.supcon(mixed, mixed, labels, labels, 0.1)
    none = torch.tensor([-1, -1, -1, -1])
    assert float(tuning.supcon(clustered, clustered, none, none, 0.1)) == 0.0


@pytest.mark.integration
def test_a_tiny_fine_tuning_run_moves_the_encoder() -> None:
    texts = ["NCCL timeout on two nodes", "allreduce hangs after 10 minutes",
             "CUDA out of memory with ZeRO-3", "OOM when offloading optimizer"] * 2
    sym = np.array([0, 0, 1, 1] * 2)
    rc = np.array([0, 0, 1, -1] * 2)
    before = tuning.embed(tuning.load_base(), texts)
    model = tuning.finetune(texts, sym, rc, epochs=1, batch_size=4, lr=1e-4, queue_size=8)
    after = tuning.embed(model, texts)
    assert after.shape == before.shape == (8, 384)
    assert np.allclose(np.linalg.norm(after, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(before, after, atol=1e-4)
