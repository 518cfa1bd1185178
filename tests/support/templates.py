"""Issues "as filed": a clean report poured into its repository's real issue template.

The labelled data are rewritten, clean opening reports; real ones arrive inside the trackers'
templates (tests/fixtures/issue_templates/, copied verbatim), with unfilled hints and
placeholders, ``_No response_`` fields, checklists, ``ds_report``/``collect_env`` dumps and long
logs of repeated rank lines. ``as_filed`` builds such a version deterministically from a seed, so
the tests and ``scripts/template_robustness.py`` measure the cleaning on the same material.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

TEMPLATES = Path(__file__).resolve().parents[1] / "fixtures" / "issue_templates"
NO_RESPONSE = "_No response_"

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.S)
_HEADING_ONLY = re.compile(r"^\s*(?:#{1,6}\s+.*|\*\*[^*\n]{1,80}\*\*:?)\s*$", re.M)
_LOG_LIKE = re.compile(r"Traceback|Error\b|error:|Exception|\bFAILED\b|Killed|NCCL|nccl|WARN", re.I)


def template(name: str) -> str:
    """One template's text, as the repository holds it."""
    return (TEMPLATES / name).read_text(encoding="utf-8")


def template_for(repo: str, title: str) -> str:
    """The template a reporter of ``repo`` would pick for this title."""
    name = repo.lower()
    if "megatron-lm" in name:
        return "megatron_question.md" if "[question]" in title.lower() else "megatron_bug.md"
    if "deepspeed" in name:
        return "deepspeed_inference_bug_report.md" if "inference" in title.lower() \
            else "deepspeed_training_bug_report.md"
    if "colossal" in name:
        return "colossalai_bug-report.yml"
    if "horovod" in name:
        return "horovod_bug_report.md"
    if "accelerate" in name:
        return "accelerate_bug-report.yml"
    return "pytorch_bug-report.yml"


@dataclass(frozen=True)
class Parts:
    """A clean report taken apart: the reporter's prose, code blocks and log blocks."""

    prose: str
    code: list[str]
    logs: list[str]


def parts(body: str) -> Parts:
    """Prose (headings dropped, blocks out), code blocks, and blocks that look like output."""
    blocks = _FENCE.findall(body)
    prose = _HEADING_ONLY.sub("", _FENCE.sub("\n", body))
    prose = re.sub(r"\n{3,}", "\n\n", prose).strip()
    logs = [b.strip("\n") for b in blocks if _LOG_LIKE.search(b)]
    code = [b.strip("\n") for b in blocks if not _LOG_LIKE.search(b)]
    return Parts(prose, code, logs)


def fenced(text: str, lang: str = "") -> str:
    return f"```{lang}\n{text}\n```"


# ---- environment dumps, in the formats the tools print -------------------------------------

@dataclass(frozen=True)
class Versions:
    torch: str = "2.1.2"
    cuda: str = "12.1"
    python: str = "3.10.12"
    gpu: str = "NVIDIA A100-SXM4-80GB"
    gpus: int = 8
    deepspeed: str = "0.12.6"


def versions(rng: random.Random) -> Versions:
    torch, cuda = rng.choice([("2.0.1", "11.7"), ("2.1.2", "12.1"), ("2.3.1", "12.1"), ("2.4.0", "12.4"),
                              ("1.13.1", "11.7")])
    gpu = rng.choice(["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB",
                      "NVIDIA A800-SXM4-80GB", "NVIDIA GeForce RTX 3090"])
    return Versions(torch, cuda, rng.choice(["3.8.18", "3.10.12", "3.11.9"]), gpu, rng.choice([1, 2, 4, 8]),
                    rng.choice(["0.10.3", "0.12.6", "0.14.4", "0.16.2"]))


def ds_report(v: Versions) -> str:
    """``ds_report`` as DeepSpeed prints it, warnings included."""
    ops = ["async_io", "fused_adam", "cpu_adam", "cpu_adagrad", "cpu_lion", "evoformer_attn", "fused_lamb",
           "fused_lion", "inference_core_ops", "cutlass_ops", "transformer_inference", "quantizer",
           "ragged_device_ops", "ragged_ops", "random_ltd", "sparse_attn", "spatial_inference", "transformer",
           "stochastic_transformer"]
    rows = [f"{op} {'.' * max(2, 23 - len(op))} [NO] ....... [OKAY]" for op in ops]
    rows.insert(0, " [WARNING]  async_io requires the dev libaio .so object and headers but these were not found.")
    rows.insert(1, " [WARNING]  async_io: please install the libaio-dev package with apt")
    rows.insert(2, " [WARNING]  If libaio is already installed (perhaps from source), try setting the CFLAGS "
                   "and LDFLAGS environment variables to where it can be found.")
    rows.insert(16, f" [WARNING]  sparse_attn requires a torch version >= 1.5 and < 2.0 but detected {v.torch[:3]}")
    rows.insert(17, " [WARNING]  using untested triton version (2.1.0), only 1.0.0 is known to be compatible")
    sep = "-" * 50
    py = v.python[:4].rstrip(".")
    return "\n".join([
        "[2024-03-11 09:12:44,118] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator "
        "to cuda (auto detect)",
        sep, "DeepSpeed C++/CUDA extension op report", sep,
        "NOTE: Ops not installed will be just-in-time (JIT) compiled at",
        "      runtime if needed. Op compatibility means that your system",
        "      meet the required dependencies to JIT install the op.", sep,
        "JIT compiled ops requires ninja", "ninja .................. [OKAY]", sep,
        "op name ................ installed .. compatible", sep, *rows, sep,
        "DeepSpeed general environment info:",
        f"torch install path ............... ['/usr/local/lib/python{py}/dist-packages/torch']",
        f"torch version .................... {v.torch}",
        f"deepspeed install path ........... ['/usr/local/lib/python{py}/dist-packages/deepspeed']",
        f"deepspeed info ................... {v.deepspeed}, unknown, unknown",
        f"torch cuda version ............... {v.cuda}",
        "torch hip version ................ None",
        f"nvcc version ..................... {v.cuda}",
        f"deepspeed wheel compiled w. ...... torch {v.torch[:3]}, cuda {v.cuda}",
        "shared memory (/dev/shm) size .... 251.77 GB",
    ])


def collect_env(v: Versions) -> str:
    """``python -m torch.utils.collect_env``, lscpu section and library list included."""
    gpus = [f"GPU {i}: {v.gpu}" for i in range(v.gpus)]
    return "\n".join([
        "Collecting environment information...",
        f"PyTorch version: {v.torch}+cu{v.cuda.replace('.', '')}", "Is debug build: False",
        f"CUDA used to build PyTorch: {v.cuda}", "ROCM used to build PyTorch: N/A", "",
        "OS: Ubuntu 22.04.4 LTS (x86_64)", "GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0",
        "Clang version: Could not collect", "CMake version: version 3.27.9", "Libc version: glibc-2.35", "",
        f"Python version: {v.python} (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)",
        "Python platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35", "Is CUDA available: True",
        f"CUDA runtime version: {v.cuda}.105", "CUDA_MODULE_LOADING set to: LAZY",
        "GPU models and configuration: ", *gpus, "", "Nvidia driver version: 535.161.08",
        "cuDNN version: Probably one of the following:",
        "/usr/lib/x86_64-linux-gnu/libcudnn.so.8.9.2",
        "/usr/lib/x86_64-linux-gnu/libcudnn_adv_infer.so.8.9.2",
        "HIP runtime version: N/A", "MIOpen runtime version: N/A", "Is XNNPACK available: True", "",
        "CPU:", "Architecture:                       x86_64",
        "CPU op-mode(s):                     32-bit, 64-bit",
        "Address sizes:                      46 bits physical, 57 bits virtual",
        "Byte Order:                         Little Endian", "CPU(s):                             128",
        "On-line CPU(s) list:                0-127", "Vendor ID:                          GenuineIntel",
        "Model name:                         Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz",
        "CPU family:                         6", "Thread(s) per core:                 2",
        "Core(s) per socket:                 32", "Socket(s):                          2",
        "L3 cache:                           96 MiB (2 instances)",
        "NUMA node(s):                       2", "NUMA node0 CPU(s):                  0-31,64-95",
        "Vulnerability Itlb multihit:        Not affected",
        "Vulnerability Mmio stale data:      Mitigation; Clear CPU buffers; SMT vulnerable",
        "Vulnerability Retbleed:             Not affected",
        "Vulnerability Spectre v2:           Mitigation; Enhanced IBRS, IBPB conditional, RSB filling",
        "Vulnerability Tsx async abort:      Not affected", "",
        "Versions of relevant libraries:", "[pip3] numpy==1.26.4", "[pip3] nvidia-nccl-cu12==2.20.5",
        f"[pip3] torch=={v.torch}", "[pip3] triton==2.3.1", "[conda] Could not collect",
    ])


def accelerate_env(v: Versions) -> str:
    """``accelerate env``."""
    return "\n".join([
        "- `Accelerate` version: 0.30.1", "- Platform: Linux-5.15.0-105-generic-x86_64-with-glibc2.35",
        "- `accelerate` bash location: /opt/conda/bin/accelerate", f"- Python version: {v.python}",
        "- Numpy version: 1.26.4", f"- PyTorch version (GPU?): {v.torch}+cu{v.cuda.replace('.', '')} (True)",
        "- PyTorch XPU available: False", "- System RAM: 1007.53 GB", f"- GPU type: {v.gpu}",
        "- `Accelerate` default config:", "\t- compute_environment: LOCAL_MACHINE",
        "\t- distributed_type: MULTI_GPU", "\t- mixed_precision: bf16", "\t- use_cpu: False",
        f"\t- num_processes: {v.gpus}", "\t- machine_rank: 0", "\t- num_machines: 1",
        "\t- rdzv_backend: static", "\t- same_network: True",
    ])


def horovod_check_build() -> str:
    """``horovodrun --check-build``."""
    return ("Horovod v0.28.1:\n\nAvailable Frameworks:\n    [X] TensorFlow\n    [X] PyTorch\n    [ ] MXNet\n\n"
            "Available Controllers:\n    [X] MPI\n    [X] Gloo\n\nAvailable Tensor Operations:\n    [X] NCCL\n"
            "    [ ] DDL\n    [ ] CCL\n    [X] MPI\n    [X] Gloo")


def nvidia_smi(v: Versions) -> str:
    """The ``nvidia-smi`` table."""
    head = [
        "+---------------------------------------------------------------------------------------+",
        f"| NVIDIA-SMI 535.161.08             Driver Version: 535.161.08   CUDA Version: {v.cuda}     |",
        "|-----------------------------------------+----------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
        "|=========================================+======================+======================|",
    ]
    rows = []
    for i in range(v.gpus):
        rows += [f"|   {i}  {v.gpu[:22]:<22}  On   | 00000000:{10 + i:02X}:00.0 Off |                    0 |",
                 "| N/A   33C    P0              62W / 400W |      4MiB / 81920MiB |      0%      Default |",
                 "+-----------------------------------------+----------------------+----------------------+"]
    return "\n".join(head + rows)


def pip_list(v: Versions) -> str:
    rows = [("accelerate", "0.30.1"), ("deepspeed", v.deepspeed), ("numpy", "1.26.4"), ("packaging", "24.0"),
            ("torch", v.torch), ("transformers", "4.41.2"), ("triton", "2.3.1")]
    return "Package                  Version\n------------------------ ----------\n" + "\n".join(
        f"{name:<24} {ver}" for name, ver in rows)


def rank_log(rng: random.Random, lines: int, ranks: int = 8) -> str:
    """A training log of thousands of repeated per-rank lines, with the benign warnings every
    torchrun/DeepSpeed job prints (no failure: the report's own error follows it)."""
    out = ["[W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:29500 "
           "(errno: 97 - Address family not supported by protocol).",
           "/usr/local/lib/python3.10/dist-packages/torch/utils/checkpoint.py:429: UserWarning: "
           "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly."]
    for step in range(lines):
        rank = step % ranks
        out.append(f"[2024-03-11 09:{step // 600 % 60:02d}:{step // 10 % 60:02d},{rng.randrange(1000):03d}] "
                   f"[INFO] [logging.py:96:log_dist] [Rank {rank}] step={step // ranks}, skipped=0, "
                   f"lr=[0.0001], mom=[(0.9, 0.95)]")
        if step % 97 == 0:
            out.append(f"[Rank {rank}] iteration {step // ranks:6d} | consumed samples: {step * 32:9d} | "
                       f"lm loss: {2.0 + rng.random():.6E} | grad norm: {rng.random():.3f} | "
                       "number of skipped iterations: 0")
    return "\n".join(out)


# ---- filling a template ----------------------------------------------------------------------

_MD_SECTION = re.compile(r"^\*\*(.+?)\*\*\s*$", re.M)


def _md_sections(text: str) -> list[tuple[str, str]]:
    """(heading line, hint text) of a markdown template, front matter dropped."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    marks = list(_MD_SECTION.finditer(text))
    return [(m.group(0).strip(), text[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(text)].strip("\n"))
            for i, m in enumerate(marks)]


def _slot(heading: str) -> str:
    """Which part of the report a template heading asks for."""
    h = heading.lower()
    for slot, words in (("prose", ("describe the bug", "describe the regression", "bug report", "your question",
                                   "describe the bug")),
                        ("code", ("reproduce",)), ("logs", ("stack trace", "logs")),
                        ("dump", ("ds_report", "environment", "system info"))):
        if any(w in h for w in words):
            return slot
    return "other"


@dataclass(frozen=True)
class Filing:
    """How one reporter filled the template (each choice drawn from the seed)."""

    keep_hints: bool  # the template's hint text left in place above the answer
    dump: str | None  # the tool output pasted (None: none)
    dump_fenced: bool
    long_log: bool  # the log pasted with thousands of rank lines before the error
    image: bool


def _dump(repo: str, rng: random.Random, v: Versions) -> str | None:
    if rng.random() < 0.45:
        return None
    name = repo.lower()
    if "deepspeed" in name:
        return ds_report(v) if rng.random() < 0.8 else collect_env(v)
    if "horovod" in name:
        return horovod_check_build() + "\n\n" + pip_list(v)
    if "accelerate" in name:
        return accelerate_env(v)
    extra = "\n\n" + nvidia_smi(v) if rng.random() < 0.25 else ""
    return collect_env(v) + extra


def filing(repo: str, number: int, seed: int = 0) -> tuple[Filing, random.Random, Versions]:
    rng = random.Random(f"{seed}:{repo}:{number}")
    v = versions(rng)
    dump = _dump(repo, rng, v)
    return Filing(keep_hints=rng.random() < 0.6, dump=dump, dump_fenced=rng.random() < 0.5,
                  long_log=rng.random() < 0.3, image=rng.random() < 0.3), rng, v


def _log_text(p: Parts, f: Filing, rng: random.Random) -> str:
    logs = "\n\n".join(p.logs)
    if f.long_log:
        logs = rank_log(rng, rng.randrange(600, 1800)) + ("\n" + logs if logs else "")
    return fenced(logs) if logs else ""


def _image(rng: random.Random) -> str:
    return f"![image](https://github.com/user-attachments/assets/{rng.getrandbits(64):016x}-4c1d-9f2e)"


def fill_markdown(name: str, title: str, body: str, f: Filing, rng: random.Random) -> str:
    """A markdown template filled as reporters fill it: answers under the headings, the hints
    above them or deleted, the sections they did not answer left as the template had them."""
    p = parts(body)
    sections = _md_sections(template(name))
    slots = [_slot(h) for h, _ in sections]
    code_text = "\n\n".join(fenced(c) for c in p.code)
    log_text = _log_text(p, f, rng)
    answers: dict[str, list[str]] = {"prose": [p.prose], "code": [code_text], "logs": [log_text], "dump": []}
    if "logs" not in slots:  # no log field: the error goes under the description
        answers["prose"].append(log_text)
    if "code" not in slots:
        answers["prose"].append(code_text)
    if f.image:
        answers["prose"].append(_image(rng))
    if f.dump:
        answers["dump"].append(fenced(f.dump) if f.dump_fenced else f.dump)
    out: list[str] = []
    used: set[str] = set()
    for (heading, hint), slot in zip(sections, slots):
        given = [a for a in answers.get(slot, []) if a] if slot not in used else []
        used.add(slot)
        out.append(heading)
        if not given or f.keep_hints:
            out.append(hint)
        out.extend(given)
        out.append("")
    return "\n".join(out).strip() + "\n"


def fill_form(name: str, title: str, body: str, f: Filing, rng: random.Random) -> str:
    """An issue form as GitHub renders the submitted issue: ``### label`` then the answer,
    ``_No response_`` for an empty field, checkboxes as ``- [X]``/``- [ ]``; the form's
    descriptions and markdown fields never reach the body."""
    p = parts(body)
    form = yaml.safe_load(template(name))
    code_text = "\n\n".join(fenced(c, "python") for c in p.code)
    log_text = _log_text(p, f, rng)
    story = [p.prose, code_text, log_text, _image(rng) if f.image else ""]
    out: list[str] = []
    for field in form["body"]:
        kind, attrs = field["type"], field.get("attributes", {})
        if kind == "markdown":
            continue
        label = attrs["label"]
        out += [f"### {label}", ""]
        if kind == "checkboxes":
            options = attrs["options"]
            ticked = rng.randrange(len(options))
            out += [f"- [{'X' if i == ticked or o.get('required') else ' '}] {o['label']}"
                    for i, o in enumerate(options)]
        else:
            low = label.lower()
            if "describe the bug" in low or "reproduction" in low:
                answer = "\n\n".join(s for s in story if s)
                story = []
            elif low in ("environment", "versions", "system info"):
                dump = f.dump or ""
                answer = (fenced(dump, attrs.get("render", "")) if f.dump_fenced or attrs.get("render")
                          else dump) if dump else ""
            elif "expected" in low:
                answer = rng.choice(["", "It should work.", "Training should run without errors."])
            else:
                answer = ""
            out.append(answer or NO_RESPONSE)
        out.append("")
    return "\n".join(out).strip() + "\n"


def as_filed(repo: str, number: int, title: str, body: str, seed: int = 0) -> str:
    """``body`` as its reporter would have filed it through ``repo``'s template."""
    f, rng, _ = filing(repo, number, seed)
    name = template_for(repo, title)
    fill = fill_form if name.endswith(".yml") else fill_markdown
    return fill(name, title, body, f, rng)
