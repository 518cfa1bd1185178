"""Shared helpers of the engine tests: the labelled fixture, a hashing-embedder index built from it,
and realistic long issue texts (GitHub template, 3,000-line logs, 8 ranks failing at once)."""
from __future__ import annotations

import json
from pathlib import Path

from triagebot.domain.models import LabelledIssue
from triagebot.engine.build import build_index
from triagebot.engine.dataset import read_labelled
from triagebot.engine.embed import HashingEmbedder
from triagebot.engine.index import IssueIndex

DATA = Path(__file__).with_name("engine_data.jsonl")
DS_REPO = "microsoft/DeepSpeed"

FINAL_ERROR = (
    "torch.distributed.DistBackendError: [Rank 7] NCCL watchdog thread terminated with exception: "
    "NCCL error: unhandled cuda error, NCCL version 2.18.1"
)
TEMPLATE_HINTS = (
    "A clear and concise description of what the bug is.",
    "Steps to reproduce the behavior:",
    "Please run ds_report to give us details about your setup.",
)
HEADINGS = (
    "**Describe the bug**", "**To Reproduce**", "**Expected behavior**", "**ds_report output**",
    "**System info (please complete the following information):**", "**Launcher context**",
    "**Docker context**", "**Additional context**",
)


def records() -> list[LabelledIssue]:
    return read_labelled(DATA)


def hashing_index(recs: list[LabelledIssue] | None = None) -> IssueIndex:
    index, _ = build_index(records() if recs is None else recs, HashingEmbedder())
    return index


def write_index(directory: Path) -> Path:
    hashing_index().save(directory)
    return directory


def training_log(lines: int = 3_000) -> str:
    """A long, boring training log whose only real failure is the last traceback."""
    out = [
        f"[2024-03-0{1 + i % 9} 10:{i % 60:02d}:{i % 60:02d},{i % 1000:03d}] [INFO] [logging.py:96:log_dist] "
        f"[Rank 0] step={i}, skipped=0, lr=[2.9e-05], mom=[(0.9, 0.95)] loss={2.5 - i / 10_000:.4f}"
        for i in range(lines)
    ]
    for rank in range(8):  # the same NCCL failure reported by each of the 8 ranks
        out.append(
            f"[rank{rank}]:[E ProcessGroupNCCL.cpp:1182] [Rank {rank}] NCCL watchdog thread terminated "
            f"with exception: CUDA error: an illegal memory access was encountered"
        )
    out += [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 211, in <module>',
        "    main()",
        '  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1822, in backward',
        "    self.optimizer.backward(loss)",
        FINAL_ERROR,
    ]
    return "\n".join(out)


def deepspeed_issue(log_lines: int = 3_000) -> tuple[str, str]:
    """(title, body) of a report written into DeepSpeed's full bug template."""
    title = "[BUG] NCCL crash in backward with ZeRO-3 on 8x H100"
    body = f"""<!-- {TEMPLATE_HINTS[0]} -->
{HEADINGS[0]}
Training llama-2-13b with ZeRO stage 3 crashes after ~3000 steps in the backward pass on all ranks.

{HEADINGS[1]}
<!-- {TEMPLATE_HINTS[1]} -->
1. `deepspeed --num_gpus 8 train.py --deepspeed ds_config.json`
2. wait for about an hour
![screenshot](https://user-images.githubusercontent.com/1234/5678-abcd.png)

{HEADINGS[2]}
Training should keep going.

{HEADINGS[3]}
<!-- {TEMPLATE_HINTS[2]} -->
```
DeepSpeed general environment info:
torch version .................... 2.1.2+cu121
deepspeed info ................... 0.12.6, unknown, unknown
nvcc version ..................... 12.1
```

```
{training_log(log_lines)}
```

{HEADINGS[4]}
 - OS: Ubuntu 22.04
 - GPU count and types: one machine with 8x H100 80GB
 - Python version: 3.10.12

{HEADINGS[5]}
deepspeed launcher, see https://www.deepspeed.ai/getting-started/ for the docs I followed

{HEADINGS[6]}
N/A
"""
    return title, body


def issue_json(title: str, body: str, **extra: object) -> str:
    return json.dumps({"title": title, "body": body, **extra})
