"""Diagnoses a maintainer gives at a glance from the report's own error message. Pure.

Some errors name their cause: ``KeyError: 'RANK'`` means no distributed launcher started the
script, ``Address already in use`` on the rendezvous port means another process holds it. The
classifier learns labels, not such mechanisms, and a comment that only says "Communication
Setup" beside them tells the reporter less than any maintainer would. This table maps an error
signature (a regex over ``Analysed.full``, the cleaned text the engine reads) to a ``Diagnosis``:
what the error means and what to try, in our own words.

Why a table and not the model: each entry is a fact about how the software fails, written once,
and each was measured on the 977 labelled issues of the shared data before it was kept
(``scripts/diagnoses_report.py`` prints the table below from the data, with our reading of every
matched issue's resolution). An entry is kept only when it matched at least two issues and was
right on essentially all of them (>= 0.9), or the mechanism is certain because the error
message itself states it ("Ninja is required", "Unsupported gpu architecture", NumPy's removed
aliases). The shared issues are short rewrites, so errors frequent on the trackers can match
none of them: such an entry is kept for its message alone, tested on the real message and on
a near miss that reads alike (``tests/domain/test_diagnoses.py``), and never states a label
(``states`` needs >= 3 measured matches). Signatures that were tried and dropped are listed in
the script, with why. An error the report says it got past, just after quoting it ("After
renaming the argument it goes further", "I got past that"), is not diagnosed (``_got_past``):
the text would answer what the reporter already solved.

Measured (matched issues / right, by the annotators' labels and the resolution text):

====================  =======  =====  =============================================================
id                    matched  right  implied ids and their agreement with the labels
====================  =======  =====  =============================================================
cuda_mismatch         2        2      S1 2/2, R1.1 2/2, F2 1/1 (+ the env rule: 0 in the data)
apex_cuda_mismatch    0        -      (certain: Apex's own check names PyTorch's CUDA version)
cuda_toolkit_missing  2        2      S1 2/2, R1.4 2/2, F1 2/2
msvc_missing          0        -      (certain: the message names the missing compiler)
ninja_missing         0        -      (certain: "Ninja is required")
unsupported_arch      0        -      (certain: nvcc names the architecture it refuses)
nvcc_gcc_too_new      0        -      (certain: the toolkit's own check names the newest gcc)
libaio_missing        4        4      S1 4/4, 1.1 4/4 -> stated (1 confirmed by the resolution,
                                       3 by DeepSpeed's own refusal of the op)
nccl_header_missing   2        2      S1 2/2, 1.1 2/2 (1 resolved by the NCCL build for the CUDA
                                       release, 1 unresolved with R1.3, a missing dependency)
cub_missing           1        1      S1, 1.1 (resolution: an old CUDA 10.1 toolkit first on PATH;
                                       certain: CUB ships with the toolkit from CUDA 11.0)
nccl_too_old          1        1      S1, 1.1, R1.1 (unresolved; the 2.4 API, labels R1.1)
torch_nccl_mismatch   0        -      (certain: the loader names the NCCL function PyTorch lacks)
build_without_torch   2        2      S1 2/2, 1.1 2/2, R1.2 2/2 (certain: the setup's own check of
                                       torch; DeepSpeed on Windows, Colossal-AI with CUDA_EXT=1)
jit_build_failed      7        7      S1 7/7, 1.1 7/7 (2 resolved by another CUDA toolkit, a cause
                                       it names; 5 unresolved, the compile's failure as the message
                                       says; not stated: it hides the compiler's error)
torch_abi             2        2      S1 2/2
glibcxx               0        -      (certain: the loader names the missing runtime version)
cuda_library_missing  0        -      (certain: the loader names the missing CUDA library)
nvjitlink_mismatch    0        -      (certain: the loader names the nvJitLink release needed)
setuptools_packaging  1        1      S1 1/1, R1.1 1/1 (certain: the import names both; the 1
                                       DeepSpeed 0.14.2's setup importing torch's cpp_extension
                                       under setuptools 70, unresolved)
megatron_helpers      0        -      (certain: the import names Megatron's compiled helpers)
import_name           11       11     S1 10/11, R1.1 10/11, F2 8/8  -> stated (1.2: 10/11)
shadowed_package      1        1      (certain: Python's import names the module; the 1 a user
                                       script named deepspeed.py)
torch_six             0        -      (certain: removed in PyTorch 2.0)
numpy_alias           0        -      (certain: removed in NumPy 1.24, the message says so)
numpy2_abi            0        -      (certain: the message says so)
ds_pydantic2          3        3      S1 3/3, 1.2 3/3, R1.1 3/3 (pydantic 2's own warning on
                                       DeepSpeed's pydantic-1 config; not stated: all 3 unresolved;
                                       DeepSpeed#4839 shows 0.12.5: told it is not that code)
ds_pydantic2_field    1        1      S1, 1.2, R1.1 (pydantic 2's refusal of DeepSpeed 0.7.7's
                                       config classes as they are imported; unresolved)
apex_extensions       0        -      (certain: both modules exist only as Apex's CUDA build)
grad_accum_fusion     1        1      (certain: Megatron's check names the extension; the 1
                                       unresolved, labels R1.3, a missing component)
transformer_engine    1        1      S1 1/1 (certain: the module itself is missing; unresolved,
                                       labels R1.3, a missing dependency)
te_pytorch_import     1        1      S1 1/1 (certain: Transformer Engine's __init__ hides the
                                       import's error; the 1 unresolved, labels R1.1)
te_extensions_renamed 0        -      (certain: the compiled part's name up to 1.7, renamed in 1.8)
accelerate_missing    0        -      (certain: the Trainer's own check of its dependency)
accelerate_no_ds      0        -      (certain: Accelerate's own check of its dependency)
flash_attn_missing    0        -      (certain: Transformers' own check finds no package)
megatron_flash_attn   0        -      (certain: Megatron's own check after the failed import)
unknown_model_type    0        -      (certain: Transformers' own check names the model type)
trust_remote_code     0        -      (certain: the loader's own refusal, or its prompt)
accel_for_device_map  0        -      (certain: Transformers' own check of its dependency)
tokenizer_deps        0        -      (certain: the message names the library)
llama_tokenizer_name  2        2      S3 2/2, 3.1 2/2 (1 resolved by matching the class's spelling,
                                       1 unresolved)
te_mpi_bootstrap      1        1      (certain: Megatron's own warning; the 1 unresolved, its twin
                                       Megatron-LM#608 answered "launch through MPI (PMIx)")
megatron_tp_overlap   0        -      (certain: Megatron's own check; the 1 shared issue quotes the
                                       raising code, not the message, and is not matched)
cuda_max_connections  0        -      (certain: Megatron's own check names the variable)
megatron_old_arg      0        -      (certain: Megatron's check names the successor; the 1 shared
                                       issue says it got past it so, and is not diagnosed)
megatron_dist_ckpt    0        -      (certain: Megatron's own check names both options; the 1
                                       shared issue says it got past it, and is not diagnosed)
overlap_param_gather  0        -      (certain: Megatron's own check names the options)
horovod_extension     0        -      (certain: Horovod's own check names the unbuilt extension)
horovod_controller    1        1      S1 1/1, R1.2 1/1 (resolution: a rebuild with MPI or Gloo)
horovod_old_api       2        2      S1 2/2, 1.2 2/2, R1.1 2/2, F2 2/2 (both resolved: an example
                                       of master run on a release)
colossalai_kernels    4        4      S1 4/4, 1.2 3/4 (unresolved; labels R1.3, a missing part)
colossalai_moved      6        6      S1 6/6, 1.2 6/6  -> stated (1 resolved by an install from
                                       main, 5 unresolved, a module the release lacks; root causes
                                       vary, R1.4 2, R1.1 2, so none implied)
colossalai_launch     0        -      (certain: Python's refusal of the argument 0.3.8 removed)
cpu_adam_not_built    1        1      S3 (the error hides an earlier one; the other shared
                                       issue's, an empty parameter list, is diagnosed itself)
no_kernel_image       0        -      (certain: the message says so)
device_side_assert    1        0      (certain: a kernel's own check; the 1 unverified, its log
                                       stops before the assertion's line; shown only when nothing
                                       else explains)
no_gpu_visible        0        -      (certain: the message says so)
driver_too_old        0        -      (certain: the message says so)
cuda_fabric_manager   0        -      (certain: CUDA's own error code)
cuda_driver_mismatch  0        -      (certain: CUDA's or NVML's own error)
torch_cpu_build       0        -      (certain: torch.cuda's own check of the build)
needs_ampere          0        -      (certain: the message names the GPU generation)
flash_attn_sm80       1        1      (certain: FlashAttention 1.x's own check; the 1 an RTX 3090,
                                       resolved by leaving it off)
bf16_unsupported      0        -      (certain: the frameworks' own check of the device)
ds_fp16_unsupported   1        1      (certain: DeepSpeed's own check of its accelerator; the 1 is
                                       its CPU accelerator, unresolved, a case the text names)
nccl_not_built        0        -      (certain: init_process_group's own check of the build)
colossalai_windows    1        1      (certain: Windows's shell refuses the launcher's `export`;
                                       the 1 unresolved, its twin ColossalAI#2763 answered "Linux
                                       only, use WSL")
colossalai_win_path   0        -      (certain: the traceback's paths are a Windows install)
mpi_not_built         0        -      (certain: init_process_group's own check of the build)
libuv_missing         1        1      S2 1/1, 2.1 1/1, F1 1/1 (resolution: USE_LIBUV=0; certain:
                                       TCPStore's own check)
launcher_env          1        1      S2, R2.1, F1 (certain: the variable is read and absent)
mpi_discovery         0        -      (certain: DeepSpeed's MPI discovery, named beside it)
port_in_use           5        5      S2 5/5, 2.1 5/5, R2.1 5/5, F1 3/3  -> stated
local_rank_arg        1        1      S2 (certain: argparse names the argument it refuses)
duplicate_gpu         1        1      S2, R2.1 (certain: NCCL's own check)
deepspeed_slot        2        2      S2 2/2, R2.1 1/1, F1 1/1 (1 resolved by `--include`)
launcher_not_on_path  1        1      (certain: the shell's own message; horovod#1045, a launcher
                                       script not installed: reinstalled, labels S1)
launcher_missing      0        -      (certain: DeepSpeed's runner names the launcher not found)
openmpi_root          0        -      (certain: mpirun's own refusal names the option)
openmpi_slots         0        -      (certain: mpirun's own count of the slots)
hostfile_format       1        1      S2 1/1 (resolution: the mistyped `slots` line corrected;
                                       certain: the runner's own parser)
ssh_check             1        1      S2 1/1 (resolution: passwordless ssh between the nodes;
                                       certain: the runner's own check)
hostname_i            1        1      S2 1/1 (certain: DeepSpeed's own command; the 1 unresolved, a
                                       hostname without -I in the MPI discovery, as the report
                                       says)
horovod_ssh           0        -      (certain: horovodrun's own check of the remote hosts;
                                       ssh_check no longer matches Horovod's ssh command)
colossalai_run_ssh    2        2      S2 2/2, 2.1 2/2, R2.3 2/2 (certain: paramiko's refusal to log
                                       in, printed by the runner; both unresolved)
invalid_ordinal       0        -      (certain: CUDA's own check of the device index)
megatron_local_rank   1        1      S2 (certain: Megatron's own check; the 1 nodes with 2 and 4
                                       GPUs, under the deepspeed launcher)
lightning_gpu_ids     0        -      (certain: Lightning's own check lists the visible GPUs)
nccl_no_interface     1        1      S2, 2.2 (certain: NCCL's own message)
gloo_ifname           1        1      S2, R2.3 (certain: Gloo names the interface it did not find)
gloo_loopback         1        1      S2 1/1 (resolution: GLOO_SOCKET_IFNAME, confirmed)
shared_memory         1        1      S2 (confirmed by the resolution: /dev/shm made writable)
too_many_open_files   0        -      (certain: the DataLoader's and the OS's own message)
nccl_cuda_oom         0        -      (certain: NCCL's own allocation, named in its warning)
nccl_ib_retry         1        1      (certain: NCCL's own warning gives the verbs status; the 1
                                       2-node inference, unresolved, which cause unsaid)
rendezvous_timeout    1        1      (S3 by its labels: ranks slowed by a CPU-heavy init)
store_wait_clients    0        -      (certain: the store's own count of the ranks)
store_connect         3        3      S2 3/3, 2.2 3/3 (certain: the store's client names the
                                       address; the 3 unresolved, node 0 not hosting the store, 2
                                       on a VirtualBox address)
rdzv_join_timeout     1        1      S2 1/1 (certain: torchrun's join deadline; the 1 unresolved,
                                       the other pods not reaching the store)
dist_not_initialized  0        -      (certain: the message says so; it may hide an earlier error)
dist_init_required    1        1      S2 (certain: DeepSpeed's own check names the option)
dist_init_twice       0        -      (certain: init_process_group's own check)
horovod_init          0        -      (certain: Horovod's own check)
fork_cuda             0        -      (certain: the message says so)
lightning_notebook    0        -      (certain: Lightning's own check names the strategy)
collective_mismatch   0        -      (certain: torch's own check of the collectives)
horovod_mismatch      0        -      (certain: Horovod's own check of the ranks' tensors)
horovod_accumulation  1        1      S4 (certain: the optimizer's own check; the 1 resolved:
                                       step() skipped at an epoch's end)
horovod_shut_down     1        1      (certain: the message names both causes; the 1 resolved
                                       without details)
torchrun_sighup       0        -      (certain: torchrun's own handler names the signal)
nccl_cpu_tensor       1        1      (certain: NCCL's check of the tensor; the 1 is inside the
                                       framework, with CPU offload, as the text allows)
nccl_not_contiguous   0        -      (certain: NCCL's own check, a collective's frame beside it)
ddp_unused            1        1      S4 (certain: the message names the cause)
ddp_ready_twice       0        -      (certain: the reducer's message names both causes)
ddp_no_grad_params    0        -      (certain: DDP's own check)
ddp_device_ids        0        -      (certain: DDP's own check, the message lists the devices)
ddp_mixed_devices     0        -      (certain: DDP's own check lists the device types)
ddp_wrapper_attr      0        -      (certain: the message names DDP, which forwards no attribute)
data_parallel_replica 1        1      (certain: DataParallel's re-raise; the 1 resolved by one
                                       process per GPU)
no_grad_fn            2        2      S4 2/2 (certain: autograd's own check; a reentrant checkpoint
                                       and a framework's lazy tensor, causes the text names, both
                                       unresolved)
checkpoint_recompute  1        1      S4 (certain: checkpoint's own check; the 1 FSDP2's cast
                                       skipped in the rerun)
zero3_partitioned     2        2      (stages differ: S4, S5)
zero_dp_size_changed  1        1      (resolution: zero_to_fp32 and a new run)
zero_to_fp32_files    1        0      (certain: the script's own count; the 1 unverified: which
                                       cause, unsaid)
zero3_empty_param     0        -      (certain: a placeholder of no elements, most often ZeRO-3's;
                                       FSDP's with use_orig_params=True too)
size_mismatch         1        1      (certain: load_state_dict's check; the 1 is a model sharded
                                       before the full weights were loaded, a cause it names)
megatron_ckpt_args    1        1      (certain: Megatron's own check names the argument; the 1 a
                                       tensor parallel size, left open then for want of a
                                       converter)
megatron_data_prefix  1        1      S3, 3.1, R3.2 (certain: Megatron's own check of the .bin/.idx
                                       pair; the 1 a folder)
state_dict_prefix     0        -      (certain when most keys of the longer list pair up by a
                                       wrapper's prefix, which ``_prefix_explains`` checks)
checkpoint_device     0        -      (certain: torch.load's own check of the saved device)
weights_only          0        -      (certain: the message names the PyTorch 2.6 default)
not_weights_file      0        -      (certain: the readers' own check of the file's first bytes)
checkpoint_truncated  0        -      (certain: the readers' own check of the file's end or size)
zero_pipeline         0        -      (certain: DeepSpeed's own check names both)
pipeline_train_batch  0        -      (certain: the pipeline engine's own refusal)
zero_no_sync          0        -      (certain: DeepSpeed's own check names both)
offload_optimizer     0        -      (certain: DeepSpeed's own check names the options)
zero_untested_optim   0        -      (certain: DeepSpeed's own check names the option)
ds_optimizer_name     1        1      (certain: DeepSpeed's own check; the 1 resolved: type Adam
                                       with offload)
ds_config_validation  2        1      (certain: DeepSpeed's pydantic check lists the fields; 1
                                       right, a tp not a dict; 1 unverified, its fields not shown)
ds_onebit_zero        1        1      (certain: DeepSpeed's own check names both)
ds_config_missing     0        -      (certain: deepspeed.initialize's own check)
ds_config_twice       0        -      (certain: deepspeed.initialize's own check)
fp16_and_bf16         0        -      (certain: DeepSpeed's own check of the config)
micro_batch_zero      0        -      (certain: DeepSpeed's own check of the batch sizes)
zero_needs_optimizer  0        -      (certain: DeepSpeed's own check, stages 1 and 2 only)
cpu_optimizer_on_gpu  0        -      (certain: the CPU optimizer's own check names the option)
zero3_device_map      0        -      (certain: Transformers' own refusal names both)
device_map_parallel   0        -      (certain: Accelerate's own refusal)
accelerate_ds_batch   0        -      (certain: Accelerate's own check names the setting)
accelerate_ds_optim   0        -      (certain: Accelerate's own check)
accelerate_reinit     0        -      (certain: Accelerate's own check names the setting)
accelerate_logging    0        -      (certain: Accelerate's own check)
ds_config_mismatch    0        -      (certain: Transformers' and Accelerate's check lists them)
fsdp_wrap_class       0        -      (certain: the message names the class not found)
fsdp_uniform_dtype    0        -      (certain: FSDP's own check names both dtypes)
fsdp_uniform_grad     0        -      (certain: FSDP's own check)
fsdp_device_id        0        -      (certain: FSDP's own check names both devices)
fsdp_offload_moved    0        -      (certain: FSDP's own check names the device)
shardformer_policy    0        -      (certain: the message names the class without a policy)
colossal_zero_fp32    0        -      (certain: the plugin's own check)
colo_init_context     2        2      S3 2/2 (certain: Colossal-AI's own check; both Lightning's
                                       strategy with the model built in __init__, unresolved)
zero_optim_wrapper    1        0      (certain: Colossal-AI's own check; the 1 unverified, an
                                       application's calls)
optimizer_no_params   1        1      (certain: torch's own check; the 1 is pipeline stages
                                       holding only frozen layers, a cause it names)
trainer_no_loss       0        -      (certain: the Trainer's own check lists the batch's keys)
trainer_quantized     0        -      (certain: the Trainer's own check)
unscale_fp16          0        -      (certain: GradScaler's check of the gradients' dtype)
loss_scale_minimum    0        -      (certain: DeepSpeed's own message at the minimum scale)
inference_tensor      0        -      (certain: PyTorch's own check of inference tensors)
autotp_kernel_inject  0        -      (certain: DeepSpeed's own check names the way out; the 1
                                       shared issue says it got past it so, and is not diagnosed)
sigkill               5        5      (stages differ: S3, S4, S5; 2 confirmed by the resolution,
                                       3 by a resource root cause or memory symptom label)
sigbus                3        1      S4 3/3 (1 resolved by a larger --shm-size, 2 unverified:
                                       no confirmed fix, labels a constrained resource)
megatron_layers_pp    0        -      (certain: Megatron's own check of the split)
not_divisible         2        2      (stages differ: S3, S4)
====================  =======  =====  =============================================================

The shown text is a template; the only values quoted from the report are short ones matching
a strict pattern (a CUDA version, a top-level package name), after ``sanitize``
(``values_of``), re-checked when rendered so a stored or hand-made triage cannot smuggle text in.
"""
from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from triagebot.domain import rules, taxonomy
from triagebot.domain.models import Diagnosed, Environment
from triagebot.text import sanitize
from triagebot.text.signal import unprefixed

MAX_SHOWN = 2  # a comment states at most two: more would bury the first under the rest
# What a quoted value may look like (after ``sanitize.neutral``); anything else is not quoted.
VALUE_PATTERNS: Mapping[str, re.Pattern[str]] = MappingProxyType({
    "torch_cuda": re.compile(r"\d{1,2}\.\d{1,2}"),
    "nvcc_cuda": re.compile(r"\d{1,2}\.\d{1,2}"),
    "package": re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}"),
    # a DeepSpeed release from 0.11.2 on, and no other: the only one ``ds_pydantic2`` quotes, as
    # a release that never hands pydantic 2 its pydantic-1 config classes (``_ds_release``)
    "ds_after_shim": re.compile(r"0\.11\.(?:[2-9]|[1-9]\d)|0\.(?:1[2-9]|[2-9]\d)\.\d{1,3}"
                                r"|[1-9]\d?\.\d{1,3}\.\d{1,3}"),
})
_Q = r"""['"‘’`]?"""  # rewritten and pasted reports quote names with any of these, or none
# setuptools 70's missing name: ``setuptools_packaging`` reads it, ``import_name`` leaves it to it
_PKG_RESOURCES_PACKAGING = rf"packaging{_Q},? from {_Q}pkg_resources\b"
# Megatron's compiled dataset helpers: ``megatron_helpers`` reads the import, ``import_name`` leaves
# it to it
_MEGATRON_HELPERS = rf"helpers{_Q},? from {_Q}megatron\.(?:core\.datasets|data){_Q}(?![\w.])"
_LAUNCHER_VARS = r"(?:RANK|LOCAL_RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT)"
# What a wrapper puts before every parameter name: DDP, DataParallel and DeepSpeed's engine
# (``module.``), ``torch.compile`` (``_orig_mod.``).
_WRAPPED = r"(?:module|_orig_mod)\."
_UNWRAP = re.compile(rf"^(?:{_WRAPPED})+")
_QUOTED_KEY = re.compile(r'"([^"\s]{1,300})"')  # a key as ``load_state_dict`` quotes it


def _prefix_explains(match: re.Match[str]) -> bool:
    """Whether the wrapper's prefix explains ``load_state_dict``'s two lists (the match's groups
    ``missing`` and ``unexpected``): more than half the keys of the longer list are keys of the
    other with ``module.`` or ``_orig_mod.`` added or removed. Not when only a first key or two
    pair up beside many others: those are another model's, which no prefix explains."""
    missing, unexpected = (set(_QUOTED_KEY.findall(match[name] or ""))
                           for name in ("missing", "unexpected"))
    paired = ({_UNWRAP.sub("", key) for key in missing}
              & {_UNWRAP.sub("", key) for key in unexpected})
    return 2 * len(paired) > max(len(missing), len(unexpected))


# Requests a named build refusal makes pointless: the error says what is wrong and with which
# toolkit, so a log, a traceback or a script to reproduce it would tell nothing more.
_BUILD_ANSWERED = frozenset({"cuda", "ds_report", "versions", "build_log", "traceback", "repro"})
# Requests a launch-time clash makes pointless: versions, hardware and config play no part in it.
_NOT_ABOUT_VERSIONS = frozenset({"versions", "ds_report", "cuda", "hardware", "config"})


@dataclass(frozen=True)
class Signature:
    """A regex over the report, and the words that spare ``find`` running it over a long log.

    Why: ``find`` runs the whole table over every report. On a 100 KB pasted log a regex with
    ``re.I`` costs about a millisecond, and 5 to 15 when it is an alternation or starts with
    ``\\b``: under ``re.I`` (or with no literal first) the regex engine cannot jump to where the
    pattern's first characters occur, so it tries a match at every position. Finding a word in
    a string costs a few hundredths of a millisecond. So ``words`` (lower case) name literal text
    that every match contains, case aside, beginning at most ``lead`` characters after the
    match's start (a quote, "Unable to JIT load the "); ``find`` lower-cases the report once
    (``_fold``), skips a regex none of whose words occurs there, and tries the others only at
    the positions where a match could start. ``lead=None`` where that has no bound: every match
    then lies within one line, and the regex looks at nothing past it (no ``\\s``, ``$`` or
    look-ahead across the newline), so the lines holding a word are searched, and no others.

    The regex and its flags stay the table's own, and a match is the one a plain search finds
    (``tests/domain/test_diagnoses.py`` compares both on every text it has, in every case): the
    words only say where none can be. So the case-insensitive entries stay case-insensitive, for
    rewritten reports and titles too. An entry without words (most of the case-sensitive ones,
    already fast) is searched whole."""

    regex: re.Pattern[str]
    words: tuple[str, ...] = ()
    lead: int | None = 0

    def __post_init__(self) -> None:
        if any(not w or w != _fold(w) or "\n" in w for w in self.words):
            raise ValueError(f"words must be lower case, on one line: {self.words}")

    def search(self, text: str, folded: str | None = None, pos: int = 0) -> re.Match[str] | None:
        """The regex's first match in ``text`` that starts at ``pos`` or later (as
        ``regex.search(text, pos)``); ``folded`` (``_fold(text)``) lets the words narrow the
        search, without it the whole text is searched."""
        if folded is None or not self.words:
            return self.regex.search(text, pos)
        # The words' places in order, each tried once: the first match found is the one a plain
        # search would stop at. A search that starts past 0 still sees what precedes it (``\b``,
        # look-behinds); one that ends at a newline sees what the newline would show.
        tried = pos - 1  # every start (with lead=None, every line) up to here was tried
        for at in heapq.merge(*(_occurrences(folded, word, pos) for word in self.words)):
            if self.lead is None:
                if at > tried:
                    start = max(pos, folded.rfind("\n", 0, at) + 1)
                    tried = _line_end(folded, at)
                    if (match := self.regex.search(text, start, tried)) is not None:
                        return match
                continue
            for start in range(max(tried + 1, at - self.lead), at + 1):
                if (match := self.regex.match(text, start)) is not None:
                    return match
            tried = max(tried, at)
        return None


def _occurrences(text: str, word: str, start: int = 0) -> Iterator[int]:
    at = text.find(word, start)
    while at >= 0:
        yield at
        at = text.find(word, at + 1)


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


# ``re.I`` also matches "ı" (dotless) and "İ" to "i", and "ſ" (long s) to "s", which
# ``str.lower`` leaves apart (and makes "İ" two characters): mapped first, so that the folded
# text has each character where the report has it, and a word wherever ``re.I`` could match it.
_ODD_CASES = (("İ", "i"), ("ı", "i"), ("ſ", "s"))


def _fold(text: str) -> str:
    """The text lower-cased character for character, for ``Signature.search``."""
    if not text.isascii():
        for odd, plain in _ODD_CASES:
            if odd in text:
                text = text.replace(odd, plain)
    return text.lower()


@dataclass(frozen=True)
class Diagnosis:
    """One error signature and what it means.

    ``pattern`` must match the report; ``context`` (if set) must also occur anywhere in it and
    ``unless`` must not (a port clash outside a rendezvous, a kill after a collective timeout);
    ``verify`` (if set) must accept the match, for what a regex cannot weigh (how many of two
    lists of keys pair up).
    ``text`` is shown as is; ``detailed`` instead when every value it names was quoted, from
    the match or, by ``from_env``, from the report's setup (DeepSpeed's release).
    ``implies``: the taxonomy ids the mechanism implies (what the report script measures);
    ``states``: the dimensions whose implied id may be stated when the classifier does not
    state it, only those measured >= 0.9 over >= 3 matched issues. ``moot``: the requests
    (``missing`` keys) the diagnosis makes pointless. ``same_problem``: two reports showing
    this error are the same problem with the same fix, so one links the other (``linking``).
    Opt-in, for errors that name what to change (a port in use, a header not found, a removed
    API); not for those whose causes vary (a kill by signal, an ABI mismatch of either side,
    ZeRO-3's partitioned weights at any stage, a diverging loss, an error hiding another).
    ``generic``: shown only when no other diagnosis matched (``diagnose``)."""

    id: str
    pattern: Signature
    text: str
    detailed: str = ""
    context: Signature | None = None
    unless: Signature | None = None
    implies: Mapping[str, str] = field(default_factory=dict)
    states: frozenset[str] = frozenset()
    moot: frozenset[str] = frozenset()
    same_problem: bool = False
    verify: Callable[[re.Match[str]], bool] | None = None
    # the values it quotes from the report's setup (``Environment``), added by ``diagnose`` and
    # checked as the match's are (``values_of``): what a ``detailed`` text may say instead
    from_env: Callable[[Environment], Mapping[str, str | None]] | None = None
    # says only that something failed, not why: shown when no other diagnosis explains the report
    # (beside the CUDA mismatch that broke the build, "the compile failed" is noise)
    generic: bool = False


# A message that code prints verbatim, in one case, is matched case-sensitively (flags 0): on a
# 100 KB log that is several times cheaper than ``re.I``, which defeats the regex engine's
# search for the pattern's first characters. The older entries kept ``re.I`` (rewritten reports
# and titles change the case) and name ``words`` instead (``Signature``).
def _re(pattern: str, flags: int = re.I, words: tuple[str, ...] = (),
        lead: int | None = 0) -> Signature:
    return Signature(re.compile(pattern, flags), words, lead)


def _ds_release(env: Environment) -> dict[str, str | None]:
    """DeepSpeed's release as the report's setup shows it, as major.minor.patch ("0.12.5+abc"
    reads "0.12.5"); ``VALUE_PATTERNS`` keeps it only from 0.11.2 on."""
    found = (re.match(r"\d{1,2}\.\d{1,3}\.\d{1,3}(?![\d.])", env.framework_version or "")
             if env.framework == "deepspeed" else None)
    return {"ds_after_shim": found[0] if found else None}


# What ``ds_pydantic2`` and ``ds_pydantic2_field`` say instead of "upgrade" when the report shows a
# DeepSpeed release that never hands pydantic 2 its pydantic-1 classes (see the first's comment).
_PYDANTIC_NOT_THIS_RELEASE = (
    "{what}. DeepSpeed {{ds_after_shim}}, the release this report shows, never has pydantic 2 "
    "build such classes (from 0.11.2 they go to `pydantic.v1`, from 0.15 they are pydantic "
    "2's). So the code raising this is not that release's: a stale or second install first on "
    "the path (compare `deepspeed.__file__` with the traceback's paths), or another package's "
    "pydantic-1 model.")


DIAGNOSES: tuple[Diagnosis, ...] = (
    # DeepSpeed's op builder and torch's cpp_extension refuse to compile with a toolkit of
    # another CUDA version than torch's (torch: another major; DeepSpeed: outside its table of
    # compatible minors). The same message ending "but since the APIs are compatible, accepting
    # this combination" is a warning the build goes past (3 shared issues: a Windows build
    # failure, an offload bug, one unresolved), so it is excluded.
    Diagnosis(
        "cuda_mismatch",
        _re(r"Installed CUDA version (?P<nvcc_cuda>\d+\.\d+) does not match the version torch "
            r"was compiled with (?P<torch_cuda>\d+\.\d+)(?![^\n]{0,12}but since)"
            r"|detected CUDA version \((?P<nvcc_cuda2>\d+\.\d+)\) mismatches the version that "
            r"was used to compile\s+PyTorch \((?P<torch_cuda2>\d+\.\d+)\)",
            words=("installed cuda version ", "detected cuda version (")),
        "PyTorch was built with one CUDA version and the toolkit that compiles the extension "
        "(`nvcc`) is another, which the build refuses. Install the PyTorch build for your "
        "toolkit's CUDA version, or point `CUDA_HOME` at a toolkit matching "
        "`torch.version.cuda`, then build again.",
        detailed="PyTorch was built with CUDA {torch_cuda}, but the toolkit that compiles the "
        "extension (`nvcc`) is CUDA {nvcc_cuda}, which the build refuses. Install the PyTorch "
        "build for CUDA {nvcc_cuda}, or point `CUDA_HOME` at a CUDA {torch_cuda} toolkit, then "
        "build again.",
        implies={"stage": "S1", "root_cause": "R1.1", "fix_pattern": "F2"},
        moot=_BUILD_ANSWERED,
        same_problem=True,
    ),
    # Apex's own check before it builds its CUDA extensions (NVIDIA/apex ``setup.py``,
    # ``check_cuda_torch_binary_vs_bare_metal``, since 2019): ``nvcc -V``'s release against
    # ``torch.version.cuda``, compared whole, so a minor version differing is refused too (DeepSpeed's
    # and torch's own refusals, ``cuda_mismatch``, accept known minor pairs).
    Diagnosis(
        "apex_cuda_mismatch",
        _re(r"Cuda extensions are being compiled with a version of Cuda that does not match the "
            r"version used to compile Pytorch binaries", 0,
            words=("cuda extensions are being compiled with a version of cuda",)),
        "Apex's setup builds its CUDA extensions only with an `nvcc` of exactly PyTorch's CUDA "
        "version (the message names it), and the toolkit it found (`CUDA_HOME`, else the `nvcc` on "
        "`PATH`) is another version; even a minor difference (12.4 against 12.1) is refused. Point "
        "`CUDA_HOME` at a toolkit of that version, or install the PyTorch build for your toolkit. "
        "A minor difference may build fine with that check commented out of `setup.py`, at your own "
        "risk.",
        implies={"stage": "S1", "root_cause": "R1.1"},
        moot=_BUILD_ANSWERED,
        same_problem=True,
    ),
    Diagnosis(
        "cuda_toolkit_missing",
        _re(r"CUDA_HOME does not exist|CUDA_HOME environment variable is not set"
            r"|\bnvcc:? (?:command )?not found|(?:unable|failed) to find nvcc"
            r"|(?:could ?n[o']t|cannot|can't) find nvcc"
            r"|No such file or directory:? ['\"][^'\"\n]{0,200}/nvcc(?:\.exe)?['\"]",
            # "unable to ", "could not " (10 characters) before "find nvcc"
            words=("cuda_home does not exist", "cuda_home environment variable is not set",
                   "nvcc not found", "nvcc: not found", "nvcc command not found",
                   "nvcc: command not found", "find nvcc", "no such file or directory"), lead=10),
        "The build could not find the CUDA compiler: no CUDA toolkit is installed, or "
        "`CUDA_HOME` does not point at one. Install the toolkit matching `torch.version.cuda` "
        "and set `CUDA_HOME` to its directory (the one holding `bin/nvcc`), then build again.",
        implies={"stage": "S1", "root_cause": "R1.4", "fix_pattern": "F1"},
        moot=_BUILD_ANSWERED,
        same_problem=True,
    ),
    # The rest of the build's refusals name what is missing in the message itself.
    Diagnosis(
        "msvc_missing",
        _re(r"Microsoft Visual C\+\+ 14\.0 or greater is required",
            words=("microsoft visual c++ 14.0 or greater is required",)),
        "The build needs Microsoft's C++ compiler, which is not installed. Install the "
        "\"Microsoft C++ Build Tools\" (the \"Desktop development with C++\" workload) and build "
        "again from a shell where `cl.exe` is found (the \"x64 Native Tools Command Prompt\").",
        implies={"stage": "S1"},
        moot=_BUILD_ANSWERED,
        same_problem=True,
    ),
    Diagnosis(
        "ninja_missing",
        _re(r"Ninja is required to load C\+\+ extensions|\bninja: (?:command )?not found"
            rf"|No module named {_Q}ninja{_Q}|due to ninja not being installed",
            words=("ninja is required to load c++ extensions", "ninja: not found",
                   "ninja: command not found", "no module named",
                   "due to ninja not being installed")),
        "PyTorch compiles C++/CUDA extensions with Ninja, and it was not found in this "
        "environment. Install it there (`pip install ninja`), check that `ninja --version` "
        "runs in the same environment, then build again.",
        implies={"stage": "S1"},
        moot=_BUILD_ANSWERED,
        same_problem=True,
    ),
    Diagnosis(
        "unsupported_arch",
        _re(r"nvcc fatal\s*:\s*Unsupported gpu architecture",
            words=("nvcc fatal",)),
        "The CUDA compiler was asked to build for a GPU architecture it does not know: the "
        "toolkit is older than the GPU, or `TORCH_CUDA_ARCH_LIST` names an architecture this "
        "toolkit does not support. Use a toolkit that supports your GPU, or set "
        "`TORCH_CUDA_ARCH_LIST` to the compute capabilities of the GPUs you run on (`8.0` for "
        "A100, `9.0` for H100), then build again.",
        implies={"stage": "S1"},
        moot=frozenset({"build_log", "traceback", "repro"}),
        same_problem=True,
    ),
    # The CUDA toolkit's own check of the host compiler (``include/crt/host_config.h``: ``#error --
    # unsupported GNU version! gcc versions later than N are not supported!``), in every ``nvcc``
    # compile. PyTorch's extension builder passes ``CC`` to ``nvcc`` as ``-ccbin``
    # (``torch/utils/cpp_extension.py``: ``unix_cuda_flags`` for setup builds, the ninja file of
    # JIT builds), which DeepSpeed's, Apex's and Colossal-AI's builds use.
    Diagnosis(
        "nvcc_gcc_too_new",
        _re(r"unsupported GNU version! gcc versions later than \d{1,2} are not supported", 0,
            words=("unsupported gnu version!",)),
        "The CUDA compiler refuses the host compiler: this `nvcc` supports gcc only up to the version "
        "the message names, and the `gcc` it found is newer. Install a supported gcc and name it, "
        "e.g. `CC=gcc-12 CXX=g++-12` where the build runs (PyTorch's extension builder passes `CC` to "
        "`nvcc` as `-ccbin`; for CMake builds, `CUDAHOSTCXX`), or use a newer CUDA toolkit that "
        "supports your gcc. `-allow-unsupported-compiler` only silences the check.",
        implies={"stage": "S1"},
        moot=frozenset({"build_log", "traceback", "repro", "config", "hardware",
                        "launcher_command"}),
        same_problem=True,
    ),
    # DeepSpeed's own refusal (at build or JIT load), the header missing at compile time, or a
    # title that names it with an install or build.
    # Not the ds_report warning about libaio, which every machine without libaio prints
    # whatever its problem is (2 such shared issues: a hang, an inference bug), nor Windows's
    # "cannot open input file 'aio.lib'", a probe the build prints and goes past.
    Diagnosis(
        "libaio_missing",
        _re(rf"Unable to (?:pre-?compile|JIT load the) {_Q}async_io{_Q}|\blibaio\.h:? No such file"
            rf"|\basync_io{_Q}? can'?t be (?:pre-?)?compiled"
            rf"|\b(?:install|build|pre-?compil)\w*[^\n]{{0,60}}\basync_io{_Q}?[^\n]{{0,20}}\berror\b",
            # each branch within one line, the title's with no bound before "async_io"
            words=("async_io", "libaio.h"), lead=None),
        "The `async_io` op (used for NVMe offload) needs libaio's development files, and the "
        "build did not find them. Install them (`libaio-dev` on Debian/Ubuntu, `libaio-devel` "
        "on RHEL/Fedora); if libaio is installed elsewhere (conda, from source), point "
        "`CFLAGS` and `LDFLAGS` at its include and lib directories. If you do not use NVMe "
        "offload (on Windows too), build without it: `DS_BUILD_AIO=0`.",
        implies={"stage": "S1", "symptom": "1.1"},
        states=frozenset({"stage", "symptom"}),
        moot=frozenset({"build_log", "traceback", "repro", "config"}),
        same_problem=True,
    ),
    Diagnosis(
        "nccl_header_missing",
        _re(r"\bnccl\.h:? No such file or directory",
            words=("nccl.h: no such file or directory", "nccl.h no such file or directory")),
        "The compiler did not find NCCL's header `nccl.h`: NCCL's development files are not "
        "installed, or the build looks in another directory. Install them for your CUDA "
        "version (`libnccl-dev` from NVIDIA's repository on Debian/Ubuntu) and point the build "
        "at that NCCL (for Horovod, `HOROVOD_NCCL_HOME`, or `HOROVOD_NCCL_INCLUDE` and "
        "`HOROVOD_NCCL_LIB`).",
        implies={"stage": "S1", "symptom": "1.1"},
        moot=frozenset({"traceback", "repro", "config", "hardware", "launcher_command"}),
        same_problem=True,
    ),
    # CUB's headers ship with the CUDA toolkit itself from CUDA 11.0 on (NVIDIA's CUB README;
    # before, a separate download that PyTorch's build takes from ``CUB_INCLUDE_DIR``); kernels that
    # include them (Colossal-AI's ``moe_cuda_kernel.cu``, PyTorch's own) fail to compile with an older
    # ``nvcc``.
    Diagnosis(
        "cub_missing",
        _re(r"cub/cub\.cuh:? No such file or directory", 0, words=("cub/cub.cuh",)),
        "`cub/cub.cuh` comes with the CUDA toolkit from CUDA 11.0 on, and the compiler did not "
        "find it: the `nvcc` that builds the extension is from an older toolkit, often an old "
        "one found first on `PATH` or named by `CUDA_HOME`. Check `which nvcc` and `nvcc "
        "--version`, then point `CUDA_HOME` and `PATH` at a CUDA 11 or later toolkit matching "
        "`torch.version.cuda`, and build again.",
        implies={"stage": "S1", "symptom": "1.1"},
        moot=frozenset({"build_log", "traceback", "repro", "config", "hardware",
                        "launcher_command"}),
        same_problem=True,
    ),
    # ncclCommGetAsyncError arrived in NCCL 2.4.
    Diagnosis(
        "nccl_too_old",
        _re(rf"{_Q}ncclCommGetAsyncError{_Q} (?:was not declared|is undefined)"
            rf"|undefined (?:symbol|reference to):? {_Q}ncclCommGetAsyncError",
            # "undefined reference to: '" (25 characters) before the name
            words=("ncclcommgetasyncerror",), lead=25),
        "The code is built against an NCCL older than it needs (`ncclCommGetAsyncError` came "
        "with NCCL 2.4): the build found an old NCCL's header or library first. Install a "
        "recent NCCL for your CUDA version and point the build at it (for Horovod, "
        "`HOROVOD_NCCL_HOME`), removing or bypassing the old one.",
        implies={"stage": "S1", "symptom": "1.1", "root_cause": "R1.1"},
        moot=frozenset({"traceback", "repro", "config", "hardware", "launcher_command"}),
        same_problem=True,
    ),
    # The loader's refusal of PyTorch's own CUDA library (``torch/lib/libtorch_cuda.so``): it was
    # linked against the NCCL its wheel requires (``nvidia-nccl-cu12``, pinned by each release), and
    # an older ``libnccl.so.2`` was loaded first (pytorch#119072 and #186591, the maintainers'
    # answer: a second NCCL package or library; ``ncclCommRegister`` and ``ncclMemFree`` came with
    # NCCL 2.19.1, ``src/nccl.h.in``).
    Diagnosis(
        "torch_nccl_mismatch",
        _re(r"libtorch_cuda\.so: undefined symbol: nccl\w{1,60}", 0,
            words=("libtorch_cuda.so: undefined symbol: nccl",)),
        "PyTorch's CUDA library calls an NCCL function that the `libnccl.so.2` loaded lacks: an older "
        "NCCL than the one this PyTorch was built for is found first, from a second `nvidia-nccl-cu*` "
        "package (cu11 beside cu12), a system or conda NCCL on `LD_LIBRARY_PATH`, or another package's "
        "copy. Keep only the NCCL that this PyTorch's wheel requires (`pip list | grep nccl`), and take "
        "other NCCL directories off `LD_LIBRARY_PATH`.",
        implies={"stage": "S1", "root_cause": "R1.1"},
        moot=frozenset({"hardware", "launcher_command", "config", "repro", "traceback",
                        "nccl_debug"}),
        same_problem=True,
    ),
    # The packages' own setup (DeepSpeed's ``setup.py``, with ``DS_BUILD_OPS=1``, the default on
    # Windows, or a ``DS_BUILD_<OP>=1``; Colossal-AI's ``setup.py``, with ``BUILD_EXT=1``,
    # ``CUDA_EXT=1`` in older releases) refuses to pre-compile its ops when the build cannot import
    # torch: not installed, or pip's isolated build environment, which holds none.
    Diagnosis(
        "build_without_torch",
        _re(r"Unable to pre-compile ops without torch installed"
            r"|PyTorch is not found while (?:CUDA|BUILD)_EXT=1", 0,
            words=("unable to pre-compile ops without torch", "pytorch is not found while ")),
        "The build was asked to compile the CUDA/C++ ops now (`DS_BUILD_OPS=1`, a "
        "`DS_BUILD_<OP>=1`, Colossal-AI's `BUILD_EXT=1`), which needs PyTorch, and it could not "
        "import it: PyTorch is not installed, or pip built in an isolated environment without "
        "it. Install PyTorch first, then the package with `pip install --no-build-isolation`; "
        "or install without that variable, and the ops compile when first used.",
        implies={"stage": "S1", "symptom": "1.1", "root_cause": "R1.2"},
        moot=_BUILD_ANSWERED,
        same_problem=True,
    ),
    # PyTorch's JIT build of an extension (``torch/utils/cpp_extension.py``, ``_run_ninja_build``:
    # "Error building extension '<name>'", ninja's output after a colon unless the build was
    # verbose and printed it above): DeepSpeed's ops (``op_builder/builder.py``, ``jit_load``),
    # Colossal-AI's kernels. It says that the compile failed, not why (the compiler's error
    # does), so it links nothing and leaves the build log asked for. After the build refusals
    # above, which name the cause when the report has one.
    Diagnosis(
        "jit_build_failed",
        _re(r"Error building extension '\w{1,80}'", 0, words=("error building extension '",)),
        "PyTorch compiled this extension when first used (a DeepSpeed op such as `fused_adam`, "
        "or another framework's kernel) and the compile failed; the cause is the first line with "
        "`error` in the `ninja` output above it. Most often `nvcc` (`nvcc --version`) is another "
        "CUDA version than PyTorch's (`torch.version.cuda`), or `gcc` is one this `nvcc` does "
        "not support. Fix what that error names, delete `~/.cache/torch_extensions`, and run "
        "again.",
        implies={"stage": "S1", "symptom": "1.1"},
        moot=frozenset({"launcher_command", "config", "repro", "nccl_debug"}),
        generic=True,
    ),
    # Mangled names of PyTorch's C++ namespaces (c10, at, torch). Other undefined symbols were
    # tried and dropped: curand ones were a link bug of the op itself, TensorFlow ones (Horovod)
    # once a broken nightly, so "rebuild" was right on 3 of 6.
    Diagnosis(
        "torch_abi",
        _re(r"undefined symbol:?\s*_ZN[KVRO]*(?:3c10|2at|5torch)", 0),
        "A compiled extension calls PyTorch C++ functions that the imported PyTorch does not "
        "have: it was built against another PyTorch version, or another copy of PyTorch is "
        "being imported. Rebuild it against the installed one (`pip install --no-cache-dir "
        "--no-build-isolation`; for ops built at run time, delete `~/.cache/torch_extensions`) "
        "and check that only one PyTorch is importable.",
        implies={"stage": "S1"},
    ),
    Diagnosis(
        "glibcxx",
        _re(rf"(?:GLIBCXX_3\.4\.\d+|CXXABI_1\.3\.\d+){_Q}? not found",
            words=("glibcxx_3.4.", "cxxabi_1.3.")),
        "A compiled library needs a newer C++ runtime (`libstdc++`) than the one that was "
        "loaded: it was built with a newer compiler than the runtime found first (the "
        "system's, or an older one in a conda environment). Load a newer `libstdc++` first "
        "(`conda install -c conda-forge libstdcxx-ng` in a conda environment, or its directory "
        "first on `LD_LIBRARY_PATH`), or build the package with this system's compiler.",
        implies={"stage": "S1"},
        moot=frozenset({"build_log", "traceback", "repro", "config", "hardware"}),
    ),
    Diagnosis(
        "cuda_library_missing",
        _re(r"lib(?:cudart|cublas|cublasLt|cudnn|cusparse|cufft|curand|cusolver|nvrtc)"
            r"\.so\.\d+[\d.]*: cannot open shared object file",
            # within one line, with no bound on the version's digits before the words
            words=("cannot open shared object file",), lead=None),
        "A compiled package was built against a CUDA library (its major version is in the file "
        "name) that cannot be found when it is loaded: it is a build for another CUDA version "
        "than the one installed, or that CUDA's libraries are not on the library path. Install "
        "the package's build for your CUDA version, or add the directory holding that library "
        "to `LD_LIBRARY_PATH`.",
        implies={"stage": "S1"},
        moot=frozenset({"build_log", "repro", "config", "hardware"}),
        same_problem=True,
    ),
    # The loader's refusal of cuSPARSE (``nvidia/cusparse/lib/libcusparse.so.12``, a dependency of
    # PyTorch's CUDA 12 wheels from 2.1), whose symbols are versioned by the nvJitLink release it
    # needs: an older ``libnvJitLink.so.12`` was loaded first (pytorch#111469 and #134929: a system
    # toolkit's ``lib64`` on ``LD_LIBRARY_PATH``; PyTorch preloads the package's copy since
    # pytorch#131295).
    Diagnosis(
        "nvjitlink_mismatch",
        _re(r"undefined symbol: __nvJitLink\w{1,60}, version libnvJitLink\.so\.\d{2}", 0,
            words=("undefined symbol: __nvjitlink",)),
        "A CUDA library installed with PyTorch (cuSPARSE, as a rule) needs a newer `libnvJitLink` "
        "than the one loaded: most often a system CUDA toolkit's `lib64` on `LD_LIBRARY_PATH` comes "
        "before the `nvidia-nvjitlink-cu12` package, or that package is older than the library. Take "
        "the toolkit's directory off `LD_LIBRARY_PATH` (or put `site-packages/nvidia/nvjitlink/lib` "
        "first), or upgrade `nvidia-nvjitlink-cu12` to match.",
        implies={"stage": "S1", "root_cause": "R1.1"},
        moot=frozenset({"hardware", "launcher_command", "config", "repro", "traceback",
                        "nccl_debug"}),
        same_problem=True,
    ),
    # setuptools 70.0 to 70.3 dropped ``pkg_resources.packaging`` (``pkg_resources/__init__.py``
    # imports ``pkg_resources.extern.packaging``'s modules under other names; 71 to 81 bind
    # ``packaging`` there again by ``import packaging.version``, checked on each wheel; 82 has no
    # ``pkg_resources``, another message). PyTorch before 2.2 imports it at the top of
    # ``torch/utils/cpp_extension.py`` (``from pkg_resources import packaging``, line 28 in
    # 2.1.2; 2.2.0 imports ``torch.torch_version``'s ``Version``), which DeepSpeed's and
    # Colossal-AI's builds import (DeepSpeed#5649: ``op_builder/builder.py``,
    # ``installed_cuda_version``). Before ``import_name``, which skips this import: "install
    # the release the code was written for" would say a newer pkg_resources.
    Diagnosis(
        "setuptools_packaging",
        _re(rf"cannot import name {_Q}{_PKG_RESOURCES_PACKAGING}", 0,
            words=("cannot import name ",)),
        "setuptools 70.0 to 70.3 has no `pkg_resources.packaging`, which the code imports: "
        "PyTorch before 2.2 does in `torch/utils/cpp_extension.py`, which DeepSpeed's and "
        "Colossal-AI's builds import. In the environment that builds or runs it, run `pip "
        "install \"setuptools<70\"` (71 to 81 have it again; if pip builds the package in "
        "isolation, install the package with `--no-build-isolation`), or use PyTorch 2.2 or later, "
        "which no longer imports it.",
        implies={"stage": "S1", "root_cause": "R1.1"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro",
                        "nccl_debug"}),
        same_problem=True,
    ),
    # Megatron's C++ dataset helpers (``megatron/core/datasets/helpers.cpp``): imported as
    # ``from megatron.core.datasets import helpers`` (``gpt_dataset.py``, ``blended_dataset.py``;
    # ``from megatron.data import helpers`` before Megatron-Core, and in Megatron-DeepSpeed, whose
    # ``megatron/data/Makefile`` builds it), a compiled module named ``helpers`` until late 2024,
    # then ``helpers_cpp`` (``megatron/core/datasets/Makefile``, ``LIBNAME``) behind a ``helpers.py``.
    # Megatron-LM's ``_compile_dependencies`` (``megatron/training/initialize.py``) builds it on rank 0
    # (``compile_helpers``: ``make -C megatron/core/datasets``, with ``python3-config``'s suffix), in
    # the checkout the code runs from; Megatron-Core's ``setup.py`` builds it as an ``Extension``
    # from core 0.4 (Dec 2023, "dataset-helpers-pipfix"; the tag ``core_v0.4.0`` has it). Before
    # ``import_name``, which skips this import: "install another release" would mislead.
    Diagnosis(
        "megatron_helpers",
        _re(rf"cannot import name {_Q}{_MEGATRON_HELPERS}"
            rf"|No module named {_Q}megatron\.core\.datasets\.helpers_cpp{_Q}", 0,
            words=("cannot import name ", "no module named ")),
        "Megatron's dataset helpers are a C++ module built on rank 0 at start: `make -C "
        "megatron/core/datasets` (`megatron/data` in Megatron-DeepSpeed and older Megatron-LM), "
        "which needs `g++`, `pybind11` and this environment's `python3-config`. Run it with this "
        "Python; on several nodes without a shared file system, on each node. From a checkout, `pip "
        "install -e .` builds it in place; a plain `pip install .` does not reach the checkout.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config"}),
        same_problem=True,
    ),
    # "from partially initialized module" is a circular import (often a local file named like
    # the package), not another release. Not setuptools 70's missing ``pkg_resources.packaging``
    # (``setuptools_packaging``): another error of the report is still read.
    Diagnosis(
        "import_name",
        _re(rf"\bcannot import name {_Q}(?!{_PKG_RESOURCES_PACKAGING}|{_MEGATRON_HELPERS})\w+{_Q}"
            rf"(?![^\n]{{0,80}}(?:partially initiali[sz]ed|circular import))"
            rf"(?:,? from {_Q}(?P<package>\w+)[\w.]*)?",
            words=("cannot import name",)),
        "The installed package does not provide a name the code imports, so the code was "
        "written for another release of it (often a newer one than the latest on PyPI, or an "
        "older one if the name has since been removed). Install the release the code was "
        "written for, from source if it is not released yet, or use the code that matches "
        "your installed version.",
        detailed="The installed `{package}` does not provide a name the code imports, so the "
        "code was written for another release of it (often a newer one than the latest on "
        "PyPI, or an older one if the name has since been removed). Install the release the "
        "code was written for, from source if it is not released yet, or use the code that "
        "matches your installed version.",
        implies={"stage": "S1", "symptom": "1.2", "root_cause": "R1.1", "fix_pattern": "F2"},
        states=frozenset({"stage", "root_cause", "fix_pattern"}),
        moot=frozenset({"cuda", "hardware", "launcher_command"}),
    ),
    # Python's import system (CPython's ``Lib/importlib/_bootstrap.py``, ``_find_and_load_unlocked``):
    # the parent of a dotted name was imported and has no ``__path__``, a module and no package.
    Diagnosis(
        "shadowed_package",
        _re(rf"No module named {_Q}[\w.]{{1,200}}{_Q}; {_Q}\w{{1,100}}{_Q} is not a package", 0,
            words=("no module named ",)),
        "Python imported a module, not the package, under the name after the semicolon, so it "
        "has no submodules: most often a file of yours named like the package (`deepspeed.py`, "
        "`torch.py`: the script itself, or a file in the working directory or on `PYTHONPATH`) "
        "is imported in its place. Rename that file and delete its `__pycache__`; `python -c "
        "\"import deepspeed; print(deepspeed.__file__)\"` shows which file is imported.",
        implies={"stage": "S1"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    Diagnosis(
        "torch_six",
        _re(rf"No module named {_Q}torch\._six{_Q}",
            # "No module named '" (17 characters) before the module
            words=("torch._six",), lead=17),
        "`torch._six` was removed in PyTorch 2.0, and the code importing it was written for "
        "PyTorch 1.x. Upgrade the package whose file imports it (its later releases support "
        "PyTorch 2), or use a PyTorch 1.x release with this version of it.",
        implies={"stage": "S1", "root_cause": "R1.1", "fix_pattern": "F2"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro"}),
        same_problem=True,
    ),
    Diagnosis(
        "numpy_alias",
        _re(rf"module {_Q}numpy{_Q} has no attribute {_Q}(?:float|int|bool|object|complex|str|long|"
            rf"unicode){_Q}(?!\w)",
            # "module 'numpy' " (15 characters) before the words
            words=("has no attribute",), lead=15),
        "NumPy 1.24 removed the aliases `np.float`, `np.int`, `np.bool` and `np.object`, and the "
        "code using them was written for an older NumPy. Use a NumPy before 1.24 "
        "(`pip install \"numpy<1.24\"`), or a release of that code that uses the builtin types "
        "(`float`, `int`, `bool`, `object`) instead.",
        implies={"stage": "S1", "root_cause": "R1.1", "fix_pattern": "F2"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro"}),
        same_problem=True,
    ),
    Diagnosis(
        "numpy2_abi",
        _re(r"compiled using NumPy 1\.x cannot be run in\s+NumPy 2|_ARRAY_API not found",
            words=("compiled using numpy 1.x cannot be run in", "_array_api not found")),
        "A compiled package was built against NumPy 1.x, and NumPy 2 is installed, which "
        "cannot load it. Install `numpy<2`, or releases of the compiled packages built for "
        "NumPy 2.",
        implies={"stage": "S1", "root_cause": "R1.1", "fix_pattern": "F2"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro"}),
        same_problem=True,
    ),
    # Pydantic 2's check of a model's config (``pydantic/_internal/_config.py``,
    # ``check_deprecated``) warns of the keys it renamed. These two are the config of DeepSpeed's
    # ``DeepSpeedConfigModel`` (``deepspeed/runtime/config_utils.py``), written for pydantic 1,
    # whose classes then fail to build. Only DeepSpeed before 0.11.2 hands them to pydantic 2
    # (``pydantic<2`` required up to 0.11.1): from 0.11.2 (PR #4407, tags v0.11.2 and v0.12.0)
    # it imports pydantic through its ``deepspeed/pydantic_v1.py`` shim, ``pydantic.v1`` under
    # pydantic 2, and from 0.15.0 (PR #5167) it is written for pydantic 2. So a report showing
    # 0.11.2 or later (``_ds_release``: DeepSpeed#4839, 0.12.5, which its reporter could not
    # reproduce in a fresh environment) runs other code than that release's, and is told so
    # (``detailed``) instead of to upgrade. Only with DeepSpeed's code in the report.
    Diagnosis(
        "ds_pydantic2",
        _re(r"Valid config keys have changed in V2:\s{1,4}\* 'allow_population_by_field_name' has "
            r"been renamed to '(?:populate|validate)_by_name'\s{1,4}\* 'validate_all' has been "
            r"renamed", 0, words=("valid config keys have changed in v2:",)),
        "Pydantic 2 is building DeepSpeed config classes written for pydantic 1 (its warning "
        "lists their renamed keys), and the error that follows comes from that. DeepSpeed "
        "before 0.11.2 needs `pydantic<2`: install it, or upgrade DeepSpeed (0.11.2 reads "
        "pydantic 2 through `pydantic.v1`). If yours is 0.11.2 or later, the code raising this "
        "is not its own: a stale or second install first on the path (compare "
        "`deepspeed.__file__` with the traceback's paths).",
        detailed=_PYDANTIC_NOT_THIS_RELEASE.format(
            what="Pydantic 2 warns of config keys it renamed: it is building classes written "
            "for pydantic 1"),
        context=_re(r"\bdeepspeed[./\\]\w", 0, words=("deepspeed",)),
        from_env=_ds_release,
        implies={"stage": "S1", "symptom": "1.2", "root_cause": "R1.1"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Pydantic 2's refusal of a model field without a type annotation
    # (``pydantic/_internal/_model_construction.py``, ``inspect_namespace``), raised by DeepSpeed's
    # pydantic-1 config classes as they are imported (``deepspeed/inference/config.py``,
    # ``BaseQuantConfig``'s ``enabled = True``, 0.7 to 0.11). Only with DeepSpeed's code in the
    # report, as ``ds_pydantic2``.
    Diagnosis(
        "ds_pydantic2_field",
        _re(r"PydanticUserError: A non-annotated attribute was detected", 0,
            words=("pydanticusererror: a non-annotated attribute was detected",)),
        "Pydantic 2 refuses an unannotated field of DeepSpeed config classes written for "
        "pydantic 1. DeepSpeed before 0.11.2 needs `pydantic<2`: install it where the job runs "
        "(`python -c \"import pydantic; print(pydantic.VERSION)\"` there), or upgrade "
        "DeepSpeed. If yours is 0.11.2 or later, the code raising this is not its own: a stale "
        "or second install first on the path (compare `deepspeed.__file__` with the "
        "traceback's paths).",
        detailed=_PYDANTIC_NOT_THIS_RELEASE.format(
            what="Pydantic 2 refuses an unannotated field of a config class written for "
            "pydantic 1"),
        context=_re(r"\bdeepspeed[./\\]\w", 0, words=("deepspeed",)),
        from_env=_ds_release,
        # pydantic 2's warning before it says the same, ``ds_pydantic2``
        unless=_re(r"Valid config keys have changed in V2:", 0,
                   words=("valid config keys have changed in v2:",)),
        implies={"stage": "S1", "symptom": "1.2", "root_cause": "R1.1"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Both names are built only with Apex's CUDA extensions; "apex" on PyPI is another project.
    Diagnosis(
        "apex_extensions",
        _re(rf"No module named {_Q}(?:amp_C|fused_layer_norm_cuda){_Q}",
            # "No module named '" (17 characters) before the module
            words=("amp_c", "fused_layer_norm_cuda"), lead=17),
        "Apex's compiled CUDA extensions (`amp_C`, `fused_layer_norm_cuda`) are not installed: "
        "Apex is missing, was installed with a plain `pip install apex` (another project on "
        "PyPI), or was built without them. Build Apex from its source with the C++ and CUDA "
        "extensions, as its README shows, or turn off the options that use them.",
        implies={"stage": "S1"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro"}),
        same_problem=True,
    ),
    # Megatron-Core's ``ColumnParallelLinear`` (``megatron/core/tensor_parallel/layers.py``) with
    # ``gradient_accumulation_fusion``, which Megatron-LM's arguments turn on unless
    # ``--no-gradient-accumulation-fusion`` is passed, and Apex's extension not importable.
    Diagnosis(
        "grad_accum_fusion",
        _re(r"fused_weight_gradient_mlp_cuda\s{1,4}module is not found", 0,
            words=("fused_weight_gradient_mlp_cuda",)),
        "Megatron fuses the accumulation of weight gradients into their GEMM (on unless "
        "`--no-gradient-accumulation-fusion` is passed) with Apex's "
        "`fused_weight_gradient_mlp_cuda` extension, and it cannot be imported. Pass "
        "`--no-gradient-accumulation-fusion`, or build Apex from its source with its C++ and "
        "CUDA extensions (`APEX_CPP_EXT=1 APEX_CUDA_EXT=1` in current Apex, `--cpp_ext "
        "--cuda_ext` in older ones; CUDA 11 or later).",
        moot=frozenset({"hardware", "launcher_command", "config", "repro", "nccl_debug"}),
        same_problem=True,
    ),
    # Megatron-Core's default layers import it; it is an optional dependency of megatron-core.
    # Only the top-level module: ``transformer_engine_torch`` and the like missing is a broken
    # or mismatched install of it, not a missing one.
    Diagnosis(
        "transformer_engine",
        _re(rf"No module named {_Q}transformer_engine{_Q}(?![\w.])", 0),
        "NVIDIA Transformer Engine is not installed: Megatron-Core's transformer layers "
        "(and FP8 training) use it, and a plain install of Megatron-Core leaves it out. "
        "Install it for your CUDA and PyTorch (`pip install --no-build-isolation "
        "transformer_engine[pytorch]`, or use NVIDIA's PyTorch container, which ships "
        "it). Megatron-LM core 0.8 and later can also run without it (`--transformer-impl "
        "local`); older releases import it at start-up.",
        implies={"stage": "S1"},
        moot=frozenset({"hardware", "launcher_command", "config", "repro"}),
        same_problem=True,
    ),
    # Transformer Engine's top-level ``__init__.py`` imports its PyTorch part in ``try: from . import
    # pytorch / except ImportError: pass`` (since its first release; ``StopIteration`` too from 1.9,
    # no compiled library found), so Megatron's ``te.pytorch.Linear`` then fails on the attribute;
    # ``transformer_engine/pytorch/__init__.py`` loads the compiled ``transformer_engine_torch``
    # (``build_tools/pytorch.py`` from 1.8), which code importing it directly misses, and which an
    # install before 1.8 does not have: its compiled part was ``transformer_engine_extensions``
    # (``setup.py`` to 1.7; the tests of 1.7 import that, those of 1.8 ``transformer_engine_torch``).
    Diagnosis(
        "te_pytorch_import",
        _re(rf"module {_Q}transformer_engine{_Q} has no attribute {_Q}pytorch{_Q}"
            rf"|No module named {_Q}transformer_engine_torch{_Q}(?!\w)", 0,
            # "No module named '" (17 characters) before the words
            words=("transformer_engine",), lead=17),
        "Transformer Engine's PyTorch part failed to import, and `import transformer_engine` hides "
        "why: `python -c \"import transformer_engine.pytorch\"` shows it. Most often its compiled "
        "part is missing (installed without `[pytorch]`) or built for another PyTorch: reinstall it "
        "(`pip install --no-build-isolation transformer_engine[pytorch]`). Before 1.8 that part was "
        "`transformer_engine_extensions`, so code for 1.8 or later fails on an older install: "
        "upgrade it.",
        implies={"stage": "S1"},
        moot=frozenset({"hardware", "launcher_command", "config", "repro"}),
    ),
    # Code written for Transformer Engine up to 1.7 importing its compiled PyTorch part by the old
    # name, on 1.8 or later (``transformer_engine_torch``, see ``te_pytorch_import``).
    Diagnosis(
        "te_extensions_renamed",
        _re(rf"No module named {_Q}transformer_engine_extensions{_Q}(?!\w)", 0,
            # "No module named '" (17 characters) before the words
            words=("transformer_engine_extensions",), lead=17),
        "`transformer_engine_extensions` is what Transformer Engine's compiled PyTorch part was "
        "called up to 1.7; from 1.8 it is `transformer_engine_torch`. The code importing it is older "
        "than the Transformer Engine installed: use a release of that code written for 1.8 or "
        "later, or install `transformer_engine<1.8`.",
        implies={"stage": "S1", "root_cause": "R1.1"},
        moot=frozenset({"hardware", "launcher_command", "config", "repro", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # Transformers' ``TrainingArguments._setup_devices`` (``training_args.py``): the Trainer runs on
    # Accelerate, and ``is_accelerate_available`` (with its minimum version, since 4.30) said no.
    Diagnosis(
        "accelerate_missing",
        # the message's own ": Please run" (": Run" in 4.29), not a sentence that says the same
        _re(r"Using the `?Trainer`? with `?PyTorch`? requires `?accelerate(?:>=[\d.]{1,12})?`?: "
            r"(?:Please )?[Rr]un", 0),
        "Transformers' `Trainer` (its `TrainingArguments`) runs on Accelerate, which is not "
        "installed, or is older than this Transformers release needs, in the environment that "
        "ran the script. Install or upgrade it there (`pip install -U accelerate`, or `pip "
        "install \"transformers[torch]\"`); in a notebook, restart the kernel afterwards: "
        "Transformers checked for it when it was first imported.",
        implies={"stage": "S1"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Accelerate's own check that DeepSpeed is importable when its config or plugin asks for it
    # (``src/accelerate/accelerator.py``, ``Accelerator.__init__``; ``commands/launch.py``,
    # ``deepspeed_launcher``; since 2021): ``is_deepspeed_available`` found no package.
    Diagnosis(
        "accelerate_no_ds",
        _re(r"DeepSpeed is not installed => run `?pip3? install deepspeed", 0,
            words=("deepspeed is not installed => run",)),
        "Accelerate was told to use DeepSpeed (the `accelerate config` answers, `--use_deepspeed`, a "
        "`DeepSpeedPlugin`), and DeepSpeed is not installed in the Python environment that runs it. "
        "Install it there (`pip install deepspeed`; its ops compile when first used, which needs the "
        "CUDA toolkit), check with `python -c \"import deepspeed\"`, or turn DeepSpeed off in the "
        "Accelerate config the launch reads.",
        implies={"stage": "S1"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Transformers' check before it dispatches to FlashAttention 2 (``modeling_utils.py``;
    # ``_flash_attn_2_can_dispatch`` in 4.x, looking the package up with ``find_spec``, and
    # ``_check_and_adjust_attn_implementation`` in 5.x): the package is not installed at all. Not
    # its other refusals (a release too old, the CPU, an old GPU), nor FlashAttention 3.
    Diagnosis(
        "flash_attn_missing",
        _re(r"the package flash_attn seems to be not installed"
            r"|the package for FlashAttention2 doesn['’]?t seem to be installed", 0,
            words=("the package f",)),
        "The model is loaded with FlashAttention 2 (`attn_implementation=\"flash_attention_2\"`, "
        "set by the code, the model's config or a training script's option), and the "
        "`flash-attn` package is not installed in this environment. Install a build matching "
        "your PyTorch and CUDA (`pip install flash-attn --no-build-isolation`; Linux, Ampere or "
        "newer GPUs), or load the model with `attn_implementation=\"sdpa\"`.",
        implies={"stage": "S1"},
        moot=frozenset({"hardware", "ds_report", "nccl_debug", "launcher_command", "config",
                        "repro"}),
        same_problem=True,
    ),
    # Megatron's legacy models with ``--use-flash-attn`` (``megatron/model/transformer.py``, then
    # ``megatron/legacy/model/transformer.py``, Dec 2022 to 2026; Megatron-DeepSpeed keeps it):
    # ``flash_attn_unpadded_func`` is None when ``from flash_attn.flash_attn_interface import ...``
    # raised ImportError, package missing or its compiled part failing to load. That function is
    # flash-attn 1.x's: flash-attn 2 renamed it ``flash_attn_varlen_func``, which Megatron-LM falls
    # back to since July 2023, and Megatron-DeepSpeed's ``--use-flash-attn-v1`` asserts "Cannot
    # import FlashAttention v1" (``--use-flash-attn-v2`` takes the new one). Only with Megatron
    # named: other code may copy the words.
    Diagnosis(
        "megatron_flash_attn",
        _re(r"Please install FlashAttention first, e\.g\., with pip install flash-attn"
            r"|FlashAttention is not installed, please install with pip install flash-attn"
            r"|Cannot import FlashAttention v1\b", 0,
            words=("please install flashattention first",
                   "flashattention is not installed, please install with",
                   "cannot import flashattention v1")),
        "Megatron's `--use-flash-attn` could not import FlashAttention: `flash-attn` is not "
        "installed, or its compiled part does not load (built for another PyTorch or CUDA; `python "
        "-c \"import flash_attn.flash_attn_interface\"` shows which): install a matching build, or "
        "drop the option. With flash-attn 2 installed, code "
        "importing its 1.x `flash_attn_unpadded_func` fails the same way: in Megatron-DeepSpeed "
        "use `--use-flash-attn-v2`, elsewhere a newer checkout.",
        context=_re(r"megatron|--use-flash-attn", re.I, words=("megatron", "--use-flash-attn")),
        implies={"stage": "S1"},
        moot=frozenset({"hardware", "ds_report", "nccl_debug", "launcher_command", "config",
                        "repro"}),
    ),
    # Transformers' ``AutoConfig`` (``models/auto/configuration_auto.py``, ``from_pretrained``): the
    # ``model_type`` of the checkpoint's ``config.json`` is not in its mapping.
    Diagnosis(
        "unknown_model_type",
        _re(r"but Transformers does not recognize this architecture", 0,
            words=("but transformers does not recognize this architecture",)),
        "The checkpoint's `config.json` names a model type that the installed Transformers does "
        "not know: the model is newer than this release. Upgrade Transformers in the environment "
        "that runs the job (`pip install -U transformers`; from its source if no release supports "
        "the model yet), or, if the model's repository ships its own code for it, load it with "
        "`trust_remote_code=True`.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Transformers' ``resolve_trust_remote_code`` (``dynamic_module_utils.py``; before, each auto
    # class's own check, ending "to remove this error", which Datasets used for dataset scripts)
    # and its prompt, which no process started by a launcher can answer.
    Diagnosis(
        "trust_remote_code",
        _re(r"(?:set the option|pass the argument) `trust_remote_code=True` to (?:remove this error"
            r"|permit loading|allow custom code)|Do you wish to run the custom code\? \[y/N\]", 0,
            # "pass the argument " (18 characters) before "`trust_remote_code=True` to "
            words=("`trust_remote_code=true` to ", "do you wish to run the custom code? [y/n]"),
            lead=18),
        "The model's repository (or a dataset's) ships its own Python code, which Transformers "
        "runs only when told to; a job started by a launcher cannot answer the prompt either. "
        "If you trust that code, pass `trust_remote_code=True` to each `from_pretrained` call "
        "for that repository (config, tokenizer and model; a script's `--trust_remote_code`), "
        "in every process, or use a Transformers release that supports the model natively.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Transformers' ``from_pretrained`` (``modeling_utils.py`` in 4.x, ``integrations/accelerate.py``
    # in 5.x): placing the weights while loading is Accelerate's, and ``is_accelerate_available``
    # said no.
    Diagnosis(
        "accel_for_device_map",
        _re(r"Using `low_cpu_mem_usage=True`(?: or|,) a `device_map`(?: or a `tp_plan`)? requires "
            r"Accelerate|Using a `device_map`, `tp_plan`, `torch\.device` context manager or "
            r"setting `torch\.set_default_device\(device\)` requires `accelerate`", 0,
            words=("using `low_cpu_mem_usage=true`", "using a `device_map`, `tp_plan`")),
        "The model is loaded with a `device_map` (`\"auto\"`, a device, or a script's option that "
        "sets one), `low_cpu_mem_usage=True` or a `tp_plan`, and Transformers places the weights "
        "with Accelerate, which is not installed (or is older than this Transformers needs) in the "
        "environment that ran the script. Install or upgrade it there (`pip install -U "
        "accelerate`); in a notebook, restart the kernel afterwards.",
        implies={"stage": "S1"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Transformers' ``requires_backends`` (``utils/import_utils.py``, ``SENTENCEPIECE_IMPORT_ERROR``,
    # ``PROTOBUF_IMPORT_ERROR``) and its conversion of a slow tokenizer into a fast one
    # (``tokenization_utils_fast.py``; ``tokenization_utils_tokenizers.py`` in 5.x).
    Diagnosis(
        "tokenizer_deps",
        _re(r"requires the (?:SentencePiece|protobuf) library but it was not found in your "
            r"environment|You need to have sentencepiece(?: or tiktoken)? installed to convert a "
            r"slow tokenizer", 0,
            # "requires the SentencePiece " (27 characters) before "library but"
            words=("library but it was not found in your environment",
                   "you need to have sentencepiece"), lead=27),
        "The tokenizer needs a library that is not installed here: `sentencepiece` (LLaMA, T5, "
        "Mistral and others, and converting a slow tokenizer to a fast one) or `protobuf` "
        "(reading a SentencePiece model for that conversion). Install the one the message names "
        "where the job runs (`pip install sentencepiece protobuf`), then restart the "
        "interpreter: Transformers looks for them when first imported. If they are installed, "
        "the checkpoint lacks its tokenizer files.",
        implies={"stage": "S1"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config", "repro"}),
        same_problem=True,
    ),
    # Transformers' ``AutoTokenizer`` (``models/auto/tokenization_auto.py``): the class that
    # ``tokenizer_config.json`` names does not exist. ``LLaMATokenizer`` is the pre-release LLaMA
    # code's name (early 2023), which checkpoints converted with it still carry; Transformers 4.28
    # released the class as ``LlamaTokenizer``.
    Diagnosis(
        "llama_tokenizer_name",
        _re(r"Tokenizer class LLaMATokenizer (?:does not exist or )?is not currently imported", 0,
            words=("tokenizer class llamatokenizer ",)),
        "The checkpoint's `tokenizer_config.json` names `LLaMATokenizer`, the class's name in the "
        "code that LLaMA checkpoints were converted with before Transformers supported LLaMA; "
        "released Transformers (4.28 on) calls it `LlamaTokenizer`. Set `\"tokenizer_class\": "
        "\"LlamaTokenizer\"` in that file (or load the tokenizer with "
        "`LlamaTokenizer.from_pretrained`), or use a checkpoint converted with a released "
        "Transformers.",
        implies={"stage": "S3", "symptom": "3.1"},
        # the fix is the file's one line whatever the versions (ColossalAI#3334 was asked for
        # ``colossalai check -i`` beside it)
        moot=frozenset({"versions", "cuda", "hardware", "ds_report", "nccl_debug",
                        "launcher_command", "config", "repro"}),
        same_problem=True,
    ),
    # Megatron's ``_initialize_tp_communicators`` (``megatron/training/initialize.py``): with
    # Transformer Engine before 1.9, ``--tp-comm-overlap`` creates an MPI process group to set
    # up its buffers whatever the bootstrap option says, and warns so before it fails.
    Diagnosis(
        "te_mpi_bootstrap",
        _re(r"Transformer Engine v\S{1,40} supports only MPI bootstrap backend", 0,
            words=("supports only mpi bootstrap backend",), lead=60),
        "With Transformer Engine older than 1.9, `--tp-comm-overlap` sets up its buffers "
        "through an MPI process group: the job must be started by MPI (`mpirun`, or `srun "
        "--mpi=pmix`), with a PyTorch that has the MPI backend. Or upgrade Transformer Engine "
        "to 1.9 or later, which Megatron-LM bootstraps through NCCL or Gloo "
        "(`--tp-comm-bootstrap-backend`), or train without `--tp-comm-overlap`.",
        moot=frozenset({"hardware", "ds_report", "config", "repro", "nccl_debug"}),
        same_problem=True,
    ),
    # Megatron's ``_initialize_tp_communicators`` (``megatron/training/initialize.py``): with
    # ``--tp-comm-overlap``, importing ``yaml`` or ``transformer_engine.pytorch`` failed. The raised
    # message only (``RuntimeError: ``), not the code that raises it, which reports quote.
    Diagnosis(
        "megatron_tp_overlap",
        _re(r"RuntimeError: Tensor Parallel Communication/GEMM Overlap optimization needs", 0,
            words=("runtimeerror: tensor parallel communication/gemm overlap",)),
        "`--tp-comm-overlap` overlaps the tensor-parallel communication with the GEMMs through "
        "Transformer Engine, and Megatron could not import `transformer_engine.pytorch` or "
        "PyYAML. Install them where the job runs (`pip install pyyaml`; Transformer Engine for "
        "your CUDA and PyTorch, or NVIDIA's PyTorch container); `python -c \"import yaml, "
        "transformer_engine.pytorch\"` shows which fails and why. Or train without "
        "`--tp-comm-overlap`.",
        moot=frozenset({"hardware", "ds_report", "config", "repro", "nccl_debug"}),
        same_problem=True,
    ),
    # Megatron's argument check (``validate_args``, ``megatron/training/arguments.py``): an
    # assertion since core 0.12 (recently for GPUs before Blackwell only), a ``RuntimeError``
    # from late 2022 to core 0.11 (``megatron/arguments.py`` at first). The warnings that said
    # the same for a while, and ``tensor_parallel/layers.py``'s, carry no exception's name: not
    # matched.
    Diagnosis(
        "cuda_max_connections",
        _re(r"(?:RuntimeError|AssertionError): Using [^\n]{0,80}? requires? setting the environment "
            r"variable CUDA_DEVICE_MAX_CONNECTIONS to 1", 0,
            # within one line, with no bound on what precedes the variable's name
            words=("variable cuda_device_max_connections to 1",), lead=None),
        "Megatron's tensor-parallel layers overlap their communication with the matrix "
        "multiplications only when the GPU runs kernels in the order they are queued, which "
        "`CUDA_DEVICE_MAX_CONNECTIONS=1` ensures, and this release refuses to start without "
        "it. Export `CUDA_DEVICE_MAX_CONNECTIONS=1` in the environment of every rank "
        "(Megatron's example scripts do; under Slurm or in a container, check that it reaches "
        "the job's processes).",
        moot=frozenset({"cuda", "hardware", "ds_report", "config", "repro", "nccl_debug"}),
        same_problem=True,
    ),
    # Megatron's checks of arguments it replaced (``validate_args``: ``megatron/arguments.py``, then
    # ``megatron/training/arguments.py``): each names its successor (``--batch-size``,
    # ``--warmup``, ``--model-parallel-size``, ``--checkpoint-activations``).
    Diagnosis(
        "megatron_old_arg",
        _re(r"--[\w-]{2,40} (?:argument )?is no longer valid, use --[\w-]{2,40}", 0,
            # "--" and up to 40 characters and " argument " before the words
            words=("is no longer valid, use --",), lead=52),
        "Megatron no longer takes this argument, and the message names its replacement: the "
        "launch script was written for an older Megatron (`--batch-size` is now "
        "`--micro-batch-size`, with `--global-batch-size`; `--model-parallel-size` is "
        "`--tensor-model-parallel-size`; `--checkpoint-activations` is "
        "`--recompute-activations`). Change the script as the message says, and check its other "
        "options against this release's `--help`.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug"}),
        same_problem=True,
    ),
    # Megatron's ``validate_args`` (``megatron/training/arguments.py``, since mid-2024): distributed
    # checkpointing is Megatron-Core's, and the legacy (non-Core) models save the torch format only.
    Diagnosis(
        "megatron_dist_ckpt",
        _re(r"--use-dist-ckpt is not supported in legacy models", 0,
            words=("--use-dist-ckpt is not supported in legacy models",)),
        "`--use-dist-ckpt` (Megatron-Core's distributed checkpoint format) was asked for with "
        "the legacy models (`--use-legacy-models`), which save only the older `torch` format, "
        "and Megatron refuses the pair. Drop `--use-legacy-models` to build the Megatron-Core "
        "models, or save in the torch format (no `--use-dist-ckpt`; `--ckpt-format torch` in "
        "releases that have it).",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "versions"}),
        same_problem=True,
    ),
    # Megatron's ``validate_args`` (``megatron/arguments.py``, then ``megatron/training/arguments.py``):
    # ``--overlap-param-gather`` only with the distributed optimizer (Nov 2023 on; later also Megatron
    # FSDP or ``dist_muon``) and with ``--overlap-grad-reduce`` (Dec 2023 on: "should be turned on
    # when using" until Aug 2024, then "Must use ... with"). Not its refusal of the legacy models
    # ("only supported with MCore models", 2024 to 2026), another fix, nor those of
    # ``--overlap-param-gather-with-optimizer-step`` (Aug 2024 on).
    Diagnosis(
        "overlap_param_gather",
        _re(r"--overlap-param-gather only supported with distributed optimizer"
            r"|Must use --overlap-param-gather with --overlap-grad-reduce"
            r"|--overlap-grad-reduce should be turned on when using --overlap-param-gather(?![\w-])",
            0,
            words=("--overlap-param-gather only supported with distributed",
                   "must use --overlap-param-gather with --overlap-grad-reduce",
                   "--overlap-grad-reduce should be turned on when using")),
        "`--overlap-param-gather` overlaps the all-gather of updated parameters with the next forward "
        "pass, which only Megatron's distributed optimizer (recent releases: also Megatron FSDP or "
        "`dist_muon`) does, and it also needs `--overlap-grad-reduce`. Add "
        "`--use-distributed-optimizer` (and `--overlap-grad-reduce`), or drop "
        "`--overlap-param-gather`.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "versions"}),
        same_problem=True,
    ),
    # Horovod's own checks at import (``check_extension``) and in ``horovodrun``: the framework's
    # extension, or the controllers (MPI, Gloo), were left out when Horovod was built. The
    # extension one hides the build's own error, so it links nothing.
    Diagnosis(
        "horovod_extension",
        _re(rf"Extension {_Q}horovod\.\w+{_Q} has not been built", 0),
        "Horovod was installed without its extension for this framework: the framework "
        "was not importable when Horovod was built, or that part of the build failed "
        "silently. Install the framework first, then `pip uninstall horovod` and "
        "`HOROVOD_WITH_PYTORCH=1 pip install --no-build-isolation --no-cache-dir horovod` "
        "(`HOROVOD_WITH_TENSORFLOW=1` for TensorFlow), which stops with the build's own "
        "error if it fails. `horovodrun --check-build` lists what was built.",
        implies={"stage": "S1"},
        moot=frozenset({"hardware", "launcher_command", "config", "repro"}),
    ),
    Diagnosis(
        "horovod_controller",
        # Anchored on the words all four share, the messages checked behind them: one literal
        # to search for, where an alternation of four would cost 20 times as much on a long log.
        _re(r"been built(?:(?<=Neither MPI nor Gloo support has been built)"
            r"|(?<=Gloo support has not been built)|(?<=MPI support has not been built)"
            r"|(?<=Gloo support is required to use elastic training, but has not been built)"
            r"|(?<=Horovod has not been built) with MPI support)", 0),
        "`horovodrun` found no usable controller (MPI or Gloo): Horovod was built without "
        "them, or its framework extension fails to import (try `python -c 'import "
        "horovod.torch'`; an `undefined symbol` means the framework changed after Horovod "
        "was built). Reinstall against the current framework: `pip uninstall horovod`, "
        "then, with `HOROVOD_WITH_GLOO=1 HOROVOD_WITH_PYTORCH=1` set, `pip install "
        "--no-build-isolation --no-cache-dir horovod` (or `HOROVOD_WITH_MPI=1`).",
        implies={"stage": "S1", "root_cause": "R1.2"},
        moot=frozenset({"hardware", "config", "repro", "traceback"}),
        same_problem=True,
    ),
    # Python's own message for a name a module lacks, on Horovod's framework modules
    # (``horovod/torch/__init__.py`` and the others): ``import horovod.torch`` itself succeeded (an
    # unbuilt extension stops it first, ``horovod_extension``), so the release lacks the function.
    # Both shared issues ran master's examples on a release (the maintainers' answer).
    Diagnosis(
        "horovod_old_api",
        _re(rf"module {_Q}horovod\.(?:torch|tensorflow(?:\.keras)?|keras|mxnet){_Q} has no "
            rf"attribute {_Q}\w", 0,
            # "module 'horovod.tensorflow.keras' has no attribute '" before the words: not bound,
            # one line
            words=("has no attribute",), lead=None),
        "The installed Horovod has no such function in this framework's module, so the code "
        "was written for another Horovod release: the examples on Horovod's master branch use "
        "functions newer than the latest release, and older ones were renamed or removed. Run "
        "the examples from the tag of your release (`pip show horovod`), or install the "
        "release (or a build from source) that the code was written for.",
        implies={"stage": "S1", "symptom": "1.2", "root_cause": "R1.1", "fix_pattern": "F2"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro",
                        "nccl_debug"}),
    ),
    # Only the compiled ``_C`` modules: ``colossalai.kernel.op_builder`` missing is another
    # release's layout (1 shared issue, ``colossalai_moved``), not an unbuilt kernel.
    Diagnosis(
        "colossalai_kernels",
        _re(rf"No module named {_Q}colossalai\._C\.\w+",
            # "No module named '" (17 characters) before the module
            words=("colossalai._c.",), lead=17),
        "Colossal-AI's compiled kernels (the `colossalai._C` modules) were not built when it "
        "was installed. Reinstall it with the kernels built (`BUILD_EXT=1 pip install "
        "colossalai` in current releases, `CUDA_EXT=1` in older ones; from a source checkout "
        "the same variable with `pip install .`), with a CUDA toolkit matching PyTorch's.",
        implies={"stage": "S1", "symptom": "1.2"},
        moot=frozenset({"hardware", "launcher_command", "config", "repro"}),
        same_problem=True,
    ),
    # Python's import of a Colossal-AI module other than the compiled ``_C`` ones: the release installed
    # lacks it. Colossal-AI moves and removes modules between releases (after 0.2.8 the old ZeRO and
    # its init context went under ``colossalai.legacy``: the try/except in its own
    # ``examples/tutorial/opt/opt/colossalai_zero.py``), and its examples and applications follow
    # the main branch.
    Diagnosis(
        "colossalai_moved",
        _re(rf"No module named {_Q}colossalai\.(?!_C\b)\w[\w.]{{0,200}}", 0,
            # "No module named '" (17 characters) before the module
            words=("colossalai.",), lead=17),
        "The code imports a Colossal-AI module that the installed release does not have: "
        "Colossal-AI moves and removes modules between releases (after 0.2.8 the old ZeRO "
        "APIs went under `colossalai.legacy`), and its examples and applications follow the "
        "main branch. Install the release the code was written for (for the repository's "
        "examples, `pip install .` from the same checkout), or change the import to where "
        "this release has the module.",
        implies={"stage": "S1", "symptom": "1.2"},
        states=frozenset({"stage", "symptom"}),
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro",
                        "nccl_debug"}),
    ),
    # Colossal-AI 0.3.8 dropped ``config`` from ``launch`` and its wrappers (``colossalai/initialize.py``,
    # PR 5666, "refactor launch API"): Python's own refusal of the keyword that older examples pass
    # (``colossalai.launch_from_torch(config={})``). Only with Colossal-AI named: ``launch`` is a
    # common name.
    Diagnosis(
        "colossalai_launch",
        _re(rf"\blaunch(?:_from_torch|_from_slurm|_from_openmpi)?\(\) got an unexpected keyword "
            rf"argument {_Q}config{_Q}", 0,
            # "launch_from_openmpi" (19 characters) before the words
            words=("() got an unexpected keyword argument",), lead=19),
        "Colossal-AI 0.3.8 removed the `config` argument of `colossalai.launch_from_torch` (and of "
        "`launch`, `launch_from_slurm`, `launch_from_openmpi`), which code written for older releases "
        "passes. Drop it (`colossalai.launch_from_torch()`; `seed` and `backend` remain) and set "
        "training options through the Booster's plugin, or install the release the code was written "
        "for.",
        context=_re(r"colossalai", re.I, words=("colossalai",)),
        implies={"stage": "S1", "symptom": "1.2"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "config", "repro",
                        "nccl_debug"}),
        same_problem=True,
    ),
    # DeepSpeedCPUAdam's destructor reads ``ds_opt_adam``, which is never set when the
    # constructor failed: the op did not build or load, or an earlier error (an empty
    # parameter list, 1 of the 2 shared issues) stopped it.
    Diagnosis(
        "cpu_adam_not_built",
        _re(rf"has no attribute {_Q}ds_opt_adam{_Q}",
            # "has no attribute '" (18 characters) before the name
            words=("ds_opt_adam",), lead=18),
        "This `AttributeError` is raised while DeepSpeed's CPU Adam is cleaned up after it "
        "failed to start, and it hides the real error, printed above it: fix that one. When "
        "it is the `cpu_adam` op failing to build or load (compiler, CUDA toolkit, "
        "`CUDA_HOME`), install with `DS_BUILD_CPU_ADAM=1 pip install deepspeed "
        "--no-cache-dir` to see the build's own errors.",
        # the earlier error diagnosed on its own (``optimizer_no_params``): a rebuild of the op
        # would send the reporter after a build that is not broken (a blind read, DeepSpeed#5071)
        unless=_re(r"optimizer got an empty parameter list", 0),
        moot=frozenset({"hardware", "launcher_command"}),
    ),
    Diagnosis(
        "no_kernel_image",
        _re(r"no kernel image is available for execution on the device",
            words=("no kernel image is available for execution on the device",)),
        "The GPU code that ran was not compiled for this GPU's architecture (its compute "
        "capability). Install a build that supports your GPU, or build the extension from "
        "source with `TORCH_CUDA_ARCH_LIST` set to your GPU's compute capability (`python -c "
        "\"import torch; print(torch.cuda.get_device_capability())\"` prints it).",
        moot=frozenset({"launcher_command", "config", "repro"}),
    ),
    # A kernel's own assertion (ATen's ``CUDA_KERNEL_ASSERT``: ``Indexing.cu``'s ``srcIndex <
    # srcSelectDimSize``, the NLL loss's ``t >= 0 && t < n_classes``), reported as the CUDA runtime's
    # ``cudaErrorAssert`` ("device-side assert triggered") at a later call. It says that a check
    # failed, not which, so it is shown only when nothing else explains the report, and links nothing.
    Diagnosis(
        "device_side_assert",
        _re(r"device-side assert triggered", 0, words=("device-side assert triggered",)),
        "A CUDA kernel's own check failed (the `Assertion ... failed` lines above it name the kernel), "
        "and the error surfaces at a later call, so the traceback may point elsewhere. Most often an "
        "index is out of range: a token id beyond the embedding's size (a tokenizer larger than the "
        "model's vocabulary) or a label outside the classes of a loss. Rerun with "
        "`CUDA_LAUNCH_BLOCKING=1`, or on the CPU, to see the failing line.",
        moot=frozenset({"nccl_debug", "ds_report"}),
        generic=True,
    ),
    Diagnosis(
        "no_gpu_visible",
        _re(r"No CUDA GPUs are available|Found no NVIDIA driver on your system"
            r"|ProcessGroupNCCL is only supported with GPUs, no GPUs found",
            words=("no cuda gpus are available", "found no nvidia driver on your system",
                   "processgroupnccl is only supported with gpus, no gpus found")),
        "The process sees no GPU: none is visible to it (`CUDA_VISIBLE_DEVICES` empty or "
        "wrong, a container started without `--gpus all`) or the NVIDIA driver is not loaded. "
        "Run `nvidia-smi` and `python -c \"import torch; print(torch.cuda.device_count())\"` "
        "where the job runs, in the same environment.",
        # CUDA's own reason printed before it (802 to 804, NVML's mismatch): ``cuda_fabric_manager``
        # and ``cuda_driver_mismatch`` say what to do, this only what to check
        unless=_re(r"Error 80[234]: |Failed to initialize NVML: Driver/library version mismatch"
                   r"|RM has detected an NVML/RM version mismatch", 0,
                   words=("error 802: ", "error 803: ", "error 804: ",
                          "failed to initialize nvml: driver/library version mismatch",
                          "rm has detected an nvml/rm version mismatch")),
        moot=frozenset({"launcher_command", "config", "repro", "traceback"}),
    ),
    Diagnosis(
        "driver_too_old",
        _re(r"NVIDIA driver on your system is too old|CUDA driver version is insufficient for "
            r"CUDA runtime version",
            words=("nvidia driver on your system is too old",
                   "cuda driver version is insufficient for cuda runtime version")),
        "The NVIDIA driver is older than the CUDA version that PyTorch (or the failing "
        "package) was built for. Update the driver, or install a build for a CUDA version "
        "this driver supports (`nvidia-smi` shows the newest CUDA version it supports).",
        moot=frozenset({"launcher_command", "config", "repro", "traceback"}),
        same_problem=True,
    ),
    # PyTorch's warning when CUDA fails to initialise (``c10/cuda/CUDAFunctions.cpp``: "CUDA
    # initialization: Unexpected error from cudaGetDeviceCount() ... Error 802: ...") or a CUDA call's
    # error ("CUDA error: ", the driver API's "CUDA driver error: ", NCCL's "Cuda failure 802 '...'",
    # without the code in older NCCL), with the CUDA runtime's strings for its codes
    # (``driver_types.h``). 802, ``cudaErrorSystemNotReady``: "all required driver daemons" are not
    # running, on NVSwitch systems Fabric Manager.
    Diagnosis(
        "cuda_fabric_manager",
        _re(r"(?:Error 802: |CUDA (?:driver )?error: |Cuda failure (?:802 )?')"
            r"system not yet initiali[sz]ed", 0,
            # "CUDA driver error: " (19 characters) before the words
            words=("system not yet initiali",), lead=19),
        "CUDA reports error 802, the system not ready for CUDA work: a driver daemon it needs is not "
        "running. On NVSwitch systems (HGX or DGX with SXM GPUs) that is NVIDIA Fabric Manager: start "
        "it (`systemctl start nvidia-fabricmanager`, enabled at boot) with exactly the driver's "
        "version, and check `systemctl status nvidia-fabricmanager` and `nvidia-smi -q | grep -i "
        "fabric` on every node.",
        moot=frozenset({"launcher_command", "config", "repro", "traceback", "ds_report"}),
        same_problem=True,
    ),
    # The same warning with 803 (``cudaErrorSystemDriverMismatch``: display driver and CUDA driver
    # versions differ) or 804 (``cudaErrorCompatNotSupportedOnDevice``: forward compatibility on
    # hardware without it), and NVML's own "Driver/library version mismatch" (``nvidia-smi``; "RM has
    # detected an NVML/RM version mismatch", its ``nvmlErrorString``, as pynvml raises it): the
    # user-space driver libraries loaded and the kernel module differ (a driver updated without a
    # reboot, or a container's ``cuda-compat`` libraries). Which of the two, so it links nothing.
    # ``no_gpu_visible`` gives way to exactly these messages (and to 802), not to a mention of the
    # mismatch in the reporter's words.
    Diagnosis(
        "cuda_driver_mismatch",
        _re(r"Failed to initialize NVML: Driver/library version mismatch"
            r"|RM has detected an NVML/RM version mismatch"
            r"|(?:Error 80[34]: |CUDA error: )(?:system has unsupported display driver / cuda driver "
            r"combination|forward compatibility was attempted on non supported HW)", 0,
            # "CUDA error: " (12 characters) before the words
            words=("failed to initialize nvml: driver/library version mismatch",
                   "rm has detected an nvml/rm version mismatch",
                   "system has unsupported display driver", "forward compatibility was attempted"),
            lead=12),
        "The NVIDIA driver's user-space libraries (`libcuda`, NVML) do not match the kernel driver "
        "loaded. After a driver update, reboot (or reload the `nvidia` kernel modules). In a "
        "container, the image's CUDA forward-compatibility libraries (`/usr/local/cuda/compat`) can be "
        "loaded instead of the host's: they work only on data-center GPUs and with an older host "
        "driver; take them off `LD_LIBRARY_PATH`, or upgrade the host driver.",
        moot=frozenset({"launcher_command", "config", "repro", "traceback", "ds_report"}),
    ),
    # torch.cuda's lazy init on a build without CUDA (a ``+cpu`` wheel, a CPU-only conda package).
    Diagnosis(
        "torch_cpu_build",
        _re(r"Torch not compiled with CUDA enabled", 0),
        "The installed PyTorch is a build without CUDA (its version ends in `+cpu`, or it "
        "came from an index or channel with CPU builds only), so nothing runs on the GPU. "
        "Install the PyTorch build for your CUDA version and check that `python -c "
        "\"import torch; print(torch.version.cuda)\"` prints a version, not `None`. On "
        "macOS there is no CUDA build: use `mps` or the CPU. On Intel, Ascend or Gaudi "
        "devices, code that calls CUDA directly is the bug.",
        implies={"stage": "S1"},
        moot=frozenset({"launcher_command", "config", "repro", "traceback"}),
        # not linking: a macOS report's fix (the CPU, ``mps``) is no fix for a Linux ``+cpu`` wheel
    ),
    Diagnosis(
        "needs_ampere",
        _re(r"FlashAttention only supports Ampere GPUs or newer"
            r"|Current CUDA Device does not support bfloat16"
            r"|Bfloat16 is only supported on GPUs with compute capability of at least 8",
            words=("flashattention only supports ampere gpus or newer",
                   "current cuda device does not support bfloat16",
                   "bfloat16 is only supported on gpus with compute capability of at least 8")),
        "The feature that failed is not supported on this GPU: bfloat16 needs compute "
        "capability 8.0 (Ampere) or newer, and a FlashAttention build runs only on the "
        "architectures it was built for (FlashAttention 2: Ampere, Ada and Hopper, so newer "
        "GPUs need a newer release too). Use fp16 (or fp32) instead of bf16, turn "
        "FlashAttention off in the model's or the framework's settings, or use a release that "
        "supports your GPU.",
        moot=frozenset({"launcher_command", "repro", "traceback"}),
    ),
    # FlashAttention 1.x's backward (``csrc/flash_attn/fmha_api.cpp``, ``mha_bwd``: ``if (head_size >
    # 64) TORCH_CHECK(is_sm80 || is_sm90)``; before 1.0, ``TORCH_CHECK(is_sm80)`` for head dimension
    # 128), whose message is ``TORCH_CHECK``'s default for the condition.
    Diagnosis(
        "flash_attn_sm80",
        _re(r"Expected is_sm80(?: \|\| is_sm90)? to be true, but got false", 0,
            words=("expected is_sm80",)),
        "FlashAttention 1.x trains the larger head dimensions (above 64; 128 in older releases) "
        "only on A100/A800 or H100 GPUs (compute capability 8.0 or 9.0), and this GPU is "
        "another (an RTX 3090 or A6000 is 8.6, a T4 7.5). Turn FlashAttention off in the "
        "model's or the framework's settings, use a head dimension of 64 or less, or use "
        "FlashAttention 2, which trains head dimensions up to 192 on every Ampere or newer GPU.",
        moot=frozenset({"launcher_command", "repro", "traceback", "nccl_debug", "config"}),
        same_problem=True,
    ),
    # The frameworks' own checks of bf16 before training: Accelerate's ``Accelerator.__init__``
    # and ``accelerate launch`` (``torch.cuda.is_bf16_supported()``), Transformers'
    # ``TrainingArguments.__post_init__`` (``is_torch_bf16_gpu_available``, so also when no GPU
    # is visible), DeepSpeed's ``_do_sanity_check`` (``runtime/engine.py``, since 0.16) and its
    # inference engine's dtype check (``inference/engine.py``, since 0.15.2).
    Diagnosis(
        "bf16_unsupported",
        _re(r"bf16 mixed precision requires PyTorch >= 1\.10 and a supported device"
            r"|Your setup doesn['’]?t support bf16/gpu|Type bf16 is not supported on your device"
            r"|Data type torch\.bfloat16 is not supported by \w+ accelerator", 0,
            # "Data type torch.bfloat" (22 characters) before "16 is not supported", "Your setup
            # doesn'" (17) before "t support bf16/gpu"
            words=("bf16 mixed precision requires pytorch >= 1.10", "t support bf16/gpu",
                   "16 is not supported"), lead=22),
        "The framework asked PyTorch whether this device supports bfloat16, and it does not: "
        "GPUs before Ampere (V100, T4) lack native bf16 (older PyTorch releases say so), and "
        "the Trainer also refuses bf16 when no GPU is visible. On such GPUs train in fp16 "
        "(`fp16=True`, `--mixed_precision fp16`, DeepSpeed's `fp16` section) or fp32; "
        "otherwise check that `torch.cuda.is_available()` is True (on the CPU on purpose: the "
        "Trainer's `use_cpu=True`).",
        moot=frozenset({"launcher_command", "repro", "traceback", "nccl_debug"}),
    ),
    # DeepSpeed's checks of fp16 against its accelerator: ``_do_sanity_check``
    # (``runtime/engine.py``, since 0.16) and the inference engine's (``inference/engine.py``:
    # "Type fp16 is not supported." from 0.12.6, the dtype list from 0.15.2). The CUDA
    # accelerator wants compute capability 7 (6 with ``DS_ALLOW_DEPRECATED_FP16=1``, since
    # 0.13.2); the CPU one has none (recent releases: a CPU with native fp16, as
    # ``_is_mkldnn_fp16_supported`` says).
    Diagnosis(
        "ds_fp16_unsupported",
        _re(r"Type fp16 is not supported(?: on your device)?\."
            r"|Data type torch\.float16 is not supported by \w+ accelerator", 0,
            # "Data type torch.float" (21 characters) before "16 is not supported"
            words=("16 is not supported",), lead=21),
        "DeepSpeed asked its accelerator whether this device runs fp16, and it does not: "
        "NVIDIA GPUs need compute capability 7.0 or newer (6.x only with "
        "`DS_ALLOW_DEPRECATED_FP16=1`), and DeepSpeed's CPU accelerator, used when no GPU is "
        "usable (logged as `Setting ds_accelerator to cpu`), has none (recent releases: on CPUs "
        "with native fp16 only). Use bf16 or fp32 (`dtype=torch.bfloat16`, the config's "
        "`bf16` section), or find why no GPU is seen.",
        moot=frozenset({"launcher_command", "repro", "traceback", "nccl_debug"}),
    ),
    # ``init_process_group``'s refusal of the NCCL backend on a build without it (Windows, macOS,
    # CPU-only builds).
    Diagnosis(
        "nccl_not_built",
        _re(r"Distributed package doesn['’]?t have NCCL built in", 0),
        "This PyTorch build has no NCCL: the Windows and macOS builds never have it, nor does a "
        "CPU-only build. On Windows or macOS use the `gloo` backend "
        "(`init_process_group(backend=\"gloo\")`, or the framework's option for the "
        "distributed backend), or run under Linux (WSL2 on Windows); on Linux install "
        "PyTorch's CUDA build.",
        implies={"stage": "S2"},
        moot=frozenset({"cuda", "config", "repro", "traceback", "nccl_debug"}),
        same_problem=True,
    ),
    # Colossal-AI on native Windows: its README says "only Linux is supported" (since March 2023), and
    # ``colossalai run`` (``colossalai/cli/launcher/multinode_runner.py``, ``run_on_host``) runs each
    # host's command behind Fabric's ``prefix(f"export {env_msg}")``, which Windows's shell refuses in
    # its own words (English or Chinese, ColossalAI#2765). Only with Colossal-AI named. Linked: the
    # launcher's `export` fails alike on every Windows machine, with the one fix.
    Diagnosis(
        "colossalai_windows",
        _re(r"['‘’]export['’] (?:is not recognized as an internal or external command|不是内部或外部命令)",
            0, words=("export' ", "export’ "), lead=1),
        "Colossal-AI supports Linux only (its README says so): `colossalai run` starts each host's "
        "command through a shell line with `export`, which Windows's shell does not have, and "
        "PyTorch's Windows builds have no NCCL. Run it under WSL2 (Ubuntu) or on a Linux machine.",
        context=_re(r"colossalai", re.I, words=("colossalai",)),
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "config", "repro",
                        "traceback", "versions"}),
        same_problem=True,
    ),
    # A traceback through the installed package at a Windows path: Colossal-AI on native Windows,
    # whatever failed there. Not linked: the error that stopped it varies (a kernel not built, a
    # backend missing, an import), and so may the report's question. Not beside the shell's refusal
    # (``colossalai_windows``), which says the same and more.
    Diagnosis(
        "colossalai_win_path",
        _re(r"[A-Za-z]:\\{1,2}[^\n\"'<>|:]{0,200}?\\{1,2}colossalai\\{1,2}\w", 0,
            # within one line, with no bound before the package's folder
            words=("\\colossalai\\",), lead=None),
        "The traceback's paths show Colossal-AI installed on native Windows, and it supports Linux "
        "only (its README says so); PyTorch's Windows builds have no NCCL either. Run it under WSL2 "
        "(Ubuntu) or on a Linux machine.",
        unless=_re(r"['‘’]export['’] (?:is not recognized as an internal or external command"
                   r"|不是内部或外部命令)", 0, words=("export' ", "export’ "), lead=1),
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "config", "repro",
                        "traceback", "versions"}),
    ),
    # ``init_process_group``'s refusal of the MPI backend (``torch/distributed/distributed_c10d.py``,
    # ``_new_process_group_helper``): PyTorch's pip and conda builds have none. Not after Transformer
    # Engine's warning of its MPI bootstrap (``te_mpi_bootstrap``), which names that case's fixes.
    Diagnosis(
        "mpi_not_built",
        _re(r"Distributed package doesn['’]?t have MPI built in", 0,
            words=("distributed package doesn",)),
        "This PyTorch build has no MPI backend: the pip and conda builds never include it; only a "
        "build from source on a host with MPI does. Use the `nccl` backend (`gloo` for CPU "
        "tensors) instead; a job started by `mpirun` can use it too, with `RANK`, `WORLD_SIZE`, "
        "`MASTER_ADDR` and `MASTER_PORT` set from MPI's environment (Open MPI's "
        "`OMPI_COMM_WORLD_RANK` and `OMPI_COMM_WORLD_SIZE`). Or build PyTorch from source against "
        "your MPI.",
        unless=_re(r"supports only MPI bootstrap backend", 0,
                   words=("supports only mpi bootstrap backend",)),
        implies={"stage": "S2"},
        moot=frozenset({"cuda", "config", "repro", "traceback", "nccl_debug"}),
        same_problem=True,
    ),
    # TCPStore's check: PyTorch 2.4 made libuv the store's default, the Windows wheels lack it.
    Diagnosis(
        "libuv_missing",
        _re(r"use_libuv was requested but PyTorch was buil[td]\s+without libuv support", 0),
        "Since PyTorch 2.4 the rendezvous store (`TCPStore`) uses libuv by default, and "
        "this build (the Windows wheels) has none. Where `init_process_group` creates the "
        "store, set `USE_LIBUV=0` where the job starts, or add `?use_libuv=0` to the "
        "address of a TCP or `env` init method. If the traceback goes through torchrun's "
        "rendezvous, some releases ignore that setting: start the processes without "
        "torchrun, or run under WSL2.",
        implies={"stage": "S2", "symptom": "2.1", "fix_pattern": "F1"},
        moot=frozenset({"cuda", "hardware", "config", "repro", "ds_report", "nccl_debug"}),
        same_problem=True,
    ),
    Diagnosis(
        "launcher_env",
        _re(rf"KeyError:\s*{_Q}{_LAUNCHER_VARS}{_Q}(?!\w)"
            rf"|environment variable {_LAUNCHER_VARS} expected,? but not set"
            rf"|Could not find {_Q}{_LAUNCHER_VARS}{_Q} in the torch environment", 0,
            words=("keyerror:", "environment variable ", "could not find ")),
        "The variables a distributed launcher sets for every process (`RANK`, `LOCAL_RANK`, "
        "`WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`) are missing, which usually means the "
        "script was started with plain `python`. Start it with `torchrun`, the `deepspeed` "
        "launcher or `colossalai run`, or set these variables yourself.",
        implies={"stage": "S2", "root_cause": "R2.1", "fix_pattern": "F1"},
        moot=_NOT_ABOUT_VERSIONS | {"launcher_command"},
        same_problem=True,
    ),
    # DeepSpeed's ``init_distributed`` without the launcher's variables reads the ranks from MPI
    # (``comm/comm.py``, ``utils/distributed.py`` before 0.7): only with that context, as a
    # missing mpi4py elsewhere (an MPI job, Horovod) is another problem.
    Diagnosis(
        "mpi_discovery",
        _re(rf"No module named {_Q}mpi4py{_Q}", 0),
        "The script was started without a distributed launcher (`RANK`, `WORLD_SIZE`, "
        "`MASTER_ADDR`, `MASTER_PORT` or `LOCAL_RANK` unset), so DeepSpeed tried to read the "
        "ranks from MPI instead, which needs `mpi4py`. Start it with the `deepspeed` launcher "
        "or `torchrun`, or set those variables; only to start it with `mpirun`, install "
        "`mpi4py` for that MPI.",
        context=_re(r"attempting to detect MPI environment|\bin mpi_discovery\b", 0,
                    words=("attempting to detect mpi environment", "in mpi_discovery")),
        implies={"stage": "S2"},
        moot=_NOT_ABOUT_VERSIONS | {"launcher_command"},
        same_problem=True,
    ),
    # Only at a rendezvous: a web server of an inference setup clashes on its port for
    # other reasons and is fixed elsewhere. Not the frameworks' names: nearly every report
    # names one in its system info.
    Diagnosis(
        "port_in_use",
        _re(r"Address already in use|\bEADDRINUSE\b",
            words=("address already in use", "eaddrinuse")),
        "Another process is already listening on the rendezvous port (`MASTER_PORT`, 29500 "
        "unless set): usually a second job on the same machine or a leftover process of an "
        "earlier run. Give each job its own port (`--master_port` for `torchrun` and "
        "`deepspeed`, `--main_process_port` for `accelerate launch`), or end the leftover "
        "process.",
        context=_re(r"\bc10d\b|TCPStore|server socket|MASTER_PORT|master[_-]port|"
                    r"main_process_port|rendezvous|init_process_group|torchrun|"
                    r"torch\.distributed|\bDDP\b|accelerate (?:launch|test)|Accelerator\(|"
                    r"tcp://|dist_url",
                    words=("c10d", "tcpstore", "server socket", "master_port", "master-port",
                           "main_process_port", "rendezvous", "init_process_group", "torchrun",
                           "torch.distributed", "ddp", "accelerate launch", "accelerate test",
                           "accelerator(", "tcp://", "dist_url")),
        implies={"stage": "S2", "symptom": "2.1", "root_cause": "R2.1", "fix_pattern": "F1"},
        states=frozenset(taxonomy.DIMENSIONS),
        moot=_NOT_ABOUT_VERSIONS | {"launcher_command"},
        same_problem=True,
    ),
    Diagnosis(
        "local_rank_arg",
        _re(r"unrecognized arguments:[^\n]{0,300}?--local[_-]rank\b",
            words=("unrecognized arguments:",)),
        "The launcher passes every process a `--local_rank` argument (`--local-rank` from the "
        "`torch.distributed.launch` of PyTorch 2), and the script's argument parser does not "
        "accept it. Add it to the parser (both spellings), or start the script with "
        "`torchrun`, which only sets the `LOCAL_RANK` environment variable.",
        implies={"stage": "S2"},
        same_problem=True,
    ),
    Diagnosis(
        "duplicate_gpu",
        _re(r"Duplicate GPU detected",
            words=("duplicate gpu detected",)),
        "Two ranks were placed on the same GPU, which NCCL refuses. Start no more processes "
        "per node than there are visible GPUs (`--nproc_per_node`, `CUDA_VISIBLE_DEVICES`), "
        "and make each process select its own GPU (`torch.cuda.set_device(local_rank)`) "
        "before it creates the process group.",
        implies={"stage": "S2", "root_cause": "R2.1"},
        same_problem=True,
    ),
    # DeepSpeed's launcher turns CUDA_VISIBLE_DEVICES into slots of the GPUs it counts.
    Diagnosis(
        "deepspeed_slot",
        _re(rf"No slot {_Q}\d+{_Q} specified on host",
            words=("no slot ",)),
        "DeepSpeed's launcher reads the GPU ids in `CUDA_VISIBLE_DEVICES` as slots among the "
        "GPUs it counts, so an id beyond that count (GPU `2` when two are visible) is refused. "
        "Leave `CUDA_VISIBLE_DEVICES` unset and choose the GPUs with the launcher's own option, "
        "for example `deepspeed --include localhost:2,3 train.py`.",
        implies={"stage": "S2", "root_cause": "R2.1", "fix_pattern": "F1"},
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "traceback"}),
        same_problem=True,
    ),
    # The shell's own message for a launcher's console script: not on the PATH of the shell
    # that ran it. Why differs (an environment not activated, an install without its scripts, a
    # non-interactive ssh shell on another node), so it links nothing.
    Diagnosis(
        "launcher_not_on_path",
        _re(r"\b(?:torchrun|deepspeed|colossalai|horovodrun|accelerate): command not found", 0,
            # "colossalai" (10 characters) before ": command not found"
            words=(": command not found",), lead=10),
        "The launcher's command was not found on the `PATH` of the shell that ran it: the "
        "Python environment that installed it is not active in that shell, or it is not "
        "installed there (reinstall the package to get its command). When a launcher starts "
        "it on other nodes over ssh (`colossalai run`, DeepSpeed's pdsh), that shell is "
        "non-interactive and may skip the `conda activate` or `PATH` set in `~/.bashrc`: set "
        "`PATH` where such shells read it on every node.",
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "traceback", "nccl_debug"}),
    ),
    # DeepSpeed's runner (``launcher/runner.py``) before a multi-node launch: the launcher's
    # program is looked up on PATH (``pdsh``; ``ompi_info``, ``mpirun``, ``sinfo`` or ``mpiname``
    # for the others), each hostfile line is parsed, and the first host is tried over ssh
    # without a password; the exception the check raises is chained to ssh's own, so either
    # line names it. (Before 0.3 a missing pdsh was Popen's FileNotFoundError: not matched,
    # as a second literal to search for would cost 10 times as much on a long log.)
    Diagnosis(
        "launcher_missing",
        # pdsh only: each other launcher looks for another program, and a linked report's fix
        # (installing pdsh) would be offered to a report about ``ompi_info`` or ``sinfo``
        _re(rf"launcher {_Q}pdsh{_Q} not installed", 0),
        "DeepSpeed's launcher starts a multi-node job (a hostfile with several hosts) through "
        "`pdsh` unless `--launcher` names another, and `pdsh` is not installed on this "
        "node. Install it (`apt-get install pdsh`), or choose one that is: `--launcher "
        "openmpi`, `mpich`, `impi`, `mvapich` or `slurm`. On a single node, remove the "
        "hostfile (DeepSpeed also reads `/job/hostfile`) so that nothing is launched remotely.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "traceback", "nccl_debug"}),
        same_problem=True,
    ),
    # Open MPI's launcher refuses root unless told (``orte/tools/orterun/orterun.c`` and
    # ``orte/orted/orted_submit.c`` before Open MPI 5; PRRTE's ``src/mca/schizo/base/
    # schizo_base_stubs.c`` in 5, as "prterun" or "mpirun"). ``horovodrun`` passes the option itself
    # (``horovod/runner/mpi_run.py``).
    Diagnosis(
        "openmpi_root",
        _re(r"(?:mpirun|mpiexec|orterun|prterun) has detected an attempt to run as root", 0,
            # "orterun " (8 characters) before the words
            words=("has detected an attempt to run as root",), lead=8),
        "Open MPI's `mpirun` refuses to start as root, the usual user in a container, unless told "
        "to. Add `--allow-run-as-root` to the `mpirun` command; where you do not write the command "
        "yourself (a launcher's or a script's own `mpirun`), export `OMPI_ALLOW_RUN_AS_ROOT=1` and "
        "`OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1` instead. Or run the job as a user other than root.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "traceback", "nccl_debug"}),
        same_problem=True,
    ),
    # Open MPI's mapper (``orte/mca/rmaps/base/help-orte-rmaps-base.txt`` before 5, PRRTE's
    # ``src/mca/rmaps/base/help-prte-rmaps-base.txt`` in 5): ``-np`` asks for more processes than
    # the hosts' slots.
    Diagnosis(
        "openmpi_slots",
        _re(r"There are not enough slots available in the system to satisfy the \d{1,7}\s{1,4}slots",
            0, words=("there are not enough slots available in the system",)),
        "`mpirun` was asked for more processes (`-np`) than the slots it knows of: a host given "
        "as `-H host` has one slot, one in a hostfile without `slots=` (or this machine alone) as "
        "many as its cores, and a scheduler's allocation what it granted. Give each host its "
        "number of processes, for a GPU job its GPUs (`-H node1:8,node2:8`, `slots=8` in the "
        "hostfile, `horovodrun -H node1:8,node2:8`), and ask for no more than their sum; "
        "`--oversubscribe` lifts the limit.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "traceback",
                        "nccl_debug"}),
        same_problem=True,
    ),
    Diagnosis(
        "hostfile_format",
        _re(r"Hostfile (?:contains a bad entry|contains multiple entries for|is empty or not "
            r"formatted correctly|is not formatted correctly|contains duplicate hosts)", 0),
        "DeepSpeed's launcher could not read the hostfile: each line must be a host name, a "
        "space, then `slots=` and that host's number of GPUs (`worker-1 slots=8`), each host "
        "once; blank lines and lines starting with `#` are skipped (releases before 0.8 refuse "
        "comments too). Fix the offending line (a typo such as `slot=8`, a missing count, a "
        "host listed twice), or point `--hostfile` at the right file.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "nccl_debug"}),
        same_problem=True,
    ),
    # Only DeepSpeed's own check: its message, or the command it runs (``ssh -o
    # PasswordAuthentication=no [-p PORT] HOST hostname``, a list since 0.15.2). Horovod's check
    # runs ``ssh -o PasswordAuthentication=no -o StrictHostKeyChecking=no HOST ...`` and says
    # so in its own words (``horovod_ssh``), where DeepSpeed's options would be wrong.
    Diagnosis(
        "ssh_check",
        _re(rf"ssh(?:(?<=was not reachable via ssh)|{_Q},? {_Q}-o{_Q},? {_Q}"
            rf"PasswordAuthentication=no{_Q},? (?:{_Q}-p{_Q},? {_Q}\d{{1,5}}{_Q},? )?"
            rf"{_Q}[^\s'\"‘’`,\]]{{1,255}}{_Q},? {_Q}hostname{_Q}\]?{_Q} "
            r"returned non-zero exit status)", 0),
        "Before a multi-node launch DeepSpeed logs in to the hostfile's first host over "
        "ssh, without a password, and failed. Set up passwordless ssh to every "
        "node, this one included (`ssh-keygen`, `ssh-copy-id`), until `ssh <host> hostname` "
        "runs without a prompt (sshd on another port: `--ssh_port`). If the nodes are started without ssh "
        "(`--launcher slurm`, your own), pass `--no_ssh_check` and `--master_addr <first "
        "node>`; on one node, drop the hostfile.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "nccl_debug"}),
        same_problem=True,
    ),
    # DeepSpeed asks ``hostname -I`` for an address: its runner (``launcher/runner.py``) on the
    # hostfile's first host over ssh when ``--master_addr`` is not given (logging the first
    # message since 0.8; before, the command's CalledProcessError alone), and its MPI discovery
    # (``comm/comm.py``; ``utils/distributed.py`` before 0.7) on rank 0, without a fallback
    # before 0.16.4. Only the commands as DeepSpeed builds them (a string before 0.15.2, a list
    # after).
    Diagnosis(
        "hostname_i",
        _re(r"Unable to detect suitable master address via"
            r"|hostname(?: |', ')-I'\]' returned non-zero exit status", 0,
            # "hostname', '" (12 characters) before "-I']'"
            words=("unable to detect suitable master address via",
                   "-i']' returned non-zero exit status"), lead=12),
        "DeepSpeed reads an IP address from `hostname -I`, and that failed: the `hostname` "
        "there has no `-I` option (macOS, BusyBox, GNU inetutils), or ssh to the host failed. "
        "With a hostfile and no `--master_addr`, the launcher runs it on the first host: pass "
        "`--master_addr` with that node's IP. Its MPI discovery (no launcher's variables set) "
        "runs it on rank 0 before DeepSpeed 0.16.4: upgrade, or start with the `deepspeed` "
        "launcher.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "cuda", "hardware", "config", "repro", "nccl_debug"}),
    ),
    # Horovod's own check (``horovod/runner/launch.py``, ``_check_all_hosts_ssh_successful``):
    # every remote host of ``-H``/``--hostfile`` is tried over ssh before the launch; each failure
    # is printed with ssh's own output, then (since 0.20) the RuntimeError.
    Diagnosis(
        "horovod_ssh",
        _re(r"ssh not successful for host|could not connect to some hosts via ssh", 0,
            words=("ssh not successful for host", "could not connect to some hosts via ssh")),
        "Before it starts, `horovodrun` logs in over ssh, without a password, to every host "
        "of `-H` or `--hostfile` other than this one, and that failed (ssh's own error follows "
        "the host's name). Set up passwordless ssh from this host to each of them "
        "(`ssh-keygen`, then `ssh-copy-id`) until `ssh <host> true` runs without a prompt. "
        "If their sshd listens on another port (often in containers), pass `-p <port>`; for "
        "another key, `-i <key file>`.",
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "nccl_debug"}),
        same_problem=True,
    ),
    # ``colossalai run`` (``colossalai/cli/launcher/multinode_runner.py``, ``run_on_host``) runs the
    # command on each host through Fabric and prints the exception: only paramiko's refusals to
    # log in, not the remote command's own failure.
    Diagnosis(
        "colossalai_run_ssh",
        _re(r"is localhost: False, exception: (?:No authentication methods available"
            r"|Authentication failed|not a valid \w{2,7} private key file"
            r"|Private key file is encrypted|Bad authentication type)", 0,
            words=("is localhost: false, exception: ",)),
        "`colossalai run` starts the command on the other hosts over ssh (Fabric, on paramiko) "
        "and could not log in: no usable key (none in `~/.ssh` or the agent, or one with a "
        "passphrase), or, with an older paramiko, a key in OpenSSH's newer format (convert it: "
        "`ssh-keygen -p -m PEM -f ~/.ssh/id_rsa`). Set up passwordless ssh to each host until "
        "`ssh <host> hostname` needs no prompt, or start `torchrun` on each node yourself.",
        implies={"stage": "S2", "symptom": "2.1", "root_cause": "R2.3"},
        # a job that never logged in has no rank to hang (ColossalAI#5213, "hangs" after the
        # refusal, was asked for py-spy stacks)
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "nccl_debug", "stacks"}),
        same_problem=True,
    ),
    Diagnosis(
        "invalid_ordinal",
        _re(r"invalid device ordinal",
            words=("invalid device ordinal",)),
        "A process selected a GPU index that does not exist on its node: more processes were "
        "started per node than there are visible GPUs, or `CUDA_VISIBLE_DEVICES` hides the GPU "
        "its rank points at. Start no more processes per node than `nvidia-smi` shows (or "
        "`CUDA_VISIBLE_DEVICES` lists), and select the device by the local rank "
        "(`LOCAL_RANK`), not the global rank.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "config"}),
    ),
    # Megatron's ``_initialize_distributed`` (``megatron/initialize.py``, then
    # ``megatron/training/initialize.py``, 2020 to mid-2024; Megatron-DeepSpeed keeps it): each
    # rank's GPU is ``rank % device_count``, checked against the local rank its launcher gave.
    # The count is set in the launcher: DeepSpeed's (``deepspeed/launcher/runner.py``) ignores
    # and removes a ``CUDA_VISIBLE_DEVICES`` set with a hostfile or ``--include``/``--num_gpus``,
    # and its ``launch.py`` sets it on each node to the GPUs it chose (DeepSpeed#3408).
    Diagnosis(
        "megatron_local_rank",
        _re(r"expected local-rank to be the same as rank % device-count", 0,
            words=("expected local-rank to be the same as rank",)),
        "Megatron puts each process on GPU `rank % <GPUs it sees>` and checks that this is the "
        "local rank its launcher gave it: every node must run as many processes as it sees "
        "GPUs, the same number on each (nodes with more GPUs use only as many). With torchrun, "
        "`--nproc_per_node` and `CUDA_VISIBLE_DEVICES` listing that many GPUs; the `deepspeed` "
        "launcher sets `CUDA_VISIBLE_DEVICES` itself, from `--num_gpus`, `--include host:0,1` "
        "or the hostfile's `slots=`.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "config"}),
        same_problem=True,
    ),
    # Lightning's check of the GPUs given to the ``Trainer`` or Fabric (``_sanitize_gpu_ids``:
    # ``lightning/fabric/utilities/device_parser.py``; ``pytorch_lightning/utilities/
    # device_parser.py`` in 1.x, "You requested GPUs:" before 1.7): a count ``devices=N`` stands
    # for the indices 0 to N-1.
    Diagnosis(
        "lightning_gpu_ids",
        _re(r"You requested (?:gpu|GPUs): [^\n]{0,200}\s{1,8}But your machine only has", 0,
            words=("you requested gpu",)),
        "Lightning was given GPU indices (or a count, read as indices from 0) that this process "
        "does not see; the message lists the visible ones, and an empty list means none (a "
        "CPU-only PyTorch, a job without GPUs, an empty `CUDA_VISIBLE_DEVICES`, which also "
        "renumbers the GPUs it leaves from 0). Ask for what `torch.cuda.device_count()` shows "
        "there, or `devices=\"auto\"`; for an empty list, find why no GPU is visible.",
        moot=frozenset({"versions", "ds_report", "config", "repro", "nccl_debug"}),
    ),
    Diagnosis(
        "nccl_no_interface",
        _re(r"no socket interface found",
            words=("no socket interface found",)),
        "NCCL found no network interface to use between the processes: none matches "
        "`NCCL_SOCKET_IFNAME`, or the only ones are interfaces it skips (loopback, docker). "
        "Set `NCCL_SOCKET_IFNAME` to the interface the nodes reach each other on (`ip addr` "
        "lists them, e.g. `eth0` or `ib0`).",
        implies={"stage": "S2", "symptom": "2.2"},
        # the GPUs play no part in reaching a TCP port (pytorch#67547/#67581/#79388 were asked
        # for them under this diagnosis, strict readers' 0s)
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "hardware"}),
        same_problem=True,
    ),
    # Gloo's lookup of the interface it was told to use (``gloo/transport/tcp/device.cc``,
    # ``lookupAddrForIface``, in PyTorch's and Horovod's builds; "Unable to find address for
    # <host>", without the colon, is its look-up of a host name, another case): the name comes
    # from ``GLOO_SOCKET_IFNAME`` (PyTorch) or ``HOROVOD_GLOO_IFACE`` (Horovod).
    Diagnosis(
        "gloo_ifname",
        _re(r"Unable to find address for: \S", 0, words=("unable to find address for: ",)),
        "Gloo was told to use a network interface (`GLOO_SOCKET_IFNAME` in PyTorch; "
        "`--network-interfaces` or `HOROVOD_GLOO_IFACE` in Horovod) that has no address on this "
        "node: no interface of that name exists here (names differ between machines, `bond1` on "
        "one, `eth0` on another), or it has no IP address. Run `ip addr` on each node and set the "
        "variable there to the interface it reaches the others on, or unset it to let Gloo "
        "choose.",
        implies={"stage": "S2", "root_cause": "R2.3"},
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "hardware"}),
        same_problem=True,
    ),
    # Gloo's TCP pair (``gloo/transport/tcp/pair.cc``, ``handleConnecting``: "connect [addr]:port:
    # <strerror>"; recent Gloo's ``transport/tcp/helpers.h`` and ``error.cc``: "SO_ERROR: <strerror>,
    # remote=[addr]:port") refused at a loopback address: each process advertises the address its
    # hostname resolves to (PyTorch's default Gloo device), 127.0.1.1 in Debian's and Ubuntu's
    # ``/etc/hosts`` (pytorch#15592, fixed by ``GLOO_SOCKET_IFNAME``). On one node, a refusal means
    # the peer exited.
    Diagnosis(
        "gloo_loopback",
        _re(r"connect \[127\.\d{1,3}\.\d{1,3}\.\d{1,3}\]:\d{1,5}: Connection refused"
            r"|SO_ERROR: Connection refused, remote=\[127\.\d{1,3}\.\d{1,3}\.\d{1,3}\]", 0,
            words=("connect [127.", "so_error: connection refused, remote=[127.")),
        "Gloo connected to a loopback address (127.0.1.1 is what Debian and Ubuntu map the machine's "
        "own hostname to in `/etc/hosts`): each process advertises the address its hostname resolves "
        "to, so on several nodes the others cannot reach it. Set `GLOO_SOCKET_IFNAME` to the interface "
        "the nodes share (`ip addr`), or map the hostname to that interface's address. On a single "
        "node, the peer process had exited first: its own error is the one to read.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "hardware"}),
    ),
    # NCCL's own messages, and the DataLoader's; a "Bus error" alone is not enough.
    Diagnosis(
        "shared_memory",
        _re(r"Error while creating shared memory segment|Call to (?:shm_open|posix_fallocate) "
            r"failed|insufficient shared memory \(shm\)|/dev/shm[^\n]{0,80}No space left on device"
            r"|No space left on device[^\n]{0,80}/dev/shm",
            # "/dev/shm" and up to 80 characters before "No space left on device"
            words=("error while creating shared memory segment", "call to shm_open failed",
                   "call to posix_fallocate failed", "insufficient shared memory (shm)",
                   "no space left on device"), lead=88),
        "NCCL (or the data loader's workers) could not create a shared-memory segment in "
        "`/dev/shm`: it is too small (Docker gives a container 64 MB unless it is started "
        "with `--ipc=host` or a larger `--shm-size`) or this user may not write to it. "
        "Enlarge it or make it writable, then run again.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro"}),
        same_problem=True,
    ),
    # The DataLoader's own check when a worker's batch does not arrive
    # (``torch/utils/data/dataloader.py``, ``_try_get_data``, errno EMFILE), the OS's EMFILE, and
    # Python's ``multiprocessing.reduction.recvfds`` when the descriptor sent with a tensor was
    # dropped for want of a free one (the DataLoader's "NOTE [ DataLoader on Linux and open
    # files limit ]"). Not the words alone: reports name the limit they already raised.
    Diagnosis(
        "too_many_open_files",
        _re(r"\[Errno 24\] Too many open files|RuntimeError: Too many open files"
            r"|received 0 items of ancdata", 0,
            # "RuntimeError: " (14 characters) before "Too many open files"
            words=("too many open files", "received 0 items of ancdata"), lead=14),
        "The process reached its limit of open files (`ulimit -n`). DataLoader workers "
        "hand each batch's tensors over as shared-memory files, one descriptor each "
        "under the default `file_descriptor` strategy, so many workers or batches of many "
        "tensors run out first. Raise the limit where the job starts (`ulimit -n 65536`, a "
        "container's `--ulimit nofile`), or call "
        "`torch.multiprocessing.set_sharing_strategy(\"file_system\")` early in the script.",
        moot=frozenset({"versions", "ds_report", "cuda", "config", "nccl_debug"}),
        same_problem=True,
    ),
    # NCCL's own check of a CUDA call (``src/include/checks.h``, ``CUDACHECK``: "Cuda failure
    # '%s'"; ``cudawrap.h``, ``CUCHECK`` for the driver's cuMem calls: "Cuda failure %d '%s'"),
    # which the Python error repeats under "Last error:": NCCL's own allocation, not the
    # model's (that is PyTorch's "CUDA out of memory").
    Diagnosis(
        "nccl_cuda_oom",
        _re(rf"Cuda failure (?:\d{{1,3}} )?{_Q}out of memory", 0, words=("cuda failure ",)),
        "A CUDA allocation inside NCCL failed: NCCL sets up its buffers when a process group "
        "first communicates, and the GPU (rarely, pinned host memory) was nearly full. Check "
        "with `nvidia-smi` that no other process holds memory on that GPU (each rank on its "
        "own: `torch.cuda.set_device(local_rank)` before any CUDA work), leave headroom (a "
        "smaller batch, fewer process groups), or shrink NCCL's buffers (`NCCL_BUFFSIZE`, 4 MiB "
        "by default).",
        moot=frozenset({"versions", "ds_report", "cuda", "config"}),
    ),
    # NCCL's InfiniBand transport (``src/transport/net_ib.cc``, ``ncclIbTest``; ``net_ib/p2p.cc``
    # from 2.29, and NVIDIA's ``ib_plugin.c`` in the rdma-sharp plugins): a work completion with
    # an error status, printed as "Got completion with error %d" (to 2.7), "from peer %s with
    # error %d" (2.8 to 2.19), "with status=%d" (2.20 to 2.27, "NET/IB:" from 2.23) and
    # "with status=%s(%d)", ``ibvWcStatusStr``'s name (from 2.28). Status 12 is verbs'
    # ``IBV_WC_RETRY_EXC_ERR``: the transport's retries (``NCCL_IB_RETRY_CNT``, each after
    # ``NCCL_IB_TIMEOUT``) ran out with no acknowledgement from the peer's queue pair. Not 13,
    # ``IBV_WC_RNR_RETRY_EXC_ERR``: NCCL sets ``rnr_retry = 7``, which retries without end, so
    # its cause is not this one. Not 5 (``IBV_WC_WR_FLUSH_ERR``), the requests flushed after an
    # earlier error.
    Diagnosis(
        "nccl_ib_retry",
        _re(r"NET/IB(?:/GIN)? ?: Got completion (?:from peer \S{1,100} )?with "
            r"(?:error |status=(?:IBV_WC_\w{1,30}\()?)12\b", 0,
            # "NET/IB/GIN : " (13 characters) before "Got completion "
            words=("got completion ",), lead=13),
        "NCCL's InfiniBand/RoCE transport gave up on the peer in the message: status 12 "
        "(`IBV_WC_RETRY_EXC_ERR`), none of its retries acknowledged. That peer's process died "
        "first (see the first error on its node), its node or link went down, or the fabric "
        "fails (a switch; on RoCE the wrong `NCCL_IB_GID_INDEX`). Test the link with "
        "`ib_write_bw` between the nodes; a run with `NCCL_IB_DISABLE=1` shows whether the "
        "fabric is the cause.",
        moot=frozenset({"ds_report", "cuda", "config", "repro"}),
    ),
    Diagnosis(
        "rendezvous_timeout",
        _re(r"Timed out initiali[sz]ing process group in store based barrier",
            words=("timed out initiali",)),
        "Not every rank reached the process-group setup before the timeout (the message's "
        "`worker_count` says how many did, of `world_size`): the others were never started, "
        "cannot reach `MASTER_ADDR`:`MASTER_PORT` (address, firewall), or were still busy "
        "before it (building or loading a large model on CPU). Check that every node starts "
        "its processes and reaches the master's address and port, and how long each rank "
        "takes to get there.",
        moot=frozenset({"versions", "ds_report", "cuda"}),
    ),
    # The TCP store's server waiting for every rank (``torch/csrc/distributed/c10d/TCPStore.cpp``,
    # ``TCPStore::waitForWorkers``, PyTorch 2.x): rank 0's ``init_process_group`` (``env://``,
    # ``tcp://``) hosts the store and counts the ranks that connected before the timeout.
    Diagnosis(
        "store_wait_clients",
        # the count may be wrapped onto the next line
        _re(r"Timed out after \d{1,7} seconds waiting for clients\.\s{1,4}\d{1,6}/\d{1,6} clients "
            r"joined", 0,
            # "Timed out after 1234567 " (24 characters) before the words
            words=("seconds waiting for clients.",), lead=24),
        "Rank 0 hosted the rendezvous store (`MASTER_ADDR`:`MASTER_PORT`) and waited for every rank to "
        "connect; only the number the message gives did in time. The others were not started, failed "
        "before reaching `init_process_group` (their own logs say why), were given another address, "
        "port or world size, or cannot reach that port (a firewall, another network). Start every rank "
        "alike, then try `nc -zv <host> <port>` from each node.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "hardware"}),
    ),
    # The TCP store's client (``torch/csrc/distributed/c10d/socket.cpp``, ``SocketConnectOp``)
    # gives up on the store's address, and torchrun's c10d rendezvous wraps it
    # (``elastic/rendezvous/c10d_rendezvous_backend.py``, ``_create_tcp_store``, which hosts the
    # store only where ``_matches_machine_hostname`` takes the endpoint for this machine, or
    # ``is_host`` says so). Not the per-address warning "failed to connect to [host]:port",
    # which a working run prints when one of several addresses fails.
    Diagnosis(
        "store_connect",
        _re(r"The client socket has (?:timed out after \S{1,30} while trying to connect to"
            r"|failed to connect to any network address of)"
            r"|The connection to the C10d store has failed", 0,
            words=("the client socket has ", "the connection to the c10d store has failed")),
        "This process could not reach the rendezvous store at the given host and port "
        "(`MASTER_ADDR`:`MASTER_PORT`, torchrun's `--rdzv_endpoint`): nothing listened there in "
        "time (the node meant to host it not started or failed first, or, with torchrun's c10d "
        "backend, not taking that address for its own, say a second network card's: "
        "`--rdzv_conf is_host=1` there), the address is wrong, or a firewall blocks the port. "
        "Try `nc -zv <host> <port>`.",
        implies={"stage": "S2", "symptom": "2.2"},
        # the GPUs play no part in reaching a TCP port (pytorch#67547/#67581/#79388 were asked
        # for them under this diagnosis, strict readers' 0s)
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "hardware"}),
    ),
    # torchrun's rendezvous (``torch/distributed/elastic/rendezvous/dynamic_rendezvous.py``,
    # ``_DistributedRendezvousOpExecutor.run``: the join deadline passed, ``join_timeout`` 600 s unless
    # ``--rdzv_conf`` sets it; the etcd rendezvous raises the same class).
    Diagnosis(
        "rdzv_join_timeout",
        _re(r"RendezvousTimeoutError", 0, words=("rendezvoustimeouterror",)),
        "torchrun's rendezvous waited for the nodes to join (`join_timeout`, 600 s unless "
        "`--rdzv_conf` sets it) and too few did (`--nnodes`): the others were not started, ran "
        "with another `--rdzv_id`, `--rdzv_endpoint` or `--nnodes`, or could not reach the "
        "endpoint's host and port (their own output says which). Start every node with the "
        "same three, and check `nc -zv <host> <port>` from each.",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "config", "repro", "hardware"}),
    ),
    # Both refusals of a collective or a rank query before the process group exists; one hides
    # an earlier failure of the setup as often as it is a missing call, so it links nothing.
    Diagnosis(
        "dist_not_initialized",
        _re(r"Default process group (?:has not been|is not) initiali[sz]ed"
            r"|DeepSpeed backend not set, please initiali[sz]e it", 0),
        "A distributed call (a rank, a collective, a DDP or ZeRO wrapper) ran in a process "
        "where no process group had been set up. Set it up first in every process "
        "(`torch.distributed.init_process_group` or `deepspeed.init_distributed()`), with the "
        "script started by a distributed launcher; code that also runs as a single process "
        "should check `torch.distributed.is_initialized()`. If an error was printed before "
        "this one, the setup itself failed: fix that one.",
        implies={"stage": "S2"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug"}),
    ),
    # DeepSpeed's ``init_distributed`` (``deepspeed/comm/comm.py``), which ``deepspeed.initialize``
    # calls: told ``dist_init_required=False``, and no process group exists.
    Diagnosis(
        "dist_init_required",
        _re(r"Distributed backend is not initiali[sz]ed\. Please set dist_init_required to True", 0,
            words=("distributed backend is not initiali",)),
        "`deepspeed.initialize` (or `deepspeed.init_distributed`) was given "
        "`dist_init_required=False`, so it did not set up the process group, and none had been. "
        "Leave `dist_init_required` unset (DeepSpeed then sets the group up when none exists), or "
        "set it up yourself before the call (`deepspeed.init_distributed()` or "
        "`torch.distributed.init_process_group`), with the script started by a distributed "
        "launcher.",
        implies={"stage": "S2"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug"}),
        same_problem=True,
    ),
    # ``init_process_group``'s own check (``torch/distributed/distributed_c10d.py``): the default
    # group exists already. Whose second call it is differs (the script's, a library's), so it
    # links nothing.
    Diagnosis(
        "dist_init_twice",
        _re(r"trying to initiali[sz]e the default process group twice", 0,
            words=("trying to initiali",)),
        "`init_process_group` ran a second time in a process whose default process group "
        "already exists. Set it up once per process: guard the call with `if not "
        "torch.distributed.is_initialized()`, or leave it to the framework where one sets it "
        "up (Accelerate, DeepSpeed, Lightning, the Trainer); to start over in the same process "
        "(a second run, a sweep), call `torch.distributed.destroy_process_group()` first.",
        implies={"stage": "S2"},
        moot=frozenset({"cuda", "hardware", "ds_report", "config", "nccl_debug"}),
    ),
    # Horovod's own check (Python and C++), the same message in both.
    Diagnosis(
        "horovod_init",
        _re(r"Horovod has not been initiali[sz]ed;? use hvd\.init\(\)", 0),
        "A Horovod call (a rank or size query, a collective, a `DistributedOptimizer`) ran in a "
        "process where `hvd.init()` had not run. Call `hvd.init()` first, in every process, "
        "before any other Horovod call, and from the module the calls use: each framework's "
        "module is set up on its own, so `horovod.tensorflow`'s `init` does not set up "
        "`horovod.torch`.",
        implies={"stage": "S2"},
        moot=frozenset({"cuda", "hardware", "ds_report", "config", "nccl_debug"}),
        same_problem=True,
    ),
    Diagnosis(
        "fork_cuda",
        _re(r"Cannot re-initiali[sz]e CUDA in forked subprocess",
            words=("cannot re-initiali",)),
        "CUDA was initialised in a process that then forked (data loader workers or "
        "`multiprocessing` with the default `fork` start method), and a forked child cannot "
        "use CUDA. Keep CUDA out of the parent until the workers are started (no CUDA tensors "
        "in the dataset's setup), or start them with the `spawn` method "
        "(`multiprocessing_context=\"spawn\"` for the DataLoader, or "
        "`torch.multiprocessing.set_start_method(\"spawn\")`).",
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "launcher_command"}),
        same_problem=True,
    ),
    # Lightning's ``_lazy_init_strategy`` (``pytorch/trainer/connectors/accelerator_connector.py``;
    # ``fabric/connector.py`` for Fabric): in a notebook or an interactive interpreter, a strategy
    # whose launcher runs the script again. Only the message naming a strategy (since 1.7): before,
    # it named an accelerator or a backend, and ``ddp_notebook`` (1.7) did not exist.
    Diagnosis(
        "lightning_notebook",
        # a strategy object's repr too (``<...DDPStrategy object at 0x...>``)
        _re(r"\(strategy=[^\n)]{1,200}\)`? is not compatible with an interactive\s{1,4}"
            r"environment", 0),
        "Lightning's `ddp` strategy (like its DeepSpeed and FSDP ones) starts the other "
        "processes by running the script again, and a notebook or an interactive session has no "
        "script to run. Run the code as a script (`python train.py`, or under `torchrun`), or, "
        "for DDP in a notebook, pass `strategy=\"ddp_notebook\"`, which forks the processes: "
        "then nothing may use CUDA before the processes start (`trainer.fit`).",
        implies={"stage": "S2"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "nccl_debug"}),
        same_problem=True,
    ),
    Diagnosis(
        "collective_mismatch",
        _re(r"Detected mismatch between collectives on ranks",
            words=("detected mismatch between collectives on ranks",)),
        "The ranks called different collective operations (or the same one with other "
        "shapes) at the same point, so they cannot meet: a code path differs between ranks (a "
        "condition on the rank, uneven data, a layer or step skipped on some ranks). The "
        "message lists the ranks and calls that differ; make every rank run the same "
        "collectives in the same order.",
        implies={"stage": "S4"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "nccl_debug"}),
    ),
    # Horovod's coordinator (``horovod/common/controller.cc``, ``ConstructResponse``) compares what
    # every rank submitted under one tensor name: type, operation, shape.
    Diagnosis(
        "horovod_mismatch",
        _re(r"Mismatched (?:[A-Z_]{4,20} tensor shapes|data types|operations): One rank", 0,
            words=("mismatched ",)),
        "The ranks submitted different tensors under the same Horovod name (another shape, data "
        "type or operation): they took different code paths (a condition on the rank, a layer "
        "or step skipped on some), or a size that differs between ranks (a last, smaller batch) "
        "went to `allreduce` or `broadcast`. Make every rank submit the same tensors in the "
        "same order; for sizes that differ between ranks use `allgather` (first dimension "
        "only).",
        implies={"stage": "S4"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "nccl_debug"}),
    ),
    # Horovod's PyTorch ``DistributedOptimizer`` (``horovod/torch/optimizer.py``, its gradient hook):
    # a parameter's gradient is allreduced after ``backward_passes_per_step`` backward passes and
    # then waits for ``step()``.
    Diagnosis(
        "horovod_accumulation",
        _re(r"Gradients were computed more than\s{1,4}backward_passes_per_step times before call "
            r"to step\(\)", 0, words=("gradients were computed more than",)),
        "Horovod's `DistributedOptimizer` allreduces each gradient once every "
        "`backward_passes_per_step` backward passes (default 1), and a parameter got another "
        "gradient before `optimizer.step()`: the loop accumulates gradients over more passes "
        "than that, or skips `step()` somewhere (an epoch's last, shorter window). Set "
        "`backward_passes_per_step` to the backward passes per step, and call `step()` after "
        "each window, the epoch's last one too.",
        implies={"stage": "S4"},
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "nccl_debug",
                        "launcher_command"}),
    ),
    # Horovod's status once its background loop stopped (``horovod/common/common.h``,
    # ``SHUT_DOWN_ERROR``): every later collective of every rank still running gets it, so it
    # hides an earlier error and links nothing.
    Diagnosis(
        "horovod_shut_down",
        _re(r"Horovod has been shut down", 0, words=("horovod has been shut down",)),
        "Horovod had already shut down when this collective was submitted: an exception on one "
        "of the ranks stopped it (printed before the first shutdown message, in that rank's "
        "output: that is the error to fix), or one rank finished while the others still call "
        "collectives. If no rank shows an exception, give every rank the same number of steps "
        "(an equal share of the data, `drop_last`), so that all of them stop together.",
        moot=frozenset({"versions", "ds_report", "cuda", "hardware"}),
    ),
    # torchrun's signal handler (``torch/distributed/elastic/multiprocessing/api.py``,
    # ``_terminate_process_handler``, installed for SIGTERM, SIGINT, SIGHUP and SIGQUIT, so it replaces
    # the SIGHUP that ``nohup`` ignores): the agent logs "Received <signal> death signal, shutting down
    # workers" (``elastic/agent/server/api.py``, ``run``), stops them and raises ``SignalException``.
    # SIGHUP (1) is the terminal or session closing; SIGTERM and SIGINT have other senders (a
    # scheduler, Ctrl-C), not read here.
    Diagnosis(
        "torchrun_sighup",
        _re(r"SignalException: Process \d{1,10} got signal: (?:1|(?:Signals\.)?SIGHUP)\b"
            r"|Received (?:1|Signals\.SIGHUP) death signal", 0,
            # "Received Signals.SIGHUP" (23 characters) before " death signal"
            words=("signalexception: process ", " death signal"), lead=23),
        "The launcher (torchrun, or `accelerate launch` through it) got SIGHUP (signal 1), which a "
        "process gets when the terminal or ssh session that started it closes, and stopped its "
        "workers. `nohup` does not help: torchrun sets its own handler for that signal. Start long "
        "jobs detached from the session: inside `tmux` or `screen`, with `setsid` (its output "
        "redirected to a file), or through the cluster's scheduler (`sbatch`).",
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "config", "repro",
                        "nccl_debug", "traceback"}),
        same_problem=True,
    ),
    # ProcessGroupNCCL's check of a tensor (older releases), and ProcessGroup's lookup of a
    # backend for a CPU tensor in a group with only a GPU backend (PyTorch 2).
    Diagnosis(
        "nccl_cpu_tensor",
        _re(rf"Tensors must be CUDA and dense|No backend type associated with device type "
            rf"{_Q}cpu(?!\w)", 0,
            words=("tensors must be cuda and dense",
                   "no backend type associated with device type ")),
        "A collective got a tensor in CPU memory, and the group's backend (NCCL) moves only "
        "GPU tensors. If the traceback ends inside the framework, an option that keeps "
        "tensors on the CPU (often CPU offload) reached a path not made for it: report it, "
        "and run without that option meanwhile. In your own code, move the tensor (for DDP, "
        "the model before wrapping it) to the rank's GPU, or give the group a backend for CPU "
        "tensors too (`backend=\"cpu:gloo,cuda:nccl\"`).",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug"}),
    ),
    # ProcessGroupNCCL's check of each tensor (``check_gpu_single_tensor``,
    # ``torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp``; a ValueError in recent releases, a
    # RuntimeError before): a collective's tensor is a view not laid out in order. Only with a
    # collective's frame in the log (``torch/distributed/distributed_c10d.py``, or the
    # ``c10d_logger.py`` wrapper around it; DeepSpeed's and the others' collectives call them):
    # custom kernels (Triton wrappers, extensions) raise the same words about their own inputs.
    Diagnosis(
        "nccl_not_contiguous",
        _re(r"Tensors must be contiguous", 0),
        "A collective got a tensor that is not contiguous (a transposed, sliced or expanded "
        "view), and NCCL sends only tensors laid out in order. In your own code, pass "
        "`.contiguous()` copies (the outputs of `all_gather` too). If the traceback ends inside "
        "the framework, a parameter may have become such a view (a weight transposed or tied "
        "when loaded: make it contiguous before wrapping the model), or the framework passed "
        "one: report it.",
        # "distributed_" (12 characters) before "c10d"
        context=_re(r"distributed_c10d|c10d_logger", 0, words=("c10d",), lead=12),
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    Diagnosis(
        "ddp_unused",
        _re(r"Expected to have finished reduction in the prior iteration",
            words=("expected to have finished reduction in the prior iteration",)),
        "Some parameters got no gradient in an iteration (they did not contribute to the "
        "loss), so DistributedDataParallel's gradient reduction never finished. Pass "
        "`find_unused_parameters=True` to `DistributedDataParallel`, or make every output of "
        "`forward` take part in the loss.",
        implies={"stage": "S4"},
        moot=frozenset({"hardware", "launcher_command"}),
        same_problem=True,
    ),
    # The reducer's own message names both causes.
    Diagnosis(
        "ddp_ready_twice",
        _re(r"Expected to mark a variable ready only once", 0),
        "DistributedDataParallel saw a parameter's gradient become ready twice in one backward "
        "pass: most often reentrant activation checkpointing, otherwise a parameter used "
        "outside `forward` or shared between concurrent passes. Use non-reentrant "
        "checkpointing (`use_reentrant=False`; `gradient_checkpointing_kwargs={\"use_reentrant\":"
        " False}` in Transformers), or pass `static_graph=True` to `DistributedDataParallel` "
        "if the graph is the same every iteration.",
        implies={"stage": "S4"},
        moot=frozenset({"cuda", "hardware", "ds_report", "launcher_command", "nccl_debug"}),
    ),
    Diagnosis(
        "ddp_no_grad_params",
        _re(r"DistributedDataParallel is not needed when a module doesn['’]?t have any "
            r"parameter that requires a gradient", 0),
        "DistributedDataParallel was given a module none of whose parameters requires a "
        "gradient, so it has nothing to synchronise. Wrap only a model that is trained: a "
        "frozen one (a reference, reward or teacher model) needs no wrapper, and in a model "
        "meant to be trained every parameter was frozen (`requires_grad=False`), often because "
        "the adapter or the layers to train were added or unfrozen after it was wrapped, or "
        "not at all.",
        moot=frozenset({"cuda", "hardware", "ds_report", "launcher_command", "nccl_debug"}),
    ),
    # DDP's own check (``torch/nn/parallel/distributed.py``): ``device_ids`` given for a module on
    # the CPU or over several devices. The two want other fixes, so it links nothing.
    Diagnosis(
        "ddp_device_ids",
        _re(r"DistributedDataParallel device_ids and output_device arguments only work with "
            r"single-device", 0,
            words=("distributeddataparallel device_ids and output_device arguments",)),
        "`DistributedDataParallel` was given `device_ids` (or `output_device`) for a module "
        "whose parameters are on the CPU or spread over several devices (the set at the end of "
        "the message lists them), or `output_device` without `device_ids`. Move the model to "
        "the rank's GPU (`model.to(local_rank)`) before wrapping it and pass both or neither; "
        "a model kept on the CPU, or split over several GPUs (a `device_map`), is wrapped "
        "without either.",
        moot=frozenset({"cuda", "hardware", "ds_report", "launcher_command", "nccl_debug"}),
    ),
    # DDP's own check (``torch/nn/parallel/distributed.py``, ``__init__``; an assertion in older
    # releases): the parameters' device types form one set.
    Diagnosis(
        "ddp_mixed_devices",
        _re(r"DistributedDataParallel['’]s input module must be on\s{1,4}the same type of devices", 0,
            # "DistributedDataParallel's " (26 characters) before the words
            words=("input module must be on",), lead=26),
        "The model given to `DistributedDataParallel` has parameters on more than one device type (the "
        "set at the end names them, e.g. `{'cpu', 'cuda'}`): only part of it was moved to the GPU, or "
        "layers were added or replaced after `model.to(device)` (adapters, a new head); `meta` means "
        "weights never loaded. Move the whole model to the rank's GPU (`model.to(local_rank)`) after "
        "its last change and before wrapping it.",
        moot=frozenset({"cuda", "hardware", "ds_report", "launcher_command", "nccl_debug"}),
    ),
    # ``nn.Module.__getattr__`` (``torch/nn/modules/module.py``): "'{type(self).__name__}' object has
    # no attribute '{name}'" after the parameters, buffers and submodules. DDP and DataParallel
    # keep the model as ``.module`` and pass nothing else through. Not FSDP, whose ``__getattr__``
    # forwards to the wrapped module, nor DeepSpeed's engine, which does since 0.6.5
    # (``runtime/engine.py``): their name there means the model lacks it too. Nor a private name
    # (``_sync_params``) or one of DDP's own methods and flags (``no_sync``,
    # ``require_backward_grad_sync``): code written for another release or another wrapper.
    Diagnosis(
        "ddp_wrapper_attr",
        # not inside another class's name (``FullyShardedDataParallel``)
        _re(rf"(?<!\w){_Q}(?:Distributed)?DataParallel{_Q} object has no attribute "
            rf"{_Q}(?!_|module\b|no_sync\b|require_)\w", 0,
            # "'Distributed" (12 characters) before "DataParallel"
            words=("dataparallel",), lead=12),
        "`DistributedDataParallel` (like `DataParallel`) holds your model as its `.module` and "
        "does not pass the model's own attributes and methods through (its `config`, "
        "`generate`, `save_pretrained`, your methods). Call the wrapper for the forward pass, "
        "and reach the rest on the model: `model.module.<name>` "
        "(`accelerator.unwrap_model(model)` under Accelerate). If the model itself lacks the "
        "name, the wrapper is not the cause.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # ``torch.nn.DataParallel`` (``torch/nn/parallel/parallel_apply.py``: ``ExceptionWrapper`` "in
    # replica {i} on device {device}", re-raised by ``torch/_utils.py`` as "Caught {type} {where}"):
    # one process running the model on every visible GPU in threads. Only beside a distributed
    # framework, which wants one process per GPU; a plain DataParallel user's error is the inner one.
    Diagnosis(
        "data_parallel_replica",
        _re(r"Caught \w{1,60} in replica \d+ on device \d+", 0,
            # "Caught " and up to 60 characters and a space before the words
            words=(" in replica ",), lead=68),
        "The error came from a replica of `torch.nn.DataParallel`: one process runs the model "
        "on every visible GPU, which DeepSpeed, Accelerate and the like do not support. Scripts "
        "fall back to it when no launcher gave them a local rank (`--local_rank -1`, or plain "
        "`python` on a machine with several GPUs, the Trainer too). Start the script with "
        "`deepspeed`, `torchrun` or `accelerate launch`, or show it one GPU "
        "(`CUDA_VISIBLE_DEVICES=0`).",
        # not Transformers or Lightning alone: their Trainer uses DataParallel by design when run
        # without a launcher, and the error inside the replica is then the one to read
        context=_re(r"deepspeed|accelerate|colossalai|megatron", re.I,
                    words=("deepspeed", "accelerate", "colossalai", "megatron")),
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug"}),
    ),
    # Autograd's check of the tensors ``backward`` starts from (``torch/csrc/autograd/autograd.cpp``,
    # ``_make_grads``): one has no history. Why differs (no_grad, frozen weights, a reentrant
    # checkpoint with inputs not requiring grad, a framework's lazy tensor), so it links nothing.
    Diagnosis(
        "no_grad_fn",
        _re(r"element \d{1,6} of tensors does not require grad and does not have a grad_fn", 0,
            # "element " and up to 6 digits before the words
            words=(" of tensors does not require grad",), lead=14),
        "`backward()` ran on a tensor with no autograd history, so no trainable parameter led "
        "to it: the loss was computed under `torch.no_grad()`, from frozen parameters only, or "
        "from a detached value. With reentrant activation checkpointing over inputs that need "
        "no gradient (frozen embeddings, LoRA), use `use_reentrant=False` or "
        "`model.enable_input_require_grads()`. If the loss comes out of the framework so, "
        "report it.",
        implies={"stage": "S4"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # Non-reentrant activation checkpointing's check of what the recomputation saved
    # (``torch/utils/checkpoint.py``, ``_checkpoint_hook`` and ``_check_metadata``-style comparison
    # of shape, dtype and device per saved tensor, raising ``CheckpointError``).
    Diagnosis(
        "checkpoint_recompute",
        _re(r"Recomputed values for the following tensors have different metadata", 0,
            words=("recomputed values for the following tensors have different metadata",)),
        "Activation checkpointing reran a checkpointed segment's forward in the backward pass, "
        "and tensors it saved differ from the first run's (the message lists shape, dtype, "
        "device): the segment ran otherwise the second time. Usually a cast active in the "
        "first forward was not during the rerun (autocast, a mixed-precision wrapper's cast), "
        "or a flag or shape changed in between. Rerun under the same state; if the framework's "
        "own cast is skipped, report it.",
        implies={"stage": "S4"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # Only with ZeRO-3 named: "must be 2-D" elsewhere is an ordinary shape bug.
    Diagnosis(
        "zero3_partitioned",
        _re(r"must be 2-?D\b",
            words=("must be 2",)),
        "Under ZeRO-3 each rank holds only a shard of every parameter, and outside the "
        "engine's forward pass a parameter is an empty placeholder, so code that uses or saves "
        "the weights directly sees a tensor of the wrong shape. Gather them first "
        "(`deepspeed.zero.GatheredParameters`), or save full weights with "
        "`stage3_gather_16bit_weights_on_model_save` or `zero_to_fp32.py`.",
        context=_re(r"\bzero[-_ ]?(?:stage[-_ ]?)?3(?!\d)|\bstage[-_ ]?3(?!\d)|"
                    r"['\"]stage['\"]\s*:\s*3(?!\d)|zero_stage\s*[=:]?\s*3(?!\d)|\bzero3",
                    # a quote before "stage"
                    words=("zero", "stage"), lead=1),
    ),
    # DeepSpeed's own refusal, which says that repartitioning is not supported.
    Diagnosis(
        "zero_dp_size_changed",
        _re(r"used a DP world size of \d+ but the current world size is \d+",
            words=("used a dp world size of ",)),
        "ZeRO's optimizer state is partitioned by the data-parallel size it was saved with, "
        "and DeepSpeed cannot repartition it to another size when it loads. Resume with the "
        "same data-parallel size, load the model weights without the optimizer state, or "
        "convert the checkpoint (`zero_to_fp32.py` gives full fp32 weights; DeepSpeed's "
        "universal checkpoint can be loaded at another size).",
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "launcher_command"}),
        same_problem=True,
    ),
    # DeepSpeed's ``zero_to_fp32.py`` (``parse_optim_states``): the partition count saved in the first
    # ``*_optim_states.pt`` against the number of such files in the folder.
    Diagnosis(
        "zero_to_fp32_files",
        _re(r"Expected \d{1,6} of '\*_optim_states\.pt' under", 0,
            # "Expected " and up to 6 digits before the words
            words=(" of '*_optim_states.pt' under",), lead=15),
        "`zero_to_fp32.py` expects one `*_optim_states.pt` per data-parallel rank (the count "
        "saved in the first file) and found another number: files of two saves with different "
        "numbers of GPUs in one folder (an old checkpoint overwritten), a rank that did not "
        "save, or a run with tensor or pipeline parallelism, whose model-parallel ranks the "
        "script does not merge. Convert a folder holding one complete save; for model-parallel "
        "runs, use the framework's converter.",
        moot=frozenset({"versions", "ds_report", "cuda", "hardware", "launcher_command"}),
    ),
    # ``load_state_dict``'s size check against a ZeRO-3 placeholder: DeepSpeed's ``free_param``
    # (``deepspeed/runtime/zero/partition_parameters.py``) sets each partitioned parameter's data to
    # ``torch.empty(0)`` outside the engine's forward, so the model's shape reads ``torch.Size([0])``;
    # FSDP with ``use_orig_params=True`` also leaves such placeholders (a rank's parameters outside
    # its shard, or all of them outside forward and backward), so "most often" ZeRO-3. Before
    # ``size_mismatch``, which gives way to it.
    Diagnosis(
        "zero3_empty_param",
        _re(r"the shape in current model is torch\.Size\(\[0\]\)", 0,
            words=("the shape in current model is torch.size([0])",)),
        "The model's parameters are empty placeholders (`torch.Size([0])`), most often because ZeRO-3 "
        "already partitioned it (DeepSpeed's `zero.Init`, used by Transformers and Accelerate under a "
        "stage-3 config; FSDP with `use_orig_params=True` leaves them too). Load the weights before "
        "it is partitioned (`from_pretrained` does so), through the engine (`load_checkpoint`), or "
        "inside `deepspeed.zero.GatheredParameters(params, modifier_rank=0)`.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # ``Module.load_state_dict``'s own checks (what DeepSpeed, Megatron and Transformers call).
    # A shape differs: the two models were built differently, in one of several ways, so it
    # links nothing.
    Diagnosis(
        "size_mismatch",
        _re(r"size mismatch for [^\s:]{1,300}: copying a param\s{1,4}with shape", 0),
        "A tensor in the checkpoint has another shape than the model's parameter of that name "
        "(the message gives both), so the model is built differently from the one that saved "
        "it: another config (hidden size, vocabulary or its padding, number of labels), "
        "another tensor or pipeline parallel split, or a model already sharded when loaded "
        "(ZeRO-3, a sharded init). Build it with the checkpoint's config and parallel sizes, "
        "or convert the checkpoint to them.",
        # a ZeRO-3 placeholder's empty shape: ``zero3_empty_param`` names that case's fixes
        unless=_re(r"the shape in current model is torch\.Size\(\[0\]\)", 0,
                   words=("the shape in current model is torch.size([0])",)),
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # Megatron's ``check_checkpoint_args`` (``megatron/training/checkpointing.py``; Megatron-
    # DeepSpeed keeps it): the model's fixed arguments against those saved in the checkpoint;
    # tensor and pipeline sizes only for a checkpoint not in the distributed format. Which one
    # differs (and so the fix) varies, so it links nothing.
    Diagnosis(
        "megatron_ckpt_args",
        _re(r"value from checkpoint \([^\n)]{0,80}\) is not equal to the input argument value", 0,
            words=("value from checkpoint (",)),
        "Megatron checks the arguments that fix the model's shape and split (layers, hidden "
        "size, heads, vocabulary padding, tensor and pipeline sizes) against those saved in "
        "the checkpoint, and the one named differs. Pass the checkpoint's value (or "
        "`--use-checkpoint-args`). For other tensor or pipeline sizes, convert it "
        "(`tools/checkpoint/convert.py`) or use the distributed format (`--ckpt-format "
        "torch_dist`), which reshards on load.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # Megatron's indexed dataset: ``make_dataset`` (``megatron/data/indexed_dataset.py``, before
    # Megatron-Core's datasets; it prints both lines and returns None, which fails later) and
    # ``IndexedDataset.initialize`` (``megatron/core/datasets/indexed_dataset.py``) find no
    # ``<prefix>.bin`` and ``<prefix>.idx`` at a path of ``--data-path``.
    Diagnosis(
        "megatron_data_prefix",
        _re(r"Path should be a basename that both \.idx and \.bin can be appended|One or both of "
            r"the \.idx and \.bin files cannot be found at the path prefix", 0,
            words=("path should be a basename that both .idx", "one or both of the .idx and .bin")),
        "Megatron reads each dataset of `--data-path` from `<prefix>.bin` and `<prefix>.idx`, "
        "and there is no such pair at the path given: pass the prefix itself, without "
        "`.bin`/`.idx` and with the suffix `tools/preprocess_data.py` added to its "
        "`--output-prefix` (`<output-prefix>_text_document` by default), not the folder. "
        "Several datasets go as weights and prefixes (`0.7 a 0.3 b`); every node must see the "
        "files.",
        implies={"stage": "S3", "symptom": "3.1", "root_cause": "R3.2"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
        same_problem=True,
    ),
    # Only when the prefix explains the two lists (``_prefix_explains``): a prefix on one side
    # alone can be a submodule's name, and a first key or two pairing up proves nothing when the
    # rest are another model's keys. A large model's list of keys is one line of ~100 KB (the cap
    # of the text read), so the gap to the second list is as long: searched only after the
    # literal, ~3 ms when a report has it.
    Diagnosis(
        "state_dict_prefix",
        # the missing list is read up to the next "Missing key(s)" only: scanned to the end of
        # the line from every start, a line of 100 KB repeating it took seconds (attacker input)
        _re(r'Missing key\(s\) in state_dict: (?P<missing>"(?:(?!Missing key\(s\))[^\n]){0,100000}?)'
            r'\s{0,4}Unexpected key\(s\) in state_dict: (?P<unexpected>"[^\n]{0,100000})', 0,
            words=("missing key(s) in state_dict: ",)),
        "The checkpoint's parameter names and the model's differ, at least, by a "
        "wrapper's prefix: `module.` (DDP, DataParallel, DeepSpeed's engine) or "
        "`_orig_mod.` (`torch.compile`); one side was saved or is loaded through the "
        "wrapper, the other not. Save and load the unwrapped model (`model.module`; "
        "`model._orig_mod` for `torch.compile`), or strip the prefix from the "
        "checkpoint's keys (`consume_prefix_in_state_dict_if_present` in "
        "`torch.nn.modules.utils`).",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "versions"}),
        same_problem=True,
        verify=_prefix_explains,
    ),
    # ``torch.load``'s own checks (``torch/serialization.py``): a storage saved on a GPU this
    # process lacks (``_validate_device``), and the weights-only unpickler's refusal, the default
    # since PyTorch 2.6 (``UNSAFE_MESSAGE``; before, with ``weights_only=True`` passed).
    Diagnosis(
        "checkpoint_device",
        _re(r"Attempting to deserialize object on (?:a CUDA device|CUDA device \d+)", 0,
            words=("attempting to deserialize object on ",)),
        "The checkpoint holds tensors saved on a GPU that this process does not have: no GPU "
        "is usable here (`torch.cuda.is_available()` is False), or the saving process used a "
        "higher GPU index than this process sees. Pass `map_location` to `torch.load` "
        "(`map_location=\"cpu\"`, or this rank's own device) and move the tensors afterwards; "
        "if this machine should have a GPU, check `nvidia-smi` and that this PyTorch is a "
        "CUDA build.",
        # no link: a machine without a GPU and a GPU machine whose PyTorch cannot use it want
        # other fixes
        moot=frozenset({"ds_report", "launcher_command", "nccl_debug", "config"}),
    ),
    Diagnosis(
        "weights_only",
        # not for a file that is no checkpoint at all (a git-lfs pointer, an HTML page saved as
        # the file): the unpickler then fails on its first byte, "Unsupported operand 118"
        _re(r"Weights only load failed(?![\s\S]{0,1500}?Unsupported operand \d)", 0,
            words=("weights only load failed",)),
        "`torch.load` ran with `weights_only=True` (default since PyTorch 2.6: tensors and "
        "plain types only), and the file holds other objects (the message names one). If "
        "you trust the file, load it with `weights_only=False`, or allow the named class "
        "(`torch.serialization.add_safe_globals`). In a framework's code, upgrade it "
        "(DeepSpeed passes `weights_only=False` since 0.16), or set "
        "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1` (if the caller leaves `weights_only` unset).",
        moot=frozenset({"cuda", "hardware", "ds_report", "launcher_command", "nccl_debug",
                        "config"}),
        same_problem=True,
    ),
    # A file that is no weights file at all, read as one: safetensors' header check
    # (``safetensors/src/tensor.rs``, ``read_metadata``: the first 8 bytes, read as the header's
    # length, exceed 100 MB; Debug-formatted "HeaderTooLarge" before 0.6), pickle's first byte
    # (C ``_pickle``: "invalid load key, '%c'."; ``torch/_weights_only_unpickler.py``:
    # "Unsupported operand 118" for "v", 60 for "<"), and Transformers 4.x's own test of the file's
    # first word (``modeling_utils.load_state_dict``). "v" starts a Git LFS pointer, "<" a web page.
    Diagnosis(
        "not_weights_file",
        _re(r"Error while deserializing header: (?:HeaderTooLarge|header too large)"
            r"|invalid load key, '[v<]'|Unsupported operand (?:118|60)(?!\d)"
            r"|cloned a repository without having git-lfs installed", 0,
            words=("error while deserializing header: ", "invalid load key, ",
                   "unsupported operand ", "cloned a repository without having git-lfs")),
        "The weights file is not a checkpoint: its first bytes are text or another format. "
        "Most often it is a Git LFS pointer, a text file of about 130 bytes left by a clone "
        "without Git LFS (`head -c 100 <file>` shows `version` and `git-lfs`), or a web page "
        "saved in its place by a download (starting `<`). Run `git lfs install` and `git lfs "
        "pull` in the clone, or download the file again (`hf download`, formerly "
        "`huggingface-cli download`).",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "versions"}),
        same_problem=True,
    ),
    # A weights file whose end is missing: PyTorch's zip reader (``caffe2/serialize/
    # inline_container.cc``, miniz's "failed finding central directory", which a zip file keeps at
    # its end) and safetensors' check of the file's size against its header (``read_metadata``:
    # ``MetadataIncompleteBuffer``, ``InvalidHeaderLength``; their Display text since 0.6).
    Diagnosis(
        "checkpoint_truncated",
        _re(r"failed finding central directory|Error while deserializing header: (?:"
            r"MetadataIncompleteBuffer|incomplete metadata|InvalidHeaderLength|invalid header "
            r"length)", 0,
            words=("failed finding central directory", "error while deserializing header: ")),
        "The checkpoint file is incomplete: a PyTorch file missing its end (a zip archive's "
        "central directory), or a safetensors file whose size is not what its header says. Its "
        "save or download stopped early (a full disk or quota, a killed process), or it was read "
        "while still being written: another rank loading what rank 0 is saving (a barrier "
        "between save and load), or several ranks writing one path. Save or download it "
        "again.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "versions"}),
    ),
    # DeepSpeed's refusals of a ZeRO stage with what it cannot go with; each names the pair.
    Diagnosis(
        "zero_pipeline",
        _re(r"ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism", 0),
        "DeepSpeed's pipeline engine (a `PipelineModule` model) works only with ZeRO stage 0 or "
        "1, and the config asks for stage 2 or 3. Set `zero_optimization.stage` to 1 (or 0), "
        "or train without the pipeline engine to use stage 2 or 3 (in Megatron-DeepSpeed, "
        "`--no-pipeline-parallel` with a pipeline size of 1).",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug"}),
        same_problem=True,
    ),
    # DeepSpeed's ``PipelineEngine`` (``runtime/pipe/engine.py``): ``forward``, ``backward`` and
    # ``step`` raise PipelineError, and ``train_batch`` refuses to run without gradients.
    Diagnosis(
        "pipeline_train_batch",
        _re(r"Only train_batch\(\) is accessible in pipeline mode"
            r"|train_batch\(\) requires gradients enabled\. Use eval_batch\(\) instead", 0,
            # "Only " (5 characters) before "train_batch() "
            words=("train_batch() ",), lead=5),
        "With a `PipelineModule`, `deepspeed.initialize` returns DeepSpeed's pipeline engine, "
        "which runs the forward and backward passes and the optimizer step of a whole batch "
        "itself: calling the engine, `backward` or `step` is refused (as the Trainer and "
        "Accelerate code do). Call `engine.train_batch(data_iter=...)` once per step, the loss "
        "from the module's `loss_fn`, and `engine.eval_batch(...)` to evaluate (also under "
        "`torch.no_grad()`).",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "versions"}),
        same_problem=True,
    ),
    Diagnosis(
        "zero_no_sync",
        _re(r"no_sync context manager is incompatible with gradient partitioning", 0),
        "ZeRO stages 2 and 3 partition the gradients as they are reduced, so DeepSpeed refuses "
        "`no_sync()` with them. Let DeepSpeed accumulate: set `gradient_accumulation_steps` in "
        "its config and call the engine's `backward` and `step` on every micro-batch, without "
        "`no_sync`; or use ZeRO stage 0 or 1. If a training library calls `no_sync`, not your "
        "code, its DeepSpeed support and this DeepSpeed release do not match: use releases "
        "made for each other.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug"}),
        same_problem=True,
    ),
    Diagnosis(
        "offload_optimizer",
        _re(r"using ZeRO-Offload with a client provided optimizer", 0),
        "With ZeRO-Offload the optimizer step runs on the CPU, and DeepSpeed refuses an "
        "optimizer created by your code (a PyTorch one is slow there) unless told otherwise. "
        "Declare it in the config's `optimizer` section instead, or pass "
        "`deepspeed.ops.adam.DeepSpeedCPUAdam`; to keep your own, set "
        "`\"zero_force_ds_cpu_optimizer\": false` in the config, at a cost in speed.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug"}),
        same_problem=True,
    ),
    # ``_do_optimizer_sanity_check`` (``runtime/engine.py``): with ZeRO on, an optimizer whose type
    # is not in ``ZERO_SUPPORTED_OPTIMIZERS`` (``runtime/zero/utils.py``) unless the config allows
    # it. Accelerate and the Trainer set the option themselves for a torch optimizer.
    Diagnosis(
        "zero_untested_optim",
        _re(r"You are using an untested ZeRO Optimizer", 0,
            words=("you are using an untested zero optimizer",)),
        "With ZeRO on, DeepSpeed accepts only the optimizers it was tested with (PyTorch's "
        "`Adam`, `AdamW` and `Adagrad`, its own Adam, Adagrad and Lion) unless the config "
        "allows others, and this one is another class (an 8-bit optimizer, `SGD`, another "
        "library's `AdamW`). Add `\"zero_allow_untested_optimizer\": true` at the top level of "
        "the DeepSpeed config, or declare a supported optimizer in its `optimizer` section.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # ``_do_optimizer_sanity_check`` (``runtime/engine.py``): the config's ``optimizer.type`` is neither
    # in ``DEEPSPEED_OPTIMIZERS`` nor a class of ``torch.optim``; ``_configure_basic_optimizer`` takes
    # its CPU Adam for ``Adam`` with optimizer offload.
    Diagnosis(
        "ds_optimizer_name",
        _re(r"\S{1,60} is not a supported DeepSpeed Optimizer", 0,
            # up to 60 characters (the name) before the words
            words=(" is not a supported deepspeed optimizer",), lead=61),
        "The DeepSpeed config's `optimizer.type` names no optimizer DeepSpeed builds: it takes "
        "its own names (`Adam`, `AdamW`, `Adagrad`, `Lamb`, `Lion`, the 1-bit ones) or a "
        "class of `torch.optim`, not an implementation's. `Adam` uses its fused Adam on the "
        "GPU and its CPU Adam when `offload_optimizer` is on; for another class, create the "
        "optimizer in your code and pass it to `deepspeed.initialize(optimizer=...)` instead.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # DeepSpeed's config classes (``runtime/config_utils.py``, ``DeepSpeedConfigModel``: pydantic,
    # ``extra="forbid"``) validating the config's sections or ``init_inference``'s keyword arguments
    # (``inference/config.py``, ``DeepSpeedInferenceConfig``); pydantic lists each field refused.
    # Which field differs, so it links nothing.
    Diagnosis(
        "ds_config_validation",
        _re(r"\d{1,3} validation errors? for DeepSpeed\w{0,40}Config", 0,
            # up to 3 digits before the words
            words=(" validation error",), lead=3),
        "DeepSpeed checks its config (and `init_inference`'s keyword arguments) against this "
        "release's fields, and refused those listed under this line: a key it does not know "
        "(`extra fields not permitted`: misspelt, at the wrong level, or from another release) "
        "or a value of the wrong kind (`value is not a valid dict`: `tensor_parallel` takes "
        "`{\"tp_size\": 2}`, not a number). Correct them against this release's documentation.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
    ),
    # DeepSpeed's ``_configure_basic_optimizer`` (``runtime/engine.py``): its 1-bit optimizers
    # (``onebitadam``, ``zerooneadam``, ``onebitlamb``) communicate compressed updates themselves,
    # which ZeRO's partitioning cannot go with.
    Diagnosis(
        "ds_onebit_zero",
        _re(r"(?:1bit-Adam|0/1 Adam|1bit-Lamb) is not compatible with ZeRO", 0,
            # "1bit-Lamb " (10 characters) before the words
            words=("is not compatible with zero",), lead=10),
        "The config's optimizer is one of DeepSpeed's 1-bit optimizers (`OneBitAdam`, "
        "`ZeroOneAdam`, `OneBitLamb`), which communicate compressed updates themselves, and "
        "DeepSpeed refuses them with ZeRO on (a `zero_optimization` stage above 0, also one that "
        "a Trainer's or Accelerate's config sets). Set the stage to 0 to keep the 1-bit "
        "optimizer, or use `Adam` or `AdamW` (`Lamb`) to keep ZeRO.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # DeepSpeed's checks of the config it is given (``deepspeed/__init__.py``, ``initialize``;
    # ``runtime/config.py``, the precision and batch sizes) and of the optimizer it gets
    # (``runtime/engine.py``, ``_configure_zero_optimizer``; ``ops/adam/cpu_adam.py``, ``step``).
    Diagnosis(
        "ds_config_missing",
        _re(r"DeepSpeed requires --deepspeed_config to specify configuration file", 0,
            words=("deepspeed requires --deepspeed_config",)),
        "`deepspeed.initialize` got no config: neither its `config` argument (a dict or a "
        "JSON file's path) nor `args.deepspeed_config`. Pass `config=` to it, or add "
        "DeepSpeed's options to the script's parser (`deepspeed.add_config_arguments(parser)`) "
        "and start the script with `--deepspeed_config <file>`: `--deepspeed` alone only sets "
        "a flag for your own code.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    Diagnosis(
        "ds_config_twice",
        _re(r"we were given deepspeed configs in the deepspeed arguments and "
            r"deepspeed\.initialize\(\) function call", 0,
            words=("we were given deepspeed configs in the deepspeed arguments",)),
        "`deepspeed.initialize` got the config twice, as `args.deepspeed_config` (the "
        "`--deepspeed_config` option) and as its `config` argument, and refuses to choose, "
        "even when both are the same. Pass only one: drop `config=`, or set "
        "`args.deepspeed_config = None` (or pass no `args`) before the call.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    Diagnosis(
        "fp16_and_bf16",
        _re(r"bfloat16 and fp16 modes cannot be simultaneously enabled", 0,
            words=("bfloat16 and fp16 modes cannot be simultaneously enabled",)),
        "The DeepSpeed config enables both `fp16` and `bf16` (`\"enabled\": true` in both "
        "sections), and DeepSpeed trains in one of them only. Keep one (bf16 on GPUs that "
        "support it, Ampere or newer) and set the other's `enabled` to false or remove its "
        "section. With Transformers or Accelerate, `\"auto\"` in both lets their own precision "
        "option decide.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    Diagnosis(
        "micro_batch_zero",
        _re(r"Micro batch size per gpu: 0 has to be greater than 0", 0,
            words=("micro batch size per gpu: 0 ",)),
        "DeepSpeed computed a micro-batch of 0 samples per GPU: the config gives "
        "`train_batch_size` but not `train_micro_batch_size_per_gpu`, and `train_batch_size` "
        "is smaller than the number of GPUs times `gradient_accumulation_steps` (the division "
        "rounds down), or the config sets it to 0. Make `train_batch_size` a multiple of that "
        "product, or set `train_micro_batch_size_per_gpu` instead.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    Diagnosis(
        "zero_needs_optimizer",
        _re(r"zero stage [12] requires an optimizer", 0,
            # "zero stage 1 " (13 characters) before the words
            words=("requires an optimizer",), lead=13),
        "ZeRO stages 1 and 2 partition an optimizer's state, and `deepspeed.initialize` got no "
        "optimizer: none passed (`optimizer=`) and no `optimizer` section in the config. Pass "
        "one, or declare it in the config. To run the model without training it (evaluation, "
        "inference), use ZeRO stage 3, which runs without one, or `deepspeed.init_inference`.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    Diagnosis(
        "cpu_optimizer_on_gpu",
        _re(r"CPU(?:Adam|Adagrad|Lion) param is on \S{1,20} and must be 'cpu'", 0,
            words=("cpuadam param is on ", "cpuadagrad param is on ", "cpulion param is on ")),
        "DeepSpeed's CPU optimizers (`DeepSpeedCPUAdam`, and its CPU Adagrad and Lion) update "
        "parameters held in CPU memory, as ZeRO-Offload does, and this one got parameters on a "
        "GPU: optimizer offload is not on. Turn it on (`\"offload_optimizer\": {\"device\": "
        "\"cpu\"}` in `zero_optimization`, at ZeRO stage 1, 2 or 3), or use a GPU optimizer "
        "(`FusedAdam`, `torch.optim.AdamW`) without offload.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    # Transformers' refusal while loading a model under an active ZeRO-3 config (4.x:
    # ``modeling_utils``, with ``low_cpu_mem_usage``; 5.x: ``integrations/accelerate.py``).
    Diagnosis(
        "zero3_device_map",
        _re(r"DeepSpeed Zero-3 is not compatible with [^\n]{0,60}device_map", 0),
        "With a ZeRO-3 DeepSpeed config active (`TrainingArguments` or Accelerate sets it "
        "up before the model is loaded), Transformers loads the model partitioned over "
        "the ranks, and refuses a `device_map` (and, in 4.x, `low_cpu_mem_usage=True`), "
        "which would place the weights itself. Remove both from the `from_pretrained` "
        "call. If this load follows ZeRO-3 training in the same process (to merge or "
        "evaluate), do it in a separate script.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # Accelerate's refusals in ``prepare``: a model that ``from_pretrained`` placed over several
    # devices, or a quantized one on another GPU than the process's (releases before 1.0 say
    # "8-bit precision" only); the CPU/disk offload refusal next to them has another fix.
    Diagnosis(
        "device_map_parallel",
        _re(rf"You can['’]?t train a model that has been loaded (?:with {_Q}device_map"
            r"|in 8-bit (?:or 4-bit )?precision on (?:multiple devices|a different device))", 0),
        "Accelerate will not train, with several processes, a model that `from_pretrained` "
        "spread over several devices (`device_map=\"auto\"`) or put on another GPU than the "
        "process's own: each process needs the whole model on its GPU. Load it with "
        "`device_map={\"\": PartialState().local_process_index}` (from `accelerate`), or, to "
        "split one model over the GPUs, run one process (`--num_processes=1` or plain "
        "`python`).",
        moot=frozenset({"cuda", "hardware", "traceback", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    # Accelerate's ``_prepare_deepspeed`` when the config leaves the micro-batch size "auto".
    Diagnosis(
        "accelerate_ds_batch",
        _re(rf"accelerate\.prepare\(\){_Q} (?:requires you to pass at least one of training"
            rf"|has {_Q}None{_Q} as batch size)", 0),
        "The DeepSpeed config leaves `train_micro_batch_size_per_gpu` to Accelerate (`\"auto\"`, "
        "also in the config Accelerate builds from its own options), which reads it from the "
        "data loaders passed to that `prepare()` call, and none there had an integer "
        "`batch_size` (none was passed, or one uses a `batch_sampler`). Set an integer "
        "`train_micro_batch_size_per_gpu` in the DeepSpeed config, or pass the training data "
        "loader to `prepare()` with the model.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # Accelerate's ``_prepare_deepspeed`` (``accelerator.py``): the DeepSpeed config and the code
    # both give an optimizer, or both a scheduler.
    Diagnosis(
        "accelerate_ds_optim",
        _re(r"You cannot specify an? (?:optimizer|scheduler) in the config file and in the code "
            r"at the same time", 0, words=("you cannot specify a",)),
        "The DeepSpeed config given to Accelerate has an `optimizer` (or `scheduler`) section, "
        "and the code passed its own optimizer (or scheduler) to `prepare()` too, so Accelerate "
        "refuses to choose. Remove that section from the DeepSpeed config to keep the code's, "
        "or create `accelerate.utils.DummyOptim(model.parameters(), lr=...)` (and "
        "`DummyScheduler(optimizer, ...)`) in the code, which stand for the config's.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # Accelerate's ``AcceleratorState._check_initialized`` (``state.py``, since mid-2022): the state
    # is one per process, and a later ``Accelerator()`` asks for another precision or the CPU.
    Diagnosis(
        "accelerate_reinit",
        _re(r"AcceleratorState has already been initiali[sz]ed and cannot be changed", 0),
        "Accelerate keeps one state per process, fixed by the first `Accelerator()` (the Trainer "
        "creates its own), and a later one asked for another `mixed_precision`, or `cpu=True`, "
        "as the message names. Create the `Accelerator` once and reuse it, with the same "
        "precision as the Trainer's `fp16`/`bf16` where both run in one process; in a notebook, "
        "restart the kernel before changing it.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "traceback"}),
        same_problem=True,
    ),
    # Accelerate's ``MultiProcessAdapter.log`` (``src/accelerate/logging.py``, since 0.20, PR 1446): a
    # logger of ``get_logger`` used while ``PartialState._shared_state`` is still empty.
    Diagnosis(
        "accelerate_logging",
        _re(r"You must initiali[sz]e the accelerate state by calling either `?PartialState\(\)`? or "
            r"`?Accelerator\(\)`? before using the logging utility", 0,
            words=("you must initiali",)),
        "A logger from `accelerate.logging.get_logger` was used before any `Accelerator()` (or "
        "`PartialState()`) existed in this process, which Accelerate refuses since 0.20: it needs the "
        "process's rank to decide where to log. Create the `Accelerator` before the first log call "
        "(including calls at import time or in a setup function that runs earlier), or use Python's "
        "`logging` for messages logged before it.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "config"}),
        same_problem=True,
    ),
    # The DeepSpeed config checked against the Trainer's arguments (Transformers'
    # ``integrations/deepspeed.py``, ``trainer_config_finalize``) or Accelerate's (its
    # ``DeepSpeedPlugin.deepspeed_config_process``): the message lists each pair that differs.
    Diagnosis(
        "ds_config_mismatch",
        _re(r"Please correct the following DeepSpeed config values that mismatch", 0,
            words=("please correct the following deepspeed config values that mismatch",)),
        "The DeepSpeed config sets values that Transformers' `TrainingArguments` (or "
        "Accelerate's own settings) also set, and they differ: the message lists each pair "
        "(`ds` the config's, `hf` or `arg` the other). Set those keys to `\"auto\"` in the "
        "DeepSpeed config, so that they are filled from the arguments, or give both the same "
        "value.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "traceback", "nccl_debug",
                        "ds_report"}),
        same_problem=True,
    ),
    # Accelerate's FSDP plugins (``utils/dataclasses.py``, ``set_auto_wrap_policy``; FSDP2 in
    # ``utils/fsdp_utils.py``) and Transformers' Trainer: no module of the named class.
    Diagnosis(
        "fsdp_wrap_class",
        _re(r"Could not find the transformer layer class", 0,
            words=("could not find the transformer layer class",)),
        "FSDP's transformer auto-wrap policy finds the layers to wrap by class name, and "
        "this model has no module of the class named: it was set for another model "
        "(`fsdp_transformer_layer_cls_to_wrap` in Accelerate's config, "
        "`transformer_layer_cls_to_wrap` in the Trainer's `fsdp_config`), or taken from the "
        "model's `_no_split_modules`. Name this model's repeated layer class (`print(model)` "
        "shows it, e.g. `LlamaDecoderLayer`), or wrap by size (`SIZE_BASED_WRAP`).",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    # FSDP1's ``FlatParamHandle`` (``torch/distributed/fsdp/_flat_param.py``) flattens each wrapped
    # module's parameters into one tensor.
    Diagnosis(
        "fsdp_uniform_dtype",
        # two floating dtypes only: a 4-bit quantised model's uint8 storage (QLoRA) wants
        # bitsandbytes' ``bnb_4bit_quant_storage`` instead, which this text does not give
        _re(r"Must flatten tensors with uniform dtype but got torch\.(?:b?float\d+|half|double) "
            r"and torch\.(?:b?float\d+|half|double)\b", 0,
            words=("must flatten tensors with uniform dtype",)),
        "FSDP (its first version) flattens the parameters of each wrapped module into one "
        "tensor, so they must share one dtype, and here two differ (the message names both), "
        "often trainable adapters in fp32 on a model loaded in bf16 or fp16. Give the whole "
        "model one dtype before wrapping it: load it in fp32 and let FSDP's mixed precision "
        "(`--mixed_precision bf16` in Accelerate) compute in bf16, or cast all of it, adapters "
        "too, to bf16.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    # The same check of ``requires_grad``: ``_validate_tensors_to_flatten`` (``_flat_param.py``,
    # PyTorch 2.1 on, only with ``use_orig_params=False``), ``FlatParamHandle`` or
    # ``FlatParameter`` before it (PyTorch 1.12 to 2.0, whatever ``use_orig_params`` says).
    Diagnosis(
        "fsdp_uniform_grad",
        _re(r"Must flatten tensors with uniform `?requires_grad`?|`?FlatParameter`? requires "
            r"uniform `?requires_grad", 0,
            # "Must flatten tensors with " (26 characters) before "uniform "
            words=("uniform ",), lead=26),
        "FSDP's first version flattens each wrapped module's parameters into one tensor with "
        "one `requires_grad`, and here frozen and trainable parameters share a wrapped module "
        "(adapters such as LoRA on a frozen model). With PyTorch 2.1 or later set "
        "`use_orig_params=True` (Accelerate's `fsdp_use_orig_params: true`, the Trainer's "
        "`fsdp_config`) or use FSDP2; or wrap the trainable layers in units of their own "
        "(PEFT's `fsdp_auto_wrap_policy`).",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    # FSDP1's ``_get_compute_device`` (``torch/distributed/fsdp/_init_utils.py``): the device of the
    # first parameter not on the CPU against the ``device_id`` given, which Accelerate sets to the
    # process's own device.
    Diagnosis(
        "fsdp_device_id",
        _re(r"Inconsistent compute device and `?device_id`?(?: on rank \d{1,6})?: ", 0,
            words=("inconsistent compute device and ",)),
        "FSDP was given a `device_id` (Accelerate passes the process's own GPU), and the model's "
        "parameters are already on another GPU: loaded with a `device_map` that put them on the same "
        "GPU in every process, or moved with `.cuda()` before each process selected its own GPU. Load "
        "the model on the CPU (no `device_map`), or move it to `local_rank`, and call "
        "`torch.cuda.set_device(local_rank)` before building it.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
    ),
    # FSDP1's check before each forward (``torch/distributed/fsdp/_runtime_utils.py``,
    # ``_check_flat_params_on_expected_device``): with parameter offload, the flat parameter must be on
    # the CPU.
    Diagnosis(
        "fsdp_offload_moved",
        _re(r"An FSDP-managed module with parameter CPU offloading enabled has parameters on", 0,
            words=("an fsdp-managed module with parameter cpu offloading enabled",)),
        "With FSDP's parameter CPU offload (`CPUOffload(offload_params=True)`, Accelerate's "
        "`fsdp_offload_params`), the sharded parameters must stay in CPU memory (FSDP copies each to "
        "the GPU for the forward and backward itself), and something moved the wrapped model to the "
        "GPU: `model.to(device)`, `.cuda()`, or a framework placing the model after wrapping. Do not "
        "move it after wrapping, or turn the offload off.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    # Colossal-AI's ``get_autopolicy`` (``shardformer/policies/auto_policy.py``; before 0.3.2
    # without the module path in parentheses). Whether a policy exists differs by model, so it
    # links nothing.
    Diagnosis(
        "shardformer_policy",
        _re(r"Auto policy for \w+ (?:\([\w.-]{1,300}\) )?is not implemented", 0),
        "Colossal-AI's ShardFormer (used by `HybridParallelPlugin`, and by other plugins for "
        "tensor parallelism) has no sharding policy for this model class. It looks the class "
        "up by its module path, so a copy of a supported model in other code is not found "
        "either. Use a class the message lists, pass your own policy to the plugin "
        "(`custom_policy`), or use a plugin that does not shard the model "
        "(`LowLevelZeroPlugin`, `GeminiPlugin` without tensor parallelism).",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug"}),
    ),
    # ``HybridParallelPlugin.configure`` (``colossalai/booster/plugin/hybrid_parallel_plugin.py``,
    # since the plugin came in 0.3.2; ``moe_hybrid_parallel_plugin.py``): ZeRO refused in fp32.
    Diagnosis(
        "colossal_zero_fp32",
        _re(rf"Please set precision to {_Q}fp16{_Q} or {_Q}bf16{_Q} when using ZeRO", 0,
            words=("please set precision to ",)),
        "Colossal-AI's `HybridParallelPlugin` (and `MoeHybridParallelPlugin`) refuses ZeRO "
        "(`zero_stage` 1 or 2) with `precision=\"fp32\"`. Pass `precision=\"bf16\"` (or "
        "`\"fp16\"`) to the plugin, or `zero_stage=0` to train in fp32; for ZeRO in fp32 "
        "without tensor or pipeline parallelism, `LowLevelZeroPlugin` accepts "
        "`precision=\"fp32\"`.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    # Colossal-AI's chunk search for Gemini (``colossalai/gemini/chunk/search_utils.py``,
    # ``classify_params_by_dp_degree``, until 0.2.x: each parameter must be a ``ColoParameter``),
    # which Lightning's ``ColossalAIStrategy`` reaches through ``GeminiDDP``; its docstring: the model
    # "must be created in the function ``LightningModule.configure_sharded_model()``".
    Diagnosis(
        "colo_init_context",
        _re(r"please init model in the ColoInitContext", 0,
            words=("please init model in the coloinitcontext",)),
        "Colossal-AI's Gemini (`ZeroDDP`, `GeminiDDP`, Lightning's `colossalai` strategy) in "
        "its 0.1 and 0.2 releases needs every parameter created under `ColoInitContext`, and "
        "this model was built outside it. Build it inside `with ColoInitContext(device=...)`; "
        "with Lightning's strategy, create the layers in the LightningModule's "
        "`configure_sharded_model()` hook, not in `__init__`. Current releases' `GeminiPlugin` "
        "needs no such context.",
        implies={"stage": "S3"},
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
        same_problem=True,
    ),
    # Colossal-AI's ``zero_optim_wrapper`` (``colossalai/zero/wrapper.py``): the model must carry the
    # ZeRO stage that ``zero_model_wrapper`` records. Whose calls they are differs (the reporter's, an
    # application's strategy), so it links nothing.
    Diagnosis(
        "zero_optim_wrapper",
        _re(r"You should use `?zero_ddp_wrapper`? first", 0,
            words=("you should use ",)),
        "Colossal-AI's `zero_optim_wrapper` wraps the optimizer of a model already wrapped by "
        "`zero_model_wrapper` (which records the model's ZeRO stage), and the model it was "
        "given was not. Call `zero_model_wrapper(model, zero_stage=...)` first and use the "
        "model it returns for the optimizer and `zero_optim_wrapper`. If a Colossal-AI "
        "application (a Coati strategy) made the calls, report it with the command you ran.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # ``torch.optim.Optimizer``'s own check. Why the list is empty differs (all frozen, a used
    # generator, a pipeline stage without trainable layers), so it links nothing.
    Diagnosis(
        "optimizer_no_params",
        _re(r"optimizer got an empty parameter list", 0),
        "The optimizer was created with no parameters in the process that raised this. Most "
        "often every parameter there is frozen (`requires_grad=False`: adapters added after "
        "the list was taken, or a pipeline stage holding only frozen layers), or "
        "`model.parameters()` was passed as a generator that was already used up. Pass a list "
        "of the parameters to train, and check that every rank holds some.",
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
    ),
    # Transformers' ``Trainer.compute_loss`` (``trainer.py``): no ``labels`` were popped for a label
    # smoother, and the model's output (a dict) has no loss.
    Diagnosis(
        "trainer_no_loss",
        _re(r"The model did not return a loss from the inputs", 0),
        "The model returned no loss to the Trainer: the batch had no `labels` (the message "
        "lists its keys). Give the dataset a `labels` column "
        "or use a collator that adds one (`DataCollatorForLanguageModeling(tokenizer, "
        "mlm=False)` for causal LMs); `remove_unused_columns` drops columns `forward` does not "
        "take. If `labels` is listed, the model class computes no loss (a bare `AutoModel`): "
        "load the one for the task.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # Transformers' check of a quantized model with no PEFT adapters (``Trainer.__init__`` in 4.x;
    # ``validate_quantization_for_training`` in ``trainer_utils.py`` now).
    Diagnosis(
        "trainer_quantized",
        _re(r"You cannot perform fine-tuning on purely quantized models", 0),
        "The Trainer refuses to train a model loaded quantized (`load_in_4bit`, "
        "`load_in_8bit`, a `quantization_config`) with nothing trainable on top: its quantized "
        "weights cannot be updated. Attach adapters first (PEFT: "
        "`prepare_model_for_kbit_training`, then `get_peft_model(model, LoraConfig(...))`) and "
        "pass that model to the Trainer, or load the model unquantized to train all of it.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
        same_problem=True,
    ),
    # ``GradScaler.unscale_`` (and FSDP's sharded one) refuses fp16 gradients.
    Diagnosis(
        "unscale_fp16",
        _re(r"Attempting to unscale FP16 gradients", 0),
        "PyTorch's fp16 mixed precision (its `GradScaler`, used by `fp16=True` in the Trainer "
        "and `--mixed_precision fp16` in Accelerate) found fp16 gradients: the parameters "
        "being trained are held in fp16, and it needs them in fp32. Do not `.half()` the model "
        "or load it with `torch_dtype=torch.float16` to train it (with adapters, cast the "
        "trainable ones to fp32), or train in bf16, or with DeepSpeed's fp16.",
        implies={"stage": "S4"},
        moot=frozenset({"cuda", "hardware", "launcher_command", "nccl_debug", "ds_report"}),
        same_problem=True,
    ),
    Diagnosis(
        "loss_scale_minimum",
        _re(r"Current loss scale already at minimum",
            words=("current loss scale already at minimum",)),
        "With fp16, DeepSpeed's dynamic loss scaling lowers the scale after every step whose "
        "gradients overflow, and it reached its minimum: the gradients overflow (inf or NaN) "
        "whatever the scale, so the loss or the model diverged. Train in bf16 if your GPUs "
        "support it, lower the learning rate or warm it up, and check the inputs and the loss "
        "for inf or NaN.",
        implies={"stage": "S4"},
        moot=frozenset({"hardware", "launcher_command", "traceback"}),
    ),
    # PyTorch's checks of inference tensors (autograd's in-place check and ``SavedVariable``, in
    # ``libtorch``): a tensor made under ``torch.inference_mode()`` used outside it.
    Diagnosis(
        "inference_tensor",
        _re(r"Inplace update to inference tensor outside InferenceMode"
            r"|Inference tensors cannot be saved for backward", 0,
            # "Inplace update to i" (19 characters) before "nference tensor"
            words=("nference tensor",), lead=19),
        "A tensor created under `torch.inference_mode()` is used outside it, updated in place or "
        "saved for backward, which PyTorch forbids. Often a cache (rotary embeddings, a buffer "
        "filled lazily) was first built during evaluation or generation in inference mode, then "
        "used in training. Build it outside inference mode or `.clone()` it, or evaluate under "
        "`torch.no_grad()` instead (Lightning: `Trainer(inference_mode=False)`).",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command"}),
    ),
    # DeepSpeed's automatic tensor parallelism (``deepspeed/module_inject/auto_tp.py``,
    # ``AutoTP.tp_parser``): a model it cannot split, for whose layers DeepSpeed has a
    # kernel-injection policy (``kernel_supported``).
    Diagnosis(
        "autotp_kernel_inject",
        _re(r"AutoTP not supported for model\. Please use kernel injection", 0,
            words=("autotp not supported for model",)),
        "DeepSpeed's automatic tensor parallelism (AutoTP, what `deepspeed.init_inference` uses "
        "without `replace_with_kernel_inject=True` or an `injection_policy`) cannot split this "
        "model (an architecture on its list of unsupported ones, or layers it cannot read), and "
        "DeepSpeed has a kernel-injection policy for its layers. Pass "
        "`replace_with_kernel_inject=True` to `deepspeed.init_inference`, or give it an "
        "`injection_policy` for the model's layers.",
        implies={"stage": "S5"},
        moot=frozenset({"launcher_command", "nccl_debug"}),
        same_problem=True,
    ),
    # A kill after a collective timeout is the watchdog's doing, not memory's.
    Diagnosis(
        "sigkill",
        _re(r"return code\s*=?\s*-9\b|exit ?code\s*:?\s*-9\b|exited with (?:exit )?code -9\b|"
            r"Signals\.SIGKILL|killed by signal 9\b|Signal 9 \(SIGKILL\)",
            words=("return code", "exit code", "exitcode", "exited with", "signals.sigkill",
                   "killed by signal 9", "signal 9 (sigkill)")),
        "Exit code -9 means the process was killed from outside with SIGKILL, most often by "
        "the operating system's out-of-memory killer when host (CPU) memory runs out, for "
        "example with CPU offload or when every rank loads the full checkpoint. Check `dmesg` "
        "for an out-of-memory message and watch host memory while it runs.",
        unless=_re(r"Watchdog caught collective operation timeout|collective operation "
                   r"timeout|NCCL error|ncclInternalError|ncclSystemError",
                   # "Watchdog caught " (16 characters) before "collective operation timeout"
                   words=("collective operation timeout", "nccl error", "ncclinternalerror",
                          "ncclsystemerror"), lead=16),
        moot=frozenset({"traceback"}),
    ),
    # SIGBUS: "most often", not always, shared memory (3 shared issues: 1 resolved by a larger
    # --shm-size, 2 without a confirmed fix), so it is said as the likeliest cause.
    Diagnosis(
        "sigbus",
        _re(r"return code\s*=?\s*-7\b|exit ?code\s*:?\s*-7\b|Signals\.SIGBUS|killed by signal 7\b"
            r"|Signal 7 \(SIGBUS\)",
            words=("return code", "exit code", "exitcode", "signals.sigbus",
                   "killed by signal 7", "signal 7 (sigbus)")),
        "Exit code -7 means the process was killed by SIGBUS (a bus error): memory it had "
        "mapped could not be backed. In a container this is most often shared memory "
        "(`/dev/shm`) running out: Docker gives 64 MB unless the container is started with "
        "`--ipc=host` or a larger `--shm-size`; a memory-mapped dataset file on a full or "
        "network filesystem is another cause. Watch `df -h /dev/shm` while it runs.",
        moot=frozenset({"traceback"}),
    ),
    # Megatron's split of the layers over the pipeline stages: ``validate_args``
    # (``megatron/training/arguments.py``, in each of its spellings since 2021) and Megatron-Core's
    # own check of its config. They say "should (must) be divisible", which ``not_divisible``
    # ("is not divisible by") does not read.
    Diagnosis(
        "megatron_layers_pp",
        _re(r"[Nn]um(?:ber of |_)layers (?:of the model )?(?:should|must) be divisible (?:by )?"
            r"(?:the )?pipeline[-_ ](?:model[-_ ])?parallel", 0,
            # "Number of layers of the model must " (35 characters) before "be divisible "
            words=("be divisible ",), lead=35),
        "Megatron splits the model's layers evenly over the pipeline stages, so `--num-layers` "
        "must be a multiple of `--pipeline-model-parallel-size`. Choose a pipeline size that "
        "divides the number of layers, or, in recent Megatron-Core releases, give the first "
        "and last stages their own counts (`--decoder-first-pipeline-num-layers`, "
        "`--decoder-last-pipeline-num-layers`) or a `--pipeline-model-parallel-layout`.",
        moot=frozenset({"cuda", "hardware", "ds_report", "nccl_debug", "launcher_command",
                        "versions"}),
        same_problem=True,
    ),
    # Megatron-LM's and Colossal-AI's ``ensure_divisibility`` and the parallel-size checks.
    Diagnosis(
        "not_divisible",
        _re(r"(?:Error|Exception)\b:?[^\n]{0,160}?\bis not divisible by\b",
            # "Exception:" and up to 160 characters before "is not divisible by"
            words=("is not divisible by",), lead=170),
        "A size that has to be split evenly (attention heads, layers, vocabulary, batch or the "
        "number of GPUs) is not a multiple of what it is split into, usually a tensor, "
        "pipeline or data parallel size. Choose parallel sizes (or batch sizes) that divide "
        "it evenly.",
    ),
)
BY_ID: Mapping[str, Diagnosis] = MappingProxyType({d.id: d for d in DIAGNOSES})


def find(text: str) -> tuple[Diagnosed, ...]:
    """Every diagnosis whose error the text shows, in table order, uncapped, with its quotable
    values. Matched once per report (``engine.analysis``): on a 100 KB log the table takes a
    few milliseconds, searched only where its words occur (``Signature``; ~100 ms searched
    whole), and both what the comment shows (``diagnose``) and what the index keeps
    (``linking``) are read from this one pass. Read without the launchers' per-line prefixes
    (``[rank0]:``, ``worker-1:``; ``signal.unprefixed``): a message over several lines matches
    in a rank's output as it does in a single process's."""
    text = unprefixed(text if isinstance(text, str) else "")
    folded = _fold(text)
    return tuple(Diagnosed(id=d.id, values=values_of(match.groupdict()))
                 for d in DIAGNOSES if (match := _match(d, text, folded)) is not None)


# The diagnoses that already name the CUDA mismatch the env rule would add: Apex's own refusal names
# PyTorch's version and says what to do; torch's or DeepSpeed's beside it would repeat it.
_NAMES_THE_MISMATCH = frozenset({"cuda_mismatch", "apex_cuda_mismatch"})


def diagnose(text: str, env: Environment | None = None,
             found: Sequence[Diagnosed] | None = None) -> list[Diagnosed]:
    """The diagnoses the report's error implies, in table order (most specific first), at most
    ``MAX_SHOWN``; ``found`` is ``find(text)`` when the caller has it. ``env`` adds the one that
    needs no message: torch and nvcc of different CUDA major versions while something is built
    (``rules.decisive``), which torch's extension builder always refuses; and gives the entries
    that read a version from the report (``from_env``) their value."""
    text = text if isinstance(text, str) else ""
    shown = list(find(text) if found is None else found)
    if env is not None and all(d.id not in _NAMES_THE_MISMATCH for d in shown) and \
            rules.decisive(text, env):
        # the table's first entry, so it leads
        shown.insert(0, Diagnosed(id="cuda_mismatch", values=values_of(
            {"torch_cuda": env.cuda_torch, "nvcc_cuda": env.cuda_nvcc})))
    if any(d.id in BY_ID and not BY_ID[d.id].generic for d in shown):
        shown = [d for d in shown if not (d.id in BY_ID and BY_ID[d.id].generic)]
    if env is not None:
        shown = [_with_env(d, env) for d in shown]
    return shown[:MAX_SHOWN]


def _with_env(diagnosed: Diagnosed, env: Environment) -> Diagnosed:
    """The diagnosis with the values its entry quotes from the report's setup (``from_env``)."""
    diagnosis = BY_ID.get(diagnosed.id)
    if diagnosis is None or diagnosis.from_env is None:
        return diagnosed
    return Diagnosed(id=diagnosed.id,
                     values={**diagnosed.values, **values_of(diagnosis.from_env(env))})


def linking(found: Iterable[Diagnosed]) -> tuple[str, ...]:
    """The ids among ``found`` of the ``same_problem`` diagnoses: what an indexed issue keeps of
    its report's errors, ids of this table and never the report's words, so that a new report
    with the same error is linked to it (``relevance.same_error``)."""
    return tuple(d.id for d in found if d.id in BY_ID and BY_ID[d.id].same_problem)


def _match(diagnosis: Diagnosis, text: str, folded: str | None = None) -> re.Match[str] | None:
    """The entry's match in the text, its context and exception applied, and not an error the
    report says it got past (``_got_past``); ``folded`` (``_fold(text)``) makes it faster on a
    long text, not different."""
    match = diagnosis.pattern.search(text, folded)
    if match is None:
        return None
    if diagnosis.context is not None and not diagnosis.context.search(text, folded):
        return None
    if diagnosis.unless is not None and diagnosis.unless.search(text, folded):
        return None
    if diagnosis.verify is not None and not diagnosis.verify(match):
        return None
    if _got_past(diagnosis, text, match, folded):
        return None
    return match


# What a reporter writes after an error they got past: "After renaming the argument in
# generate_text.sh it goes further, until..." (Megatron-LM#66, which then hit another error),
# "I got past that by ...", "that is fixed, now ...". Read only in the few hundred characters
# after the error's match, where it speaks of that error; never a negation ("can't get past
# this", "never gets past it"). Every quantifier is bounded and none nested.
_PAST_WINDOW = 300
_GOT_PAST = re.compile(
    r"\bafter (?:renaming|changing|fixing|setting|adding|removing|replacing|updating|installing"
    r"|upgrading|downgrading|switching|using|passing|editing|correcting)\b[^\n]{0,120}?"
    r"\b(?:it|this|that|the (?:script|run|job|code|program|training)) (?:goes|gets|got|went|runs"
    r"|ran|proceeds|proceeded|progresses|progressed|moves|moved)(?: a (?:little|bit))?"
    r" (?:further|farther|past)\b"
    # the reporter's own "I got past it", not a question ("Has anyone got past this?") nor a
    # step the run never passes ("it dies before it gets past this step")
    r"|\b(?:I|we)(?: finally| now| then)? (?:got|get) past (?:that|this|it)\b(?![^\n]{0,40}\?)"
    # "that is fixed, now ...", not a regression ("this was fixed, but now it happens again")
    r"|\b(?:that|this)(?:'s| is| was| has been) (?:fixed|solved|resolved)[,;:]? now\b"
    r"(?![^\n]{0,40}\b(?:again|back|still|reappears?)\b)"
    # a change that moved the run to another error; not a debug setting that shows one
    r"|\b(?:when|after|once) (?:I|we) (?:\w{1,12}ly )?(?:set|switch|change|rename|fix|replace"
    r"|remove|add|pass|update|upgrade|downgrade|install|edit|patch|comment out)\b"
    r"(?![ \t]+\w{0,30}(?:DEBUG|LOG))[^\n]{0,120}?"
    r"\b(?:I|we) (?:get|got|hit) (?:the |a |an )?(?:(?:different|another|new|next|other)"
    r"\b[^\n]{0,20}?\b(?:error|exception|failure)|[^\n]{0,40}?\berror instead\b(?! of))",
    re.I)


_PAST_TRIES = 4  # the error's first occurrences read so (the title's, then the body's)


def _got_past(diagnosis: Diagnosis, text: str, match: re.Match[str],
              folded: str | None = None) -> bool:
    """Whether the report says, just after the matched error (or one of its next few
    occurrences: a title often repeats the error), that it got past it, and does not show the
    error again after saying so: the diagnosis would answer what is already solved. Each
    occurrence is found as ``find`` found the first, only where the entry's words occur."""
    signature = diagnosis.pattern
    occurrence: re.Match[str] | None = match
    for _ in range(_PAST_TRIES):
        if occurrence is None:
            return False
        end = occurrence.end()
        said = _GOT_PAST.search(text, end, end + _PAST_WINDOW)
        if said is not None:
            return signature.search(text, folded, said.end()) is None
        occurrence = signature.search(text, folded, max(end, occurrence.start() + 1))
    return False


def values_of(groups: Mapping[str, str | None]) -> dict[str, str]:
    """The quotable values among a match's groups: sanitized, then kept only if the whole value
    matches its strict pattern (``VALUE_PATTERNS``); a group named ``x2`` is an alternative
    spelling of ``x``."""
    values: dict[str, str] = {}
    for name, raw in groups.items():
        key = name.rstrip("0123456789")
        if raw and key in VALUE_PATTERNS and key not in values:
            clean = sanitize.neutral(raw).strip()
            if VALUE_PATTERNS[key].fullmatch(clean):
                values[key] = clean
    return values


def text_of(diagnosed: Diagnosed) -> str | None:
    """The diagnosis as shown: our template, with the quoted values when all it names are
    present and still match their patterns (checked again: the triage may be a stored or
    hand-made one); None for an id the table does not know."""
    diagnosis = BY_ID.get(diagnosed.id)
    if diagnosis is None:
        return None
    if diagnosis.detailed:
        values = values_of(diagnosed.values)
        names = set(re.findall(r"\{(\w+)\}", diagnosis.detailed))
        if names and names <= values.keys():
            return diagnosis.detailed.format(**{k: values[k] for k in names})
    return diagnosis.text


def moot(found: list[Diagnosed]) -> frozenset[str]:
    """The request keys (``missing``) that the diagnoses make pointless."""
    return frozenset().union(*(BY_ID[d.id].moot for d in found if d.id in BY_ID))


def quote(text: str, diagnosis_id: str) -> str | None:
    """The report's line holding the diagnosis's error, cut to ``rules.SNIPPET_CHARS``: the
    evidence behind an id the diagnosis states. Searched where the entry's words occur
    (``Signature``), as ``find`` searched it: the same match, without a whole pass over a long
    log."""
    diagnosis = BY_ID.get(diagnosis_id)
    text = unprefixed(text)  # as ``find`` read it
    match = _match(diagnosis, text, _fold(text)) if diagnosis is not None else None
    if match is None:
        return None
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    line = " ".join(text[start: end if end >= 0 else len(text)].split())
    return line if len(line) <= rules.SNIPPET_CHARS else line[: rules.SNIPPET_CHARS - 1] + "…"
