#!/usr/bin/env bash
# Rebuild what ships in index/ from the shared labelled issues, reproducibly (seed 0, CPU):
#   1. fine-tune the encoder once per fold (held-out vectors for honest calibration) and once on
#      everything (the shipped encoder, index/encoder/);
#   2. build the seed index with that encoder, its thresholds calibrated on the per-fold vectors.
# About 35 minutes on 2 quiet cores (6 fine-tunings); needs `bash scripts/setup.sh` first.
#   bash scripts/build_seed_index.sh [DATA]
set -euo pipefail
cd "$(dirname "$0")/.."
DATA="${1:-../shared/data/issues.jsonl}"
FOLDS=build/encoder-folds
rm -rf "$FOLDS"
.venv/bin/python scripts/train_encoder.py --data "$DATA" --folds-dir "$FOLDS" --final index/encoder
.venv/bin/triagebot index build --data "$DATA" --fold-vectors "$FOLDS" --out index
.venv/bin/triagebot eval --cv 5 --data "$DATA" --fold-vectors "$FOLDS"
