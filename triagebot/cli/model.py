"""``triagebot model prepare``: do the embedder's one-time work now (at set-up, in the Docker build)
rather than inside the first triage: the base model's ONNX backends export and quantise the bundled
model into the cache (``TRIAGEBOT_CACHE``, default ``~/.cache/triagebot``), about 10 s once; the
shipped fine-tuned encoder (the default) is a finished graph and is only loaded and checked."""
from __future__ import annotations

import argparse
import time
from typing import Any

from triagebot.engine import embed
from triagebot.settings import Settings


def register(sub: Any) -> None:
    model = sub.add_parser("model", help="prepare the embedding model").add_subparsers(metavar="ACTION")
    prepare = model.add_parser("prepare", help="export the ONNX model now (otherwise the first triage does)")
    prepare.add_argument("--backend", choices=embed.BACKENDS, default=None,
                         help="embedder backend (default: TRIAGEBOT_EMBEDDER, else the default)")
    prepare.set_defaults(func=cmd_prepare)


def cmd_prepare(args: argparse.Namespace, settings: Settings) -> int:
    start = time.perf_counter()
    embedder = embed.default_embedder(args.backend or settings.embedder or None)
    embedder.encode(["warm-up: NCCL timeout in allreduce"])
    print(f"model ready: {embedder.name} ({embedder.dim} dims) in {time.perf_counter() - start:.1f} s")
    return 0
