"""all-MiniLM-L6-v2 through ONNX Runtime: the same vectors as sentence-transformers, faster on CPU.

The ONNX graph is produced locally from the bundled safetensors (``torch.onnx``; no network, no
``optimum``) the first time it is needed, then cached on disk, optionally as an int8 dynamically
quantised copy. The graph includes mean pooling and L2 normalisation, exactly as the model's
sentence-transformers pipeline does, so callers get finished sentence vectors. Texts are cut at
256 tokens (the model's ``max_seq_length``), sorted by length and batched with texts of similar
length (``length_batches``), so padding costs little."""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from triagebot import settings
from triagebot.engine.model_files import DIM, MODEL_NAME, bundled_model_path, quiet_offline_libraries

MAX_TOKENS = 256
BATCH = 32
# Optional padded-token budget per ONNX run (rows x longest), in place of BATCH texts a run. It
# saves CPU (977 shared texts, int8, one thread: 19.9 s at 32 texts a batch; 17.8 s at 1024
# tokens; 17.3 s at 512) but is off: dynamic int8 quantises each batch with one activation scale,
# so an int8 vector depends on the texts batched with it, and regrouping alone moved the 5-fold
# posted accuracy of stage by -3.7 points (forced accuracy by <= 0.8) -- see bench/README.md.
TOKENS_PER_BATCH: int | None = None
MAX_BATCH = 64
VARIANTS = ("onnx", "onnx-int8")


def cache_dir(given: Path | None = None) -> Path:
    """Where exported graphs live: ``given``, else the configured cache (``Settings.cache_dir``,
    from TRIAGEBOT_CACHE), else ``~/.cache/triagebot``."""
    return given or settings.current().cache_dir or Path.home() / ".cache" / "triagebot"


def _model_key(model_path: str) -> str:
    """Changes whenever the bundled weights do (size and mtime: cheap, no 90 MB hash per start)."""
    weights = os.stat(Path(model_path) / "model.safetensors")
    raw = f"{MODEL_NAME}|{weights.st_size}|{weights.st_mtime_ns}|{MAX_TOKENS}|v2"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def graph_path(model_path: str, variant: str, cache: Path | None = None) -> Path:
    """The ONNX file of ``variant`` for these weights, exporting/quantising it on first use."""
    folder = cache_dir(cache) / "onnx" / _model_key(model_path)
    fp32 = folder / "model.onnx"
    if not fp32.exists():  # said aloud: ~10 s the first time (`triagebot model prepare` does it ahead)
        logging.getLogger(__name__).warning("exporting %s to ONNX in %s (once, about 10 s)", MODEL_NAME, folder)
        _atomic_write(fp32, lambda tmp: export_fused(model_path, tmp))
    if variant == "onnx":
        return fp32
    int8 = folder / "model.int8.onnx"
    if not int8.exists():
        _atomic_write(int8, lambda tmp: quantise(fp32, tmp))
    return int8


def _atomic_write(target: Path, produce) -> None:  # type: ignore[no-untyped-def]
    """Workers starting together may both export; each writes a temp file and renames it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        produce(Path(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _quiet_load(model_path: str, **kwargs):  # type: ignore[no-untyped-def]
    quiet_offline_libraries()
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    return AutoModel.from_pretrained(model_path, **kwargs)


def export(model_path: str, out: Path) -> None:
    """Trace the transformer plus pooling to ONNX with dynamic batch and sequence axes."""
    import torch

    class Sentence(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = _quiet_load(
                model_path, local_files_only=True, attn_implementation="eager").eval()

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    ids = torch.ones((2, 16), dtype=torch.int64)
    axes = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer notes about constant Python branches
        torch.onnx.export(
            Sentence(), (ids, ids, torch.zeros_like(ids)), str(out), dynamo=False,
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["embedding"], opset_version=17,
            dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes,
                          "embedding": {0: "batch"}},
        )


def export_fused(model_path: str, out: Path) -> None:
    """Export, then let ONNX Runtime's BERT optimiser fuse embeddings, attention, GELU and
    layer norms (about 1.3x faster on CPU, same numbers to 1e-6)."""
    from onnxruntime.transformers.optimizer import optimize_model

    raw = out.with_name(out.name + ".raw")
    try:
        export(model_path, raw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fused = optimize_model(str(raw), model_type="bert", num_heads=12, hidden_size=DIM)
        fused.save_model_to_file(str(out))
    finally:
        raw.unlink(missing_ok=True)


def quantise(fp32: Path, out: Path) -> None:
    """int8 weights, activations quantised on the fly (dynamic quantisation of MatMuls).

    The feed-forward down-projections stay fp32: their inputs (GELU outputs) have outliers that
    8 bits resolve badly. Quantising them too took the worst dev-set cosine to torch from 0.993
    to 0.985 for no measurable speed gain."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    keep = [n.name for n in onnx.load(str(fp32), load_external_data=False).graph.node
            if n.op_type == "MatMul" and "/output/dense/" in n.name and "/attention/" not in n.name]

    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.ERROR))  # it logs a pre-processing tip on the root logger
    try:
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Attention"], nodes_to_exclude=keep,
                         extra_options={"DefaultTensorType": 1})  # FLOAT: fused ops hide types
    finally:
        root.setLevel(level)


# A fine-tuned graph's tensors that are byte for byte the base model's (the frozen word embeddings:
# 47 of its 69 MB) are not shipped twice: the graph names them with this location prefix and the
# loader fills them from the bundled safetensors (``slim`` / ``graph_bytes``).
BASE_TENSOR = "triagebot-base-model:"
_SLIM_MIN_BYTES = 1 << 20


def slim(graph: Path, out: Path, model_path: str | None = None) -> int:
    """Write ``graph`` to ``out`` with every large tensor equal to the base model's replaced by a
    reference to it; returns the bytes saved."""
    import onnx
    from onnx import numpy_helper
    from safetensors import safe_open

    model = onnx.load(str(graph))
    saved = 0
    with safe_open(str(Path(model_path or bundled_model_path()) / "model.safetensors"), "np") as base:
        names = set(base.keys())
        for tensor in model.graph.initializer:
            key = tensor.name.removeprefix("bert.")
            if key not in names:
                continue
            value = numpy_helper.to_array(tensor)
            if value.nbytes < _SLIM_MIN_BYTES or not np.array_equal(value, base.get_tensor(key)):
                continue
            tensor.ClearField("raw_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
            del tensor.external_data[:]
            entry = tensor.external_data.add()
            entry.key, entry.value = "location", BASE_TENSOR + key
            saved += value.nbytes
    onnx.save(model, str(out))
    return saved


def graph_bytes(graph: Path, model_path: str | None = None) -> bytes:
    """The serialised graph with the tensors ``slim`` left out filled in from the base model."""
    import onnx
    from safetensors import safe_open

    model = onnx.load(str(graph), load_external_data=False)
    refs = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL
            and any(e.key == "location" and e.value.startswith(BASE_TENSOR) for e in t.external_data)]
    if refs:
        with safe_open(str(Path(model_path or bundled_model_path()) / "model.safetensors"), "np") as base:
            for tensor in refs:
                key = next(e.value for e in tensor.external_data if e.key == "location")
                value = base.get_tensor(key.removeprefix(BASE_TENSOR))
                if list(value.shape) != list(tensor.dims):
                    raise RuntimeError(f"{graph}: base tensor {key} has shape {value.shape}, "
                                       f"the graph expects {list(tensor.dims)}")
                del tensor.external_data[:]
                tensor.data_location = onnx.TensorProto.DEFAULT
                tensor.raw_data = np.ascontiguousarray(value, dtype="<f4").tobytes()
    return model.SerializeToString()


def physical_cores(sysfs: Path = Path("/sys/devices/system/cpu")) -> int:
    """Cores this process may run on, counting SMT siblings once: ONNX Runtime's intra-op pool
    gains nothing from a second hyper-thread on a core and loses to contention."""
    allowed = os.sched_getaffinity(0)
    cores: set[str] = set()
    for cpu in allowed:
        siblings = sysfs / f"cpu{cpu}" / "topology" / "thread_siblings_list"
        try:
            cores.add(siblings.read_text().strip())
        except OSError:
            cores.add(str(cpu))
    return max(1, len(cores))


def session_options(threads: int | None = None, spin: bool = True):  # type: ignore[no-untyped-def]
    """ONNX Runtime options for one embedding session: intra-op threads = physical cores, no
    inter-op pool (the graph is one chain), every graph optimisation, the memory arena kept.
    ``spin=False`` stops idle pool threads from busy-waiting: slower on a quiet machine, kinder to
    neighbours on a shared one."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or physical_cores()
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_cpu_mem_arena = True
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    return options


def length_batches(lengths: Sequence[int], budget: int | None = None, most: int = BATCH) -> list[list[int]]:
    """Positions of ``lengths`` sorted by length (stable), cut every ``most`` rows; with a
    ``budget``, also wherever a batch's padded size (rows x its longest) would pass ``budget``
    tokens (a text longer than the budget runs alone), so short texts run many to a batch."""
    batches: list[list[int]] = []
    current: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        full = len(current) >= most or (budget is not None and (len(current) + 1) * lengths[index] > budget)
        if current and full:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime (``onnx`` fp32 or ``onnx-int8``), cached by content hash."""

    dim = DIM

    def __init__(self, variant: str = "onnx-int8", model_path: str | None = None,
                 cache_size: int = 4096, threads: int | None = None,
                 cache: Path | None = None, graph: Path | None = None,
                 name: str | None = None, spin: bool = True) -> None:
        """``graph``: a finished ONNX file (with ``tokenizer.json`` beside it), such as the
        fine-tuned encoder, used as is instead of exporting the bundled weights; ``name`` is then
        what indexes built with it record."""
        if variant not in VARIANTS:
            raise ValueError(f"unknown ONNX variant {variant!r} (one of {', '.join(VARIANTS)})")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_path = model_path or bundled_model_path()
        self.name = name or f"{MODEL_NAME}+{variant}"
        self.variant = variant
        tokenizer_dir = graph.parent if graph is not None else Path(model_path)
        self._tok = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.no_padding()  # the tokenizer file pads to 128; we pad each batch to its longest
        # Dynamic int8 quantises activations with one scale per batch, so a text's vector would
        # depend on the texts batched with it (cosine down to 0.984 between batches of 32 and of
        # 1 on the shared data). A triage embeds one issue: int8 graphs embed every text alone,
        # so the vectors an index is built and calibrated on are the ones triage computes (at
        # ~30% more CPU for ingestion; bench/ingest.py).
        quantised = variant == "onnx-int8" if graph is None else "int8" in graph.name
        self._batch = 1 if quantised else BATCH
        source: str | bytes = (graph_bytes(graph, model_path) if graph is not None
                               else str(graph_path(model_path, variant, cache)))
        self._session = ort.InferenceSession(source, session_options(threads, spin),
                                             providers=["CPUExecutionProvider"])
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode("utf-8", "replace")).hexdigest() for t in texts]
        todo = {k: t for k, t in zip(keys, texts) if k not in self._cache}
        pending = list(todo)
        ids = [e.ids for e in self._tok.encode_batch(list(todo.values()))] if todo else []
        fresh: dict[str, np.ndarray] = {}
        budget, most = ((TOKENS_PER_BATCH, MAX_BATCH) if TOKENS_PER_BATCH and self._batch > 1
                        else (None, self._batch))
        for batch in length_batches([len(t) for t in ids], budget, most):
            fresh.update(zip([pending[i] for i in batch], self._run([ids[i] for i in batch])))
        for key, vec in fresh.items():
            self._remember(key, vec)
        if not keys:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([fresh[k] if k in fresh else self._cache[k] for k in keys])

    def _run(self, token_ids: list[list[int]]) -> np.ndarray:
        width = max(len(t) for t in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, tokens in enumerate(token_ids):
            ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return self._session.run(None, feeds)[0].astype(np.float32)

    def _remember(self, key: str, vec: np.ndarray) -> None:
        if self._cache_size <= 0:
            return
        self._cache[key] = vec
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
