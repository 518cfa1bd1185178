"""Fine-tune the encoder on the shared labelled issues, reproducibly (fixed seed, CPU): the
encoder the bot ships (``index/encoder/``) and the per-fold vectors behind its calibration and
the README's figures. ``scripts/build_seed_index.sh`` runs this and the index build in one go.

    .venv/bin/python scripts/train_encoder.py [--data ../shared/data/issues.jsonl] [--epochs 3]
        [--folds-dir build/encoder-folds] [--skip-folds] [--final DIR]

1. Honest folds: 5 folds stratified by symptom (seed 0). For each fold, fine-tune on the other four,
   write that encoder as int8 ONNX (``FOLDS_DIR/encoder_fold{k}/``) and embed every issue with it,
   as the service would -> ``FOLDS_DIR/vectors_fold{k}.npy`` + ``folds.json``. These are what
   ``triagebot eval --cv 5 --fold-vectors DIR`` and ``triagebot index build --fold-vectors DIR``
   read: the held-out issues of a fold were never seen by its encoder, so the figures and the
   calibration that says how sure is sure enough are not flattered.
2. With ``--final DIR``: fine-tune on all issues, export the transformer with pooling to ONNX,
   fuse and quantise it as the base model's graph is (``engine.embed_onnx``), and write it with its
   tokenizer and ``encoder.json`` (whose ``name`` indexes built with it record) to DIR.
About 5 minutes a fine-tuning on 2 quiet cores; 15 under heavy load."""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from triagebot.engine import tuning  # noqa: E402
from triagebot.engine.dataset import read_labelled  # noqa: E402
from triagebot.engine.embed_onnx import OnnxEmbedder, export_fused, quantise, slim  # noqa: E402
from triagebot.engine.model_files import TUNED_PREFIX  # noqa: E402
from triagebot.text.signal import signal_text  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "issues.jsonl"
K = 5


def stratified_folds(symptoms: list[str], k: int = K, seed: int = tuning.SEED) -> list[list[int]]:
    """Held-out positions of each fold, stratified by symptom."""
    from sklearn.model_selection import StratifiedKFold

    split = StratifiedKFold(k, shuffle=True, random_state=seed).split(np.zeros(len(symptoms)), symptoms)
    return [sorted(int(i) for i in held_out) for _, held_out in split]


def write_onnx(model, folder: Path) -> Path:  # type: ignore[no-untyped-def]
    """The tuned transformer with pooling as a fused int8 ONNX graph plus its tokenizer."""
    with tempfile.TemporaryDirectory() as tmp:
        model.save(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        fp32 = Path(tmp) / "model.onnx"
        export_fused(tmp, fp32)
        quantise(fp32, Path(tmp) / "model.int8.onnx")
        slim(Path(tmp) / "model.int8.onnx", folder / "model.int8.onnx")  # frozen embeddings: base's
        shutil.copy(Path(tmp) / "tokenizer.json", folder / "tokenizer.json")
    return folder / "model.int8.onnx"


def write_card(folder: Path, card: dict) -> None:  # type: ignore[type-arg]
    """``encoder.json``: how the encoder was made, and the name indexes built with it record,
    derived from the graph's bytes so that a retrained encoder never queries an older index."""
    digest = hashlib.sha256((folder / "model.int8.onnx").read_bytes()).hexdigest()[:10]
    card = {"name": f"{TUNED_PREFIX}supcon-{digest}", **card}
    (folder / "encoder.json").write_text(json.dumps(card, indent=1) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--folds-dir", type=Path, default=ROOT / "build" / "encoder-folds")
    parser.add_argument("--skip-folds", action="store_true")
    parser.add_argument("--final", type=Path, default=None, metavar="DIR",
                        help="also train on all issues and write the int8 ONNX encoder to DIR")
    args = parser.parse_args()
    import logging

    import torch

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.set_num_threads(os.cpu_count() or 1)
    records = read_labelled(args.data)
    texts = [signal_text(r.title, r.body) or "empty issue" for r in records]
    symptoms, _ = tuning.label_ids([r.labels.symptom for r in records])
    causes, _ = tuning.label_ids([r.labels.root_cause for r in records])
    if not args.skip_folds:
        args.folds_dir.mkdir(parents=True, exist_ok=True)
        parts = stratified_folds([r.labels.symptom for r in records])
        (args.folds_dir / "folds.json").write_text(json.dumps(parts))
        for k, held_out in enumerate(parts):
            out = args.folds_dir / f"vectors_fold{k}.npy"
            if out.exists():
                print(f"fold {k}: {out} exists, kept", flush=True)
                continue
            train = np.array(sorted(set(range(len(records))) - set(held_out)))
            start = time.time()
            model = tuning.finetune([texts[i] for i in train], symptoms[train], causes[train],
                                    epochs=args.epochs, tag=f"fold {k}")
            graph = write_onnx(model, args.folds_dir / f"encoder_fold{k}")
            # embedded by the int8 graph the service would run, not by the fp32 torch model
            np.save(out, OnnxEmbedder(graph=graph, name=f"fold {k}", cache_size=0).encode(texts))
            print(f"fold {k}: tuned on {len(train)} issues, {time.time() - start:.0f} s", flush=True)
    if args.final is not None:
        start = time.time()
        model = tuning.finetune(texts, symptoms, causes, epochs=args.epochs, tag="final")
        write_onnx(model, args.final)
        write_card(args.final, {
            "base": "all-MiniLM-L6-v2", "loss": "SupCon on symptom + 0.3 x SupCon on root cause",
            "epochs": args.epochs, "seed": tuning.SEED, "issues": len(records),
            "data": args.data.name})
        print(f"final encoder: {time.time() - start:.0f} s -> {args.final}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
