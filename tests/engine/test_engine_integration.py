"""The real model on the seed index: three hand-written reports land in sensible stages and their
similar issues come from the index, never the report itself.

Uses the shipped index at ``index/`` (or ``$TRIAGEBOT_INDEX``); when that is missing or was built
by an older triagebot, an index is built once from ``../shared/data/issues.jsonl`` (~1 min)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support.engine import deepspeed_issue
from triagebot.domain import rules, taxonomy
from triagebot.domain.models import Issue, Triage
from triagebot.engine import relevance
from triagebot.engine.build import build_index
from triagebot.engine.dataset import read_labelled
from triagebot.engine.embed import MODEL_NAME, TunedEncoder, default_embedder, load_embedder
from triagebot.engine.index import IndexError_, IssueIndex, rules_signature
from triagebot.engine.triage import Engine

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "index"
SEED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "issues.jsonl"
DS = "microsoft/DeepSpeed"

NCCL_TIMEOUT = Issue(repo=DS, title="NCCL timeout when training on 2 nodes with the deepspeed launcher", body="""
**Describe the bug**
Single node training works. With 2 nodes (8x A100 each, hostfile with slots=8) every rank hangs
at the first all_reduce and after 30 minutes the job dies:

```
[E ProcessGroupNCCL.cpp:828] [Rank 9] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800561 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.
RuntimeError: NCCL communicator was aborted on rank 9.
```
NCCL_DEBUG=INFO shows `NET/Socket : Using [0]eth0:10.0.0.5<0>` on node 1 and `docker0` on node 2.

**Launcher context**
deepspeed --hostfile hostfile --master_addr 10.0.0.5 train.py --deepspeed ds_config.json
""")  # noqa: E501 - log lines kept verbatim, as users paste them

FUSED_ADAM_BUILD = Issue(repo=DS, title="fused_adam fails to build: CUDA version mismatch", body="""
Installing with `DS_BUILD_FUSED_ADAM=1 pip install deepspeed` fails while compiling the op:

```
Building wheel for deepspeed (setup.py) ... error
  RuntimeError:
  The detected CUDA version (12.1) mismatches the version that was used to compile
  PyTorch (11.8). Please make sure to use the same CUDA versions.
  error: subprocess-exited-with-error
```

ds_report:
```
torch version .................... 2.0.1+cu118
torch cuda version ............... 11.8
nvcc version ..................... 12.1
deepspeed info ................... 0.10.0
```
""")

ZERO3_OOM = Issue(repo=DS, title="CUDA out of memory with ZeRO-3 when fine-tuning llama-2-13b", body="""
Fine-tuning llama-2-13b on one node with 8x A100 40GB, ZeRO stage 3, bf16, micro batch 4,
seq len 4096. The first forward pass crashes on every rank:

```
torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB (GPU 3; 39.39 GiB total capacity; 35.80 GiB already allocated; 1.20 GiB free; 36.93 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.
```
ds_config: {"zero_optimization": {"stage": 3, "overlap_comm": true, "stage3_prefetch_bucket_size": 5e8}, "bf16": {"enabled": true}, "train_micro_batch_size_per_gpu": 4}
""")  # noqa: E501 - log lines kept verbatim, as users paste them


def _usable(directory: Path) -> IssueIndex | None:
    try:
        index = IssueIndex.load(directory)
    except IndexError_:
        return None
    tuned = TunedEncoder.shipped()
    shipped = tuned.name if tuned else MODEL_NAME
    fresh = index.n_features == len(rules.FEATURE_NAMES) and index.embedder_name == shipped
    return index if fresh else None


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:  # type: ignore[no-untyped-def]
    index = _usable(Path(os.environ.get("TRIAGEBOT_INDEX") or SEED))
    if index is None:
        if not SEED_DATA.exists():
            pytest.skip("no current seed index and no labelled data to build one")
        index, _ = build_index(read_labelled(SEED_DATA), default_embedder())
        index.save(tmp_path_factory.mktemp("seed") / "index")
    return Engine(index, load_embedder(index.embedder_name))


@pytest.fixture(scope="module")
def results(engine: Engine) -> dict[str, Triage]:
    return {name: engine.triage(issue) for name, issue in
            [("nccl", NCCL_TIMEOUT), ("build", FUSED_ADAM_BUILD), ("oom", ZERO3_OOM)]}


def _check_common(engine: Engine, result: Triage) -> None:
    assert taxonomy.consistent(result.stage.id, result.symptom.id, result.root_cause.id)
    # links are shown only when they clear the relevance bar (none is a valid answer)
    assert len(result.similar) <= relevance.MAX_LINKS
    for similar in result.similar:
        row = engine.index.row_of((similar.repo, similar.number))
        assert row is not None, similar
        assert engine.index.items[row].title == similar.title


@pytest.mark.integration
def test_nccl_timeout_is_communication(engine: Engine, results) -> None:  # type: ignore[no-untyped-def]
    result = results["nccl"]
    assert result.stage.id in ("S2", "S4"), result.stage
    if result.stage.id == "S4":
        assert result.symptom.id in ("4.7", "4.11", "4.8", taxonomy.UNKNOWN) or result.symptom.abstained
    _check_common(engine, result)


@pytest.mark.integration
def test_cuda_mismatch_build_is_stage_one(engine: Engine, results) -> None:  # type: ignore[no-untyped-def]
    result = results["build"]
    assert result.stage.id == "S1", result.stage
    assert not result.stage.abstained
    assert result.symptom.id in ("1.1", "1.2", taxonomy.UNKNOWN)
    _check_common(engine, result)


@pytest.mark.integration
def test_zero3_oom_is_training(engine: Engine, results) -> None:  # type: ignore[no-untyped-def]
    result = results["oom"]
    assert result.stage.id == "S4", result.stage
    assert result.symptom.id == "4.2" or result.symptom.abstained
    _check_common(engine, result)


@pytest.mark.integration
def test_an_indexed_issue_is_never_its_own_neighbour(engine: Engine, results) -> None:  # type: ignore[no-untyped-def]
    """Pretend the report *is* its closest indexed issue: that issue must then disappear."""
    for name, issue in [("oom", ZERO3_OOM), ("build", FUSED_ADAM_BUILD)]:
        closest = results[name].similar[0]
        again = engine.triage(issue.model_copy(update={"repo": closest.repo, "number": closest.number}))
        assert (closest.repo, closest.number) not in {(s.repo, s.number) for s in again.similar}


@pytest.mark.integration
def test_indexed_issue_text_finds_other_issues(engine: Engine) -> None:
    if not SEED_DATA.exists():
        pytest.skip("labelled data not available")
    record = read_labelled(SEED_DATA)[0]
    result = engine.triage(record)
    assert record.key not in {(s.repo, s.number) for s in result.similar}


@pytest.mark.integration
def test_full_template_report_with_long_log(engine: Engine) -> None:
    title, body = deepspeed_issue(1_500)  # ~200 kB: under the Issue model's body cap
    result = engine.triage(Issue(repo=DS, title=title, body=body))
    assert result.stage.id in ("S2", "S4"), result.stage
    _check_common(engine, result)


def test_shipped_seed_index_matches_this_code() -> None:
    """The committed ``index/`` must be rebuilt whenever the rule features change."""
    if not (SEED / "manifest.json").exists():
        pytest.skip("no seed index shipped")
    manifest = json.loads((SEED / "manifest.json").read_text())
    tuned = TunedEncoder.shipped()
    assert manifest["embedder"] == (tuned.name if tuned else MODEL_NAME), (
        "index/ was built by another encoder: run scripts/build_seed_index.sh")
    assert manifest["features_id"] == rules_signature(), (
        "index/ is stale: run `triagebot index build --data ../shared/data/issues.jsonl --out index`")
