"""Diagnoses from the report's own error (``domain/diagnoses.py``): each kept signature fires on a
real-looking log and not on the near-misses that read alike but mean something else; quoted
values are only short, strict and sanitized; the table is consistent with the taxonomy."""
from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from triagebot.domain import diagnoses, environment, taxonomy
from triagebot.domain.models import Diagnosed, Environment, Triage
from triagebot.text.signal import full_text

NOISE = "\n".join(
    f"[2024-03-0{i % 9 + 1} 12:{i % 60:02d}:07,148] [INFO] [engine.py:{100 + i}:step] "
    f"step={i}, skipped=0, lr=[2.9e-05], mom=[(0.9, 0.999)] rank={i % 8}"
    for i in range(400))


def report(title: str, log: str, prose: str = "It fails, see the log.") -> str:
    """A GitHub-template report with a long log around the error, cleaned as the engine reads it."""
    body = (f"**Describe the bug**\n{prose}\n\n**Logs**\n```\n{NOISE}\n{log}\n{NOISE}\n```\n\n"
            "**System info**\n- deepspeed 0.14.2, torch 2.3.0+cu121, Python 3.10, 8x A100\n")
    return full_text(title, body)


def ids(text: str, env: Environment | None = None) -> list[str]:
    return [d.id for d in diagnoses.diagnose(text, env or environment.extract(text))]


LOGS = {
    "cuda_mismatch": (
        "[BUG] pip install deepspeed fails",
        "      File \"/tmp/pip-install-x/deepspeed_1/op_builder/builder.py\", line 97, in "
        "assert_no_cuda_mismatch\n        raise CUDAMismatchException(\n"
        "    op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA "
        "version 12.1 does not match the version torch was compiled with 11.8, unable to "
        "compile cuda/cpp extensions without a matching cuda version.\n"
        "    [end of output]"),
    "cuda_toolkit_missing": (
        "fused_adam build error",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/cpp_extension.py\", line "
        "2416, in _join_cuda_home\n    raise OSError('CUDA_HOME environment variable is not set. '\n"
        "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install "
        "root."),
    "torch_abi": (
        "ImportError when importing the op",
        "ImportError: /root/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: "
        "undefined symbol: _ZN3c104cuda9SetDeviceEi"),
    "import_name": (
        "Running the example fails",
        "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
        "    from colossalai.zero import ColoInitContext\n"
        "ImportError: cannot import name 'ColoInitContext' from 'colossalai.zero' "
        "(/home/u/miniconda3/envs/c/lib/python3.9/site-packages/colossalai/zero/__init__.py)"),
    "launcher_env": (
        "launch_from_torch error",
        "  File \"/usr/lib/python3.10/os.py\", line 680, in __getitem__\n"
        "    raise KeyError(key) from None\nKeyError: 'LOCAL_RANK'"),
    "port_in_use": (
        "torchrun fails on the second job",
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 "
        "(errno: 98 - Address already in use).\n[E socket.cpp:472] [c10d] The server socket "
        "has failed to listen on any local network address.\n"
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any "
        "local network address."),
    "local_rank_arg": (
        "finetune.py rejects an argument",
        "[2024-01-02 10:00:01,000] [INFO] [launch.py:163:main] dist_world_size=2\n"
        "usage: finetune.py [-h] [--model MODEL] [--epochs EPOCHS]\n"
        "finetune.py: error: unrecognized arguments: --local_rank=1"),
    "duplicate_gpu": (
        "NCCL invalid usage at barrier",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1691, invalid usage, NCCL version 2.19.3\n"
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1b000"),
    "ddp_unused": (
        "DDP error with two heads",
        "RuntimeError: Expected to have finished reduction in the prior iteration before "
        "starting a new one. This error indicates that your module has parameters that were "
        "not used in producing loss."),
    "zero3_partitioned": (
        "stage 3 inference breaks",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py\", line 2233, "
        "in embedding\n    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, "
        "sparse)\nRuntimeError: 'weight' must be 2-D\nconfig: {\"zero_optimization\": "
        "{\"stage\": 3}}"),
    "sigkill": (
        "training dies after loading",
        "[2024-05-01 10:11:12,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess "
        "1234\n[2024-05-01 10:11:12,001] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/"
        "python', '-u', 'train.py', '--local_rank=0'] exits with return code = -9"),
    "msvc_missing": (
        "pip install deepspeed fails on Windows",
        "      building 'deepspeed.ops.adam.cpu_adam_op' extension\n"
        "      error: Microsoft Visual C++ 14.0 or greater is required. Get it with \"Microsoft "
        "C++ Build Tools\": https://visualstudio.microsoft.com/visual-cpp-build-tools/\n"
        "      [end of output]"),
    "ninja_missing": (
        "fused_adam cannot be loaded",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/cpp_extension.py\", line "
        "1894, in verify_ninja_availability\n    raise RuntimeError(\"Ninja is required to load "
        "C++ extensions\")\nRuntimeError: Ninja is required to load C++ extensions"),
    "unsupported_arch": (
        "[BUG] DS_BUILD_OPS=1 install fails",
        "      [1/3] /usr/local/cuda/bin/nvcc -DTORCH_EXTENSION_NAME=fused_adam -gencode="
        "arch=compute_90,code=sm_90 -c multi_tensor_adam.cu -o multi_tensor_adam.cuda.o\n"
        "      nvcc fatal   : Unsupported gpu architecture 'compute_90'\n"
        "      ninja: build stopped: subcommand failed."),
    "libaio_missing": (
        "[BUG] installing from source fails",
        "      DS_BUILD_OPS=1\n"
        "       [WARNING]  async_io requires the dev libaio .so object and headers but these "
        "were not found.\n"
        "       [WARNING]  One can disable async_io with DS_BUILD_AIO=0\n"
        "       [ERROR]  Unable to pre-compile async_io\n      [end of output]"),
    "nccl_header_missing": (
        "pip install horovod fails",
        "    In file included from horovod/common/operations.cc:63:\n"
        "    horovod/common/ops/nccl_operations.h:22:10: fatal error: nccl.h: No such file or "
        "directory\n       22 | #include <nccl.h>\n    compilation terminated."),
    "nccl_too_old": (
        "horovod build error",
        "    horovod/common/ops/nccl_operations.cc:210:22: error: 'ncclCommGetAsyncError' was not "
        "declared in this scope\n    error: command 'gcc' failed with exit status 1"),
    "glibcxx": (
        "cpu_adam import error",
        "ImportError: /home/u/miniconda3/envs/ds/bin/../lib/libstdc++.so.6: version "
        "`GLIBCXX_3.4.30' not found (required by /home/u/.cache/torch_extensions/py310_cu118/"
        "cpu_adam/cpu_adam.so)"),
    "cuda_library_missing": (
        "import fails after install",
        "  File \"/usr/lib/python3.10/importlib/__init__.py\", line 126, in import_module\n"
        "    return _bootstrap._gcd_import(name[level:], package, level)\n"
        "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or "
        "directory"),
    "torch_six": (
        "pretrain_gpt.py fails to start",
        "  File \"/workspace/Megatron-LM/megatron/model/module.py\", line 8, in <module>\n"
        "    from torch._six import inf\nModuleNotFoundError: No module named 'torch._six'"),
    "numpy_alias": (
        "preprocess_data.py crashes",
        "  File \"/workspace/megatron/data/indexed_dataset.py\", line 101, in <module>\n"
        "    6: np.float,\n  File \"/usr/local/lib/python3.10/dist-packages/numpy/__init__.py"
        "\", line 305, in __getattr__\n    raise AttributeError(__former_attrs__[attr])\n"
        "AttributeError: module 'numpy' has no attribute 'float'.\n`np.float` was a deprecated "
        "alias for the builtin `float`."),
    "numpy2_abi": (
        "import deepspeed warns and fails",
        "A module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.0.0 as it may "
        "crash. To support both 1.x and 2.x\nversions of NumPy, modules must be compiled with "
        "NumPy 2.0."),
    "apex_extensions": (
        "Megatron training fails at import",
        "  File \"/workspace/megatron/optimizer/__init__.py\", line 4, in <module>\n"
        "    from apex.optimizers import FusedAdam as Adam\n  File \"/usr/local/lib/python3.10/"
        "dist-packages/apex/optimizers/fused_adam.py\", line 18, in __init__\n"
        "    import amp_C\nModuleNotFoundError: No module named 'amp_C'"),
    "cpu_adam_not_built": (
        "Exception ignored with offload",
        "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at 0x7f2c1c2b3d90>\n"
        "Traceback (most recent call last):\n  File \"/opt/conda/lib/python3.10/site-packages/"
        "deepspeed/ops/adam/cpu_adam.py\", line 102, in __del__\n"
        "    self.ds_opt_adam.destroy_adam(self.opt_id)\n"
        "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'"),
    "no_kernel_image": (
        "inference fails on my GPU",
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect."),
    "needs_ampere": (
        "training with flash attention on V100",
        "  File \"/opt/conda/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py\","
        " line 51, in _flash_attn_forward\nRuntimeError: FlashAttention only supports Ampere "
        "GPUs or newer."),
    "deepspeed_slot": (
        "deepspeed ignores my GPU choice",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/launcher/runner.py\", line "
        "300, in parse_inclusion_exclusion\n    raise ValueError(f\"No slot '{slot}' specified on "
        "host '{hostname}'\")\nValueError: No slot '2' specified on host 'localhost'"),
    "invalid_ordinal": (
        "torchrun with 8 processes fails",
        "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n"
        "    torch.cuda.set_device(args.local_rank)\nRuntimeError: CUDA error: invalid device "
        "ordinal\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."),
    "nccl_no_interface": (
        "multi-node init fails",
        "node1:1234:1234 [0] NCCL INFO NCCL_SOCKET_IFNAME set to eth0\n"
        "node1:1234:1234 [0] NCCL INFO Bootstrap : no socket interface found\n"
        "RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:825, internal "
        "error, NCCL version 2.7.8"),
    "shared_memory": (
        "NCCL error in a container",
        "node08:27106:27302 [0] include/shm.h:28 NCCL WARN Error while creating shared memory "
        "segment /dev/shm/nccl-9Wz3Ur (size 9637888)\n"
        "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1269, "
        "unhandled system error, NCCL version 2.14.3"),
    "rendezvous_timeout": (
        "multi-node job never starts",
        "RuntimeError: Timed out initializing process group in store based barrier on rank: 0, "
        "for key: store_based_barrier_key:1 (world_size=16, worker_count=8, timeout=0:30:00)"),
    "fork_cuda": (
        "DataLoader workers crash",
        "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n"
        "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
        "multiprocessing, you must use the 'spawn' start method"),
    "loss_scale_minimum": (
        "fp16 training stops",
        "[2024-02-01 10:00:00,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] "
        "OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1\n"
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. "
        "Exiting run."),
    "colossalai_kernels": (
        "[BUG]: examples fail with HybridAdam",
        "  File \"/opt/conda/lib/python3.10/site-packages/colossalai/kernel/op_builder/builder.py"
        "\", line 119, in load\n    op_module = importlib.import_module(self.prebuilt_import_path)"
        "\nModuleNotFoundError: No module named 'colossalai._C.cpu_adam'"),
    "no_gpu_visible": (
        "torchrun fails in the container",
        "  File \"/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py\", line 302, in "
        "_lazy_init\n    torch._C._cuda_init()\nRuntimeError: No CUDA GPUs are available"),
    "driver_too_old": (
        "import fails with the new torch",
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). "
        "Please update your GPU driver by downloading and installing a new version from the URL"),
    "collective_mismatch": (
        "DDP hangs then errors with debug on",
        "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running "
        "collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[1024]), but Rank 1 "
        "is running collective: CollectiveFingerPrint(OpType=BROADCAST)."),
    "zero_dp_size_changed": (
        "resuming on more nodes fails",
        "deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a "
        "DP world size of 32 but the current world size is 128. Automatic adjustment of ZeRO's "
        "optimizer state partitioning with a new world size is not currently supported."),
    "sigbus": (
        "fine-tuning dies without a traceback",
        "[2024-01-05 10:00:00,000] [INFO] [launch.py:315:sigkill_handler] Killing subprocess "
        "4242\n[2024-01-05 10:00:00,100] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/"
        "python', '-u', 'train.py', '--local_rank=3'] exits with return code = -7"),
    "not_divisible": (
        "pretrain_gpt assertion",
        "  File \"/workspace/megatron/core/utils.py\", line 31, in ensure_divisibility\n"
        "    assert numerator % denominator == 0, '{} is not divisible by {}'.format(\n"
        "AssertionError: 32 is not divisible by 3"),
    "transformer_engine": (
        "pretrain_gpt.py fails at import",
        "  File \"/workspace/Megatron-LM/megatron/core/extensions/transformer_engine.py\", line "
        "12, in <module>\n    import transformer_engine as te\n"
        "ModuleNotFoundError: No module named 'transformer_engine'"),
    "launcher_not_on_path": (
        "Launching on multiple nodes fails",
        "$ colossalai run --nproc_per_node 8 --hostfile ./hostfile train.py\n"
        "[10.0.0.2] out: bash: torchrun: command not found\n"
        "Error: failed to run torchrun --nproc_per_node=8 --nnodes=2 on 10.0.0.2"),
    "te_mpi_bootstrap": (
        "[BUG] Training crashes with --tp-comm-overlap",
        "/home/Megatron-LM/megatron/training/initialize.py:227: UserWarning: Transformer Engine "
        "v1.5.0+6a9edc3 supports only MPI bootstrap backend.\n  warnings.warn(\n"
        "RuntimeError: Distributed package doesn't have MPI built in. MPI is only included if "
        "you build PyTorch from source on a host that has MPI installed."),
    "horovod_extension": (
        "horovod.torch import prints a warning, then allreduce fails",
        "Extension horovod.torch has not been built: /usr/local/lib/python3.8/dist-packages/"
        "horovod/torch/mpi_lib_v2.cpython-38-x86_64-linux-gnu.so not found\n"
        "If this is not expected, reinstall Horovod with HOROVOD_WITH_PYTORCH=1 to debug the "
        "build error.\nWarning! MPI libs are missing, but python applications are still "
        "available."),
    "horovod_controller": (
        "horovodrun fails on the example",
        "  File \"/usr/local/lib/python3.8/dist-packages/horovod/runner/launch.py\", line 778, "
        "in run_controller\n    raise ValueError('Neither MPI nor Gloo support has been built. "
        "Try reinstalling Horovod ensuring that '\nValueError: Neither MPI nor Gloo support has "
        "been built. Try reinstalling Horovod ensuring that either MPI is installed (MPI) or "
        "CMake is installed (Gloo)."),
    "torch_cpu_build": (
        "deepspeed.initialize fails on my workstation",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 289, in "
        "_lazy_init\n    raise AssertionError(\"Torch not compiled with CUDA enabled\")\n"
        "AssertionError: Torch not compiled with CUDA enabled"),
    "nccl_not_built": (
        "training on Windows with two GPUs",
        "  File \"C:\\Users\\u\\miniconda3\\envs\\ds\\lib\\site-packages\\torch\\distributed\\"
        "distributed_c10d.py\", line 1013, in _new_process_group_helper\n"
        "    raise RuntimeError(\"Distributed package doesn't have NCCL \" \"built in\")\n"
        "RuntimeError: Distributed package doesn't have NCCL built in"),
    "libuv_missing": (
        "torchrun on Windows fails at once",
        "  File \"C:\\Python311\\Lib\\site-packages\\torch\\distributed\\rendezvous.py\", line "
        "189, in _create_c10d_store\n    return TCPStore(\n           ^^^^^^^^^\n"
        "torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built "
        "without libuv support, run with USE_LIBUV=0 to disable it."),
    "dist_not_initialized": (
        "evaluation script crashes",
        "[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/"
        "distributed_c10d.py\", line 1008, in _get_default_group\n[rank0]:     raise "
        "ValueError(\n[rank0]: ValueError: Default process group has not been initialized, "
        "please make sure to call init_process_group."),
    "horovod_init": (
        "hvd.local_rank() raises",
        "  File \"train.py\", line 30, in <module>\n    torch.cuda.set_device(hvd.local_rank())\n"
        "  File \"/usr/local/lib/python3.8/dist-packages/horovod/common/basics.py\", line 184, in "
        "local_rank\nValueError: Horovod has not been initialized; use hvd.init()."),
    "nccl_cpu_tensor": (
        "all_reduce of the metric fails",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py"
        "\", line 1536, in all_reduce\n    work = default_pg.allreduce([tensor], opts)\n"
        "RuntimeError: Tensors must be CUDA and dense"),
    "ddp_ready_twice": (
        "LoRA fine-tuning with DDP and gradient checkpointing",
        "RuntimeError: Expected to mark a variable ready only once. This error is caused by one "
        "of the following reasons: 1) Use of a module parameter outside the `forward` function. "
        "2) Reused parameters in multiple reentrant backward passes. Parameter at index 191 "
        "with name base_model.model.layers.31.mlp.down_proj.lora_B.default.weight has been "
        "marked as ready twice."),
    "ddp_no_grad_params": (
        "DDP refuses my model",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py\", "
        "line 1137, in _log_and_throw\n    raise err_type(err_msg)\nRuntimeError: "
        "DistributedDataParallel is not needed when a module doesn't have any parameter that "
        "requires a gradient."),
    "zero_pipeline": (
        "Megatron-DeepSpeed with ZeRO-2",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py\", "
        "line 67, in __init__\n    assert self.zero_optimization_stage(\n"
        "AssertionError: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"),
    "zero_no_sync": (
        "gradient accumulation with ZeRO-2 fails",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line "
        "1995, in no_sync\n    assert not self.zero_optimization_partition_gradients(), \\\n"
        "AssertionError: no_sync context manager is incompatible with gradient partitioning "
        "logic of ZeRO stage 2"),
    "offload_optimizer": (
        "offload_optimizer with the Trainer",
        "deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a "
        "client provided optimizer (<class 'torch.optim.adamw.AdamW'>) which in most cases "
        "will yield poor performance. Please either use deepspeed.ops.adam.DeepSpeedCPUAdam or "
        "set an optimizer in your ds-config. If you really want to use a custom optimizer w. "
        "ZeRO-Offload and understand the performance impacts you can also set "
        "<\"zero_force_ds_cpu_optimizer\": false> in your configuration file."),
    "launcher_missing": (
        "multi-node run with a hostfile fails at once",
        "[2024-05-02 09:12:01,312] [INFO] [runner.py:463:main] Using IP address of 10.0.0.1 for "
        "node worker-0\nTraceback (most recent call last):\n  File \"/opt/conda/lib/python3.10/"
        "site-packages/deepspeed/launcher/runner.py\", line 579, in main\n    raise "
        "RuntimeError(f\"launcher '{args.launcher}' not installed.\")\n"
        "RuntimeError: launcher 'pdsh' not installed."),
    "hostfile_format": (
        "deepspeed --hostfile refuses my file",
        "[2023-06-01 10:00:00,000] [ERROR] [runner.py:228:_parse_hostfile] Bad hostfile text: "
        "['worker-0 slots=8\\n', 'worker-1 slot=8\\n']\n  File \"/opt/conda/lib/python3.10/"
        "site-packages/deepspeed/launcher/runner.py\", line 230, in _parse_hostfile\n"
        "ValueError: Hostfile contains a bad entry: worker-1 slot=8, unable to proceed with "
        "launching"),
    "ssh_check": (
        "two nodes with deepspeed: launch fails",
        "subprocess.CalledProcessError: Command '['ssh', '-o', 'PasswordAuthentication=no', "
        "'worker-1', 'hostname']' returned non-zero exit status 255.\n\nDuring handling of the "
        "above exception, another exception occurred:\n\nTraceback (most recent call last):\n"
        "RuntimeError: Using hostfile at /job/hostfile but host=worker-1 was not reachable via "
        "ssh. If you are running with a single node please remove /job/hostfile or setup "
        "passwordless ssh."),
    "size_mismatch": (
        "resuming the converted checkpoint fails",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line "
        "2153, in load_state_dict\nRuntimeError: Error(s) in loading state_dict for GPTModel:\n"
        "\tsize mismatch for language_model.embedding.word_embeddings.weight: copying a param "
        "with shape torch.Size([25216, 4096]) from checkpoint, the shape in current model is "
        "torch.Size([50432, 4096])."),
    "state_dict_prefix": (
        "cannot load the weights saved during DDP training",
        "  File \"eval.py\", line 31, in <module>\n    model.load_state_dict(torch.load(path))\n"
        "RuntimeError: Error(s) in loading state_dict for ResNet:\n\tMissing key(s) in "
        "state_dict: \"conv1.weight\", \"bn1.weight\", \"bn1.bias\", \"bn1.running_mean\". \n"
        "\tUnexpected key(s) in state_dict: \"module.conv1.weight\", \"module.bn1.weight\", "
        "\"module.bn1.bias\", \"module.bn1.running_mean\". "),
    "zero3_device_map": (
        "QLoRA with ZeRO-3 fails to load the model",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py\", line "
        "3045, in from_pretrained\n    raise ValueError(\nValueError: DeepSpeed Zero-3 is not "
        "compatible with `low_cpu_mem_usage=True` or with passing a `device_map`."),
    "device_map_parallel": (
        "accelerate launch with 2 GPUs fails in prepare",
        "  File \"/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py\", line "
        "1329, in prepare\n    raise ValueError(\nValueError: You can't train a model that has "
        "been loaded with `device_map='auto'` in any distributed mode. Please rerun your script "
        "specifying `--num_processes=1` or by launching with `python {{myscript.py}}`."),
    "accelerate_ds_batch": (
        "accelerate with the DeepSpeed plugin fails in prepare",
        "  File \"/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py\", line "
        "1594, in _prepare_deepspeed\n    raise ValueError(\nValueError: When using DeepSpeed, "
        "`accelerate.prepare()` requires you to pass at least one of training or evaluation "
        "dataloaders with `batch_size` attribute returning an integer value or alternatively "
        "set an integer value in `train_micro_batch_size_per_gpu` in the deepspeed config file"),
    "shardformer_policy": (
        "[BUG]: HybridParallelPlugin with Qwen",
        "  File \"/usr/local/lib/python3.10/dist-packages/colossalai/shardformer/policies/"
        "auto_policy.py\", line 286, in get_autopolicy\n    raise NotImplementedError(\n"
        "NotImplementedError: Auto policy for QWenLMHeadModel (transformers_modules."
        "modeling_qwen.QWenLMHeadModel) is not implemented\n. Supported models are "
        "['transformers.models.bert.modeling_bert.BertModel', "
        "'transformers.models.llama.modeling_llama.LlamaForCausalLM']"),
    "optimizer_no_params": (
        "deepspeed.initialize fails with LoRA",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/optim/optimizer.py\", line 261, "
        "in __init__\n    raise ValueError(\"optimizer got an empty parameter list\")\n"
        "ValueError: optimizer got an empty parameter list"),
    "unscale_fp16": (
        "fp16=True with the Trainer fails at the first step",
        "  File \"/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py\", line "
        "2040, in unscale_gradients\n    self.scaler.unscale_(opt)\n  File \"/opt/conda/lib/"
        "python3.10/site-packages/torch/amp/grad_scaler.py\", line 260, in _unscale_grads_\n"
        "    raise ValueError(\"Attempting to unscale FP16 gradients.\")\n"
        "ValueError: Attempting to unscale FP16 gradients."),
    "mpi_discovery": (
        "python train.py with deepspeed fails at init",
        "[2024-04-01 10:00:00,000] [INFO] [comm.py:652:init_distributed] Not using the "
        "DeepSpeed or dist launchers, attempting to detect MPI environment...\n"
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/comm/comm.py\", line 684, in "
        "mpi_discovery\n    from mpi4py import MPI\n"
        "ModuleNotFoundError: No module named 'mpi4py'"),
    "grad_accum_fusion": (
        "[BUG] pretrain_gpt.py fails while building the model",
        "[rank0]:   File \"/workspace/Megatron-LM/megatron/core/tensor_parallel/layers.py\", "
        "line 775, in __init__\n[rank0]:     raise RuntimeError(\n[rank0]: RuntimeError: "
        "ColumnParallelLinear was called with gradient_accumulation_fusion set to True but the "
        "custom CUDA extension fused_weight_gradient_mlp_cuda module is not found. To use "
        "gradient_accumulation_fusion you must install APEX with --cpp_ext and --cuda_ext. For "
        "example: pip install --global-option=\"--cpp_ext\" --global-option=\"--cuda_ext .\" "
        "Note that the extension requires CUDA>=11. Otherwise, you must turn off gradient "
        "accumulation fusion."),
    "horovod_ssh": (
        "horovodrun on two hosts fails at once",
        "$ horovodrun -np 8 -H server1:4,server2:4 python train.py\n"
        "ssh not successful for host server2:\nroot@server2: Permission denied "
        "(publickey,password).\n\nTraceback (most recent call last):\n  File \"/usr/local/lib/"
        "python3.8/dist-packages/horovod/runner/launch.py\", line 655, in _run_static\n"
        "    raise RuntimeError('could not connect to some hosts via ssh')\n"
        "RuntimeError: could not connect to some hosts via ssh"),
    "ddp_device_ids": (
        "wrapping the model in DDP fails",
        "  File \"train.py\", line 88, in main\n    model = DDP(model, device_ids=[local_rank], "
        "output_device=local_rank)\n  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/"
        "parallel/distributed.py\", line 733, in __init__\n    self._log_and_throw(\n"
        "ValueError: DistributedDataParallel device_ids and output_device arguments only work "
        "with single-device/multiple-device GPU modules or CPU modules, but got device_ids [1], "
        "output_device 1, and module parameters {device(type='cpu')}."),
    "checkpoint_device": (
        "evaluating the checkpoint on the CPU server fails",
        "  File \"/usr/lib/python3.10/site-packages/torch/serialization.py\", line 166, in "
        "validate_cuda_device\n    raise RuntimeError('Attempting to deserialize object on a "
        "CUDA '\nRuntimeError: Attempting to deserialize object on a CUDA device but "
        "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please "
        "use torch.load with map_location=torch.device('cpu') to map your storages to the CPU."),
    "weights_only": (
        "resuming from the checkpoint fails after upgrading torch",
        "  File \"/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/checkpoint_engine/"
        "torch_checkpoint_engine.py\", line 28, in load\n    partition = torch.load(path, "
        "map_location=map_location)\n  File \"/opt/conda/lib/python3.11/site-packages/torch/"
        "serialization.py\", line 1470, in load\n    raise pickle.UnpicklingError(_get_wo_message("
        "str(e))) from None\n_pickle.UnpicklingError: Weights only load failed. This file can "
        "still be loaded, to do so you have two options, do those steps only if you trust the "
        "source of the checkpoint. \n\t(1) In PyTorch 2.6, we changed the default value of the "
        "`weights_only` argument in `torch.load` from `False` to `True`. Re-running "
        "`torch.load` with `weights_only` set to `False` will likely succeed, but it can result "
        "in arbitrary code execution. Do it only if you got the file from a trusted source.\n\t"
        "(2) Alternatively, to load with `weights_only=True` please check the recommended steps "
        "in the following error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL "
        "deepspeed.runtime.fp16.loss_scaler.LossScaler was not an allowed global by default."),
    "ds_config_missing": (
        "deepspeed.initialize fails in my script",
        "  File \"train.py\", line 120, in main\n    engine, optimizer, _, _ = "
        "deepspeed.initialize(args=args, model=model, model_parameters=params)\n  File \"/opt/"
        "conda/lib/python3.10/site-packages/deepspeed/__init__.py\", line 176, in initialize\n"
        "    assert config is not None, \"DeepSpeed requires --deepspeed_config to specify "
        "configuration file\"\nAssertionError: DeepSpeed requires --deepspeed_config to specify "
        "configuration file"),
    "ds_config_twice": (
        "the config passed to initialize is refused",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/__init__.py\", line 170, in "
        "initialize\n    assert config is None, \"Not sure how to proceed, we were given "
        "deepspeed configs in the deepspeed arguments and deepspeed.initialize() function "
        "call\"\nAssertionError: Not sure how to proceed, we were given deepspeed configs in the "
        "deepspeed arguments and deepspeed.initialize() function call"),
    "fp16_and_bf16": (
        "my bf16 config is refused",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/config.py\", line "
        "831, in _initialize_params\n    assert not (self.float16_config.enabled\n"
        "AssertionError: bfloat16 and fp16 modes cannot be simultaneously enabled"),
    "micro_batch_zero": (
        "deepspeed on 16 GPUs fails at init",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/config.py\", line "
        "906, in _batch_assertion\n    assert (micro_batch > 0), f\"Micro batch size per gpu: "
        "{micro_batch} has to be greater than 0\"\nAssertionError: Micro batch size per gpu: 0 "
        "has to be greater than 0"),
    "zero_needs_optimizer": (
        "evaluation with the ZeRO-2 config fails",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line "
        "1531, in _configure_zero_optimizer\n    assert not isinstance(optimizer, DummyOptim), "
        "\"zero stage {} requires an optimizer\".format(zero_stage)\nAssertionError: zero stage "
        "2 requires an optimizer"),
    "cpu_optimizer_on_gpu": (
        "DeepSpeedCPUAdam fails at the first step",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/ops/adam/cpu_adam.py\", line "
        "143, in step\n    assert p.device == device, f\"CPUAdam param is on {p.device} and "
        "must be 'cpu', make \" \\\nAssertionError: CPUAdam param is on cuda:0 and must be "
        "'cpu', make sure you enabled 'offload_optimizer': 'cpu' in your ZeRO config."),
    "ds_config_mismatch": (
        "the Trainer refuses my DeepSpeed config",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/integrations/deepspeed.py"
        "\", line 261, in trainer_config_finalize\n    raise ValueError(\nValueError: Please "
        "correct the following DeepSpeed config values that mismatch TrainingArguments values:\n"
        "- ds train_micro_batch_size_per_gpu=4 vs hf per_device_train_batch_size=8\n"
        "- ds gradient_accumulation_steps=1 vs hf gradient_accumulation_steps=4\n"
        "The easiest method is to set these DeepSpeed config values to 'auto'."),
    "fsdp_wrap_class": (
        "FSDP with accelerate fails on Qwen2",
        "  File \"/opt/conda/lib/python3.10/site-packages/accelerate/utils/dataclasses.py\", "
        "line 1642, in set_auto_wrap_policy\n    raise ValueError(f\"Could not find the "
        "transformer layer class {layer_class} in the model.\")\nValueError: Could not find the "
        "transformer layer class LlamaDecoderLayer in the model."),
    "fsdp_uniform_dtype": (
        "QLoRA with FSDP fails in prepare",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_flat_param.py"
        "\", line 729, in _validate_tensors_to_flatten\n    raise ValueError(\nValueError: Must "
        "flatten tensors with uniform dtype but got torch.bfloat16 and torch.float32"),
    "cuda_max_connections": (
        "[BUG] pretrain_gpt.py with --tensor-model-parallel-size 2 fails at start",
        "using world size: 8, data-parallel size: 4, context-parallel size: 1, "
        "tensor-model-parallel size: 2, pipeline-model-parallel size: 1\n"
        "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"/workspace/Megatron-LM/"
        "megatron/training/arguments.py\", line 1477, in validate_args\n[rank0]:     assert "
        "os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS') == \"1\", \\\n[rank0]: AssertionError: "
        "Using tensor model parallelism or context parallelism require setting the environment "
        "variable CUDA_DEVICE_MAX_CONNECTIONS to 1"),
    "bf16_unsupported": (
        "bf16=True with the Trainer fails on a T4",
        "  File \"/usr/local/lib/python3.10/dist-packages/transformers/training_args.py\", line "
        "1612, in __post_init__\n    raise ValueError(\n"
        "ValueError: Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere "
        "GPU with cuda>=11.0"),
    "ds_fp16_unsupported": (
        "init_inference with dtype=torch.half on a CPU server",
        "[2024-10-02 09:04:19,993] [INFO] [real_accelerator.py:219:get_accelerator] Setting "
        "ds_accelerator to cpu (auto detect)\nTraceback (most recent call last):\n  File "
        "\"infer.py\", line 14, in <module>\n    engine = deepspeed.init_inference(model, "
        "dtype=torch.half)\n  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/inference/"
        "engine.py\", line 73, in __init__\n    raise ValueError(\nValueError: Data type "
        "torch.float16 is not supported by cpu accelerator"),
    "hostname_i": (
        "multi-node launch with a hostfile stops before starting",
        "[2024-03-01 10:00:00,000] [INFO] [runner.py:463:main] Using hostfile /job/hostfile\n"
        "hostname: invalid option -- 'I'\n[2024-03-01 10:00:01,000] [ERROR] [runner.py:506:main]"
        " Unable to detect suitable master address via 'hostname -I', please manually specify "
        "one via --master_addr\nTraceback (most recent call last):\n  File \"/opt/conda/lib/"
        "python3.10/site-packages/deepspeed/launcher/runner.py\", line 503, in main\n"
        "    result = subprocess.check_output(hostname_cmd)\nsubprocess.CalledProcessError: "
        "Command '['ssh', 'worker-0', 'hostname', '-I']' returned non-zero exit status 64."),
    "nccl_cuda_oom": (
        "NCCL error at the first all_reduce after loading the model",
        "node3:41234:41321 [2] NCCL INFO Channel 00/24 :    0   1   2   3   4   5   6   7\n"
        "node3:41234:41321 [2] include/alloc.h:124 NCCL WARN Cuda failure 'out of memory'\n"
        "node3:41234:41321 [2] NCCL INFO transport/p2p.cc:217 -> 1\n"
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for "
        "details), NCCL version 2.20.5\nncclUnhandledCudaError: Call to CUDA function failed.\n"
        "Last error:\nCuda failure 'out of memory'"),
    "store_connect": (
        "torchrun on two nodes: the second node cannot join",
        "[W socket.cpp:663] [c10d] The client socket has failed to connect to [10.0.0.1]:29400 "
        "(errno: 110 - Connection timed out).\n[E socket.cpp:718] [c10d] The client socket has "
        "timed out after 900s while trying to connect to (10.0.0.1, 29400).\nTraceback (most "
        "recent call last):\n  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/"
        "elastic/rendezvous/c10d_rendezvous_backend.py\", line 159, in _create_tcp_store\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to "
        "the C10d store has failed. See inner exception for details."),
    "dist_init_twice": (
        "my script calls init_process_group under accelerate launch",
        "  File \"train.py\", line 21, in main\n    dist.init_process_group(backend=\"nccl\")\n"
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/c10d_logger.py\", "
        "line 79, in wrapper\n    return func(*args, **kwargs)\n  File \"/opt/conda/lib/"
        "python3.10/site-packages/torch/distributed/distributed_c10d.py\", line 1305, in "
        "init_process_group\n    raise ValueError(\"trying to initialize the default process "
        "group twice!\")\nValueError: trying to initialize the default process group twice!"),
    "zero_untested_optim": (
        "deepspeed.initialize with an 8-bit optimizer and ZeRO-2",
        "[2024-01-10 12:00:00,000] [INFO] [logging.py:96:log_dist] [Rank 0] Using client "
        "Optimizer as basic optimizer\n[2024-01-10 12:00:00,001] [INFO] [logging.py:96:log_dist]"
        " [Rank 0] DeepSpeed Basic Optimizer = AdamW8bit\n  File \"/opt/conda/lib/python3.10/"
        "site-packages/deepspeed/runtime/engine.py\", line 1264, in _do_optimizer_sanity_check\n"
        "    assert (\nAssertionError: You are using an untested ZeRO Optimizer. Please add "
        "<\"zero_allow_untested_optimizer\": true> in the configuration file to use it."),
    "accelerate_ds_optim": (
        "accelerate launch with a DeepSpeed config file fails in prepare",
        "  File \"train.py\", line 88, in main\n    model, optimizer, loader, scheduler = "
        "accelerator.prepare(\n  File \"/opt/conda/lib/python3.10/site-packages/accelerate/"
        "accelerator.py\", line 1640, in _prepare_deepspeed\n    raise ValueError(\n"
        "ValueError: You cannot specify an optimizer in the config file and in the code at the "
        "same time. Please remove the optimizer from the config file or create "
        "`accelerate.utils.DummyOptim` in the code."),
    "megatron_ckpt_args": (
        "finetuning the released checkpoint with TP=2 fails at load",
        " loading checkpoint from /data/ckpt/gpt-1.3b at iteration 300000\n  File \"/workspace/"
        "Megatron-LM/megatron/training/checkpointing.py\", line 199, in _compare\n    assert "
        "checkpoint_value == args_value, error_message\nAssertionError: "
        "tensor_model_parallel_size value from checkpoint (1) is not equal to the input "
        "argument value (2)."),
    "fsdp_uniform_grad": (
        "LoRA with FSDP through accelerate fails in prepare",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_flat_param.py"
        "\", line 596, in _validate_tensors_to_flatten\n    raise ValueError(\nValueError: Must "
        "flatten tensors with uniform `requires_grad` when `use_orig_params=False`"),
    "colossal_zero_fp32": (
        "[BUG]: HybridParallelPlugin with zero_stage=1 in fp32",
        "  File \"/usr/local/lib/python3.10/dist-packages/colossalai/booster/plugin/"
        "hybrid_parallel_plugin.py\", line 1361, in configure\n    assert self.precision != "
        "\"fp32\", \"Please set precision to 'fp16' or 'bf16' when using ZeRO.\"\n"
        "AssertionError: Please set precision to 'fp16' or 'bf16' when using ZeRO."),
    "megatron_layers_pp": (
        "pretrain_gpt.py with 6 pipeline stages fails at start",
        "using world size: 48, data-parallel size: 4, context-parallel size: 1, "
        "tensor-model-parallel size: 2, pipeline-model-parallel size: 6\n  File \"/workspace/"
        "Megatron-LM/megatron/training/arguments.py\", line 998, in validate_args\n    assert "
        "num_layers % args.transformer_pipeline_model_parallel_size == 0, \\\nAssertionError: "
        "Number of layers should be divisible by the pipeline-model-parallel size"),
    "accelerate_missing": (
        "run_clm.py fails before training with transformers 4.36",
        "  File \"/home/u/finetune.py\", line 88, in main\n    training_args = TrainingArguments(\n"
        "  File \"<string>\", line 123, in __init__\n  File \"/opt/conda/lib/python3.10/site-"
        "packages/transformers/training_args.py\", line 1483, in __post_init__\n    and "
        "(self.device.type != \"cuda\")\n  File \"/opt/conda/lib/python3.10/site-packages/"
        "transformers/training_args.py\", line 1921, in device\n    return self._setup_devices\n"
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/training_args.py\", line "
        "1841, in _setup_devices\n    raise ImportError(\nImportError: Using the `Trainer` with "
        "`PyTorch` requires `accelerate>=0.21.0`: Please run `pip install transformers[torch]` or "
        "`pip install accelerate -U`"),
    "flash_attn_missing": (
        "SFT with accelerate launch fails while loading the model",
        "[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py"
        "\", line 1565, in _check_and_enable_flash_attn_2\n[rank0]:     raise ImportError(f\""
        "{preface} the package flash_attn seems to be not installed. {install_message}\")\n"
        "[rank0]: ImportError: FlashAttention2 has been toggled on, but it cannot be used due to "
        "the following error: the package flash_attn seems to be not installed. Please refer to "
        "the documentation to install Flash Attention 2."),
    "too_many_open_files": (
        "DataLoader crashes after 2 epochs with 16 workers",
        "  File \"/opt/conda/lib/python3.10/multiprocessing/reduction.py\", line 189, in recvfds\n"
        "    raise RuntimeError('received %d items of ancdata' %\n\nDuring handling of the above "
        "exception, another exception occurred:\n\n  File \"/opt/conda/lib/python3.10/site-packages/"
        "torch/utils/data/dataloader.py\", line 1146, in _try_get_data\n    raise RuntimeError(\n"
        "RuntimeError: Too many open files. Communication with the workers is no longer possible. "
        "Please increase the limit using `ulimit -n` in the shell or change the sharing strategy "
        "by calling `torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning "
        "of your code"),
    "lightning_notebook": (
        "Multi-GPU training from a Jupyter notebook fails",
        "MisconfigurationException                 Traceback (most recent call last)\nCell In[7], "
        "line 3\n----> 3 trainer = pl.Trainer(accelerator=\"gpu\", devices=4, strategy=\"ddp\")\n"
        "File /opt/conda/lib/python3.10/site-packages/lightning/pytorch/trainer/connectors/"
        "accelerator_connector.py:536, in _AcceleratorConnector._lazy_init_strategy(self)\n"
        "MisconfigurationException: `Trainer(strategy='ddp')` is not compatible with an "
        "interactive environment. Run your code as a script, or choose a notebook-compatible "
        "strategy: `Trainer(strategy='ddp_notebook')`. In case you are spawning processes "
        "yourself, make sure to include the Trainer creation inside the worker function."),
    "nccl_not_contiguous": (
        "all_gather of embeddings fails on 8 GPUs",
        "[rank1]: Traceback (most recent call last):\n[rank1]:   File \"/workspace/train.py\", line "
        "211, in gather_embeddings\n[rank1]:     dist.all_gather(gathered, emb.t())\n[rank1]:   "
        "File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/c10d_logger.py\", line "
        "83, in wrapper\n[rank1]:     return func(*args, **kwargs)\n[rank1]:   File \"/opt/conda/"
        "lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line 3144, in "
        "all_gather\n[rank1]:     work = default_pg.allgather([tensor_list], [tensor])\n"
        "[rank1]: ValueError: Tensors must be contiguous"),
    "ddp_wrapper_attr": (
        "generate fails after wrapping the model with DDP",
        "Traceback (most recent call last):\n  File \"/home/u/train_ddp.py\", line 142, in "
        "<module>\n    outputs = model.generate(input_ids, max_new_tokens=64)\n  File \"/opt/conda/"
        "lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1709, in __getattr__\n"
        "    raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")\n"
        "AttributeError: 'DistributedDataParallel' object has no attribute 'generate'"),
    "not_weights_file": (
        "from_pretrained fails on a local clone of the model",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py\", line "
        "3694, in from_pretrained\n    with safe_open(resolved_archive_file, framework=\"pt\") as "
        "f:\nsafetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge"),
    "checkpoint_truncated": (
        "resuming from the last checkpoint fails on rank 3",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/serialization.py\", line 1004, in "
        "load\n    with _open_zipfile_reader(opened_file) as opened_zipfile:\n  File \"/opt/conda/"
        "lib/python3.10/site-packages/torch/serialization.py\", line 456, in __init__\n    super()."
        "__init__(torch._C.PyTorchFileReader(name_or_buffer))\nRuntimeError: PytorchStreamReader "
        "failed reading zip archive: failed finding central directory"),
    "pipeline_train_batch": (
        "[BUG] PipelineModule training loop fails at the first step",
        "  File \"/workspace/train_pipe.py\", line 97, in main\n    loss = engine(batch)\n  File "
        "\"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1532, in "
        "_wrapped_call_impl\n    return self._call_impl(*args, **kwargs)\n  File \"/opt/conda/lib/"
        "python3.10/site-packages/deepspeed/runtime/pipe/engine.py\", line 1321, in forward\n"
        "    raise PipelineError(\"Only train_batch() is accessible in pipeline mode.\")\n"
        "deepspeed.runtime.pipe.module.PipelineError: Only train_batch() is accessible in pipeline "
        "mode."),
    "accelerate_reinit": (
        "Accelerator(mixed_precision='bf16') raises after the Trainer ran",
        "  File \"/home/u/sft.py\", line 55, in main\n    accelerator = Accelerator(mixed_precision="
        "\"bf16\")\n  File \"/opt/conda/lib/python3.10/site-packages/accelerate/state.py\", line "
        "905, in _check_initialized\n    raise ValueError(err.format(flag=f\"mixed_precision="
        "'{mixed_precision}'\"))\nValueError: AcceleratorState has already been initialized and "
        "cannot be changed, restart your runtime completely and pass `mixed_precision='bf16'` to "
        "`Accelerator()`."),
    "trainer_no_loss": (
        "Trainer with DeepSpeed ZeRO-2 fails at the first step",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/trainer.py\", line 3338, in "
        "compute_loss\n    raise ValueError(\nValueError: The model did not return a loss from the "
        "inputs, only the following keys: logits,past_key_values. For reference, the inputs it "
        "received are input_ids,attention_mask."),
    "trainer_quantized": (
        "QLoRA fine-tuning with accelerate fails at Trainer init",
        "  File \"/home/u/qlora.py\", line 120, in <module>\n    trainer = Trainer(model=model, "
        "args=args, train_dataset=ds)\n  File \"/opt/conda/lib/python3.10/site-packages/"
        "transformers/trainer.py\", line 412, in __init__\n    raise ValueError(\nValueError: You "
        "cannot perform fine-tuning on purely quantized models. Please attach trainable adapters "
        "on top of the quantized model to correctly perform fine-tuning."),
    "inference_tensor": (
        "training after a validation epoch fails with Lightning",
        "  File \"/home/u/model/rotary.py\", line 41, in forward\n    self.cos_cached[:seq_len] = "
        "emb.cos()\nRuntimeError: Inplace update to inference tensor outside InferenceMode is not "
        "allowed.You can make a clone to get a normal tensor before doing inplace update.See the "
        "RFC for more details."),
    "build_without_torch": (
        "pip install deepspeed fails on Windows",
        "  Getting requirements to build wheel ... error\n  error: subprocess-exited-with-error\n"
        "  x Getting requirements to build wheel did not run successfully.\n  |-> [20 lines of "
        "output]\n      [WARNING] Unable to import torch, pre-compiling ops will be disabled.\n"
        "      DS_BUILD_OPS=1\n      Traceback (most recent call last):\n        File \"setup.py\", "
        "line 158, in <module>\n      AssertionError: Unable to pre-compile ops without torch "
        "installed. Please install torch before attempting to pre-compile ops.\n"
        "      [end of output]"),
    "jit_build_failed": (
        "[BUG] fused_adam cannot be built",
        "Using /root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root...\n"
        "Building extension module fused_adam...\n[1/3] /usr/local/cuda/bin/nvcc "
        "-DTORCH_EXTENSION_NAME=fused_adam -c multi_tensor_adam.cu -o multi_tensor_adam.cuda.o\n"
        "FAILED: multi_tensor_adam.cuda.o\n/usr/include/c++/13/bits/stl_algobase.h(1234): error: "
        "identifier \"__builtin_ia32_ldtilecfg\" is undefined\nninja: build stopped: subcommand "
        "failed.\n  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/cpp_extension.py\", "
        "line 2100, in _run_ninja_build\n    raise RuntimeError(message) from e\n"
        "RuntimeError: Error building extension 'fused_adam'"),
    "shadowed_package": (
        "deepspeed launcher fails right away",
        "$ deepspeed --num_gpus 2 deepspeed.py\n/home/u/venv/bin/python3: Error while finding "
        "module specification for 'deepspeed.launcher.launch' (ModuleNotFoundError: No module "
        "named 'deepspeed.launcher'; 'deepspeed' is not a package)"),
    "ds_pydantic2": (
        "import deepspeed fails after an upgrade",
        "/opt/conda/lib/python3.10/site-packages/pydantic/_internal/_config.py:261: UserWarning: "
        "Valid config keys have changed in V2:\n* 'allow_population_by_field_name' has been "
        "renamed to 'populate_by_name'\n* 'validate_all' has been renamed to 'validate_default'\n"
        "  warnings.warn(message, UserWarning)\nTraceback (most recent call last):\n  File \"/opt/"
        "conda/lib/python3.10/site-packages/deepspeed/inference/config.py\", line 88, in <module>\n"
        "    class BaseQuantConfig(DeepSpeedConfigModel):\npydantic.errors.PydanticUserError: A "
        "non-annotated attribute was detected: `enabled = True`."),
    "unknown_model_type": (
        "Fine-tuning Qwen2 with ZeRO-3 fails while loading",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/models/auto/"
        "configuration_auto.py\", line 1039, in from_pretrained\n    raise ValueError(\n"
        "ValueError: The checkpoint you are trying to load has model type `qwen2` but Transformers "
        "does not recognize this architecture. This could be because of an issue with the "
        "checkpoint, or because your version of Transformers is out of date."),
    "trust_remote_code": (
        "ChatGLM fine-tuning with the Trainer stops at load",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/dynamic_module_utils.py\", "
        "line 640, in resolve_trust_remote_code\n    raise ValueError(\nValueError: The repository "
        "for THUDM/chatglm3-6b contains custom code which must be executed to correctly load the "
        "model. You can inspect the repository content at hf.co/THUDM/chatglm3-6b.\nPlease pass "
        "the argument `trust_remote_code=True` to allow custom code to be run."),
    "accel_for_device_map": (
        "from_pretrained fails in the inference script",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py\", line "
        "3535, in from_pretrained\n    raise ImportError(\nImportError: Using "
        "`low_cpu_mem_usage=True` or a `device_map` requires Accelerate: `pip install "
        "'accelerate>=0.26.0'`"),
    "tokenizer_deps": (
        "train_sft.py fails to load the LLaMA tokenizer",
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers/utils/import_utils.py\", "
        "line 1531, in requires_backends\n    raise ImportError(\"\".join(failed))\nImportError:\n"
        "LlamaTokenizer requires the SentencePiece library but it was not found in your "
        "environment. Checkout the instructions on the\ninstallation page of its repo and follow "
        "the ones that match your environment."),
    "llama_tokenizer_name": (
        "Training llama-7b-hf with colossalai_zero2 fails",
        "  File \"/opt/conda/lib/python3.8/site-packages/transformers/models/auto/"
        "tokenization_auto.py\", line 676, in from_pretrained\n    raise ValueError(\n"
        "ValueError: Tokenizer class LLaMATokenizer does not exist or is not currently imported."),
    "megatron_old_arg": (
        "examples/generate_text.sh fails",
        "  File \"/workspace/Megatron-LM/megatron/arguments.py\", line 96, in parse_args\n"
        "    assert args.batch_size is None, '--batch-size argument is no longer ' \\\n"
        "AssertionError: --batch-size argument is no longer valid, use --micro-batch-size "
        "instead"),
    "mpi_not_built": (
        "init_process_group(backend='mpi') fails under mpirun",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", "
        "line 1268, in _new_process_group_helper\n    raise RuntimeError(\nRuntimeError: "
        "Distributed package doesn't have MPI built in. MPI is only included if you build PyTorch "
        "from source on a host that has MPI installed."),
    "openmpi_root": (
        "horovod in docker: mpirun refuses to start",
        "$ mpirun -np 4 -H localhost:4 python train.py\n"
        "--------------------------------------------------------------------------\n"
        "mpirun has detected an attempt to run as root.\nRunning as root is *strongly* discouraged "
        "as any mistake (e.g., in\ndefining TMPDIR) or bug can result in catastrophic damage to "
        "the OS\nfile system, leaving your system in an unusable state.\n\nYou can override this "
        "protection by adding the --allow-run-as-root option\nto the cmd line.\n"
        "--------------------------------------------------------------------------"),
    "openmpi_slots": (
        "mpirun -np 8 fails on two nodes",
        "--------------------------------------------------------------------------\n"
        "There are not enough slots available in the system to satisfy the 8 slots\nthat were "
        "requested by the application:\n  python\n\nEither request fewer slots for your "
        "application, or make more slots available\nfor use.\n"
        "--------------------------------------------------------------------------"),
    "colossalai_run_ssh": (
        "colossalai run on 2 nodes hangs",
        "Error: failed to run torchrun --nproc_per_node=2 --nnodes=2 --node_rank=1 "
        "--master_addr=192.168.1.11 --master_port=29508 pretrain.py on 192.168.1.12, is "
        "localhost: False, exception: not a valid RSA private key file"),
    "megatron_local_rank": (
        "Megatron-DeepSpeed on nodes with 2 and 4 GPUs",
        "  File \"/workspace/Megatron-DeepSpeed/megatron/initialize.py\", line 207, in "
        "_initialize_distributed\n    assert (\nAssertionError: expected local-rank to be the "
        "same as rank % device-count."),
    "lightning_gpu_ids": (
        "Trainer(devices=4) fails in the container",
        "  File \"/opt/conda/lib/python3.10/site-packages/lightning/fabric/utilities/"
        "device_parser.py\", line 136, in _sanitize_gpu_ids\n    raise MisconfigurationException("
        "\nlightning.fabric.utilities.exceptions.MisconfigurationException: You requested gpu: "
        "[0, 1, 2, 3]\n But your machine only has: [0, 1]"),
    "gloo_ifname": (
        "pretrain_gpt_distributed_with_mp.sh fails on 2 nodes",
        "  File \"/workspace/Megatron-LM/megatron/core/parallel_state.py\", line 169, in "
        "initialize_model_parallel\n    group_gloo = torch.distributed.new_group(ranks, "
        "backend=\"gloo\")\nRuntimeError: [enforce fail at /root/pytorch/third_party/gloo/gloo/"
        "transport/tcp/device.cc:83] ifa != nullptr. Unable to find address for: bond1"),
    "dist_init_required": (
        "deepspeed.initialize fails in my trainer",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/comm/comm.py\", line 634, in "
        "init_distributed\n    assert cdb is not None and cdb.is_initialized(\nAssertionError: "
        "Distributed backend is not initialized. Please set dist_init_required to True or "
        "initialize before calling deepspeed.initialize()"),
    "horovod_mismatch": (
        "allreduce of the metrics fails at the end of an epoch",
        "horovod.common.exceptions.HorovodInternalError: Mismatched ALLREDUCE tensor shapes: One "
        "rank sent a tensor of shape [32, 10], but another rank sent a tensor of shape [16, 10]."),
    "horovod_accumulation": (
        "Gradient accumulation with DistributedOptimizer breaks after an epoch",
        "  File \"/opt/conda/lib/python3.8/site-packages/horovod/torch/optimizer.py\", line 224, in "
        "hook\n    raise AssertionError(\nAssertionError: Gradients were computed more than "
        "backward_passes_per_step times before call to step(). Increase backward_passes_per_step "
        "to accumulate gradients locally."),
    "horovod_shut_down": (
        "broadcast fails at the start on 4 workers",
        "tensorflow.python.framework.errors_impl.UnknownError: Horovod has been shut down. This "
        "was caused by an exception on one of the ranks or an attempt to allreduce, allgather or "
        "broadcast a tensor after one of the ranks finished execution.\n\t [[node "
        "HorovodBroadcast_Variable_0 (defined at <string>:251) ]]"),
    "megatron_data_prefix": (
        "pretrain_gpt.py cannot find the dataset",
        "Dataset does not exist: /data/openwebtext/subset-01\nPath should be a basename that both "
        ".idx and .bin can be appended to get full filenames.\n > finished creating indexed "
        "dataset in 0.000021 seconds\n  File \"/mega/Megatron-LM/megatron/data/gpt_dataset.py\", "
        "line 134, in get_indexed_dataset_\nAttributeError: 'NoneType' object has no attribute "
        "'sizes'"),
    "ds_onebit_zero": (
        "OneBitAdam with the Trainer",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 1276, "
        "in _configure_basic_optimizer\n    assert not self.zero_optimization(), \"1bit-Adam is not "
        "compatible with ZeRO\"\nAssertionError: 1bit-Adam is not compatible with ZeRO"),
    "autotp_kernel_inject": (
        "init_inference of an encoder-decoder model fails",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/module_inject/auto_tp.py\", line "
        "296, in tp_parser\nAssertionError: AutoTP not supported for model. Please use kernel "
        "injection since container policy for model exists."),
    "cub_missing": (
        "[BUG]: build error in moe_cuda_kernel.cu",
        "      /usr/local/cuda/bin/nvcc -I/opt/ColossalAI/colossalai/kernel/cuda_native/csrc/kernels/"
        "include -c colossalai/kernel/cuda_native/csrc/moe_cuda_kernel.cu -o build/temp.linux-x86_64-"
        "3.9/moe_cuda_kernel.o\n      colossalai/kernel/cuda_native/csrc/moe_cuda_kernel.cu:5:10: "
        "fatal error: cub/cub.cuh: No such file or directory\n          5 | #include <cub/cub.cuh>\n"
        "      compilation terminated.\n      error: command '/usr/local/cuda/bin/nvcc' failed with "
        "exit status 1"),
    "ds_pydantic2_field": (
        "deepspeed fails on import",
        "  File \"/home/u/.local/lib/python3.10/site-packages/deepspeed/inference/config.py\", line "
        "88, in <module>\n    class BaseQuantConfig(DeepSpeedConfigModel):\n  File \"/home/u/.local/"
        "lib/python3.10/site-packages/pydantic/_internal/_model_construction.py\", line 92, in "
        "__new__\npydantic.errors.PydanticUserError: A non-annotated attribute was detected: "
        "`enabled = True`. All model fields require a type annotation; if `enabled` is not meant "
        "to be a field, you may be able to resolve this error by annotating it as a `ClassVar`"),
    "megatron_tp_overlap": (
        "--tp-comm-overlap fails at start-up",
        "  File \"/workspace/Megatron-LM/megatron/training/initialize.py\", line 216, in "
        "_initialize_tp_communicators\n    raise RuntimeError(\nRuntimeError: Tensor Parallel "
        "Communication/GEMM Overlap optimization needs 'yaml' and 'transformer_engine' packages"),
    "megatron_dist_ckpt": (
        "Converting a llama checkpoint fails",
        "  File \"/workspace/Megatron-LM/megatron/training/arguments.py\", line 559, in "
        "validate_args\n    raise RuntimeError('--use-dist-ckpt is not supported in legacy "
        "models.')\nRuntimeError: --use-dist-ckpt is not supported in legacy models."),
    "horovod_old_api": (
        "pytorch_mnist.py fails",
        "Traceback (most recent call last):\n  File \"pytorch_mnist.py\", line 118, in <module>\n"
        "    hvd.broadcast_object(epoch, root_rank=0)\nAttributeError: module 'horovod.torch' has "
        "no attribute 'broadcast_object'"),
    "colossalai_moved": (
        "Running the OPT example fails",
        "Traceback (most recent call last):\n  File \"train_gemini_opt.py\", line 34, in <module>\n"
        "    from colossalai.zero.init_ctx import ZeroInitContext\nModuleNotFoundError: No module "
        "named 'colossalai.zero.init_ctx'"),
    "flash_attn_sm80": (
        "fine-tuning with flash attention fails in backward",
        "  File \"/opt/conda/lib/python3.9/site-packages/flash_attn/flash_attn_interface.py\", line "
        "42, in _flash_attn_backward\n    _, _, _, softmax_d = flash_attn_cuda.bwd(\nRuntimeError: "
        "Expected is_sm80 || is_sm90 to be true, but got false.  (Could this error message be "
        "improved?  If so, please report an enhancement request to PyTorch.)"),
    "rdzv_join_timeout": (
        "torchrun on 2 nodes times out",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/rendezvous/"
        "dynamic_rendezvous.py\", line 637, in run\n    raise RendezvousTimeoutError()\n"
        "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError"),
    "data_parallel_replica": (
        "AssertionError in replica 1",
        "AssertionError: Caught AssertionError in replica 1 on device 1.\nOriginal Traceback (most "
        "recent call last):\n  File \"/usr/local/lib/python3.8/dist-packages/torch/nn/parallel/"
        "parallel_apply.py\", line 61, in _worker\n    output = module(*input, **kwargs)\n"
        "  File \"/usr/local/lib/python3.8/dist-packages/deepspeed/utils/timer.py\", line 43, in "
        "start\n    assert not self.started_, \"timer has already been started\"\n"
        "AssertionError: timer has already been started"),
    "no_grad_fn": (
        "activation checkpointing fails in the pipeline",
        "  File \"/opt/conda/lib/python3.8/site-packages/deepspeed/runtime/pipe/engine.py\", line "
        "604, in _exec_backward_pass\n    torch.autograd.backward(tensors=(outputs, ), grad_tensors="
        "(grad_tensors, ))\nRuntimeError: element 0 of tensors does not require grad and does not "
        "have a grad_fn"),
    "checkpoint_recompute": (
        "activation checkpointing with FSDP2 fails in backward",
        "[rank30]: torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: Recomputed values "
        "for the following tensors have different metadata than during the forward pass.\n"
        "[rank30]: tensor at position 9:\n[rank30]: saved metadata: {'shape': torch.Size([2, 1, 4127, "
        "128]), 'dtype': torch.bfloat16, 'device': device(type='cuda', index=6)}\n[rank30]: "
        "recomputed metadata: {'shape': torch.Size([2, 1, 4127, 128]), 'dtype': torch.float32, "
        "'device': device(type='cuda', index=6)}"),
    "zero_to_fp32_files": (
        "zero_to_fp32.py fails to convert my model",
        "Processing zero checkpoint './global_step1200'\n  File \"zero_to_fp32.py\", line 94, in "
        "parse_optim_states\nValueError: Expected 1 of '*_optim_states.pt' under './global_step1200' "
        "but found 4 files. Possibly due to an overwrite of an old checkpoint, or a checkpoint "
        "didn't get saved by one or more processes."),
    "ds_optimizer_name": (
        "How do I choose CPU Adam?",
        "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 1224, "
        "in _do_optimizer_sanity_check\n    assert self._is_supported_optimizer(\nAssertionError: "
        "cpu_adam is not a supported DeepSpeed Optimizer"),
    "ds_config_validation": (
        "init_inference fails",
        "  File \"/home/u/.local/lib/python3.8/site-packages/deepspeed/runtime/config_utils.py\", "
        "line 55, in __init__\n    super().__init__(**data)\npydantic.error_wrappers.ValidationError: "
        "3 validation errors for DeepSpeedInferenceConfig\ntp\n  value is not a valid dict "
        "(type=type_error.dict)"),
    "colo_init_context": (
        "ColossalAIStrategy fails in Lightning",
        "  File \"/opt/conda/lib/python3.9/site-packages/colossalai/gemini/chunk/search_utils.py\", "
        "line 54, in classify_params_by_dp_degree\n    assert isinstance(param, ColoParameter), "
        "\"please init model in the ColoInitContext\"\nAssertionError: please init model in the "
        "ColoInitContext"),
    "zero_optim_wrapper": (
        "GPT2-S benchmark fails on one GPU",
        "  File \"/usr/local/lib/python3.9/dist-packages/colossalai/zero/wrapper.py\", line 101, in "
        "zero_optim_wrapper\n    assert hasattr(model, \"_colo_zero_stage\"), \"You should use "
        "`zero_ddp_wrapper` first\"\nAssertionError: You should use `zero_ddp_wrapper` first"),
    # DeepSpeed#5649's, torch 2.1's cpp_extension under setuptools 70
    "setuptools_packaging": (
        "Installation problem with setuptools 70",
        "  Preparing metadata (setup.py) ... error\n      Traceback (most recent call last):\n"
        "        File \"/tmp/pip-install-0pw8/deepspeed_1/op_builder/builder.py\", line 47, in "
        "installed_cuda_version\n          import torch.utils.cpp_extension\n        File "
        "\"/envs/m/lib/python3.10/site-packages/torch/utils/cpp_extension.py\", line 28, in "
        "<module>\n          from pkg_resources import packaging  # type: ignore[attr-defined]\n"
        "      ImportError: cannot import name 'packaging' from 'pkg_resources' "
        "(/envs/m/lib/python3.10/site-packages/pkg_resources/__init__.py)"),
    # DeepSpeed#2931's, NCCL 2.14's IB plugin
    "nccl_ib_retry": (
        "Error when running deepspeed inference on 2 nodes",
        "PHLRR4036:24141:24296 [2] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer "
        "10.226.98.98<48598> with error 12, opcode 0, len 0, vendor err 129\n"
        "PHLRR4036:24141:24296 [2] NCCL INFO include/net.h:35 -> 2\n"
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  NCCL error: unhandled system error, NCCL version 2.14.3"),
    "apex_cuda_mismatch": (
        "Building Apex for Megatron fails",
        "  torch.__version__  = 2.3.0+cu121\n\n  Compiling cuda extensions with\n  nvcc: NVIDIA (R) "
        "Cuda compiler driver\n  Cuda compilation tools, release 12.4, V12.4.131\n  from "
        "/usr/local/cuda/bin\n\n  Traceback (most recent call last):\n    File \"/tmp/apex/setup.py\", "
        "line 178, in <module>\n      check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)\n  "
        "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match "
        "the version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda "
        "12.1.\n  In some cases, a minor-version mismatch will not cause later errors:  "
        "https://github.com/NVIDIA/apex/pull/323#discussion_r287021798.  You can try commenting out "
        "this check (at your own risk)."),
    "nvcc_gcc_too_new": (
        "[BUG] fused_adam cannot be compiled on Fedora 39",
        "[1/3] /usr/local/cuda/bin/nvcc -DTORCH_EXTENSION_NAME=fused_adam -c multi_tensor_adam.cu "
        "-o multi_tensor_adam.cuda.o\nFAILED: multi_tensor_adam.cuda.o\nIn file included from "
        "/usr/local/cuda/include/cuda_runtime.h:82,\n                 from <command-line>:\n"
        "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! "
        "gcc versions later than 12 are not supported! The nvcc flag '-allow-unsupported-compiler' "
        "can be used to override this version check; however, using an unsupported host compiler "
        "may cause compilation failure or incorrect run time execution. Use at your own risk.\n"
        "ninja: build stopped: subcommand failed."),
    "torch_nccl_mismatch": (
        "import torch fails after installing the requirements",
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File "
        "\"/opt/conda/lib/python3.10/site-packages/torch/__init__.py\", line 237, in <module>\n"
        "    from torch._C import *  # noqa: F403\nImportError: /opt/conda/lib/python3.10/"
        "site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister"),
    "nvjitlink_mismatch": (
        "import torch fails on the cluster's login node",
        "  File \"/home/u/venv/lib/python3.10/site-packages/torch/__init__.py\", line 235, in "
        "_load_global_deps\n    raise err\nImportError: /home/u/venv/lib/python3.10/site-packages/"
        "torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
        "__nvJitLinkAddData_12_1, version libnvJitLink.so.12"),
    "megatron_helpers": (
        "pretrain_gpt.py fails while building the datasets",
        " > building train, validation, and test datasets for GPT ...\n  File \"/workspace/"
        "Megatron-LM/megatron/core/datasets/gpt_dataset.py\", line 598, in "
        "_build_document_sample_shuffle_indices\n    from megatron.core.datasets import helpers\n"
        "ImportError: cannot import name 'helpers' from 'megatron.core.datasets' (/workspace/"
        "Megatron-LM/megatron/core/datasets/__init__.py)"),
    "te_pytorch_import": (
        "InstructRetro preprocessing fails at import",
        "  File \"/workspace/Megatron-LM/megatron/core/transformer/custom_layers/"
        "transformer_engine.py\", line 98, in <module>\n    class TELinear(te.pytorch.Linear):\n"
        "AttributeError: module 'transformer_engine' has no attribute 'pytorch'"),
    "te_extensions_renamed": (
        "FP8 example fails at import with Transformer Engine 1.11",
        "  File \"/workspace/fp8_example/train.py\", line 9, in <module>\n    import "
        "transformer_engine_extensions as tex\nModuleNotFoundError: No module named "
        "'transformer_engine_extensions'"),
    "accelerate_no_ds": (
        "accelerate launch with a DeepSpeed config fails at once",
        "$ accelerate launch --config_file ds_zero2.yaml train.py\nTraceback (most recent call "
        "last):\n  File \"/home/u/venv/lib/python3.10/site-packages/accelerate/commands/launch.py\", "
        "line 1037, in deepspeed_launcher\n    raise ImportError(\"DeepSpeed is not installed => run "
        "`pip3 install deepspeed` or build it from source.\")\nImportError: DeepSpeed is not "
        "installed => run `pip3 install deepspeed` or build it from source."),
    "megatron_flash_attn": (
        "--use-flash-attn fails in Megatron-DeepSpeed",
        "  File \"/workspace/Megatron-DeepSpeed/megatron/model/transformer.py\", line 526, in "
        "__init__\n    raise ImportError('FlashAttention is not installed, please install with '\n"
        "ImportError: FlashAttention is not installed, please install with pip install flash-attn"),
    "overlap_param_gather": (
        "pretrain_gpt.py with --overlap-param-gather fails at start",
        "  File \"/workspace/Megatron-LM/megatron/training/arguments.py\", line 487, in "
        "validate_args\n    assert args.use_distributed_optimizer, \\\nAssertionError: "
        "--overlap-param-gather only supported with distributed optimizer"),
    "colossalai_launch": (
        "[BUG]: the llama example fails at launch",
        "  File \"/workspace/ColossalAI/examples/language/llama/benchmark.py\", line 94, in main\n"
        "    colossalai.launch_from_torch(config={})\nTypeError: launch_from_torch() got an "
        "unexpected keyword argument 'config'"),
    "colossalai_windows": (
        "colossalai run fails on Windows 11",
        "PS C:\\work\\ColossalAI\\examples\\tutorial\\auto_parallel> colossalai run --nproc_per_node "
        "1 auto_parallel_with_resnet.py\n'export' is not recognized as an internal or external "
        "command,\noperable program or batch file.\nError: failed to run torchrun --nproc_per_node=1 "
        "--nnodes=1 --node_rank=0 auto_parallel_with_resnet.py on 127.0.0.1, is localhost: True, "
        "exception: Encountered a bad command exit code!"),
    "colossalai_win_path": (
        "[BUG]: No extension found on Windows 11",
        "Traceback (most recent call last):\n  File \"C:\\work\\train.py\", line 21, in <module>\n"
        "    optimizer = HybridAdam(model.parameters(), lr=1e-3)\n  File \"C:\\Users\\u\\miniconda3\\"
        "envs\\colo\\lib\\site-packages\\colossalai\\kernel\\kernel_loader.py\", line 79, in load\n"
        "    raise RuntimeError(\"No extension found\")\nRuntimeError: No extension found"),
    "cuda_fabric_manager": (
        "torch.cuda.is_available() is False on the new H100 node",
        "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:128: UserWarning: CUDA "
        "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
        "before calling NumCudaDevices() that might have already set an error? Error 802: system not "
        "yet initialized (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n  return "
        "torch._C._cuda_getDeviceCount() > 0\nRuntimeError: No CUDA GPUs are available"),
    "cuda_driver_mismatch": (
        "GPUs unusable after the driver update",
        "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\nNVML library "
        "version: 550.90\n$ python -c \"import torch; print(torch.cuda.is_available())\"\n/usr/local/"
        "lib/python3.10/dist-packages/torch/cuda/__init__.py:128: UserWarning: CUDA initialization: "
        "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was "
        "attempted on non supported HW\nFalse"),
    "device_side_assert": (
        "Fine-tuning crashes at the first step",
        "../aten/src/ATen/native/cuda/Indexing.cu:1290: indexSelectLargeIndex: block: [192,0,0], "
        "thread: [96,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n  File \"/opt/conda/lib/"
        "python3.10/site-packages/torch/nn/functional.py\", line 2264, in embedding\nRuntimeError: "
        "CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously "
        "reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging "
        "consider passing CUDA_LAUNCH_BLOCKING=1."),
    "store_wait_clients": (
        "two-node run: rank 0 times out at init",
        "[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/rendezvous.py\", "
        "line 189, in _create_c10d_store\n[rank0]:     return TCPStore(\n[rank0]: torch.distributed."
        "DistStoreError: Timed out after 1801 seconds waiting for clients. 8/16 clients joined."),
    "gloo_loopback": (
        "gloo::IoException on the second node",
        "terminate called after throwing an instance of 'gloo::IoException'\n  what():  [/opt/conda/"
        "conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] "
        "connect [127.0.1.1]:3210: Connection refused\nAborted (core dumped)"),
    "torchrun_sighup": (
        "training stops when my ssh session drops",
        "W0601 10:00:00.121000 140 torch/distributed/elastic/agent/server/api.py:704] Received 1 "
        "death signal, shutting down workers\nW0601 10:00:00.123000 140 torch/distributed/elastic/"
        "multiprocessing/api.py:851] Sending process 141 closing signal SIGHUP\nTraceback (most "
        "recent call last):\n  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/"
        "elastic/multiprocessing/api.py\", line 76, in _terminate_process_handler\n    raise "
        "SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)\n"
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 140 got signal: 1"),
    "ddp_mixed_devices": (
        "DDP refuses the model after adding LoRA",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py\", line "
        "1137, in _log_and_throw\n    raise err_type(err_msg)\nValueError: DistributedDataParallel's "
        "input module must be on the same type of devices, but input module parameters locate in "
        "{'cpu', 'cuda'}."),
    "fsdp_device_id": (
        "FSDP through accelerate fails in prepare on rank 1",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_init_utils.py\", "
        "line 575, in _get_compute_device\n    raise ValueError(\nValueError: Inconsistent compute "
        "device and `device_id` on rank 1: cuda:0 vs cuda:1"),
    "fsdp_offload_moved": (
        "FSDP with CPU offload fails at the first forward",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_runtime_utils.py\", "
        "line 168, in _check_flat_params_on_expected_device\n    raise RuntimeError(\nRuntimeError: "
        "An FSDP-managed module with parameter CPU offloading enabled has parameters on cuda:0. Make "
        "sure to not move the module from CPU when offloading parameters."),
    "zero3_empty_param": (
        "Loading the reward model's weights under ZeRO-3 fails",
        "  File \"/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 2153, in "
        "load_state_dict\nRuntimeError: Error(s) in loading state_dict for RewardModel:\n\tsize "
        "mismatch for v_head.weight: copying a param with shape torch.Size([1, 4096]) from "
        "checkpoint, the shape in current model is torch.Size([0])."),
    "accelerate_logging": (
        "train.py fails before training with accelerate 0.21",
        "  File \"/home/u/train.py\", line 40, in <module>\n    logger.info(\"Loading the dataset\")\n"
        "  File \"/opt/conda/lib/python3.10/site-packages/accelerate/logging.py\", line 60, in log\n"
        "    raise RuntimeError(\nRuntimeError: You must initialize the accelerate state by calling "
        "either `PartialState()` or `Accelerator()` before using the logging utility."),
}

NEAR_MISSES = {
    # a kernel that loads, another problem (``colossalai.kernel.op_builder`` missing is another
    # release's layout: ``colossalai_moved``)
    "colossalai_kernels": "colossalai._C.fused_optim loads, but HybridAdam is slower than AdamW.",
    "no_gpu_visible": "torch.cuda.is_available() is True, but the GPUs are slow.",
    "driver_too_old": "nvidia-smi shows driver 535.104 and CUDA 12.2; training hangs.",
    "collective_mismatch": "I suspect a mismatch between the ranks' batch sizes; the loss differs.",
    "zero_dp_size_changed": "I resumed my checkpoint with a different world size and the loss jumped.",
    "sigbus": "exits with return code = -70 after the evaluation step",
    # an install of Transformer Engine without its JAX part (``te_pytorch_import`` reads the PyTorch one)
    "transformer_engine": "ModuleNotFoundError: No module named 'transformer_engine_jax'",
    # another program not found, not a launcher
    "launcher_not_on_path": "bash: srun: command not found",
    # a question about the option, not the warning
    "te_mpi_bootstrap": "Does --tp-comm-overlap need the MPI bootstrap backend with Transformer "
                        "Engine 1.5?",
    "horovod_extension": "Checking whether extension horovod.torch was built: yes.\n"
                                   "The allreduce is slow on 4 nodes.",
    "horovod_controller": "horovodrun --check-build: [X] MPI [X] Gloo\nThe job hangs at "
                             "hvd.init() on 2 nodes.",
    "torch_cpu_build": "torch 2.3.0+cu121 is compiled with CUDA 12.1; training is slow.",
    "nccl_not_built": "NCCL INFO NCCL version 2.18.1+cuda12.1\nThe package was built in a "
                      "container; init hangs.",
    "libuv_missing": "I set USE_LIBUV=0 and the rendezvous now hangs on the second node.",
    "dist_not_initialized": "torch.distributed.is_initialized() returns False in my "
                            "single-GPU evaluation; is that expected?",
    "horovod_init": "hvd.init() is called first; rank 1 then hangs in the first "
                               "allreduce.",
    # a non-contiguous tensor: another check of the same function
    "nccl_cpu_tensor": "RuntimeError: Tensors must be contiguous",
    "ddp_ready_twice": "I expected DDP to mark each variable ready after its gradient is "
                       "computed; is the order documented?",
    "ddp_no_grad_params": "I froze the vision tower (requires_grad=False) before wrapping the "
                          "model in DistributedDataParallel; the loss does not move.",
    # another feature's incompatibility with the pipeline engine
    "zero_pipeline": "OneBitAdam is incompatible with pipeline parallelism.",
    # a nested no_sync: another check of the same context manager
    "zero_no_sync": "AssertionError: no_sync context manager reentry is unsupported",
    "offload_optimizer": "[INFO] Using client Optimizer as basic optimizer\n"
                                     "ZeRO-Offload of the optimizer to cpu is slow.",
    # a compiler found, another build error
    "msvc_missing": "error: command 'C:\\\\Program Files\\\\cl.exe' failed with exit code 2",
    # Ninja present: a compile step failed under it
    "ninja_missing": "[2/3] c++ -MMD -MF cpu_adam.o.d -c cpu_adam.cpp -o cpu_adam.o\nFAILED: "
                     "cpu_adam.o\nninja: build stopped: subcommand failed.",
    "unsupported_arch": "nvcc fatal   : Value 'c++17' is not defined for option 'std'",
    # the warning every ds_report prints on a machine without libaio, on a hang report
    "libaio_missing": " [WARNING]  async_io requires the dev libaio .so object and headers but "
                      "these were not found.\nasync_io ............... [NO] ....... [NO]\n"
                      "Training hangs at step 0 on 2 nodes.",
    "glibcxx": "ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.32' not found",
    "nccl_header_missing": "NCCL INFO NCCL version 2.18.1 found nccl.h in /usr/include",
    "nccl_too_old": "I read that ncclCommGetAsyncError is used to detect failed communicators.",
    "cuda_library_missing": "OSError: libmpi.so.40: cannot open shared object file: No such "
                            "file or directory",
    "torch_six": "ModuleNotFoundError: No module named 'torch.distributed.fsdp'",
    "numpy_alias": "AttributeError: module 'numpy' has no attribute 'float8_e4m3'",
    "numpy2_abi": "numpy 2.0.1 is installed and training runs, but the loss is NaN.",
    "apex_extensions": "ModuleNotFoundError: No module named 'apex'",
    "cpu_adam_not_built": "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'param_groups'",
    # another CUDA error at run time, not an architecture missing from the build
    "no_kernel_image": "RuntimeError: CUDA error: an illegal memory access was encountered",
    "needs_ampere": "I train in bf16 on A100s with FlashAttention 2 and the loss diverges.",
    "invalid_ordinal": "RuntimeError: CUDA error: invalid device function",
    "deepspeed_slot": "ValueError: No hostfile found and no slots specified; using local GPUs",
    "nccl_no_interface": "NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\nthe run hangs "
                         "after init",
    # a bus error alone: shared memory is one cause among several
    "shared_memory": "Bus error (core dumped)\nrun in a container",
    "rendezvous_timeout": "[Rank 0] Watchdog caught collective operation timeout: "
                          "WorkNCCL(SeqNum=3, OpType=BROADCAST, Timeout(ms)=1800000)",
    "fork_cuda": "RuntimeError: DataLoader worker (pid 123) is killed by signal: Killed.",
    "loss_scale_minimum": "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: "
                          "65536, reducing to 32768",
    # the warning DeepSpeed prints when it accepts the pair: the build goes on
    "cuda_mismatch": "Installed CUDA version 12.3 does not match the version torch was compiled "
                     "with 12.1 but since the APIs are compatible, accepting this combination",
    # a warning printed on machines without a GPU, with the toolkit found
    "cuda_toolkit_missing": "No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'",
    # a symbol of CUDA's own libraries: a link bug of the op, not another torch
    "torch_abi": "ImportError: transformer_inference.so: undefined symbol: curandCreateGenerator",
    # a circular import, often a local file named like the package
    "import_name": "ImportError: cannot import name 'deepspeed' from partially initialized "
                   "module 'deepspeed' (most likely due to a circular import)",
    "launcher_env": "KeyError: 'RANKING_LOSS'\nI exported RANK=0 and WORLD_SIZE=1 myself.",
    # a web server of an inference setup, no rendezvous
    "port_in_use": "ERROR: [Errno 98] error while attempting to bind on address "
                   "('0.0.0.0', 8000): address already in use (uvicorn, gradio demo)",
    "local_rank_arg": "train.py: error: unrecognized arguments: --lr_warmup 100",
    "duplicate_gpu": "I detected a duplicate entry in the GPU list of my hostfile.",
    "ddp_unused": "RuntimeError: Expected all tensors to be on the same device, but found at "
                  "least two devices, cuda:0 and cpu!",
    # an ordinary shape bug, no ZeRO-3
    "zero3_partitioned": "RuntimeError: 'weight' must be 2-D\nplain DDP, no DeepSpeed",
    # the watchdog took the process down, not the OOM killer
    "sigkill": "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3424, "
               "OpType=ALLGATHER, Timeout(ms)=1800000)\nERROR:torch.distributed.elastic."
               "multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 12076)",
    "not_divisible": "Note that the hidden size is not divisible by the number of heads in my "
                     "custom config, is that allowed?",
    "launcher_missing": "pdsh is installed on both nodes; the job hangs after cmd = pdsh "
                        "-S -f 1024 -w worker-0,worker-1",
    # the warning of every single-node run: no hostfile is fine
    "hostfile_format": "[WARNING] [runner.py:202:fetch_hostfile] Unable to find hostfile, will "
                       "proceed with training with local resources only.",
    "ssh_check": "ssh worker-1 hostname works without a password; NCCL then hangs on 2 nodes.",
    # another shape error, not a checkpoint's
    "size_mismatch": "RuntimeError: The size of tensor a (4096) must match the size of tensor b "
                     "(512) at non-singleton dimension 1",
    # a head absent from the checkpoint, both sides wrapped alike: not the prefix
    "state_dict_prefix": "RuntimeError: Error(s) in loading state_dict for DDP:\n\tMissing "
                         "key(s) in state_dict: \"module.head.weight\", \"module.head.bias\". ",
    "zero3_device_map": "I load with device_map='auto' for inference and train with ZeRO-3 in "
                        "another script; the loss is NaN.",
    # quantized weights offloaded to CPU or disk: another fix (enough GPU memory)
    "device_map_parallel": "ValueError: You can't train a model that has been loaded in "
                           "8-bit or 4-bit precision with CPU or disk offload.",
    # DeepSpeed's own batch check (a dropped candidate)
    "accelerate_ds_batch": "AssertionError: Check batch related parameters. train_batch_size is "
                           "not equal to micro_batch_per_gpu * gradient_acc_step * world_size "
                           "16 != 2 * 1 * 4",
    "shardformer_policy": "NotImplementedError: seq_parallel_mode=ring is not supported!",
    "optimizer_no_params": "ValueError: some parameters appear in more than one parameter group",
    # the loss scaler's overflow message: a diverging loss, not fp16 parameters
    "unscale_fp16": "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to "
                    "32768.0",
    # mpi4py missing in an MPI job of its own (Horovod), without DeepSpeed's MPI discovery
    "mpi_discovery": "ModuleNotFoundError: No module named 'mpi4py'\nhorovodrun -np 4 python "
                     "train.py",
    # the extension built: another problem
    "grad_accum_fusion": "fused_weight_gradient_mlp_cuda module is built and imports; the loss "
                         "diverges after 2000 steps",
    "horovod_ssh": "ssh server2 true works without a password; horovodrun then hangs at "
                   "hvd.init() on 2 hosts.",
    "ddp_device_ids": "I pass device_ids=[local_rank] to DistributedDataParallel and the model "
                      "is on cuda:1; training is slower than on one GPU.",
    "checkpoint_device": "I am attempting to load the checkpoint on a CUDA device with "
                         "map_location='cuda:0'; it takes 10 minutes.",
    # the warning of PyTorch 2.4 and 2.5 before the default changed: the load goes on
    "weights_only": "FutureWarning: You are using `torch.load` with `weights_only=False` (the "
                    "current default value), which uses the default pickle module implicitly.",
    "ds_config_missing": "I start it with deepspeed train.py --deepspeed --deepspeed_config "
                         "ds_config.json and the loss is NaN.",
    # the deprecated --deepscale_config given beside --deepspeed_config: another fix
    "ds_config_twice": "AssertionError: Not sure how to proceed, we were given both a "
                       "deepscale_config and deepspeed_config",
    "fp16_and_bf16": "My config has fp16 and bf16 sections, bf16 enabled; the fp16 modes are "
                     "off and training is slow.",
    # gradient_accumulation_steps set to 0: another value of the config
    "micro_batch_zero": "AssertionError: Gradient accumulation steps: 0 has to be greater than 0",
    # stage 3 runs without an optimizer
    "zero_needs_optimizer": "Is it true that zero stage 3 requires an optimizer? My inference "
                            "script has none.",
    "cpu_optimizer_on_gpu": "With offload_optimizer the CPUAdam param is on cpu as expected; "
                            "each step takes 20 s.",
    "ds_config_mismatch": "All my DeepSpeed config values are 'auto' and the Trainer fills "
                          "them; the loss is NaN.",
    "fsdp_wrap_class": "fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer\nThe transformer "
                       "layer class is found and wrapped; memory use is higher than expected.",
    # an integer parameter or buffer: another check of the same function
    "fsdp_uniform_dtype": "ValueError: Cannot flatten integer dtype tensors",
    # the release that only warned: no exception's name before it
    "cuda_max_connections": "UserWarning: Using sequence parallelism requires setting the "
                            "environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1",
    "bf16_unsupported": "I train with bf16 mixed precision on A100s; the loss is NaN after "
                        "2000 steps.",
    # a quantised dtype, not fp16
    "ds_fp16_unsupported": "ValueError: Data type torch.int8 is not supported by cuda "
                           "accelerator",
    "hostname_i": "MASTER_ADDR=$(hostname -I | awk '{print $1}') deepspeed --hostfile hostfile "
                  "train.py\nthe job hangs after NCCL INFO Bootstrap",
    # PyTorch's own allocation (the model's), not NCCL's buffers
    "nccl_cuda_oom": "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 "
                     "GiB (GPU 0; 79.15 GiB total capacity)",
    # the per-address warning of a run that then connects
    "store_connect": "[W socket.cpp:697] [c10d] The client socket has failed to connect to "
                     "[localhost]:29500 (errno: 97 - Address family not supported by protocol)."
                     "\nTraining starts; epoch 1 loss 2.31",
    "dist_init_twice": "Is it safe to initialize the default process group twice in one "
                       "notebook? I call destroy_process_group between the runs.",
    "zero_untested_optim": "\"zero_allow_untested_optimizer\": true is in my config and "
                           "training with Lion runs, but the loss plateaus.",
    # the other way round: a DummyOptim without the config's optimizer
    "accelerate_ds_optim": "ValueError: You cannot create a `DummyOptim` without specifying "
                           "an optimizer in the config file.",
    "megatron_ckpt_args": "The num_layers value from the checkpoint's config is 24; I pass "
                          "--num-layers 24 too and the loss is high after loading.",
    # another check of the same function
    "fsdp_uniform_grad": "ValueError: Must flatten tensors on the same device but got "
                         "both cuda:0 and cpu",
    # an unknown precision: another check
    "colossal_zero_fp32": "AssertionError: LowLevelZeroPlugin only supports ['fp16', "
                          "'bf16', 'fp32'] training",
    # the virtual pipeline's check: another split
    "megatron_layers_pp": "AssertionError: Number of layers per pipeline stage must be divisible "
                          "by number of layers per virtual pipeline stage",
    # a sentence that says the same, not the check's message
    "accelerate_missing": "The docs say using the Trainer with PyTorch requires "
                          "accelerate; I have accelerate 0.30.1 and training hangs.",
    # another refusal of the same check: an installed release too old
    "flash_attn_missing": "ImportError: FlashAttention2 has been toggled on, but it cannot be used "
                          "due to the following error: FlashAttention2 requires at least version "
                          "`2.3.3`.",
    # the limit raised already, a question about it
    "too_many_open_files": "I set ulimit -n 1048576 to avoid too many open files; the DataLoader "
                           "still hangs with 16 workers.",
    "lightning_notebook": "Is strategy='ddp_notebook' compatible with an interactive "
                          "environment such as Colab? Training is slow.",
    # a custom kernel's own check, no collective
    "nccl_not_contiguous": "  File \"/workspace/kernels/fused_rmsnorm.py\", line 41, in forward\n"
                           "    assert x.is_contiguous(), \"Tensors must be contiguous\"\n"
                           "AssertionError: Tensors must be contiguous",
    # DDP's own private method, from another PyTorch release
    "ddp_wrapper_attr": "AttributeError: 'DistributedDataParallel' object has no attribute "
                        "'_sync_params'",
    # a file of zeros, not text
    "not_weights_file": "_pickle.UnpicklingError: invalid load key, '\\x00'.",
    # another reader's error: a file saved by another tool, not cut short
    "checkpoint_truncated": "RuntimeError: PytorchStreamReader failed locating file data.pkl: "
                            "file not found",
    "pipeline_train_batch": "engine.train_batch() runs, but pipeline mode is slower than "
                            "ZeRO-1 on 8 GPUs.",
    # another check of the same state
    "accelerate_reinit": "ValueError: Please make sure to properly initialize your "
                         "accelerator via `accelerator = Accelerator()` before using any "
                         "functionality from the `accelerate` library.",
    "trainer_no_loss": "The model did not return a loss of the same scale as in the paper: 2.9 "
                       "at step 1000.",
    # another check of the same function: a method that cannot be trained at all
    "trainer_quantized": "ValueError: The model you are trying to fine-tune is quantized with "
                         "QuantizationMethod.GPTQ but that quantization method do not support "
                         "training.",
    "inference_tensor": "Inplace update to a normal tensor outside torch.no_grad() works; the "
                        "loss is NaN after 300 steps.",
    # the warning of a plain install: no op is pre-compiled, the install goes on
    "build_without_torch": "[WARNING] Unable to import torch, pre-compiling ops will be disabled.\n"
                           "Successfully installed deepspeed-0.14.2",
    # a JIT build that worked
    "jit_build_failed": "Building extension module fused_adam...\nAllowing ninja to set a default "
                        "number of workers...\nLoading extension module fused_adam...\nTime to "
                        "load fused_adam op: 0.51 seconds",
    # a submodule missing from the installed package: another release, not a shadowing file
    "shadowed_package": "ModuleNotFoundError: No module named 'deepspeed.launcher'",
    # another library's pydantic-1 config: not DeepSpeed's pair of keys
    "ds_pydantic2": "UserWarning: Valid config keys have changed in V2:\n* 'orm_mode' has been "
                    "renamed to 'from_attributes'\nFile \"/opt/conda/deepspeed/runtime/engine.py\"",
    # the older KeyError: a model type missing, or any other key
    "unknown_model_type": "KeyError: 'qwen2'",
    "trust_remote_code": "I pass trust_remote_code=True to from_pretrained and the model loads; "
                         "generation is slow on 2 GPUs.",
    "accel_for_device_map": "I load with device_map='auto' and accelerate 0.30.1 is installed; "
                            "generation is slow on 2 GPUs.",
    "tokenizer_deps": "sentencepiece 0.2.0 is installed and the LLaMA tokenizer loads; the loss is "
                      "NaN after 100 steps.",
    # another class: a Transformers release older than the model
    "llama_tokenizer_name": "ValueError: Tokenizer class Qwen2Tokenizer does not exist or is not "
                            "currently imported.",
    # another framework's keyword, no argument named with its successor
    "megatron_old_arg": "In v0.10.0 the `save_mp_checkpoint_path` keyword is no longer valid; how "
                        "do I pre-shard a model?",
    "mpi_not_built": "torch.distributed.is_mpi_available() returns True in my source build; "
                     "mpirun -np 4 hangs at the first allreduce.",
    "openmpi_root": "mpirun --allow-run-as-root -np 4 python train.py\nThe job hangs after the "
                    "first allreduce on 2 nodes.",
    "openmpi_slots": "======================   ALLOCATED NODES   ======================\n"
                     "node1: slots=8 max_slots=0 slots_inuse=0 state=UP\nThe job starts, but rank "
                     "3 is slow.",
    # the remote command's own failure, after a login that worked
    "colossalai_run_ssh": "Error: failed to run torchrun --nproc_per_node=8 train.py on 10.0.0.2, "
                          "is localhost: False, exception: Encountered a bad command exit code!",
    "megatron_local_rank": "Is the local rank expected to be rank % device count on every node? My "
                           "nodes have 8 GPUs each.",
    "lightning_gpu_ids": "Trainer(devices=4) uses GPUs [0, 1, 2, 3]; training is 2x slower than on "
                         "one GPU.",
    # Gloo's look-up of a host name, not of an interface
    "gloo_ifname": "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/"
                   "device.cc:203] rv != -1. Unable to find address for node1; bind(2) for all "
                   "addresses failed with: Cannot assign requested address",
    "dist_init_required": "I call deepspeed.initialize(..., dist_init_required=True) and it sets "
                          "up NCCL; training is slow on 2 nodes.",
    "horovod_mismatch": "Mismatched allreduce results between ranks? The loss differs per rank "
                        "after 100 steps.",
    "horovod_accumulation": "backward_passes_per_step=40 seems to have no effect: 1 batch/sec "
                            "with Horovod.",
    "horovod_shut_down": "hvd.shutdown() is called at the end of training; rank 0 then hangs.",
    "megatron_data_prefix": " > building dataset index ...\n    number of documents: 8013769\n > "
                            "finished creating indexed dataset in 4.3 seconds\nThe loss is NaN "
                            "after 100 steps.",
    "ds_onebit_zero": "OneBitAdam with ZeRO stage 0 trains, but the loss diverges after 1000 "
                      "steps.",
    # the other refusal of the same check: no policy exists for the model
    "autotp_kernel_inject": "AssertionError: AutoTP not supported for model. Please provide "
                            "policy.",
    # the header compiles; the question is another one
    "cub_missing": "#include <cub/cub.cuh> compiles fine here; the MoE kernel is slow on A100.",
    # pydantic 2's refusal of another package's model, no DeepSpeed code in the report
    "ds_pydantic2_field": "pydantic.errors.PydanticUserError: A non-annotated attribute was "
                          "detected: `retries = 3`.\n  File \"/opt/app/settings.py\", line 4",
    # the raising code quoted in a question, not the error raised
    "megatron_tp_overlap": "    except ImportError:\n       raise RuntimeError(\"Tensor Parallel "
                           "Communication/GEMM Overlap optimization needs 'yaml' and \"",
    "megatron_dist_ckpt": "Does --use-dist-ckpt work with the Megatron-Core GPT model at TP 4?",
    # the submodule not imported, not a function the release lacks
    "horovod_old_api": "AttributeError: module 'horovod' has no attribute 'torch'",
    # the package itself not installed
    "colossalai_moved": "ModuleNotFoundError: No module named 'colossalai'",
    # FlashAttention's other check: Turing or Ampere at all
    "flash_attn_sm80": "RuntimeError: Expected is_sm8x || is_sm75 to be true, but got false.",
    # another rendezvous error: the rendezvous was closed, not timed out
    "rdzv_join_timeout": "torch.distributed.elastic.rendezvous.api.RendezvousClosedError",
    # a DataLoader worker's exception, wrapped alike
    "data_parallel_replica": "RuntimeError: Caught RuntimeError in DataLoader worker process 0.",
    # another autograd error: a second backward through a freed graph
    "no_grad_fn": "RuntimeError: Trying to backward through the graph a second time (or directly "
                  "access saved tensors after they have already been freed).",
    # checkpointing's other check: a different number of saved tensors
    "checkpoint_recompute": "torch.utils.checkpoint.CheckpointError: torch.utils.checkpoint: A "
                            "different number of tensors was saved during the original forward "
                            "and recomputation.",
    # the script's log when the count agrees
    "zero_to_fp32_files": "Processing zero checkpoint './global_step100'\nDetected checkpoint of "
                          "type zero stage 2, world_size: 4",
    # DeepSpeed's other check of the optimizer: a known one without dynamic loss scaling
    "ds_optimizer_name": "AssertionError: DeepSpeed LAMB optimizer requires dynamic loss scaling",
    # another package's pydantic model
    "ds_config_validation": "pydantic.error_wrappers.ValidationError: 1 validation error for "
                            "Settings\nport\n  value is not a valid integer",
    "colo_init_context": "We build the model in ColoInitContext and training is slow on 8 GPUs.",
    "zero_optim_wrapper": "Should I call zero_model_wrapper before zero_optim_wrapper with "
                          "stage 3?",
    # setuptools 82 has no pkg_resources at all: another fix than "setuptools<70"
    "setuptools_packaging": "ModuleNotFoundError: No module named 'pkg_resources'",
    # the flush of the requests after an earlier error: not the retries running out
    "nccl_ib_retry": "NCCL WARN NET/IB : Got completion from peer 10.0.0.2<33420> with error 5, "
                     "opcode 0, len 0, vendor err 249",
    # the compile's own log when the toolkit matches: another error below it
    "apex_cuda_mismatch": "Compiling cuda extensions with\nCuda compilation tools, release 12.1, "
                          "V12.1.105\nfrom /usr/local/cuda/bin\nThe build then stops in "
                          "multi_tensor_adam.cu.",
    # clang's own refusal: another compiler, another fix
    "nvcc_gcc_too_new": "error: -- unsupported clang version! clang version must be less than 16 "
                        "and greater than 3.2",
    # a symbol of the extension's own code, not NCCL's in PyTorch's library
    "torch_nccl_mismatch": "ImportError: /opt/conda/lib/python3.10/site-packages/deep_ep_cpp.so: "
                           "undefined symbol: ncclGetUniqueId",
    "nvjitlink_mismatch": "nvidia-nvjitlink-cu12 12.4.127 is installed; the cuSPARSE kernels are "
                          "slow on H100.",
    # the helpers compiled at start: the run goes on
    "megatron_helpers": "> compiling dataset index builder ...\nmake: Entering directory "
                        "'/workspace/Megatron-LM/megatron/core/datasets'\nmake: Nothing to be done "
                        "for 'default'.\n>>> done with dataset index builder.",
    # an attribute that an older Transformer Engine release lacks: its PyTorch part imported
    "te_pytorch_import": "AttributeError: module 'transformer_engine.pytorch' has no attribute "
                         "'Float8Tensor'",
    # Transformer Engine 1.7's own build of the module: found, not missing
    "te_extensions_renamed": "running build_ext\nbuilding 'transformer_engine_extensions' "
                             "extension\ncreating build/temp.linux-x86_64-cpython-310",
    "accelerate_no_ds": "DeepSpeed 0.14.2 is installed and accelerate launch --use_deepspeed "
                        "starts; the loss is NaN after 100 steps.",
    # the same words in another project's code, no Megatron
    "megatron_flash_attn": "ImportError: FlashAttention is not installed, please install with pip "
                           "install flash-attn\n  File \"/opt/app/vision_encoder.py\", line 12",
    # the legacy models' refusal: another fix
    "overlap_param_gather": "AssertionError: --overlap-param-gather only supported with MCore "
                            "models",
    # another package's launch, no Colossal-AI
    "colossalai_launch": "TypeError: launch() got an unexpected keyword argument 'config'\n  File "
                         "\"/opt/conda/lib/python3.10/site-packages/jupyter_client/launcher.py\"",
    # Colossal-AI under WSL2: a Linux path and shell
    "colossalai_windows": "export CUDA_VISIBLE_DEVICES=0,1\ncolossalai run --nproc_per_node 2 "
                          "/mnt/c/work/ColossalAI/examples/train.py\nThe loss is NaN under WSL2.",
    # a Windows folder merely named like the package, the package itself not in the path
    "colossalai_win_path": "  File \"C:\\Users\\u\\colossalai_runs\\train.py\", line 3, in "
                           "<module>\n    import colossalai",
    # another CUDA error behind the same warning: which one, unsaid
    "cuda_fabric_manager": "UserWarning: CUDA initialization: Unexpected error from "
                           "cudaGetDeviceCount(). Did you run some cuda functions before calling "
                           "NumCudaDevices() that might have already set an error? Error 999: "
                           "unknown error",
    # NVML in a container after a systemd reload: another cause
    "cuda_driver_mismatch": "Failed to initialize NVML: Unknown Error",
    # the hint printed beside other CUDA errors
    "device_side_assert": "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "store_wait_clients": "TCPStore server listening on 0.0.0.0:29500; 16/16 clients joined in 4 "
                          "seconds, then training hangs at step 0.",
    # a real address refused: the peer down or a firewall, not the loopback
    "gloo_loopback": "connect [10.0.0.2]:3210: Connection refused",
    # SIGTERM from a scheduler: another sender
    "torchrun_sighup": "torch.distributed.elastic.multiprocessing.api.SignalException: Process "
                       "17912 got signal: 15",
    "ddp_mixed_devices": "All parameters are on the same type of devices (cuda) and DDP trains, "
                         "but 2x slower than one GPU.",
    # FSDP's other device check: a model spread over several GPUs
    "fsdp_device_id": "ValueError: FSDP only supports single device modules but got params on "
                      "{device(type='cuda', index=0), device(type='cuda', index=1)}",
    # the other branch of the same check: offload off, the module left on the CPU
    "fsdp_offload_moved": "RuntimeError: An FSDP-managed module unexpectedly has parameters on "
                          "cpu. Make sure to move the module to cuda:0 before training.",
    "zero3_empty_param": "torch.Size([0]) is the shape of the last batch my data loader returns; "
                         "the loss is NaN there.",
    "accelerate_logging": "get_logger(__name__) is called after Accelerator() is created; only rank "
                          "0 prints.",
}


@pytest.mark.parametrize("diagnosis_id", sorted(LOGS))
def test_each_signature_is_recognised_in_a_long_messy_log(diagnosis_id: str) -> None:
    title, log = LOGS[diagnosis_id]
    assert ids(report(title, log)) == [diagnosis_id]


OTHER_SPELLINGS = [
    ("ninja_missing", "[WARNING] Unable to JIT load the fused_adam op due to ninja not being "
                      "installed."),
    ("libaio_missing", "[WARNING] Unable to JIT load the async_io op due to it not being "
                       "compatible due to hardware/software issue."),
    ("libaio_missing", "Installing deepspeed 0.11.0 on Ubuntu fails with an async_io error"),
    ("sigbus", "root:failed (exitcode: -7) local_rank: 0 (pid: 40) of binary: /usr/bin/python\n"
               "  exitcode  : -7 (pid: 40)\n  error_file: <N/A>\n  traceback : Signal 7 (SIGBUS) "
               "received by PID 40"),
    ("sigkill", "  exitcode  : -9 (pid: 41)\n  traceback : Signal 9 (SIGKILL) received by PID 41"),
    # the message before Horovod 0.20, without the path
    ("horovod_extension", "ImportError: Extension horovod.torch has not been built.  "
                                    "If this is not expected, reinstall Horovod with "
                                    "HOROVOD_WITH_PYTORCH=1 to debug the build error."),
    ("horovod_controller", "ValueError: Gloo support has not been built.  If this is not "
                              "expected, ensure CMake is installed and reinstall Horovod with "
                              "HOROVOD_WITH_GLOO=1 to debug the build error."),
    ("horovod_controller", "ValueError: Horovod has not been built with MPI support. Ensure "
                              "MPI is installed and reinstall Horovod with HOROVOD_WITH_MPI=1 "
                              "to debug the build error."),
    # PyTorch 2.4 and 2.5 spelled it "build"
    ("libuv_missing", "RuntimeError: use_libuv was requested but PyTorch was build without "
                      "libuv support"),
    ("dist_not_initialized", "RuntimeError: Default process group has not been initialized, "
                             "please make sure to call init_process_group."),
    ("dist_not_initialized", "AssertionError: DeepSpeed backend not set, please initialize it "
                             "using init_process_group()"),
    # PyTorch 2: a CPU tensor in a group whose only backend is NCCL
    ("nccl_cpu_tensor", "[rank1]: RuntimeError: No backend type associated with device type "
                        "cpu"),
    ("nccl_not_built", "RuntimeError: Distributed package doesn’t have NCCL built in"),
    # before DeepSpeed 0.8, logged before the parser's own ValueError
    ("hostfile_format", "[ERROR] [runner.py:150:fetch_hostfile] Hostfile is not formatted "
                        "correctly, unable to proceed with training.\nValueError: not enough "
                        "values to unpack (expected 2, got 1)"),
    ("hostfile_format", "ValueError: Hostfile contains multiple entries for worker-1, unable to "
                        "proceed with launching"),
    # before 0.10.2 the check ran the command as a string through the shell
    ("ssh_check", "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no "
                  "192.168.3.100 hostname' returned non-zero exit status 255."),
    # a rewritten report wraps the line
    ("size_mismatch", "\tsize mismatch for transformer.wte.weight: copying a param \nwith shape "
                      "torch.Size([50257, 768]) from checkpoint, the shape in current model is "
                      "torch.Size([50304, 768])."),
    # the other way round: a wrapped model loading unwrapped weights
    ("state_dict_prefix", "Missing key(s) in state_dict: \"module.fc.weight\", \"module.fc.bias\"."
                          " \n\tUnexpected key(s) in state_dict: \"fc.weight\", \"fc.bias\". "),
    ("state_dict_prefix", "Missing key(s) in state_dict: \"layers.0.weight\". Unexpected key(s) in"
                          " state_dict: \"_orig_mod.layers.0.weight\". "),
    # Transformers 5
    ("zero3_device_map", "ValueError: DeepSpeed Zero-3 is not compatible with passing a "
                         "`device_map`."),
    # a quantized model (before Accelerate 1.0 the message says "8-bit precision" only)
    ("device_map_parallel", "ValueError: You can't train a model that has been loaded in "
                            "8-bit precision on a different device than the one you're "
                            "training on."),
    ("device_map_parallel", "ValueError: You can't train a model that has been loaded in "
                            "8-bit or 4-bit precision on multiple devices in any distributed "
                            "mode."),
    # Accelerate before 0.26, and a data loader built with a batch sampler
    ("accelerate_ds_batch", "ValueError: When using DeepSpeed `accelerate.prepare()` requires you "
                            "to pass at least one of training or evaluation dataloaders"),
    ("accelerate_ds_batch", "ValueError: At least one of the dataloaders passed to "
                            "`accelerate.prepare()` has `None` as batch size. Please set an "
                            "integer value in `train_micro_batch_size_per_gpu`"),
    # Colossal-AI before 0.3.2
    ("shardformer_policy", "NotImplementedError: Auto policy for BaichuanForCausalLM is not "
                           "implemented\n. Supported models are ['transformers.models.bert']"),
    # DeepSpeed before 0.7
    # the traceback alone, without DeepSpeed's INFO line
    ("mpi_discovery", "  File \"deepspeed/comm/comm.py\", line 684, in mpi_discovery\n"
                      "    from mpi4py import MPI\nModuleNotFoundError: No module named 'mpi4py'"),
    ("mpi_discovery", "[INFO] [distributed.py:36:init_distributed] Not using the DeepSpeed or "
                      "torch.distributed launchers, attempting to detect MPI environment...\n"
                      "ModuleNotFoundError: No module named 'mpi4py'"),
    # a rewritten title, and a line wrapped by the terminal
    ("grad_accum_fusion", "Getting \"...but the custom CUDA extension fused_weight_gradient_mlp_"
                          "cuda module is not found\""),
    ("grad_accum_fusion", "RuntimeError: ... the custom CUDA extension fused_weight_gradient_mlp_"
                          "cuda\nmodule is not found. To use gradient_accumulation_fusion you "
                          "must install APEX"),
    # before Horovod 0.20 the check printed this and exited
    ("horovod_ssh", "ssh not successful for host 10.0.0.2:\nssh: connect to host 10.0.0.2 port "
                    "22: Connection refused"),
    # PyTorch 1.x, and a model split over two GPUs
    ("ddp_device_ids", "ValueError: DistributedDataParallel device_ids and output_device "
                       "arguments only work with single-device GPU modules, but got device_ids "
                       "[0], output_device 0, and module parameters {device(type='cuda', "
                       "index=0), device(type='cuda', index=1)}."),
    ("checkpoint_device", "[rank3]: RuntimeError: Attempting to deserialize object on CUDA device "
                          "3 but torch.cuda.device_count() is 1. Please use torch.load with "
                          "map_location to map your storages to an existing device."),
    # before PyTorch 2.6, with weights_only=True passed
    ("weights_only", "_pickle.UnpicklingError: Weights only load failed. Re-running `torch.load` "
                     "with `weights_only` set to `False` will likely succeed, but it can result "
                     "in arbitrary code execution.Do it only if you get the file from a trusted "
                     "source. WeightsUnpickler error: Unsupported class numpy.core.multiarray."
                     "_reconstruct"),
    ("ds_config_missing", "[rank1]: AssertionError: DeepSpeed requires --deepspeed_config to "
                          "specify configuration file"),
    ("ds_config_twice", "[rank0]: AssertionError: Not sure how to proceed, we were given "
                        "deepspeed configs in the deepspeed arguments and deepspeed.initialize() "
                        "function call"),
    ("fp16_and_bf16", "[rank0]: AssertionError: bfloat16 and fp16 modes cannot be "
                      "simultaneously enabled"),
    ("micro_batch_zero", "[rank7]: AssertionError: Micro batch size per gpu: 0 has to be greater "
                         "than 0"),
    ("zero_needs_optimizer", "AssertionError: zero stage 1 requires an optimizer"),
    ("cpu_optimizer_on_gpu", "AssertionError: CPULion param is on cuda:3 and must be 'cpu', make "
                             "sure you enabled 'offload_optimizer': 'cpu' in your ZeRO config."),
    # Accelerate's own check of its settings
    ("ds_config_mismatch", "ValueError: Please correct the following DeepSpeed config values "
                           "that mismatch kwargs  values:\n- ds gradient_accumulation_steps=1 vs "
                           "arg gradient_accumulation_steps=2\nThe easiest method is to set "
                           "these DeepSpeed config values to 'auto'."),
    # Accelerate and Transformers before the class was named in the message
    ("fsdp_wrap_class", "Exception: Could not find the transformer layer class to wrap in the "
                        "model."),
    ("fsdp_uniform_dtype", "[rank1]: ValueError: Must flatten tensors with uniform dtype but got "
                           "torch.float16 and torch.float32"),
    # the first unexpected key is not a prefixed one (AveragedModel's ``n_averaged``), the rest
    # are the missing ones with ``module.``
    ("state_dict_prefix", "Missing key(s) in state_dict: \"conv1.weight\", \"bn1.weight\", "
                          "\"bn1.bias\", \"fc.weight\". \n\tUnexpected key(s) in state_dict: "
                          "\"n_averaged\", \"module.conv1.weight\", \"module.bn1.weight\", "
                          "\"module.bn1.bias\", \"module.fc.weight\". "),
    # DeepSpeed's checks of its own ssh command, with a port
    ("ssh_check", "subprocess.CalledProcessError: Command '['ssh', '-o', "
                  "'PasswordAuthentication=no', '-p', '2222', 'worker-1', 'hostname']' returned "
                  "non-zero exit status 255."),
    # Megatron-LM from late 2022 to core 0.11, a RuntimeError
    ("cuda_max_connections", "RuntimeError: Using async gradient all reduce requires setting "
                             "the environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1"),
    # Accelerate, DeepSpeed's training and inference engines
    ("bf16_unsupported", "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a "
                         "supported device."),
    ("bf16_unsupported", "[rank0]: ValueError: Type bf16 is not supported on your device."),
    ("bf16_unsupported", "ValueError: Data type torch.bfloat16 is not supported by cuda "
                         "accelerator"),
    # Transformers 5
    ("bf16_unsupported", "ValueError: Your setup doesn't support bf16/gpu. You need to assign "
                         "use_cpu if you want to train the model on CPU. You need Ampere+ GPU "
                         "with cuda>=11.0."),
    ("ds_fp16_unsupported", "[rank1]: ValueError: Type fp16 is not supported on your device."),
    # the inference engine from 0.12.6 to 0.15.1, the raise line alone
    ("ds_fp16_unsupported", "    raise ValueError(\"Type fp16 is not supported.\")"),
    # MPI discovery: the command as a string (before 0.15.2), and the launcher before 0.8
    ("hostname_i", "subprocess.CalledProcessError: Command '['hostname -I']' returned non-zero "
                   "exit status 64."),
    ("hostname_i", "subprocess.CalledProcessError: Command '['ssh node1 hostname -I']' returned "
                   "non-zero exit status 255."),
    # the driver's API (cuMem), with the error's number
    ("nccl_cuda_oom", "[rank1]: Last error:\n[rank1]: Cuda failure 2 'out of memory'"),
    ("store_connect", "torch.distributed.DistNetworkError: The client socket has failed to "
                      "connect to any network address of (node-0, 29500)."),
    # PyTorch 1.x
    ("dist_init_twice", "RuntimeError: trying to initialize the default process group twice!"),
    ("accelerate_ds_optim", "ValueError: You cannot specify a scheduler in the config file "
                            "and in the code at the same time. Please remove the scheduler "
                            "from the config file or create "
                            "`accelerate.utils.DummyScheduler` in the code."),
    ("megatron_ckpt_args", "[rank3]: AssertionError: padded_vocab_size value from checkpoint "
                           "(50304) is not equal to the input argument value (50432)."),
    # PyTorch 1.12 to 2.0, and a rewritten report without the backticks
    ("fsdp_uniform_grad", "ValueError: `FlatParameter` requires uniform "
                          "`requires_grad`"),
    ("fsdp_uniform_grad", "ValueError: FlatParameter requires uniform requires_grad"),
    # the other spellings since 2021, and Megatron-Core's own
    ("megatron_layers_pp", "AssertionError: number of layers should be divisible by the "
                           "pipeline parallel size"),
    ("megatron_layers_pp", "AssertionError: number of layers of the model must be divisible "
                           "pipeline model parallel size"),
    ("megatron_layers_pp", "AssertionError: num_layers should be divisible by "
                           "pipeline_model_parallel_size"),
    # Transformers 5, and Transformers 4.29 (no version in the message)
    ("flash_attn_missing", "ImportError: FlashAttention2 has been toggled on, but it cannot be "
                           "used due to the following error: the package for FlashAttention2 "
                           "doesn't seem to be installed."),
    ("accelerate_missing", "ImportError: Using the `Trainer` with `PyTorch` requires "
                           "`accelerate`: Run `pip install --upgrade accelerate`"),
    # the OS's own, and the descriptor dropped in transit
    ("too_many_open_files", "OSError: [Errno 24] Too many open files: '/tmp/pymp-k2x9/"
                            "listener-abc'"),
    ("too_many_open_files", "[rank3]: RuntimeError: received 0 items of ancdata"),
    # Fabric, with a strategy object
    ("lightning_notebook", "RuntimeError: `Fabric(strategy=<lightning.fabric.strategies."
                           "deepspeed.DeepSpeedStrategy object at 0x7f3a2c1d0e50>)` is not "
                           "compatible with an interactive environment. Run your code as a "
                           "script, or choose one of the compatible strategies: "
                           "`Fabric(strategy='dp'|'ddp_notebook')`."),
    # PyTorch 1.6 and 1.7, DataParallel
    ("ddp_wrapper_attr", "torch.nn.modules.module.ModuleAttributeError: 'DataParallel' object "
                         "has no attribute 'config'"),
    # safetensors 0.6 on, a git-lfs pointer read by pickle, Transformers 4.x's own check
    ("not_weights_file", "safetensors_rust.SafetensorError: Error while deserializing header: "
                         "header too large"),
    ("not_weights_file", "_pickle.UnpicklingError: invalid load key, 'v'."),
    ("not_weights_file", "OSError: You seem to have cloned a repository without having git-lfs "
                         "installed. Please install git-lfs and run `git lfs install` followed by "
                         "`git lfs pull` in the folder you cloned."),
    # PyTorch 2.6's default weights-only load of a git-lfs pointer ("v" is 118), which is no
    # object weights_only refuses
    ("not_weights_file", "_pickle.UnpicklingError: Weights only load failed. In PyTorch 2.6, we "
                         "changed the default value of the `weights_only` argument in "
                         "`torch.load` from `False` to `True`.\nPlease file an issue with the "
                         "following so that we can make `weights_only=True` compatible with your "
                         "use case: WeightsUnpickler error: Unsupported operand 118"),
    # safetensors before 0.6 (Debug names) and since (Display text)
    ("checkpoint_truncated", "safetensors_rust.SafetensorError: Error while deserializing header: "
                             "MetadataIncompleteBuffer"),
    ("checkpoint_truncated", "safetensors_rust.SafetensorError: Error while deserializing header: "
                             "incomplete metadata, file not fully covered"),
    ("pipeline_train_batch", "RuntimeError: train_batch() requires gradients enabled. Use "
                             "eval_batch() instead."),
    ("inference_tensor", "RuntimeError: Inference tensors cannot be saved for backward. To work "
                         "around you can make a clone to get a normal tensor and use it in "
                         "autograd."),
    # Colossal-AI's setup, in older and current releases
    ("build_without_torch", "PyTorch is not found while CUDA_EXT=1. You need to install PyTorch "
                            "first in order to build CUDA extensions"),
    ("build_without_torch", "ModuleNotFoundError: [extension] PyTorch is not found while "
                            "BUILD_EXT=1. You need to install PyTorch first in order to build "
                            "CUDA extensions"),
    # a build that was not verbose: ninja's output after the colon
    ("jit_build_failed", "RuntimeError: Error building extension 'cpu_adam': [1/3] c++ -MMD -MF "
                         "cpu_adam.o.d -c cpu_adam.cpp -o cpu_adam.o\nFAILED: cpu_adam.o"),
    # pydantic 2.11 renamed the first key again
    ("ds_pydantic2", "UserWarning: Valid config keys have changed in V2:\n* "
                     "'allow_population_by_field_name' has been renamed to 'validate_by_name'\n* "
                     "'validate_all' has been renamed to 'validate_default'\n  File \"/usr/lib/"
                     "python3/dist-packages/deepspeed/runtime/config_utils.py\", line 12"),
    # each auto class's own check before Transformers 4.3x, and the prompt
    ("trust_remote_code", "ValueError: Loading THUDM/chatglm-6b requires you to execute the "
                          "configuration file in that repo on your local machine. Make sure you "
                          "have read the code there to avoid malicious use, then set the option "
                          "`trust_remote_code=True` to remove this error."),
    ("trust_remote_code", "The repository for THUDM/chatglm3-6b contains custom code which must be "
                          "executed to correctly load the model.\nYou can avoid this prompt in "
                          "future by passing the argument `trust_remote_code=True`.\n\nDo you wish "
                          "to run the custom code? [y/N] "),
    # Transformers 4.4x and 5.x
    ("accel_for_device_map", "ImportError: Using `low_cpu_mem_usage=True`, a `device_map` or a "
                             "`tp_plan` requires Accelerate: `pip install 'accelerate>=0.26.0'`"),
    ("accel_for_device_map", "ValueError: Using a `device_map`, `tp_plan`, `torch.device` context "
                             "manager or setting `torch.set_default_device(device)` requires "
                             "`accelerate`. You can install it with `pip install accelerate`"),
    ("tokenizer_deps", "ValueError: Couldn't instantiate the backend tokenizer from one of: \n(1) "
                       "a `tokenizers` library serialization file, \n(2) a slow tokenizer instance "
                       "to convert or \n(3) an equivalent slow tokenizer class to instantiate and "
                       "convert. \nYou need to have sentencepiece installed to convert a slow "
                       "tokenizer to a fast one."),
    ("tokenizer_deps", "ImportError:\nLlamaConverter requires the protobuf library but it was not "
                       "found in your environment."),
    ("megatron_old_arg", "AssertionError: --model-parallel-size is no longer valid, use "
                         "--tensor-model-parallel-size instead"),
    # PRRTE (Open MPI 5) names itself, and breaks the count's line
    ("openmpi_root", "prterun has detected an attempt to run as root.\n\nRunning as root is "
                     "*strongly* discouraged"),
    ("openmpi_slots", "There are not enough slots available in the system to satisfy the 9\n"
                      "slots that were requested by the application:\n  python"),
    ("colossalai_run_ssh", "Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 train.py "
                           "on gpu-1648, is localhost: False, exception: No authentication methods "
                           "available"),
    # Lightning 1.x before 1.7
    ("lightning_gpu_ids", "pytorch_lightning.utilities.exceptions.MisconfigurationException: You "
                          "requested GPUs: [1]\n But your machine only has: []"),
    ("horovod_mismatch", "Mismatched data types: One rank had type float32, but another rank had "
                         "type float16."),
    # Megatron-Core's datasets
    ("megatron_data_prefix", "AssertionError: One or both of the .idx and .bin files cannot be "
                             "found at the path prefix /data/my-gpt2_text_document"),
    ("ds_onebit_zero", "AssertionError: 0/1 Adam is not compatible with ZeRO"),
    # FlashAttention before 1.0 checked the A100 alone
    ("flash_attn_sm80", "RuntimeError: Expected is_sm80 to be true, but got false."),
    # pydantic 2's wording, a key of another release
    ("ds_config_validation", "pydantic_core._pydantic_core.ValidationError: 1 validation error for "
                             "DeepSpeedZeroConfig\nstage3_gather_fp16_weights_on_model_save\n  Extra "
                             "inputs are not permitted [type=extra_forbidden]"),
    ("colossalai_moved", "ModuleNotFoundError: No module named colossalai.accelerator"),
    # NCCL up to 2.7, without the peer; 2.20 to 2.27; from 2.28, the status's name
    ("nccl_ib_retry", "NCCL WARN NET/IB : Got completion with error 12, opcode 1, len 0, vendor "
                      "err 129"),
    ("nccl_ib_retry", "NCCL WARN NET/IB: Got completion from peer 10.1.2.3<40155> with status=12 "
                      "opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.1.2.4 hca mlx5_1"),
    ("nccl_ib_retry", "NCCL WARN NET/IB: Got completion from peer 10.1.2.3<40155> with "
                      "status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca "
                      "mlx5_1"),
    # a rewritten report's quotes
    ("setuptools_packaging", "ImportError: cannot import name \"packaging\" from \"pkg_resources\""),
    ("horovod_old_api", "AttributeError: module 'horovod.mxnet' has no attribute "
                        "'DistributedTrainer'"),
    # nvcc's error from a CUDA build with a compile step of its own
    ("nvcc_gcc_too_new", "/usr/local/cuda/include/crt/host_config.h:132:2: error: #error -- "
                         "unsupported GNU version! gcc versions later than 11 are not supported!"),
    ("torch_nccl_mismatch", "ImportError: /home/runner/.local/lib/python3.10/site-packages/torch/"
                            "lib/libtorch_cuda.so: undefined symbol: ncclMemFree"),
    ("nvjitlink_mismatch", "OSError: /usr/local/lib/python3.10/dist-packages/torch/lib/../../nvidia/"
                           "cusparse/lib/libcusparse.so.12: undefined symbol: "
                           "__nvJitLinkComplete_12_4, version libnvJitLink.so.12"),
    # Megatron-Core from late 2024, and Megatron before Megatron-Core
    ("megatron_helpers", "ModuleNotFoundError: No module named 'megatron.core.datasets.helpers_cpp'"),
    ("megatron_helpers", "ImportError: cannot import name 'helpers' from 'megatron.data' "
                         "(/workspace/Megatron-DeepSpeed/megatron/data/__init__.py)"),
    # code importing the compiled extension itself (1.8 on), on an older install or without it
    ("te_pytorch_import", "ModuleNotFoundError: No module named 'transformer_engine_torch'"),
    # the name up to 1.7, unquoted as a rewritten report gives it
    ("te_extensions_renamed", "ModuleNotFoundError: No module named transformer_engine_extensions"),
    ("accelerate_no_ds", "ImportError: DeepSpeed is not installed => run `pip install deepspeed` "
                         "or build it from source."),
    # the core attention's assertion
    ("megatron_flash_attn", "  File \"/workspace/Megatron-LM/megatron/model/transformer.py\", line "
                            "445, in __init__\nAssertionError: Please install FlashAttention first, "
                            "e.g., with pip install flash-attn"),
    # Megatron-DeepSpeed's --use-flash-attn-v1 with flash-attn 2 installed
    ("megatron_flash_attn", "  File \"/workspace/Megatron-DeepSpeed/megatron/model/transformer.py\", "
                            "line 541, in __init__\n    assert flash_attn_unpadded_func != None, "
                            "\"Cannot import FlashAttention v1 \"\nAssertionError: Cannot import "
                            "FlashAttention v1 "),
    # recent releases, and the option's other requirement
    ("overlap_param_gather", "AssertionError: --overlap-param-gather only supported with "
                             "distributed optimizer, megatron fsdp, or dist_muon"),
    ("overlap_param_gather", "AssertionError: Must use --overlap-param-gather with "
                             "--overlap-grad-reduce"),
    # the same requirement as Megatron worded it from Dec 2023 to Aug 2024
    ("overlap_param_gather", "AssertionError: --overlap-grad-reduce should be turned on when using "
                             "--overlap-param-gather"),
    ("colossalai_launch", "  File \"train.py\", line 10, in main\n    colossalai.launch(config=cfg, "
                          "rank=rank, world_size=ws, host=host, port=port)\nTypeError: launch() got "
                          "an unexpected keyword argument 'config'"),
    # Windows's shell in Chinese (ColossalAI#2765)
    ("colossalai_windows", "ColossalAI\\examples\\tutorial\\auto_parallel> colossalai run "
                           "--nproc_per_node 1 auto_parallel_with_resnet.py\n'export' "
                           "不是内部或外部命令，也不是可运行的程序\n或批处理文件。"),
    # a traceback's path with doubled backslashes, as Python's repr prints it
    ("colossalai_win_path", "FileNotFoundError: [WinError 2] 'C:\\\\Users\\\\u\\\\venv\\\\Lib\\\\"
                            "site-packages\\\\colossalai\\\\kernel\\\\extensions'"),
    # a CUDA call's error, the driver API's, and NCCL's with and without the code
    ("cuda_fabric_manager", "RuntimeError: CUDA error: system not yet initialized"),
    ("cuda_fabric_manager", "RuntimeError: CUDA driver error: system not yet initialized"),
    ("cuda_fabric_manager", "node1:1234:1234 [0] NCCL INFO Cuda failure 802 'system not yet "
                            "initialized'"),
    ("cuda_fabric_manager", "misc/strongstream.cc:53 NCCL WARN Cuda failure 'system not yet "
                            "initialized'"),
    ("cuda_driver_mismatch", "UserWarning: CUDA initialization: Unexpected error from "
                             "cudaGetDeviceCount(). Did you run some cuda functions before calling "
                             "NumCudaDevices() that might have already set an error? Error 803: "
                             "system has unsupported display driver / cuda driver combination"),
    ("cuda_driver_mismatch", "RuntimeError: CUDA error: forward compatibility was attempted on non "
                             "supported HW"),
    # NVML's own string for the same error (``nvmlErrorString``), as pynvml raises it
    ("cuda_driver_mismatch", "pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an "
                             "NVML/RM version mismatch."),
    ("device_side_assert", "RuntimeError: CUDA error: device-side assert triggered"),
    # a hostname mapped to 127.0.0.1
    ("gloo_loopback", "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] connect "
                      "[127.0.0.1]:44221: Connection refused"),
    # recent Gloo's wording (``SystemError::what``)
    ("gloo_loopback", "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:446] "
                      "SO_ERROR: Connection refused, remote=[127.0.1.1]:29500"),
    # the store's count wrapped onto its own line
    ("store_wait_clients", "torch.distributed.DistStoreError: Timed out after 901 seconds waiting "
                           "for clients.\n2/4 clients joined."),
    # FSDP's message without the rank, and with it, unquoted
    ("fsdp_device_id", "ValueError: Inconsistent compute device and `device_id`: cuda:0 vs cuda:1"),
    ("fsdp_device_id", "ValueError: Inconsistent compute device and device_id on rank 3: cuda:0 vs "
                       "cuda:3"),
    # Python 3.10's logging of the signal, and the exception alone
    ("torchrun_sighup", "WARNING:torch.distributed.elastic.agent.server.api:Received "
                        "Signals.SIGHUP death signal, shutting down workers"),
    ("torchrun_sighup", "torch.distributed.elastic.multiprocessing.api.SignalException: Process "
                        "2037 got signal: 1"),
    # a layer left on the meta device
    ("ddp_mixed_devices", "ValueError: DistributedDataParallel's input module must be on the same "
                          "type of devices, but input module parameters locate in {'meta', "
                          "'cuda'}."),
]
NOT_THESE = [
    # NCCL's IB completion with another status: RNR retries (NCCL retries them without end), a
    # status number that only starts with 12
    "NCCL WARN NET/IB: Got completion from peer 10.1.2.3<40155> with "
    "status=IBV_WC_RNR_RETRY_EXC_ERR(13) opcode=IBV_WC_SEND(0) vendor_err=135 hca mlx5_1",
    "NCCL WARN NET/IB : Got completion from peer 10.1.2.3<40155> with error 120, opcode 0",
    # another CUDA failure inside NCCL: no memory is short
    "NCCL WARN Cuda failure 'peer access is not supported between these two devices'",
    # another launcher's program missing (``ompi_info``): installing pdsh is no fix for it
    "RuntimeError: launcher 'openmpi' not installed.",
    # NVMe offload failing at run time: the op built and loaded
    "ZeRO-Infinity NVMe offload: async_io error while swapping in tensors at step 300",
    # the GPU's on-chip shared memory, not /dev/shm
    "The kernel fails with insufficient shared memory per block on my V100.",
    # NCCL_COMM_ID's subnet, not a missing interface
    "NCCL WARN NET/Socket : No usable listening interface found",
    # a GPU tensor in a group with only gloo: the other way round, another fix
    "RuntimeError: No backend type associated with device type cuda",
    # Transformer Engine installed without its PyTorch part
    "ModuleNotFoundError: No module named 'transformer_engine.pytorch'",
    # mixed devices: as often the framework's bug as the reporter's code (2 shared issues)
    "RuntimeError: Expected all tensors to be on the same device, but found at least two "
    "devices, cuda:0 and cpu!",
    # both sides wrapped alike: keys of another model, not the prefix
    "Missing key(s) in state_dict: \"module.a.weight\". \n\tUnexpected key(s) in state_dict: "
    "\"module.b.weight\". ",
    # a DeepSpeed checkpoint file loaded whole: its top-level "module" key, no dot
    "Missing key(s) in state_dict: \"fc.weight\". \n\tUnexpected key(s) in state_dict: "
    "\"module\", \"buffer_names\", \"optimizer\". ",
    # only the first keys differ by the prefix: the rest are another model's keys
    "Missing key(s) in state_dict: \"conv1.weight\", \"layer1.0.weight\", \"layer1.1.weight\", "
    "\"fc.weight\". \n\tUnexpected key(s) in state_dict: \"module.conv1.weight\", "
    "\"encoder.0.weight\", \"encoder.1.weight\", \"head.weight\". ",
    # Horovod's ssh command run by other code: neither DeepSpeed's check nor Horovod's
    "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no -o "
    "StrictHostKeyChecking=no worker-1 -p 12345 true' returned non-zero exit status 255.",
    # git's own ssh refusal, no launch
    "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.",
    # a 4-bit quantised model's uint8 storage (QLoRA): bnb_4bit_quant_storage, not fp32
    "ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.uint8",
    # one key pairs up beside many of another model
    "Missing key(s) in state_dict: \"fc.weight\". \n\tUnexpected key(s) in state_dict: "
    "\"module.fc.weight\", \"encoder.0.weight\", \"encoder.1.weight\", \"head.weight\". ",
    # FSDP passes a missing attribute on to the model: the model lacks it too
    "AttributeError: 'FullyShardedDataParallel' object has no attribute 'generate'",
    # DDP's own method called on another wrapper: code written for DDP, not the model's name
    "AttributeError: 'DataParallel' object has no attribute 'no_sync'",
    # FlashAttention 2 installed, on the CPU: another refusal of the same check
    "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following "
    "error: Flash Attention 2 is not available on CPU.",
    # Lightning before 1.7 named the accelerator, and had no ddp_notebook
    "MisconfigurationException: `Trainer(accelerator='ddp')` is not compatible with an interactive "
    "environment. Run your code as a script, or choose one of the compatible strategies: "
    "Trainer(strategy=None|dp|ddp_spawn).",
    # Python's own operand error, not the weights-only unpickler's
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    # DeepSpeed's pair of keys from another package's classes, no DeepSpeed code in the report
    "UserWarning: Valid config keys have changed in V2:\n* 'allow_population_by_field_name' has "
    "been renamed to 'populate_by_name'\n* 'validate_all' has been renamed to 'validate_default'\n"
    "  File \"/opt/app/settings.py\", line 4",
    # Horovod's check of the CPU/GPU placement: another fix
    "Mismatched ALLREDUCE CPU/GPU device selection: One rank specified device CPU, but another "
    "rank specified device GPU.",
    # Windows's shell refusing a script of another tool, no Colossal-AI
    "'export' is not recognized as an internal or external command,\noperable program or batch "
    "file.",
    # a Windows path into another package (a folder merely named like it is no import)
    "  File \"C:\\Users\\u\\projects\\ColossalAI-notes\\train.py\", line 3",
    # NCCL missing an older function in an extension's own library: not PyTorch's
    "ImportError: /opt/conda/lib/python3.10/site-packages/apex_C.so: undefined symbol: "
    "ncclCommInitRank",
    # a torchrun stopped by the scheduler (SIGTERM) or Ctrl-C (SIGINT): other senders
    "WARNING:torch.distributed.elastic.agent.server.api:Received 15 death signal, shutting down "
    "workers",
    "torch.distributed.elastic.multiprocessing.api.SignalException: Process 498477 got signal: 2",
    # the device's own error string, not a failed kernel assertion
    "RuntimeError: CUDA error: an illegal instruction was encountered",
    # recent Gloo refused at a real address: the peer down or a firewall, not the loopback
    "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:446] SO_ERROR: Connection "
    "refused, remote=[10.0.0.2]:29500",
    # the checks of the option that overlaps the gather with the optimizer step: other fixes
    "AssertionError: --overlap-param-gather-with-optimizer-step only supported with distributed "
    "optimizer",
    "AssertionError: Must use --overlap-param-gather-with-optimizer-step with "
    "--overlap-param-gather",
    # Transformer Engine's compiled module under a name of another package
    "ModuleNotFoundError: No module named 'transformer_engine_torch_nightly'",
    # a Windows path through Colossal-AI's repository folder, not the installed package
    "  File \"C:\\work\\ColossalAI\\examples\\train.py\", line 3, in <module>",
]


@pytest.mark.parametrize(("diagnosis_id", "log"), OTHER_SPELLINGS)
def test_other_spellings_of_the_same_error_are_recognised(diagnosis_id: str, log: str) -> None:
    assert ids(report("It fails", log)) == [diagnosis_id]


@pytest.mark.parametrize("text", NOT_THESE)
def test_what_only_reads_like_a_kept_error_is_not_diagnosed(text: str) -> None:
    assert ids(report("It fails", text)) == []


def test_only_errors_that_name_what_to_change_link_two_reports() -> None:
    """``same_problem`` is opt-in: a kill by signal or an ABI mismatch has causes that vary."""
    linking = {d.id for d in diagnoses.DIAGNOSES if d.same_problem}
    assert {"libaio_missing", "port_in_use", "cuda_mismatch", "libuv_missing", "zero_pipeline",
            "horovod_controller", "hostfile_format", "state_dict_prefix",
            "zero3_device_map", "mpi_discovery", "te_mpi_bootstrap", "horovod_ssh",
            "weights_only", "ds_config_mismatch", "grad_accum_fusion",
            "fsdp_uniform_grad", "zero_untested_optim", "accelerate_ds_optim",
            "megatron_layers_pp", "cuda_max_connections", "accelerate_missing",
            "flash_attn_missing", "not_weights_file", "pipeline_train_batch",
            "accelerate_reinit", "trainer_quantized", "lightning_notebook",
            "too_many_open_files", "build_without_torch", "shadowed_package", "ds_pydantic2",
            "unknown_model_type", "trust_remote_code", "accel_for_device_map", "tokenizer_deps",
            "llama_tokenizer_name", "megatron_old_arg", "mpi_not_built", "openmpi_root",
            "openmpi_slots", "colossalai_run_ssh", "megatron_local_rank", "gloo_ifname",
            "dist_init_required", "megatron_data_prefix", "ds_onebit_zero",
            "autotp_kernel_inject", "cub_missing", "ds_pydantic2_field", "megatron_tp_overlap",
            "megatron_dist_ckpt", "flash_attn_sm80", "ds_optimizer_name",
            "colo_init_context", "apex_cuda_mismatch", "nvcc_gcc_too_new", "torch_nccl_mismatch",
            "nvjitlink_mismatch", "megatron_helpers", "accelerate_no_ds", "overlap_param_gather",
            "colossalai_launch", "colossalai_windows", "cuda_fabric_manager", "torchrun_sighup",
            "accelerate_logging", "fsdp_offload_moved", "te_extensions_renamed"} <= linking
    assert not linking & {"sigkill", "sigbus", "torch_abi", "zero3_partitioned", "import_name",
                          "cpu_adam_not_built", "loss_scale_minimum", "not_divisible",
                          # an error hiding an earlier one, or a change that depends on where
                          "dist_not_initialized", "horovod_extension",
                          "nccl_cpu_tensor", "ddp_ready_twice", "ddp_no_grad_params",
                          # models built differently in one of several ways, a policy that
                          # exists for some models, a parameter list empty for several reasons
                          "size_mismatch", "shardformer_policy", "optimizer_no_params",
                          # a module on the CPU or over several GPUs: two fixes
                          "ddp_device_ids",
                          # no GPU on the machine, or a PyTorch that cannot use it: two fixes
                          "checkpoint_device", "bf16_unsupported", "ds_fp16_unsupported",
                          # whose call, which address, which argument, what holds the memory
                          "dist_init_twice", "store_connect", "megatron_ckpt_args",
                          "nccl_cuda_oom",
                          # the launcher's command or the MPI discovery's: other fixes
                          "hostname_i",
                          # which tensor, which attribute, why the file is short, why no labels
                          "nccl_not_contiguous", "ddp_wrapper_attr", "checkpoint_truncated",
                          "trainer_no_loss", "inference_tensor",
                          # a compile failing for any reason, which ranks' tensors, which loop,
                          # an earlier error hidden, which GPUs are missing
                          "jit_build_failed", "horovod_mismatch", "horovod_accumulation",
                          "horovod_shut_down", "lightning_gpu_ids",
                          # code of another release (which one varies), a history lost in one of
                          # several ways, which fields, which files, whose calls, which node
                          "horovod_old_api", "colossalai_moved", "no_grad_fn",
                          "checkpoint_recompute", "ds_config_validation", "zero_to_fp32_files",
                          "zero_optim_wrapper", "data_parallel_replica", "rdzv_join_timeout",
                          # a package missing or built for another release, a reboot or a
                          # container's libraries, which index, which rank or node, which device
                          # mistake, which of the ways to load under ZeRO-3
                          "te_pytorch_import", "megatron_flash_attn", "cuda_driver_mismatch",
                          "device_side_assert", "store_wait_clients", "gloo_loopback",
                          "ddp_mixed_devices", "fsdp_device_id", "zero3_empty_param",
                          # whatever stopped Colossal-AI on Windows: only the shell's refusal of
                          # its launcher's `export` is the one error with the one fix
                          "colossalai_win_path"}


@pytest.mark.parametrize("diagnosis_id", sorted(NEAR_MISSES))
def test_a_near_miss_that_reads_alike_is_not_diagnosed(diagnosis_id: str) -> None:
    assert ids(report("It fails", NEAR_MISSES[diagnosis_id])) == []


def test_every_kept_signature_has_a_log_and_a_near_miss() -> None:
    assert set(LOGS) == set(NEAR_MISSES) == set(diagnoses.BY_ID)


def _odd_letters(text: str) -> str:
    """Every other i, I, s and k as a letter ``re.I`` matches to it but ``str.lower`` does not."""
    odd = {"i": "ı", "I": "İ", "s": "ſ", "k": "\u212a"}
    return "".join(odd[c] if c in odd and n % 2 else c for n, c in enumerate(text))


def _found_both_ways(text: str) -> list[str]:
    """Every signature with words searched whole and through them: the same match, or the entry
    named."""
    folded = diagnoses._fold(text)
    differ = []
    for entry in diagnoses.DIAGNOSES:
        for signature in (entry.pattern, entry.context, entry.unless):
            if signature is None or not signature.words:
                continue
            whole, fast = signature.regex.search(text), signature.search(text, folded)
            if (whole and (whole.span(), whole.groupdict())) != \
                    (fast and (fast.span(), fast.groupdict())):
                differ.append(entry.id)
    return differ


@pytest.mark.parametrize("case", [str, str.upper, str.lower, str.swapcase, _odd_letters],
                         ids=["as-written", "upper", "lower", "swapcase", "odd-letters"])
def test_the_words_that_speed_up_a_long_log_never_change_a_match(
        case: Callable[[str], str]) -> None:
    """``Signature.words`` only say where no match can start, so that ``find`` need not run
    every regex over a whole 100 KB log: each text of this file, in every case, alone and after
    log lines, is matched the same with them as without."""
    texts = [t for pair in LOGS.values() for t in pair] + list(NEAR_MISSES.values()) + \
        [log for _, log in OTHER_SPELLINGS] + NOT_THESE
    lines = NOISE.splitlines()[:3]
    for text in texts:
        for variant in (text, "\n".join([*lines, text, *lines]), f"{lines[0]} {text}x"):
            assert _found_both_ways(case(variant)) == [], variant


def test_the_folded_text_keeps_every_character_where_the_report_has_it() -> None:
    text = "Unable to pre-compile async_io: İnstall failed, ſee the log (ı, \u212a, …)"
    folded = diagnoses._fold(text)
    assert len(folded) == len(text) and folded.isascii() is False
    assert folded == "unable to pre-compile async_io: install failed, see the log (i, k, …)"


def test_a_word_must_be_lower_case_on_one_line() -> None:
    with pytest.raises(ValueError):
        diagnoses.Signature(re.compile("Ninja"), words=("Ninja",))
    with pytest.raises(ValueError):
        diagnoses.Signature(re.compile("a\nb"), words=("a\nb",))


def test_a_large_models_lists_of_keys_are_read_whole() -> None:
    """A 7B model's missing keys make one line of tens of kilobytes before the unexpected ones."""
    names = [f"model.layers.{i}.self_attn.{p}_proj.weight" for i in range(32) for p in "qkvo"] * 6
    missing = ", ".join(f'"{n}"' for n in names)
    unexpected = ", ".join(f'"module.{n}"' for n in names)
    text = full_text("eval fails", f"RuntimeError: Error(s) in loading state_dict for "
                     f"LlamaForCausalLM:\n\tMissing key(s) in state_dict: {missing}. \n\t"
                     f"Unexpected key(s) in state_dict: {unexpected}. ")
    assert len(missing) > 25_000
    assert ids(text) == ["state_dict_prefix"]


def _keys_error(missing: list[str], unexpected: list[str]) -> str:
    """``load_state_dict``'s message, as torch prints it."""
    def listed(keys: list[str]) -> str:
        return ", ".join(f'"{k}"' for k in keys)
    return (f"RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in "
            f"state_dict: {listed(missing)}. \n\tUnexpected key(s) in state_dict: "
            f"{listed(unexpected)}. ")


def test_the_prefix_must_explain_most_keys_not_only_the_first_pair() -> None:
    """The two lists are read whole: the diagnosis holds when more than half of the longer
    list pairs up with the other by a wrapper's prefix, wherever the pairs stand in the lists."""
    layers = [f"layers.{i}.weight" for i in range(6)]
    # all keys wrapped on one side, in either direction and with either wrapper, or both
    assert ids(report("x", _keys_error(layers, [f"module.{k}" for k in layers]))) == \
        ["state_dict_prefix"]
    assert ids(report("x", _keys_error([f"_orig_mod.{k}" for k in layers], layers))) == \
        ["state_dict_prefix"]
    assert ids(report("x", _keys_error([f"module._orig_mod.{k}" for k in layers],
                                        [f"module.{k}" for k in layers]))) == ["state_dict_prefix"]
    # a new head missing first and a counter first among the unexpected: the rest pair up
    assert ids(report("x", _keys_error(["head.weight", *layers],
                                        ["n_averaged", *(f"module.{k}" for k in layers)]))) == \
        ["state_dict_prefix"]
    # the first keys pair up, the rest are another model's
    others = [f"encoder.{i}.weight" for i in range(5)]
    assert ids(report("x", _keys_error(layers, ["module.layers.0.weight", *others]))) == []
    # half of the lists is not most of them
    assert ids(report("x", _keys_error(layers[:2], ["module.layers.0.weight",
                                                     "encoder.0.weight"]))) == []
    # unequal lists: every missing key pairs up, but as many unexpected ones are another
    # model's (an EMA copy saved beside it): the prefix explains half of what differs
    ema = [f"ema.{k}" for k in layers]
    assert ids(report("x", _keys_error(layers, [*(f"module.{k}" for k in layers), *ema]))) == []
    assert ids(report("x", _keys_error(layers, [*(f"module.{k}" for k in layers), *ema[:2]]))) == \
        ["state_dict_prefix"]


def test_horovods_ssh_check_is_not_deepspeeds() -> None:
    """Both launchers try ssh with ``PasswordAuthentication=no`` before a launch; each has its
    own fix (DeepSpeed's ``--no_ssh_check`` and hostfile, ``horovodrun``'s ``-p``)."""
    assert ids(report(*LOGS["ssh_check"])) == ["ssh_check"]
    assert ids(report(*LOGS["horovod_ssh"])) == ["horovod_ssh"]
    assert "--no_ssh_check" not in diagnoses.BY_ID["horovod_ssh"].text
    assert "horovodrun" not in diagnoses.BY_ID["ssh_check"].text
    horovod_command = ("subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no "
                       "-o StrictHostKeyChecking=no worker-1 hostname' returned non-zero exit "
                       "status 255.")
    assert ids(report("It fails", horovod_command)) == []


def test_a_cuda_mismatch_in_the_report_is_quoted_as_two_versions() -> None:
    found = diagnoses.diagnose(report(*LOGS["cuda_mismatch"]))
    assert found[0].values == {"nvcc_cuda": "12.1", "torch_cuda": "11.8"}
    shown = diagnoses.text_of(found[0]) or ""
    assert "built with CUDA 11.8" in shown and "CUDA 12.1" in shown


def test_torchs_own_mismatch_message_names_the_versions_the_other_way_round() -> None:
    text = report("build", "RuntimeError:\nThe detected CUDA version (12.1) mismatches the "
                  "version that was used to compile\nPyTorch (11.8). Please make sure to use "
                  "the same CUDA versions.")
    assert diagnoses.diagnose(text)[0].values == {"nvcc_cuda": "12.1", "torch_cuda": "11.8"}


def test_torch_and_nvcc_of_different_major_versions_while_building_is_a_mismatch() -> None:
    text = full_text("[BUG] fused_adam fails to build", "RuntimeError: Error building extension "
                     "'fused_adam'\n- deepspeed 0.12.6, torch 2.1.0+cu118, nvcc 12.1")
    found = diagnoses.diagnose(text, environment.extract(text))
    # the rule's cause, not beside it the JIT build's failure the report shows (it says less)
    assert [d.id for d in found] == ["cuda_mismatch"]
    assert found[0].values == {"torch_cuda": "11.8", "nvcc_cuda": "12.1"}


def test_the_env_rule_and_the_text_give_one_cuda_mismatch_leading_the_table() -> None:
    """``diagnose`` puts the env rule's diagnosis first: it is the table's first entry."""
    assert diagnoses.DIAGNOSES[0].id == "cuda_mismatch"
    text = full_text("[BUG] fused_adam fails to build", "RuntimeError: Error building extension "
                     "'fused_adam'\nAddress already in use at the c10d TCPStore\n"
                     "- deepspeed 0.12.6, torch 2.1.0+cu118, nvcc 12.1")
    # the generic build failure gives way to the diagnoses that say why
    assert ids(text) == ["cuda_mismatch", "port_in_use"]
    found = diagnoses.find(text)
    assert [d.id for d in found] == ["jit_build_failed", "port_in_use"]
    assert diagnoses.diagnose(text, environment.extract(text), found) == \
        diagnoses.diagnose(text, environment.extract(text))


def test_a_minor_version_difference_proves_nothing() -> None:
    """torch only warns on it, DeepSpeed accepts known pairs: the build failed for another reason."""
    text = full_text("[BUG] fused_adam fails to build", "RuntimeError: Error building extension "
                     "'fused_adam'\n- deepspeed 0.12.6, torch 2.1.0+cu121, nvcc 12.3")
    assert environment.extract(text).cuda_mismatch()
    assert ids(text) == ["jit_build_failed"]  # only that the build failed, as the report says


def test_the_package_quoted_is_the_top_level_name_only() -> None:
    found = diagnoses.diagnose(report(*LOGS["import_name"]))
    assert found[0].values == {"package": "colossalai"}
    assert (diagnoses.text_of(found[0]) or "").startswith("The installed `colossalai` does not")


def test_an_import_without_from_gets_the_template_without_a_package() -> None:
    found = diagnoses.diagnose(report("x", "ImportError: cannot import name 'OrderedDict'"))
    assert found[0].values == {}
    assert diagnoses.text_of(found[0]) == diagnoses.BY_ID["import_name"].text


@pytest.mark.parametrize("value", ["@octocat", "evil.example.com", "x" * 41, "a b", "1.2; rm -rf",
                                   "https://x.io", "colossal`ai"])
def test_a_value_that_is_not_short_and_strict_is_never_quoted(value: str) -> None:
    """Also from a stored or hand-made triage: rendering checks the values again."""
    assert diagnoses.values_of({"package": value}) == {}
    shown = diagnoses.text_of(Diagnosed(id="import_name", values={"package": value})) or ""
    assert value not in shown and shown == diagnoses.BY_ID["import_name"].text


def test_a_value_is_quoted_only_for_a_template_that_names_it() -> None:
    assert diagnoses.values_of({"nvcc_cuda": "12.1", "other": "12.1"}) == {"nvcc_cuda": "12.1"}
    bad = Diagnosed(id="cuda_mismatch", values={"torch_cuda": "11.8", "nvcc_cuda": "12.1 or @x"})
    assert diagnoses.text_of(bad) == diagnoses.BY_ID["cuda_mismatch"].text


def test_an_unknown_id_shows_nothing() -> None:
    assert diagnoses.text_of(Diagnosed(id="made_up")) is None
    assert diagnoses.moot([Diagnosed(id="made_up")]) == frozenset()


def test_at_most_two_diagnoses_in_table_order() -> None:
    text = report("many", "\n".join(LOGS[i][1] for i in ("sigkill", "import_name", "port_in_use")))
    assert ids(text) == ["import_name", "port_in_use"]


def test_the_table_implies_only_valid_ids_with_the_hierarchy_kept() -> None:
    for entry in diagnoses.DIAGNOSES:
        assert entry.states <= set(entry.implies), entry.id
        for dim, label_id in entry.implies.items():
            assert taxonomy.label(dim, label_id) is not None, (entry.id, dim, label_id)
            if dim in taxonomy.IN_STAGE:
                assert taxonomy.stage_of(dim, label_id) == entry.implies["stage"], entry.id


def test_templates_are_our_own_words_without_mentions_or_links() -> None:
    for entry in diagnoses.DIAGNOSES:
        for text in (entry.text, entry.detailed):
            assert "@" not in text and not re.search(r"https?://|www\.|#\d", text), entry.id
            assert text.count("`") % 2 == 0, entry.id


def test_a_triage_stored_before_diagnoses_existed_still_loads() -> None:
    stored = Triage.model_validate_json(
        '{"stage": {"id": "S1", "name": "Package Build & Import", "confidence": 0.9},'
        ' "symptom": {"id": "1.1", "name": "x", "confidence": 0.5},'
        ' "root_cause": {"id": "R1.1", "name": "x", "confidence": 0.5},'
        ' "fix_pattern": {"id": "F2", "name": "x", "confidence": 0.5},'
        ' "distributed_specific": {"id": "no", "name": "x", "confidence": 0.5},'
        ' "is_bug": {"id": "yes", "name": "x", "confidence": 0.5}}')
    assert stored.diagnoses == []


def test_every_moot_request_is_a_request_the_bot_makes() -> None:
    from triagebot.domain import missing, symptom_requests

    known = set(missing.DESCRIPTIONS) | set(symptom_requests.KEYS)
    for entry in diagnoses.DIAGNOSES:
        assert entry.moot <= known, (entry.id, entry.moot - known)


def test_the_cpu_adam_cleanup_error_gives_way_to_the_error_it_hides() -> None:
    """An empty parameter list stops DeepSpeedCPUAdam's constructor, and its destructor then
    raises the ``ds_opt_adam`` error: the earlier error is diagnosed, and no rebuild of the op
    is advised (a blind read of DeepSpeed#5071)."""
    log = ("  File \"deepspeed/ops/adam/cpu_adam.py\", line 94, in __init__\n"
           "ValueError: optimizer got an empty parameter list\n"
           "Exception ignored in: <function DeepSpeedCPUAdam.__del__>\n"
           "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'")
    assert [d.id for d in diagnoses.find(log)] == ["optimizer_no_params"]
    alone = "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'"
    assert [d.id for d in diagnoses.find(alone)] == ["cpu_adam_not_built"]


def test_the_missing_mpi_backend_gives_way_to_transformer_engines_bootstrap() -> None:
    """Transformer Engine before 1.9 needs an MPI process group for ``--tp-comm-overlap``: its own
    warning's diagnosis names that case's fixes (an MPI launch, a newer TE), which the bare "no MPI
    built in" would not."""
    error = "RuntimeError: Distributed package doesn't have MPI built in."
    warning = "UserWarning: Transformer Engine v1.5.0 supports only MPI bootstrap backend."
    assert [d.id for d in diagnoses.find(f"{warning}\n{error}")] == ["te_mpi_bootstrap"]
    assert [d.id for d in diagnoses.find(error)] == ["mpi_not_built"]


LAUNCHER_PREFIXES = ["[rank0]: ", "[default3]:", "0: ", "worker-1: ", "10.0.0.12: ", "localhost: ",
                     "[1,0]<stderr>:",
                     # stacked: torchrun's --tee under its rank prefix, pdsh or srun -l over torch's
                     "[default0]:[rank0]: ", "worker-1: [rank0]: ", "0: [rank0]: "]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_an_error_is_recognised_in_a_rank_prefixed_log(prefix: str) -> None:
    """Multi-rank reports paste logs whose every line a launcher prefixed (torchrun's
    ``[rank0]:``, pdsh's host, ``srun -l``, Open MPI's ``--tag-output``): messages over several
    lines (torch's missing and unexpected keys, NumPy's ABI warning) were missed there."""
    cases = [(k, title, log) for k, (title, log) in LOGS.items()]
    cases += [(k, "It fails", log) for k, log in OTHER_SPELLINGS]

    def found(title: str, log: str) -> list[str]:
        prefixed = "\n".join(prefix + line for line in log.split("\n"))
        return [d.id for d in diagnoses.find(full_text(title, f"```\n{prefixed}\n```"))]

    assert [k for k, title, log in cases if k not in found(title, log)] == []
    assert [near for near in [*NOT_THESE, *NEAR_MISSES.values()] if found("It fails", near)] == []


def test_a_prefix_is_taken_off_only_where_a_launcher_put_it() -> None:
    from triagebot.text.signal import unprefixed

    assert unprefixed("[rank1]: Traceback\n[rank1]:   File x") == "Traceback\n  File x"
    # a timestamp, an exception's name and a lone "name: " line are the program's own words
    kept = "12:30:01 step 4\nRuntimeError: boom\nRuntimeError: again\nv0.9: notes"
    assert unprefixed(kept) == kept
    assert unprefixed("node-2: a\nnode-2: b\nnode-3: c") == "a\nb\nnode-3: c"
    # names on several lines that are no host: a dotted exception, a log's key, an abbreviation
    for kept in ("jinja2.exceptions.TemplateNotFound: x\njinja2.exceptions.TemplateNotFound: y",
                 "torch._dynamo.exc.Unsupported: a\ntorch._dynamo.exc.Unsupported: b",
                 "eval_loss: 1\neval_loss: 2", "e.g.: a\ne.g.: b"):
        assert unprefixed(kept) == kept


PYDANTIC_WARNING = (
    "/opt/conda/lib/python3.10/site-packages/pydantic/_internal/_config.py:321: UserWarning: Valid "
    "config keys have changed in V2:\n* 'allow_population_by_field_name' has been renamed to "
    "'populate_by_name'\n* 'validate_all' has been renamed to 'validate_default'\n"
    "  warnings.warn(message, UserWarning)\n>>> from deepspeed.monitor.config import "
    "DeepSpeedMonitorConfig")
PYDANTIC_FIELD = (
    "  File \"/home/u/.local/lib/python3.10/site-packages/deepspeed/inference/config.py\", line 88, "
    "in <module>\n    class BaseQuantConfig(DeepSpeedConfigModel):\npydantic.errors."
    "PydanticUserError: A non-annotated attribute was detected: `enabled = True`.")


def _shown(text: str, env: Environment) -> list[str | None]:
    return [diagnoses.text_of(d) for d in diagnoses.diagnose(text, env)]


@pytest.mark.parametrize("log", [PYDANTIC_WARNING, PYDANTIC_FIELD], ids=["warning", "field"])
def test_a_deepspeed_release_past_the_pydantic_shim_is_never_told_to_upgrade_to_it(
        log: str) -> None:
    """DeepSpeed#4839 showed 0.12.5 and was told "DeepSpeed works with pydantic 2 from 0.12 on:
    upgrade" (a strict reader's 0). From 0.11.2 DeepSpeed hands its pydantic-1 classes to
    ``pydantic.v1``, so the code raising this is not that release's, and the text says so."""
    past = Environment(framework="deepspeed", framework_version="0.12.5")
    [text] = _shown(log, past)
    assert text is not None and "DeepSpeed 0.12.5, the release this report shows" in text
    assert "not that release's" in text and "stale or second install" in text
    assert "upgrade" not in text.lower()
    for before in ("0.10.3", "0.11.1", "0.7.7"):
        [older] = _shown(log, Environment(framework="deepspeed", framework_version=before))
        assert older is not None and "upgrade DeepSpeed" in older and before not in older
    # a dev build reads as its release; no DeepSpeed version, or another framework's: the text
    # that hedges for both
    [dev] = _shown(log, Environment(framework="deepspeed", framework_version="0.14.5+a1b2c3"))
    assert dev is not None and "DeepSpeed 0.14.5," in dev
    for env in (Environment(), Environment(framework="megatron", framework_version="0.12.5")):
        [plain] = _shown(log, env)
        assert plain is not None and "If yours is 0.11.2 or later" in plain


def test_a_release_before_the_shim_is_never_quoted_as_one_past_it() -> None:
    """The quoted release is checked again when rendered: a stored or hand-made triage naming
    0.10.0 gets the text that advises the upgrade, not the one that says it is past it."""
    old = Diagnosed(id="ds_pydantic2", values={"ds_after_shim": "0.10.0"})
    assert diagnoses.text_of(old) == diagnoses.BY_ID["ds_pydantic2"].text
    for release, shown in (("0.11.1", False), ("0.11.2", True), ("0.12.5", True),
                           ("0.15.0", True), ("1.0.0", True), ("0.9.5", False)):
        values = diagnoses.values_of({"ds_after_shim": release})
        assert bool(values) is shown, release


MEGATRON_66 = (
    "1. tools/generate_samples_gpt2.py is not found\n\nAfter renaming tools/generate_samples_gpt.py "
    "to tools/generate_samples_gpt2.py it gets a little further, until...\n\n2. the batch size "
    "parameter is rejected:\n\n`AssertionError: --batch-size argument is no longer valid, use "
    "--micro-batch-size instead\n`\n\nAfter renaming the argument in generate_text.sh it goes "
    "further, until...\n\n3. a KeyError:\n`\nTraceback (most recent call last):\nKeyError: "
    "'tokens'\n`")


def test_an_error_the_report_says_it_got_past_is_not_diagnosed() -> None:
    """Megatron-LM#66 renamed ``--batch-size`` as Megatron's message says and went on to a
    KeyError: telling it to rename the argument answers what it already did."""
    assert ids(full_text("KeyError when running the GPT text generation sample", MEGATRON_66)) == []
    assert diagnoses.quote(MEGATRON_66, "megatron_old_arg") is None
    error = "AssertionError: --batch-size argument is no longer valid, use --micro-batch-size"
    for said in ("After renaming it in the script it goes further, until a KeyError.",
                 "I got past that by editing the launch script.",
                 "That is fixed, now it fails loading the checkpoint.",
                 "When I manually set --micro-batch-size, I get a different error:"):
        assert ids(f"{error}\n\n{said}") == [], said


def test_an_error_the_title_repeats_is_got_past_where_the_body_says_so() -> None:
    """DeepSpeed#3174's title is the error, its body quotes it again and then says the fix the
    text gives got past it: read after each of the first few occurrences, not only the title's."""
    error = ("AssertionError: AutoTP not supported for model. Please use kernel injection since "
             "container policy for model exists.")
    body = (f"Training runs fine, but at inference I get:\n\n`{error}`\n\n"
            + "This happens because my init_inference call has `replace_with_kernel_inject=False`. "
            "When I switch to `replace_with_kernel_inject=True`, I get the #1301 error instead.")
    assert ids(full_text(f"AssertionError at inference: {error}", body)) == []
    assert ids(full_text(f"AssertionError at inference: {error}", body.split("This happens")[0])) \
        == ["autotp_kernel_inject"]


@pytest.mark.parametrize("said", [
    "I can't get past this error.", "It never gets past it.", "We haven't got past it yet.",
    "It does not get past that.", "Is this fixed now?",
    # a scenario, not a change: the error still stands there
    "When I run it on 2 nodes, I get a different error.",
    # a question, a step never passed, a regression, a debug setting that shows another error
    "Has anyone got past this?", "It always dies before it gets past this step.",
    "Nobody got past this so far.", "I thought this was fixed, but now it happens again on 2.1.",
    "That was solved, now it is back with torch 2.2.",
    "When I set NCCL_DEBUG=INFO I see another error message in the log above.",
    "When I set NCCL_DEBUG=INFO I get another error in the log.",
])
def test_a_report_that_did_not_get_past_the_error_keeps_its_diagnosis(said: str) -> None:
    error = "AssertionError: --batch-size argument is no longer valid, use --micro-batch-size"
    assert ids(f"{error}\n\n{said}") == ["megatron_old_arg"]


def test_getting_past_is_read_only_just_after_the_error_and_not_before_it_recurs() -> None:
    error = "AssertionError: --batch-size argument is no longer valid, use --micro-batch-size"
    got_past = "After renaming the argument it goes further."
    assert ids(f"{error}\n{NOISE[:2000]}\n{got_past}") == ["megatron_old_arg"]
    assert ids(f"{got_past}\n{error}") == ["megatron_old_arg"]
    # past it once, then the same error again later (another script): still the report's error
    assert ids(f"{error}\n{got_past}\n{NOISE[:2000]}\n{error}") == ["megatron_old_arg"]


def test_getting_past_stays_cheap_on_a_hostile_log() -> None:
    """Every occurrence of an error followed by the words: bounded windows and tries, no
    quantifier nested, so a 200 KB text of them costs about what the table's pass costs."""
    import time
    error = "AssertionError: --batch-size argument is no longer valid, use --micro-batch-size\n"
    hostile = (error + "After renaming " + "x" * 119 + " it goes further " + "got past " * 20
               + "\n") * 500
    start = time.perf_counter()
    diagnoses.find(hostile)
    diagnoses.find(("When I set " + "a" * 200 + " I get a " * 30) * 400)
    assert time.perf_counter() - start < 10.0  # hang guard (backtracking), not a benchmark


def test_a_search_from_a_position_finds_what_a_plain_search_finds() -> None:
    """``Signature.search`` from ``pos`` (the got-past rule's next occurrences) narrows by the
    words as from 0: the same match as ``regex.search(text, pos)``, for every entry."""
    logs = list(LOGS.values())
    text = "\n".join(full_text(title, log) for title, log in logs[::2] + logs[::3])
    folded = diagnoses._fold(text)
    for entry in diagnoses.DIAGNOSES:
        for signature in (entry.pattern, entry.context, entry.unless):
            if signature is None or not signature.words:
                continue
            for pos in (1, len(text) // 3, len(text) // 2, len(text) - 5):
                whole, fast = signature.regex.search(text, pos), signature.search(text, folded, pos)
                assert (whole and whole.span()) == (fast and fast.span()), (entry.id, pos)


def test_setuptools_70s_missing_packaging_is_not_told_to_upgrade_pkg_resources() -> None:
    """DeepSpeed#5649 was told to install a newer release of pkg_resources: setuptools 70.0 to
    70.3 lacks ``pkg_resources.packaging``, which PyTorch before 2.2 imports. The generic import
    entry gives way to it, and still reads another import error in the same report."""
    title, log = LOGS["setuptools_packaging"]
    [shown] = diagnoses.diagnose(report(title, log))
    text = diagnoses.text_of(shown)
    assert shown.id == "setuptools_packaging" and text is not None
    assert 'pip install "setuptools<70"' in text and "--no-build-isolation" in text
    assert "PyTorch 2.2" in text
    other = "ImportError: cannot import name 'ColoInitContext' from 'colossalai.zero'"
    assert [d.id for d in diagnoses.find(f"{log}\n{other}")] == ["setuptools_packaging",
                                                                  "import_name"]


def test_the_local_rank_advice_fits_the_deepspeed_launcher() -> None:
    """DeepSpeed#3408 used the ``deepspeed`` launcher, which sets ``CUDA_VISIBLE_DEVICES`` itself:
    the text gives its own ways to set the count per node, and torchrun's apart."""
    text = diagnoses.BY_ID["megatron_local_rank"].text
    for way in ("`--num_gpus`", "`--include host:0,1`", "`slots=`", "`--nproc_per_node`"):
        assert way in text, way
    assert "launcher sets `CUDA_VISIBLE_DEVICES` itself" in text


def test_the_ib_retry_error_names_the_checks_not_one_cause() -> None:
    """Status 12 is the peer's adapter never acknowledging: a dead peer or the fabric, which the
    text tells apart by checks (DeepSpeed#2931)."""
    text = diagnoses.BY_ID["nccl_ib_retry"].text
    for check in ("`ib_write_bw`", "`NCCL_IB_GID_INDEX`", "`NCCL_IB_DISABLE=1`",
                  "first error on its node"):
        assert check in text, check


def test_a_launch_that_never_logged_in_is_not_asked_for_the_stacks_of_a_hang() -> None:
    """ColossalAI#5213 says it "hangs" after `colossalai run` failed to log in over ssh: no rank
    ever started, so py-spy stacks are moot."""
    found = [Diagnosed(id="colossalai_run_ssh")]
    assert {"stacks", "nccl_debug"} <= diagnoses.moot(found)


def test_a_tokenizer_class_misspelt_in_the_checkpoint_is_not_asked_for_versions() -> None:
    """The fix is one line of the checkpoint's ``tokenizer_config.json`` whatever the versions
    (ColossalAI#3334 was asked for ``colossalai check -i`` beside it)."""
    assert "versions" in diagnoses.moot([Diagnosed(id="llama_tokenizer_name")])


def test_review_spellings_and_near_misses_of_the_new_entries() -> None:
    """NCCL's "NET/IB/GIN : " spelling is found through the words as by the regex; a missing
    compiled ``colossalai._C`` is the kernels' case, not a moved module; a Transformers Trainer
    alone, which uses DataParallel by design, gets no launcher advice."""
    assert ids("NET/IB/GIN : Got completion from peer 10.0.0.2<4> with status=12 opcode 0") \
        == ["nccl_ib_retry"]
    assert "colossalai_moved" not in ids("ModuleNotFoundError: No module named 'colossalai._C'")
    replica = "RuntimeError: Caught RuntimeError in replica 1 on device 1."
    assert ids(f"transformers Trainer\n{replica}") == []
    assert ids(f"deepspeed 0.9\n{replica}") == ["data_parallel_replica"]


def test_a_zero3_placeholder_is_not_told_to_rebuild_the_model() -> None:
    """A parameter of ``torch.Size([0])`` is ZeRO-3's placeholder, not another config: the generic
    size mismatch ("build it with the checkpoint's config") gives way to the ZeRO-3 entry."""
    title, log = LOGS["zero3_empty_param"]
    assert [d.id for d in diagnoses.find(log)] == ["zero3_empty_param"]
    assert [d.id for d in diagnoses.find(LOGS["size_mismatch"][1])] == ["size_mismatch"]
    assert "GatheredParameters" in diagnoses.BY_ID["zero3_empty_param"].text


def test_megatrons_compiled_helpers_are_not_read_as_another_release() -> None:
    """``cannot import name 'helpers'`` from Megatron's datasets is its C++ module not built, which
    "install the release the code was written for" would not fix; another name is still a release's."""
    log = LOGS["megatron_helpers"][1]
    assert [d.id for d in diagnoses.find(log)] == ["megatron_helpers"]
    other = "ImportError: cannot import name 'helpers' from 'megatron.core.datasets.utils_extra'"
    assert [d.id for d in diagnoses.find(other)] == ["import_name"]
    moved = "ImportError: cannot import name 'get_blend_from_list' from 'megatron.core.datasets'"
    assert [d.id for d in diagnoses.find(moved)] == ["import_name"]


def test_a_compile_refusing_the_host_compiler_says_why_the_build_failed() -> None:
    """The JIT build's generic failure gives way to the compiler's named refusal."""
    log = LOGS["nvcc_gcc_too_new"][1] + "\nRuntimeError: Error building extension 'fused_adam'"
    assert [d.id for d in diagnoses.find(log)] == ["nvcc_gcc_too_new", "jit_build_failed"]
    assert ids(report("fused_adam fails", log)) == ["nvcc_gcc_too_new"]


def test_cudas_named_reason_replaces_the_generic_no_gpu_advice() -> None:
    """Error 802 to 804 printed before "No CUDA GPUs are available" say what to fix; the generic
    check of the visible devices would only add steps the reason makes moot."""
    for diagnosis_id in ("cuda_fabric_manager", "cuda_driver_mismatch"):
        log = LOGS[diagnosis_id][1] + "\nRuntimeError: No CUDA GPUs are available"
        assert [d.id for d in diagnoses.find(log)] == [diagnosis_id]
    assert [d.id for d in diagnoses.find("RuntimeError: No CUDA GPUs are available")] == \
        ["no_gpu_visible"]


def test_a_device_side_assert_gives_way_to_any_error_that_says_more() -> None:
    """It says that a kernel's check failed, not which: shown only when nothing else explains."""
    assert diagnoses.BY_ID["device_side_assert"].generic
    log = LOGS["device_side_assert"][1] + "\n" + LOGS["ddp_unused"][1]
    assert ids(report("It fails", log)) == ["ddp_unused"]


def test_the_sighup_advice_does_not_rely_on_nohup() -> None:
    """torchrun installs its own SIGHUP handler, replacing the one ``nohup`` ignores: the text
    says so and gives the ways that detach the job."""
    text = diagnoses.BY_ID["torchrun_sighup"].text
    assert "`nohup` does not help" in text
    for way in ("`tmux`", "`setsid`", "`sbatch`"):
        assert way in text, way


def test_colossalai_on_windows_needs_the_package_or_its_launcher_named() -> None:
    """Windows's shell refusing ``export`` is Colossal-AI's launcher only when Colossal-AI is in
    the report; a WSL path is Linux."""
    refusal = "'export' is not recognized as an internal or external command,"
    assert [d.id for d in diagnoses.find(f"colossalai run train.py\n{refusal}")] == \
        ["colossalai_windows"]
    assert diagnoses.find(refusal) == ()
    assert diagnoses.find("/mnt/c/Users/u/ColossalAI/colossalai/initialize.py") == ()



def test_only_the_shells_refusal_links_two_colossalai_windows_reports() -> None:
    """The launcher's ``export`` refused by Windows's shell is one error with one fix, so it links
    reports; a traceback through a Windows install says only where it ran, whatever stopped it,
    and is not shown beside the refusal."""
    refusal = ("colossalai run train.py\n'export' is not recognized as an internal or external "
               "command,")
    path = ("  File \"C:\\Users\\u\\venv\\Lib\\site-packages\\colossalai\\booster\\booster.py\", "
            "line 9\nRuntimeError: No extension found")
    assert diagnoses.linking(diagnoses.find(refusal)) == ("colossalai_windows",)
    assert [d.id for d in diagnoses.find(path)] == ["colossalai_win_path"]
    assert diagnoses.linking(diagnoses.find(path)) == ()
    assert [d.id for d in diagnoses.find(f"{refusal}\n{path}")] == ["colossalai_windows"]


def test_transformer_engines_compiled_part_is_read_by_its_name_and_release() -> None:
    """``transformer_engine_torch`` missing is an install before 1.8 (or a broken one): the text
    says to upgrade; ``transformer_engine_extensions`` missing is code older than 1.8 on a newer
    install: the text says which release of either to take."""
    new = "ModuleNotFoundError: No module named 'transformer_engine_torch'"
    old = "ModuleNotFoundError: No module named 'transformer_engine_extensions'"
    assert [d.id for d in diagnoses.find(new)] == ["te_pytorch_import"]
    assert [d.id for d in diagnoses.find(old)] == ["te_extensions_renamed"]
    assert "`transformer_engine_extensions`" in diagnoses.BY_ID["te_pytorch_import"].text
    assert "upgrade it" in diagnoses.BY_ID["te_pytorch_import"].text
    assert "`transformer_engine<1.8`" in diagnoses.BY_ID["te_extensions_renamed"].text


def test_megatrons_helpers_are_built_where_the_code_runs() -> None:
    """Megatron-DeepSpeed and older Megatron-LM keep the helpers' Makefile in ``megatron/data``;
    a plain ``pip install .`` builds them away from the checkout that runs."""
    text = diagnoses.BY_ID["megatron_helpers"].text
    for said in ("`make -C megatron/core/datasets`", "`megatron/data`", "`pip install -e .`",
                 "on each node"):
        assert said in text, said
    log = ("  File \"/workspace/Megatron-DeepSpeed/megatron/data/gpt_dataset.py\", line 318, in "
           "_build_index_mappings\n    from megatron.data import helpers\nImportError: cannot import "
           "name 'helpers' from 'megatron.data' (/workspace/Megatron-DeepSpeed/megatron/data/"
           "__init__.py)")
    assert [d.id for d in diagnoses.find(log)] == ["megatron_helpers"]


def test_only_nvmls_own_mismatch_replaces_the_generic_no_gpu_advice() -> None:
    """NVML's own messages say what to fix; the reporter's words naming the mismatch do not, and
    the generic check of the visible devices stays."""
    no_gpu = "RuntimeError: No CUDA GPUs are available"
    for nvml in ("Failed to initialize NVML: Driver/library version mismatch",
                 "pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version "
                 "mismatch."):
        assert [d.id for d in diagnoses.find(f"{nvml}\n{no_gpu}")] == ["cuda_driver_mismatch"]
    said = f"nvidia-smi says Driver/library version mismatch\n{no_gpu}"
    assert [d.id for d in diagnoses.find(said)] == ["no_gpu_visible"]


def test_apexs_refusal_is_not_repeated_by_the_env_rule() -> None:
    """Apex's own check names PyTorch's CUDA version and says what to do: the env rule's CUDA
    mismatch (torch and nvcc of different majors while building) would say it twice."""
    title, log = LOGS["apex_cuda_mismatch"]
    text = full_text(title, log)
    env = Environment(cuda_torch="12.1", cuda_nvcc="11.8")
    assert ids(text, env) == ["apex_cuda_mismatch"]
    assert "even a minor difference (12.4 against 12.1) is refused" in \
        diagnoses.BY_ID["apex_cuda_mismatch"].text
    # without Apex's refusal, the env rule still speaks
    build = full_text("fused_adam fails to build", "RuntimeError: Error building extension "
                      "'fused_adam'")
    assert ids(build, env)[0] == "cuda_mismatch"
