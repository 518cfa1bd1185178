"""The ONNX embedders give the torch model's vectors; selection by TRIAGEBOT_EMBEDDER."""
from __future__ import annotations

import time

import numpy as np
import pytest

from triagebot.engine import embed

TEXTS = [
    "RuntimeError: NCCL error in ProcessGroupNCCL.cpp: unhandled system error, NCCL version 2.18",
    "ZeRO stage 3 out of memory when saving checkpoint with deepspeed 0.12 on 8 x A100",
    "How do I set tensor model parallel size with pipeline parallelism in Megatron-LM?",
    "hang " * 400,  # longer than the 256-token window
    "empty issue",  # what the pipeline embeds for an issue with no text
]


def test_unknown_backend_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_EMBEDDER", "tensorrt")
    with pytest.raises(ValueError, match="TRIAGEBOT_EMBEDDER must be one of"):
        embed.default_embedder()
    with pytest.raises(ValueError, match="unknown embedder"):
        embed.load_embedder("word2vec")
    assert embed.load_embedder("hashing-test").name == "hashing-test"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Export once into a fresh cache (timed: the first use must stay well under a minute)."""
    from triagebot.engine import embed_onnx

    folder = tmp_path_factory.mktemp("triagebot-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRIAGEBOT_CACHE", str(folder))
        start = time.perf_counter()
        embed_onnx.graph_path(embed.bundled_model_path(), "onnx-int8")
        yield folder, time.perf_counter() - start


@pytest.fixture(scope="module")
def torch_vectors() -> np.ndarray:
    return embed.MiniLMEmbedder().encode(TEXTS)


@pytest.mark.integration
@pytest.mark.parametrize("variant", ["onnx", "onnx-int8"])
def test_onnx_matches_torch(cache, torch_vectors: np.ndarray, variant: str,  # type: ignore[no-untyped-def]
                            monkeypatch: pytest.MonkeyPatch) -> None:
    folder, export_s = cache
    assert export_s < 60
    monkeypatch.setenv("TRIAGEBOT_CACHE", str(folder))
    monkeypatch.setenv("TRIAGEBOT_EMBEDDER", variant)
    embedder = embed.load_embedder(embed.MODEL_NAME)
    assert embedder.name == f"{embed.MODEL_NAME}+{variant}" and embedder.dim == embed.DIM
    vectors = embedder.encode(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == torch_vectors.shape
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    floor = 0.9999 if variant == "onnx" else 0.99
    assert (vectors * torch_vectors).sum(axis=1).min() >= floor
    # one at a time (padding-free) equals the batched run; the cache answers repeats
    single = np.stack([embedder.encode([t])[0] for t in TEXTS[:3]])
    np.testing.assert_allclose(single, vectors[:3], atol=1e-3)


@pytest.mark.integration
def test_batch_larger_than_cache(cache, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from triagebot.engine.embed_onnx import OnnxEmbedder

    monkeypatch.setenv("TRIAGEBOT_CACHE", str(cache[0]))
    texts = [f"issue number {i}" for i in range(6)]
    vectors = OnnxEmbedder("onnx-int8", cache_size=2).encode(texts)
    assert vectors.shape == (6, embed.DIM)


def test_an_index_is_only_queried_by_the_tuned_encoder_that_built_it(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from triagebot import settings

    folder = tmp_path / "encoder"
    folder.mkdir()
    (folder / "encoder.json").write_text('{"name": "triagebot-minilm-supcon-aaaa"}')
    monkeypatch.setattr(settings, "DEFAULT_INDEX", tmp_path)
    with pytest.raises(ValueError, match="built with encoder triagebot-minilm-supcon-bbbb.*rebuild"):
        embed.load_embedder("triagebot-minilm-supcon-bbbb")
    monkeypatch.setattr(settings, "DEFAULT_INDEX", tmp_path / "nowhere")
    with pytest.raises(ValueError, match="ships none"):
        embed.load_embedder("triagebot-minilm-supcon-aaaa")
    with pytest.raises(ValueError, match="no fine-tuned encoder.*TRIAGEBOT_EMBEDDER=onnx-int8"):
        embed.default_embedder("tuned")


@pytest.mark.integration
def test_the_shipped_tuned_encoder_embeds_and_queries_the_seed_index() -> None:
    from triagebot import settings
    from triagebot.engine.index import IssueIndex

    tuned = embed.TunedEncoder.shipped()
    assert tuned is not None and tuned.name.startswith(embed.TUNED_PREFIX)
    assert IssueIndex.load(settings.DEFAULT_INDEX).embedder_name == tuned.name
    embedder = embed.load_embedder(tuned.name)
    vectors = embedder.encode(TEXTS)
    assert embedder.name == tuned.name and vectors.shape == (len(TEXTS), embed.DIM)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # the same problem is closer than another problem (the point of the tuning)
    nccl = embedder.encode(["NCCL timeout in allreduce after 30 minutes, watchdog caught collective"])[0]
    assert float(vectors[0] @ nccl) > float(vectors[2] @ nccl)


def test_length_batches_keep_padded_tokens_within_budget() -> None:
    from triagebot.engine.embed_onnx import length_batches

    lengths = [300, 5, 40, 5, 200, 41, 6, 256, 7]
    batches = length_batches(lengths, budget=100, most=3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # each text once
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(lengths)  # shortest first: texts of similar length share a batch
    for batch in batches:
        longest = max(lengths[i] for i in batch)
        assert len(batch) <= 3
        assert len(batch) == 1 or len(batch) * longest <= 100  # a text over budget runs alone
    assert [len(b) for b in batches] == [3, 2, 1, 1, 1, 1]  # 5 5 6 | 7 40 | 41 | 200 | 256 | 300
    assert length_batches([]) == []
    # without a budget: 32 texts a run, shortest first (the default; int8 vectors as before)
    assert [len(b) for b in length_batches(list(range(70, 0, -1)))] == [32, 32, 6]
    assert length_batches(list(range(70, 0, -1)))[0][0] == 69


@pytest.mark.integration
def test_token_budget_batches_give_the_same_fp32_vectors(cache, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from triagebot.engine import embed_onnx

    monkeypatch.setenv("TRIAGEBOT_CACHE", str(cache[0]))
    embedder = embed_onnx.OnnxEmbedder("onnx")
    texts = [f"issue {i}: " + "allreduce timeout " * (i * 7 % 60) for i in range(40)]
    default = embedder.encode(texts)
    embedder._cache.clear()
    monkeypatch.setattr(embed_onnx, "TOKENS_PER_BATCH", 256)
    np.testing.assert_allclose(embedder.encode(texts), default, atol=1e-5)


def test_physical_cores_count_smt_siblings_once(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from triagebot.engine.embed_onnx import physical_cores

    for cpu, siblings in {0: "0,2", 1: "1,3", 2: "0,2", 3: "1,3"}.items():
        topo = tmp_path / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "thread_siblings_list").write_text(siblings + "\n")
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3, 4})  # cpu4: no topology
    assert physical_cores(tmp_path) == 3
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {2})  # pinned to one hyper-thread
    assert physical_cores(tmp_path) == 1


def test_session_options_one_chain_on_physical_cores() -> None:
    from triagebot.engine.embed_onnx import physical_cores, session_options

    spinning = session_options()
    assert spinning.intra_op_num_threads == physical_cores() and spinning.inter_op_num_threads == 1
    assert spinning.get_session_config_entry("session.intra_op.allow_spinning") == "1"
    quiet = session_options(threads=1, spin=False)
    assert quiet.intra_op_num_threads == 1
    assert quiet.get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.integration
def test_an_int8_vector_does_not_depend_on_the_texts_embedded_with_it() -> None:
    """Dynamic int8 has one activation scale per batch: the index (built in bulk) and a triage
    (one issue) must still compute the same vector for the same text."""
    tuned = embed.TunedEncoder.shipped()
    assert tuned is not None
    embedder = embed.load_embedder(tuned.name)
    together = embedder.encode(TEXTS)
    alone = np.stack([embed.load_embedder(tuned.name).encode([t])[0] for t in TEXTS])
    np.testing.assert_array_equal(together, alone)
