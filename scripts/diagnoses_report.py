"""How often each diagnosis of ``triagebot/domain/diagnoses.py`` fires on the labelled issues and
how often it is right, per signature; the numbers behind the table's docstring.

Why: a diagnosis is said to the reporter as a fact, so each signature has to earn its place on
real reports, not on what we believe of the error. Two measures per signature:

- agreement with the annotators' labels, for every taxonomy id the diagnosis implies (an issue
  whose label is ``unknown`` for that dimension is not counted either way);
- our reading of every matched issue's ``resolution`` (``VERDICTS``, written by reading each
  one; "right" also where the resolution is unknown but the report itself shows the mechanism,
  said so in the note). A signature whose matches are not all in ``VERDICTS`` is flagged.

``--candidates`` also measures the signatures that were tried and dropped (``CANDIDATES``).

    .venv/bin/python scripts/diagnoses_report.py --data ../shared/data/issues.jsonl [--show]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from triagebot.domain import diagnoses, environment, taxonomy  # noqa: E402
from triagebot.text.signal import full_text  # noqa: E402

# Our reading of each matched issue: (verdict, why). "right": the diagnosis is what fixed it or
# what its resolution/labels say; "wrong": it would have misled; "unverified": nothing says.
VERDICTS: dict[tuple[str, str], tuple[str, str]] = {
    ("cuda_mismatch", "deepspeedai/DeepSpeed#2902"): (
        "right", "unresolved; the error is DeepSpeed's refusal itself (12.0 vs 11.7), R1.1"),
    ("cuda_mismatch", "deepspeedai/DeepSpeed#3223"): (
        "right", "resolution: make the system toolkit agree with torch's CUDA"),
    ("cuda_toolkit_missing", "deepspeedai/DeepSpeed#2772"): (
        "right", "resolution: install the toolkit and point CUDA_HOME at it"),
    ("cuda_toolkit_missing", "deepspeedai/DeepSpeed#5511"): (
        "right", "resolution: CUDA_HOME had a stray colon; point it at the real toolkit"),
    ("torch_abi", "horovod/horovod#629"): (
        "right", "resolution: clean reinstall of torch, then rebuild Horovod against it"),
    ("torch_abi", "horovod/horovod#1059"): (
        "right", "resolution: PYTHONNOUSERSITE=1, i.e. another torch in ~/.local was imported"),
    ("import_name", "deepspeedai/DeepSpeed#811"): (
        "right", "the FileStore import is torch's Windows build lacking it; labels R1.1/F2 "
                 "(the resolution is about the issue's other import, fixed by a newer release)"),
    ("import_name", "deepspeedai/DeepSpeed#2266"): (
        "right", "unresolved; typing.OrderedDict needs Python >= 3.7.2 (reporter on 3.6), R1.1"),
    ("setuptools_packaging", "deepspeedai/DeepSpeed#5649"): (
        "right", "unresolved; torch's cpp_extension.py (line 28, `from pkg_resources import "
                 "packaging`) imported by DeepSpeed 0.14.2's setup under setuptools 70 (the "
                 "title), the case the text names, R1.1"),
    ("import_name", "deepspeedai/DeepSpeed#5671"): (
        "right", "resolution: numpy < 2 or a DeepSpeed release without the stale import"),
    ("import_name", "hpcaitech/ColossalAI#104"): (
        "right", "resolution: a build matching the example code (from source)"),
    ("import_name", "hpcaitech/ColossalAI#3447"): (
        "right", "resolution: install from GitHub source, confirmed"),
    ("import_name", "hpcaitech/ColossalAI#3629"): (
        "right", "resolution: align the library with the example's version"),
    ("import_name", "hpcaitech/ColossalAI#3672"): (
        "right", "resolution not in the thread; same error as #3447/#3629, labels R1.1"),
    ("import_name", "hpcaitech/ColossalAI#3853"): (
        "right", "unresolved; EnergonAI's API moved (labels R5.3 mismatched dependency)"),
    ("import_name", "huggingface/accelerate#112"): (
        "right", "resolution: not yet released, install from source"),
    ("import_name", "pytorch/torchtitan#439"): (
        "right", "resolution: a newer torch nightly that has the name"),
    ("import_name", "pytorch/torchtitan#1679"): (
        "right", "resolution: reinstall torch nightly that has the name"),
    ("launcher_env", "hpcaitech/ColossalAI#1074"): (
        "right", "resolution: start with torchrun or colossalai run, not plain python"),
    ("port_in_use", "deepspeedai/DeepSpeed#3878"): (
        "right", "unresolved; error at the c10d store of init_process_group, labels R2.1"),
    ("port_in_use", "deepspeedai/DeepSpeed#3916"): (
        "right", "unresolved; srun starts 8 deepspeed launchers on the one --master_port 29600"),
    ("port_in_use", "huggingface/accelerate#74"): (
        "right", "resolution: give the second job its own --main_process_port"),
    ("port_in_use", "huggingface/accelerate#508"): (
        "right", "resolution: run on a separate port via --main_process_port"),
    ("port_in_use", "pytorch/pytorch#126510"): (
        "right", "resolution: port held by another torchrun job or a leftover process"),
    ("local_rank_arg", "deepspeedai/Megatron-DeepSpeed#194"): (
        "right", "resolution: the parser no longer accepted --local_rank; restored upstream"),
    ("duplicate_gpu", "NVIDIA/Megatron-LM#661"): (
        "right", "unresolved; NCCL's own check: ranks 0/3/7 on one device, labels R2.1"),
    ("ddp_unused", "pytorch/pytorch#68862"): (
        "right", "resolution: find_unused_parameters=True"),
    ("zero3_partitioned", "deepspeedai/DeepSpeed#842"): (
        "right", "resolution: ZeRO-3 parameters are partitioned, gather them"),
    ("zero3_partitioned", "deepspeedai/DeepSpeed#3655"): (
        "right", "unresolved; weights saved from a ZeRO-3 model without gathering (mechanism)"),
    ("sigkill", "deepspeedai/DeepSpeed#2918"): (
        "right", "resolution: host memory exhausted by offload; NVMe or keep parts on GPU"),
    ("sigkill", "deepspeedai/DeepSpeed#3232"): (
        "right", "unresolved; labels R4.5 constrained resource"),
    ("sigkill", "deepspeedai/DeepSpeed#3823"): (
        "right", "unresolved; param+optimizer CPU offload config on one GPU, labels R4.5"),
    ("sigkill", "deepspeedai/DeepSpeed#4239"): (
        "right", "resolution: ZeRO-3 CPU offload exhausted host RAM, confirmed with htop"),
    ("sigkill", "hpcaitech/ColossalAI#3514"): (
        "right", "unresolved; 4 ranks each loading llama-7b, symptom label 3.4 memory"),
    ("not_divisible", "hpcaitech/ColossalAI#3043"): (
        "right", "resolution: heads must be divisible by the tensor parallel size"),
    ("not_divisible", "hpcaitech/ColossalAI#6202"): (
        "right", "resolution: pick tp/pp sizes whose product divides the world size"),
    ("libaio_missing", "deepspeedai/DeepSpeed#1401"): (
        "right", "unresolved; DeepSpeed's refusal itself under DS_BUILD_OPS=1, labels R1.3 "
                 "(a missing dependency)"),
    ("libaio_missing", "deepspeedai/DeepSpeed#3211"): (
        "right", "resolution: build with DS_BUILD_AIO=0 when libaio is unavailable"),
    ("libaio_missing", "deepspeedai/DeepSpeed#4179"): (
        "right", "unresolved; Windows, DS_BUILD_OPS=1 and no libaio: the build's own message "
                 "says to disable the op with DS_BUILD_AIO=0"),
    ("libaio_missing", "deepspeedai/DeepSpeed#4968"): (
        "right", "unresolved; the same refusal under DS_BUILD_OPS=1, labels R1.3 (a missing "
                 "dependency)"),
    ("cpu_adam_not_built", "deepspeedai/DeepSpeed#1846"): (
        "right", "resolution: reinstall so that the CPU Adam extension builds and loads"),
    ("cpu_adam_not_built", "deepspeedai/DeepSpeed#5071"): (
        "right", "unresolved; the real error is the earlier 'optimizer got an empty parameter "
                 "list', as the diagnosis says"),
    ("nccl_no_interface", "NVIDIA-NeMo/Speech#15019"): (
        "right", "unresolved; NCCL's own 'no socket interface found' on a multi-node run, labels "
                 "R2.3 (network configuration)"),
    ("shared_memory", "pytorch/pytorch#37004"): (
        "right", "resolution: make /dev/shm writable so NCCL creates its segments"),
    ("rendezvous_timeout", "deepspeedai/DeepSpeed#1814"): (
        "right", "resolution: ranks were slow building the model in CPU memory; lighter init "
                 "(zero.Init), one of the causes the diagnosis names"),
    **{("colossalai_kernels", f"hpcaitech/ColossalAI#{n}"): (
        "right", "unresolved; a colossalai._C kernel module missing, labels S1 and R1.3 (a "
                 "missing component) where known") for n in (2743, 3040, 4327, 5409)},
    ("deepspeed_slot", "deepspeedai/DeepSpeed#5818"): (
        "right", "resolution: unset CUDA_VISIBLE_DEVICES and pass --include localhost:<ids>"),
    ("deepspeed_slot", "deepspeedai/DeepSpeed#7155"): (
        "right", "unresolved; SLURM's GPU ids 4-7 exported as CUDA_VISIBLE_DEVICES, the same "
                 "refusal"),
    ("nccl_header_missing", "horovod/horovod#3378"): (
        "right", "resolution: installed the NCCL build for the CUDA release; then it compiled"),
    ("nccl_header_missing", "horovod/horovod#3924"): (
        "right", "unresolved; the title's missing nccl.h, labels R1.3 (a missing dependency)"),
    ("nccl_too_old", "horovod/horovod#3791"): (
        "right", "unresolved; the API NCCL 2.4 added is missing at compile time, labels R1.1"),
    ("zero_dp_size_changed", "deepspeedai/DeepSpeed#3810"): (
        "right", "resolution: resharding was not supported; consolidate with zero_to_fp32"),
    ("sigbus", "deepspeedai/DeepSpeed#4002"): (
        "right", "resolution: a larger --shm-size for the Docker container"),
    ("sigbus", "deepspeedai/DeepSpeed#2897"): (
        "unverified", "no confirmed fix (activation memory suspected); labels R4.5/F5, a "
                      "constrained resource"),
    ("sigbus", "deepspeedai/DeepSpeed#3603"): (
        "unverified", "unresolved; no traceback, the same -7"),
    ("transformer_engine", "NVIDIA/Megatron-LM#577"): (
        "right", "unresolved; the maintainer's question (the NGC container?) implies installing "
                 "Transformer Engine, labels R1.3 (a missing dependency)"),
    ("launcher_not_on_path", "horovod/horovod#1045"): (
        "right", "resolution: upgrade pip and reinstall so that the horovodrun script is "
                 "installed (or use mpirun); labels S1"),
    ("te_mpi_bootstrap", "NVIDIA/Megatron-LM#1274"): (
        "right", "unresolved; Megatron's warning before TE 1.9's MPI-only bootstrap; its twin "
                 "Megatron-LM#608 (same crash, screenshots only) was answered: launch with MPI "
                 "(srun's PMIx), labels R4.1"),
    ("horovod_controller", "horovod/horovod#1655"): (
        "right", "resolution: reinstall so that MPI/Gloo are built; pip had reused the old "
                 "install, hence uninstall and --no-cache-dir"),
    ("libuv_missing", "pytorch/pytorch#139990"): (
        "right", "resolution: USE_LIBUV=0 (environment or rendezvous URL), or WSL"),
    ("nccl_cpu_tensor", "hpcaitech/ColossalAI#6400"): (
        "right", "unresolved; a CPU tensor reaches NCCL inside the framework with cpu_offload "
                 "(Lamb, LowLevelZeroPlugin), the framework case the text names, labels R4.4"),
    ("hostfile_format", "deepspeedai/DeepSpeed#3669"): (
        "right", "resolution: the launch works once the mistyped `lots=8` line is corrected"),
    ("ssh_check", "deepspeedai/DeepSpeed#4907"): (
        "right", "resolution: the failed pre-launch ssh check means setting up passwordless ssh "
                 "between the nodes, the master to itself included"),
    ("size_mismatch", "hpcaitech/ColossalAI#2770"): (
        "right", "unresolved; the model is sharded (shardinit: 4096 in the checkpoint, a 512 "
                 "shard in the model) before the full weights load, a cause the text names"),
    ("grad_accum_fusion", "NVIDIA/Megatron-LM#1885"): (
        "right", "unresolved; the title is Megatron's own refusal (fused_weight_gradient_mlp_cuda "
                 "not found), labels R1.3 (a missing component): Apex's extension or "
                 "--no-gradient-accumulation-fusion, as the text says"),
    ("optimizer_no_params", "deepspeedai/DeepSpeed#5071"): (
        "right", "unresolved; pipeline stages holding only frozen layers get an empty list, a "
                 "cause the text names (the cpu_adam error after it hides it)"),
    ("ds_fp16_unsupported", "deepspeedai/DeepSpeed#5718"): (
        "right", "unresolved; init_inference with dtype=torch.half on DeepSpeed's CPU accelerator "
                 "(its log says so), which refuses fp16: bf16 or fp32 there, as the text says"),
    ("hostname_i", "deepspeedai/DeepSpeed#826"): (
        "right", "unresolved; DeepSpeed's MPI discovery runs `hostname -I`, which GNU inetutils' "
                 "hostname lacks (the report says so); DeepSpeed 0.16.4 falls back, as the text "
                 "says"),
    **{("store_connect", f"pytorch/pytorch#{n}"): (
        "right", "unresolved; one node of --nnodes=1:2 timed out on its own VirtualBox address "
                 "(192.168.56.101), so no process hosted the store: the c10d backend's host "
                 "check missing a second network card's address, as the text names") for n in
       (67547, 67581)},
    ("store_connect", "pytorch/pytorch#79388"): (
        "right", "unresolved; node 0 too timed out connecting to its own endpoint, so nothing "
                 "hosted the store there, the case the text names"),
    ("megatron_ckpt_args", "NVIDIA/Megatron-LM#296"): (
        "right", "the checkpoint's tensor parallel size (1) differs from the run's (2); no "
                 "converter existed then (now tools/checkpoint/convert.py or the distributed "
                 "format, as the text says)"),
    ("build_without_torch", "deepspeedai/DeepSpeed#5663"): (
        "right", "DeepSpeed's own refusal on Windows (DS_BUILD_OPS=1, its default there), pip's "
                 "isolated build printing 'Unable to import torch'; the maintainer's answer, the "
                 "Windows build script or WSL, labels R1.2 (a deficient build environment)"),
    ("build_without_torch", "hpcaitech/ColossalAI#3012"): (
        "right", "the build's own refusal under CUDA_EXT=1; closed pointing at the newer install "
                 "instructions, labels R1.2 (a deficient build environment)"),
    ("jit_build_failed", "deepspeedai/DeepSpeed#629"): (
        "right", "resolution: a later CUDA 10.1 patch release let fused_adam compile: the toolkit, "
                 "the first cause the text names"),
    ("jit_build_failed", "deepspeedai/DeepSpeed#694"): (
        "right", "resolution: a newer CUDA toolkit (11.8) made the JIT build work, the local GCC "
                 "suspected too: both named by the text"),
    **{("jit_build_failed", f"deepspeedai/DeepSpeed#{n}"): (
        "right", "unresolved; the JIT build of the op failed (labels S1 and 1.1, a build "
                 "failure), and the report leaves out the compiler's error the text points at")
       for n in (885, 1127, 3094, 5429, 5623)},
    ("shadowed_package", "deepspeedai/DeepSpeed#2707"): (
        "right", "'deepspeed' is not a package in the launcher: a later commenter named a user "
                 "script called deepspeed.py, as the text says (the thread's build errors are "
                 "another problem, answered with a newer toolkit)"),
    ("ds_pydantic2", "deepspeedai/DeepSpeed#3280"): (
        "right", "unresolved; the title: DeepSpeed's master with pydantic 2.0a2, its config "
                 "classes written for pydantic 1, labels R1.1 (a version mismatch)"),
    ("ds_pydantic2", "deepspeedai/DeepSpeed#3963"): (
        "right", "unresolved; pydantic 2's warning of the renamed keys, then `import deepspeed` "
                 "fails, labels R1.1 (a version mismatch)"),
    ("ds_pydantic2", "deepspeedai/DeepSpeed#4839"): (
        "right", "unresolved; the title: DeepSpeed 0.12.5 with pydantic 2.5.2, whose warning shows "
                 "pydantic 2 building pydantic-1 config classes, which 0.12.5 builds with "
                 "pydantic.v1: the text says so (other code than that release's, not an "
                 "upgrade); on the tracker the reporter could not reproduce it in a fresh "
                 "environment, labels R1.1"),
    ("llama_tokenizer_name", "hpcaitech/ColossalAI#3334"): (
        "right", "resolution: the tokenizer class renamed to match the checkpoint config's "
                 "spelling (in a Transformers fork), then it loaded: the mismatch the text names"),
    ("llama_tokenizer_name", "hpcaitech/ColossalAI#3372"): (
        "right", "unresolved; the same message with a llama-7b-hf checkpoint converted before the "
                 "class's release, labels R3.4"),
    ("megatron_data_prefix", "NVIDIA/Megatron-LM#119"): (
        "right", "unresolved; the path given is a folder ('the folder is there'), not the prefix "
                 "of a .bin/.idx pair, the case the text names, labels R3.2 (paths)"),
    ("gloo_ifname", "NVIDIA/Megatron-LM#436"): (
        "right", "unresolved; Gloo told to use bond1, which a node lacks (the resolution's reading "
                 "too), labels R2.3 (network configuration)"),
    ("dist_init_required", "deepspeedai/DeepSpeed#2168"): (
        "right", "unresolved; DeepSpeed's own check of dist_init_required=False without a process "
                 "group, labels R2.1 (launch configuration)"),
    ("megatron_local_rank", "deepspeedai/DeepSpeed#3408"): (
        "right", "unresolved; nodes with 2 and 4 GPUs, the case the text names: Megatron's rank % "
                 "device count against the launcher's local rank"),
    ("ds_onebit_zero", "deepspeedai/DeepSpeed#5046"): (
        "right", "unresolved; OneBitAdam in the Trainer's DeepSpeed config with ZeRO on, "
                 "DeepSpeed's own refusal, labels R3.4 (incompatible features)"),
    ("horovod_accumulation", "horovod/horovod#2497"): (
        "right", "resolution: the loop's end-of-epoch condition never called step(), so gradients "
                 "piled up past backward_passes_per_step, a case the text names"),
    ("horovod_shut_down", "horovod/horovod#1420"): (
        "right", "resolved without details; Horovod's own message at a broadcast: shut down by an "
                 "earlier failure, which the text sends the reporter to find"),
    ("colossalai_run_ssh", "hpcaitech/ColossalAI#3066"): (
        "right", "paramiko found no key ('No authentication methods available'); the maintainer's "
                 "answer, torchrun on each node, is the text's other way, labels R2.3 and F1"),
    ("colossalai_run_ssh", "hpcaitech/ColossalAI#5213"): (
        "right", "unresolved; paramiko cannot read the key ('not a valid RSA private key file'), "
                 "the maintainers asked about passwordless ssh, as the text says, labels R2.3"),
    ("cub_missing", "hpcaitech/ColossalAI#2183"): (
        "right", "resolution: an old CUDA 10.1 toolkit shadowed CUDA 12; with CUDA 12 first on PATH "
                 "the kernels compiled, the cause the text names"),
    ("ds_pydantic2_field", "deepspeedai/DeepSpeed#5400"): (
        "right", "unresolved; DeepSpeed 0.7.7's BaseQuantConfig refused by pydantic 2's "
                 "_model_construction (the traceback's), whatever pip showed: labels R1.1"),
    **{("horovod_old_api", f"horovod/horovod#{n}"): (
        "right", "resolution: the function existed only on master, whose example was run on a "
                 "release: the release matching the example, or a build from source") for n in
       (376, 1016)},
    ("colossalai_moved", "hpcaitech/ColossalAI#5394"): (
        "right", "resolution: Colossal-LLaMA-2 needs colossalai.accelerator, which an install from "
                 "main has"),
    **{("colossalai_moved", f"hpcaitech/ColossalAI#{n}"): (
        "right", "unresolved; an example or application importing a module that the installed "
                 "release lacks (moved, removed or not yet released), labels S1 1.2") for n in
       (3535, 3540, 3546, 4032, 4881)},
    ("flash_attn_sm80", "hpcaitech/ColossalAI#1936"): (
        "right", "resolution: FlashAttention needs supported head sizes and GPUs (an RTX 3090 "
                 "here); left disabled, as the text says"),
    ("rdzv_join_timeout", "pytorch/pytorch#80772"): (
        "right", "unresolved; rank 0 timed out because the other pods failed to reach the store, "
                 "as their own output shows, a case the text names"),
    ("data_parallel_replica", "deepspeedai/DeepSpeed#745"): (
        "right", "resolution: local_rank -1 made the script wrap DeepSpeed in DataParallel over "
                 "the GPUs; one process per GPU fixed it"),
    ("no_grad_fn", "deepspeedai/DeepSpeed#688"): (
        "right", "unresolved; the pipeline's activation checkpointing of a layer whose input "
                 "needs no gradient, the reentrant case the text names, labels R4.4"),
    ("no_grad_fn", "hpcaitech/ColossalAI#5004"): (
        "right", "unresolved; the loss comes out of Colossal-AI's LazyInitContext as a LazyTensor "
                 "without history, the framework case the text says to report, labels R4.2"),
    ("checkpoint_recompute", "pytorch/pytorch#159359"): (
        "right", "unresolved; FSDP2 skips its mixed-precision cast during the recomputation "
                 "(bf16 saved, fp32 recomputed), the framework case the text names"),
    ("zero_to_fp32_files", "deepspeedai/DeepSpeed#1793"): (
        "unverified", "unresolved; 4 files where the first says 1: which of the causes named "
                      "(mixed saves, model parallelism) nothing says"),
    ("ds_optimizer_name", "deepspeedai/DeepSpeed#4042"): (
        "right", "resolution: CPU Adam comes from type Adam with optimizer offload, not from "
                 "naming cpu_adam, as the text says"),
    ("ds_config_validation", "deepspeedai/DeepSpeed#2890"): (
        "right", "unresolved; init_inference's `tp` given a value that is not a dict (pydantic's "
                 "list), the case the text names"),
    ("ds_config_validation", "deepspeedai/DeepSpeed#4435"): (
        "unverified", "unresolved; the title's 2 validation errors for DeepSpeedInferenceConfig, "
                      "the fields not shown"),
    **{("colo_init_context", f"hpcaitech/ColossalAI#{n}"): (
        "right", "unresolved; Lightning's colossalai strategy with the model built in __init__, "
                 "outside configure_sharded_model, as its docstring requires, labels R3.1") for n in
       (2501, 2857)},
    ("zero_optim_wrapper", "hpcaitech/ColossalAI#3423"): (
        "unverified", "unresolved; Coati's gemini-cpu strategy made the calls (reproduced on Linux "
                      "too): the application case the text says to report"),
    ("nccl_ib_retry", "deepspeedai/DeepSpeed#2931"): (
        "right", "unresolved; NCCL 2.14.3's IB plugin gets status 12 from the peer at 10.226.98.98 "
                 "during 2-node inference, then NCCL takes the process down: the retry-exceeded "
                 "case the text names, which of its causes nothing says"),
    ("te_pytorch_import", "NVIDIA/Megatron-LM#696"): (
        "right", "unresolved; Megatron's TELinear reads `te.pytorch` after Transformer Engine's "
                 "__init__ swallowed the import error of its PyTorch part, the mechanism the text "
                 "names (which cause, unsaid), labels S1 R1.1"),
    ("device_side_assert", "deepspeedai/Megatron-DeepSpeed#207"): (
        "unverified", "unresolved; a GPT run's device-side assert, the log cut before the kernel's "
                      "assertion line: which index failed, unsaid"),
    ("colossalai_windows", "hpcaitech/ColossalAI#2765"): (
        "right", "unresolved in the thread; Windows's cmd refusing the `export` that `colossalai "
                 "run` prefixes (in Chinese), the case the text names; its twin ColossalAI#2763 "
                 "was answered \"only Linux is supported, use WSL\""),
    ("gloo_loopback", "pytorch/pytorch#15592"): (
        "right", "resolution: GLOO_SOCKET_IFNAME set to the real interface, confirmed; node 1's "
                 "Gloo had connected to 127.0.1.1"),
    # No longer matched: the report says it got past the error (``diagnoses._got_past``), so the
    # diagnosis would answer what is solved. Megatron-LM#66 (megatron_old_arg: "After renaming
    # the argument in generate_text.sh it goes further"), Megatron-LM#992 (megatron_dist_ckpt:
    # "When I manually set use_legacy_models = False, I get a different error") and
    # DeepSpeed#3174 (autotp_kernel_inject: "When I switch to `replace_with_kernel_inject=True`,
    # I get the #1301 error instead"), each right before, by doing what the text says.
}

# Tried and dropped, with the reason (measured with this script's --candidates).
CANDIDATES: dict[str, tuple[str, str]] = {
    "undefined_symbol_any": (r"undefined symbol", "3 of 6: curand symbols were a link bug of "
                             "the op itself, one TensorFlow nightly broke Horovod's symbols"),
    "module_has_no_attribute": (r"module '[\w.]+' has no attribute", "about 4 of 7: bugs in "
                                "the framework's own code and a shadowed package as well"),
    "no_module_named": (r"No module named '[\w.]+'", "19, all S1 but causes mixed (kernels "
                        "not built, a package not installed, another release): R1.3 8, R1.1 4"),
    "cuda_oom": (r"CUDA out of memory|OutOfMemoryError", "2 of 4 resolved agree with 'lower "
                 "memory': a WSL2 pinned-memory limit, an unmaintained example"),
    "batch_size_check": (r"train_batch_size is not equal to", "1 of 2: the other was a "
                         "DeepSpeed 0.9.0 regression"),
    "same_device": (r"Expected all tensors to be on the same device", "2, both a framework's "
                    "bug (a DeepSpeed regression, a device_map split in Transformers): 'move the "
                    "tensors to one device' would mislead on both"),
    "nccl_watchdog_timeout": (r"Watchdog caught collective operation timeout", "8, all "
                              "unresolved: the message says a collective timed out, not why"),
    "illegal_memory_access": (r"an illegal memory access was encountered", "4, causes mixed (an "
                              "inference buffer too small, kernel and interaction bugs)"),
    "nccl_unhandled_system_error": (r"unhandled system error", "7, causes mixed (a port in use, "
                                    "/dev/shm not writable, network setup): NCCL's log says which"),
    "cuda_mismatch_minor": (r"does not match the version torch was compiled with [\d.]+ but "
                            r"since", "3, all the warning that accepts the pair: a "
                            "Windows build failure (R1.2), an offload bug (S5), one unresolved"),
    "meta_tensor": (r"copy (?:data )?out of (?:a )?meta tensor", "1, a DeepSpeed init_inference bug: the "
                    "message says a weight was left on `meta`, not why (a loader's bug, weights "
                    "missing from the checkpoint, `.to()` after an empty init)"),
    "megatron_helpers": (r"Failed to compile the C\+\+ dataset helper functions", "1, "
                         "unresolved: make printed no compiler error, so nothing says what failed"),
    "ssh_publickey": (r"Permission denied \(publickey", "0; git's own refusal reads the same, and "
                      "DeepSpeed's ssh check (kept: ssh_check) fails first since 0.6.1"),
    "ds_no_latest_file": (r"Unable to find latest file at", "0; a warning (load_checkpoint "
                          "then returns None) in any run that tries to resume before a first "
                          "save: in a report it is as often harmless as the cause"),
    "ssh_any_password_auth": (r"ssh[^\n]{0,20}PasswordAuthentication=no[^\n]{0,200}returned "
                              r"non-zero exit status", "1 (kept as ssh_check, narrowed): "
                              "Horovod's ssh line has the same option, and DeepSpeed's fix "
                              "(--no_ssh_check, the hostfile) is wrong for it"),
    "cuda_device_max_connections": (r"CUDA_DEVICE_MAX_CONNECTIONS", "8: the variable in launch "
                                    "scripts, or Megatron's and TE's warning about overlap "
                                    "(kept narrowed as cuda_max_connections: Megatron's "
                                    "RuntimeError or assertion only, 0 in the data)"),
    "incompatible_keys": (r"_IncompatibleKeys\(missing_keys=\['", "0; load_state_dict's return "
                          "value under strict=False, printed: those keys were not loaded, but "
                          "whether that matters (a new head, tied weights) varies"),
    "sequence_parallel_tp1": (r"Disabling sequence parallelism because tensor model parallelism "
                              r"is disabled", "0; Megatron's warning, no error: with a tensor "
                              "parallel size of 1 it turns sequence parallelism off and goes on"),
    "engine_attr": (r"'(?:DeepSpeedEngine|PipelineEngine|FullyShardedDataParallel)' object has no "
                    r"attribute", "1, the flops profiler's own attribute on the pipeline engine (a "
                    "bug): both wrappers pass a missing name on to the model (DeepSpeed since "
                    "0.6.5, FSDP's __getattr__), so 'use .module' would mislead (kept for DDP and "
                    "DataParallel: ddp_wrapper_attr)"),
    "dtype_mismatch": (r"expected scalar type \w+ but found \w+|mat1 and mat2 must have the same "
                       r"dtype", "2, both unresolved: DeepSpeed's int8 inference kernels (Half and "
                       "Char), a compiled conv's buffer; inputs not cast, an adapter or a "
                       "framework's layer in another dtype: which tensor, so the fix, varies"),
    "horovod_stall": (r"One or more tensors were submitted to be reduced", "0; Horovod's stall "
                      "warning also fires when a rank is only slow (rank 0 saving or evaluating "
                      "alone for over a minute), not only when the ranks diverged"),
    "contiguous_any": (r"Tensors must be contiguous", "0; custom kernels (Triton wrappers, "
                       "extensions) raise the same words about their own inputs (kept with a "
                       "collective's frame beside it: nccl_not_contiguous)"),
    "no_space_any": (r"No space left on device", "which disk (the JIT cache, checkpoints, pip's "
                     "cache, /dev/shm: kept as shared_memory) only the path says, and reports "
                     "often leave it out"),
    "gemini_unreduced": (r"ZERO DDP error: the synchronization of gradients doesn't exit properly",
                         "4, none confirmed: Gemini lists the parameters whose gradients were not "
                         "reduced, and why (MoE experts no token reached, a release's bug that "
                         "main fixed for Mixtral, unused layers) varies; 2 show only the message"),
    "megatron_parallel_state": (r"parallel group is not initiali[sz]ed", "3, causes mixed: a "
                                "checkpoint tool's bug fixed upstream, NeMo with a megatron-core it "
                                "was not made for, DeepSpeed's MoE groups: 'call "
                                "initialize_model_parallel' would mislead on all three"),
    "gloo_headers": (r"gloo/[\w/]+\.h:? No such file or directory", "2, both PyTorch source builds "
                     "with Gloo turned off (USE_GLOO=OFF, NO_DISTRIBUTED=1) that still compiled its "
                     "files, a build-script bug, not missing submodules"),
    "nccl_libibverbs": (r"Failed to open libibverbs", "3, none caused by it: NCCL logs it where no "
                        "InfiniBand library is found and goes on over sockets (pytorch#68893 was "
                        "fixed by NCCL_SOCKET_IFNAME)"),
    "pip_no_distribution": (r"No matching distribution found for", "3, three causes: a DNS failure "
                            "reaching the index, a release with broken metadata, a package without "
                            "Windows wheels"),
    "horovod_start_timeout": (r"Timed out waiting for [\w ]{1,40}\. Please check connectivity "
                              r"between servers", "1, unresolved (--verbose and a longer "
                              "--start-timeout suggested): the message names connectivity, but "
                              "which part (ssh, the remote PATH, a firewall on horovodrun's random "
                              "ports, the interfaces) only --verbose shows"),
    "ds_mpi_world_size": (r"MPI world size \d+ does not match torch world size \d+", "1, "
                          "unresolved: the maintainer blamed the Megatron example's MPI launch; a "
                          "process group set up from other variables than MPI's, in ways that vary"),
    "backend_tokenizer_alone": (r"Couldn't instantiate the backend tokenizer", "1, a title only, "
                                "unresolved: the message's first line; its last, which names "
                                "sentencepiece, is what tells it apart (kept with that line: "
                                "tokenizer_deps)"),
    "cuda_device_busy": (r"CUDA-capable device\(s\) is/are busy or unavailable", "0; an exclusive "
                         "compute mode with another process on the GPU, a GPU in a bad state or a "
                         "container's device setup: the message does not say which"),
    "nccl_unhandled_cuda_error": (r"unhandled cuda error", "4, causes mixed: an NCCL built for "
                                  "another CUDA, an NCCL bug fixed by upgrading (2), a network "
                                  "interface: NCCL's WARN line says which CUDA call failed"),
    "pip_incompatible": (r"requires [^\n]{1,80}, but you have [^\n]{1,80} which is incompatible",
                         "1; pip's resolver warning, right there, but printed about unrelated "
                         "packages in many installs that work"),
    "moe_dp_group": (r"No parameters found in moe_dp_group", "1, unresolved: no parameter was taken "
                     "for an expert's (Colossal-AI's MoE plugin), and why (the model's layers, "
                     "LoRA, the policy) the message does not say"),
    "child_failed": (r"ChildFailedError", "1 (ColossalAI#3582, unresolved): torchrun's summary of a "
                     "rank's failure, whose own error is printed above it; what to ask for, not a "
                     "diagnosis"),
    "zero_reduced_twice": (r"has already been reduced\.\s+Gradient computed twice", "0; ZeRO 1/2's "
                           "check of a gradient hook firing twice: reentrant checkpointing over "
                           "shared weights, a module applied twice (a siamese model), the pipeline "
                           "with ZeRO-2 (refused on its own since): which, the message does not say"),
    "nccl_connect_refused": (r"Call to connect (?:timeout|returned)[^\n]{0,40}Connection refused",
                             "1 (horovod#666, NCCL_SOCKET_IFNAME advised): a peer's address "
                             "refused, by the wrong interface, a firewall or a peer already dead; "
                             "NCCL's words changed across releases"),
    "ds_op_builder_missing": (r"No module named '(?:deepspeed\.ops\.)?op_builder'", "3 "
                              "(DeepSpeed#1918, #2060, #6716): one release's broken sdist, a source "
                              "build's layout, a setup run without its folder: causes vary, 2 "
                              "unresolved"),
    "accelerate_fp16_no_gpu": (r"fp16 mixed precision requires a (?:GPU|device in)", "0; Accelerate "
                               "raises it only on a device other than the CPU (mps, xla), which "
                               "distributed reports rarely use"),
    "libtorch_cuda_cu": (r"libtorch_cuda_cu\.so: cannot open shared object file", "0; an extension "
                         "built against a PyTorch 1.x whose CUDA library was split in two: the "
                         "release that ended the split could not be confirmed from the indexed "
                         "sources, so the text could not name it"),
    "hvd_mpi_finalized": (r"Attempting to use an MPI routine after finalizing MPI", "1 (horovod#256, "
                          "mpi4py's own init and finalize beside Horovod's): MPI's words are the "
                          "same for any call after MPI_Finalize, by whichever library"),
    "cpu_adam_op_missing": (r"No module named 'deepspeed\.ops\.adam\.cpu_adam_op'", "0; the "
                            "prebuilt op, imported only when the install records it as built: a "
                            "stale install, a source tree shadowing it, another Python's wheel: the "
                            "message does not say which"),
    "fsdp_same_requires_grad": (r"expects all parameters to have same requires_grad", "1, named "
                                "as avoided in a report about memory: diagnosing it would answer "
                                "another question (FSDP 1.11's form of fsdp_uniform_grad)"),
}


Row = dict[str, Any]  # one labelled issue, as the data's JSON line holds it


def load(path: Path) -> list[Row]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def key(row: Row) -> str:
    return f"{row['repo']}#{row['number']}"


def report(rows: list[Row], show: bool) -> None:
    texts = {key(r): full_text(r.get("title") or "", r.get("body") or "") for r in rows}
    matched: dict[str, list[Row]] = defaultdict(list)
    diagnosed = 0
    for row in rows:
        text = texts[key(row)]
        # all matches, not only the MAX_SHOWN a comment keeps
        found = [d.id for d in diagnoses.find(text)]
        if not found and diagnoses.diagnose(text, environment.extract(text), ()):
            found = ["cuda_mismatch"]
        diagnosed += bool(found)
        for diagnosis_id in found:
            matched[diagnosis_id].append(row)
    print(f"{'id':<24}{'matched':>8}{'right':>7}{'wrong':>7}{'unver.':>7}  implied ids: agree/labelled")
    totals: dict[str, int] = defaultdict(int)
    for diagnosis in diagnoses.DIAGNOSES:
        hits = matched.get(diagnosis.id, [])
        verdicts = [VERDICTS.get((diagnosis.id, key(r)), ("UNREAD", "")) for r in hits]
        counts = {v: sum(1 for verdict, _ in verdicts if verdict == v)
                  for v in ("right", "wrong", "unverified", "UNREAD")}
        agree = []
        for dim, label_id in diagnosis.implies.items():
            labelled = [r for r in hits if r["labels"].get(dim, taxonomy.UNKNOWN) != taxonomy.UNKNOWN]
            same = sum(r["labels"][dim] == label_id for r in labelled)
            stated = "*" if dim in diagnosis.states else ""
            agree.append(f"{label_id}{stated} {same}/{len(labelled)}")
        for verdict, count in counts.items():
            totals[verdict] += count
        unread = f"  UNREAD {counts['UNREAD']}" if counts["UNREAD"] else ""
        print(f"{diagnosis.id:<24}{len(hits):>8}{counts['right']:>7}{counts['wrong']:>7}"
              f"{counts['unverified']:>7}  {', '.join(agree) or '-'}{unread}")
        if show:
            for row, (verdict, why) in zip(hits, verdicts):
                labels = row["labels"]
                print(f"    {key(row)} [{labels['stage']} {labels['symptom']} {labels['root_cause']}"
                      f" {labels['fix_pattern']}] {verdict}: {why}")
                print(f"      resolution: {row.get('resolution', '')[:200]}")
    print("\n* = stated when the classifier does not state that dimension")
    print(f"summary: {len(diagnoses.DIAGNOSES)} entries, {diagnosed} of {len(rows)} issues diagnosed, "
          f"{sum(totals.values())} matches: {totals['right']} right, {totals['wrong']} wrong, "
          f"{totals['unverified']} unverified, {totals['UNREAD']} UNREAD")


def candidates(rows: list[Row]) -> None:
    print("\nDropped candidates (matched issues, why dropped):")
    for name, (pattern, why) in CANDIDATES.items():
        regex = re.compile(pattern, re.I)
        hits = [r for r in rows if regex.search(full_text(r.get("title") or "", r.get("body") or ""))]
        print(f"  {name:<30}{len(hits):>4}  {why}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/issues.jsonl"))
    parser.add_argument("--show", action="store_true", help="every matched issue with our verdict")
    parser.add_argument("--candidates", action="store_true", help="also the dropped signatures")
    args = parser.parse_args()
    rows = load(args.data)
    report(rows, args.show)
    if args.candidates:
        candidates(rows)


if __name__ == "__main__":
    main()
