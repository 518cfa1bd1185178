"""Plain-language descriptions of every taxonomy id, and first-aid advice per fix pattern.

Kept apart from ``taxonomy`` so the lookup code stays short. Written in our own words for two
readers: the user who sees a label in the bot's comment and wants to know what it means, and the
LLM prompt that must tell neighbouring categories apart. A test checks that no description repeats
the paper's prose.
"""
from __future__ import annotations

_STAGES = {
    "S1": "Getting the framework onto the machine: pip or source installs, compiling its C++/CUDA "
    "ops (fused_adam, cpu_adam, async_io) and importing its modules.",
    "S2": "Bringing the processes up before any step runs: launchers such as deepspeed, torchrun, "
    "colossalai run, srun or mpirun, rank and address variables, and the first NCCL/Gloo handshake.",
    "S3": "Reading datasets, tokenizers, weights and configs and wrapping the model in the parallel "
    "engine (deepspeed.initialize, ZeRO-3 init, Gemini, tensor or pipeline splits).",
    "S4": "Problems that show up once iterations run: loss or speed anomalies, memory exhaustion, "
    "crashes in forward/backward/step, collective failures, hangs and checkpoint save/resume.",
    "S5": "Generating with or serving a trained model (for example DeepSpeed-Inference with kernel "
    "injection or tensor-parallel generation): crashes, memory spikes, odd outputs, latency.",
}

_SYMPTOMS = {
    "1.1": "pip install or a source build stops, usually while compiling native ops, e.g. "
    "\"error: command 'gcc' failed\", nvcc errors in fused_adam, or an illegal instruction on an old CPU.",
    "1.2": "The package installed, but importing it or calling its API fails: ModuleNotFoundError, "
    "\"cannot import name\", a moved module path or a SyntaxError in the installed code.",
    "1.3": "Something needed to get started cannot be fetched: a Docker tag that will not pull, "
    "missing source, or an example script or dataset link that no longer works.",
    "2.1": "Processes do not come up correctly: the launcher misparses arguments, ranks or devices "
    "are wrong, GPUs are not visible, ports clash, or init_process_group never returns.",
    "2.2": "GPUs or nodes cannot reach each other when the group forms: \"Connection refused\", "
    "ncclInternalError or an NCCL timeout during the first collective.",
    "2.3": "A setting made at setup time is wrong in a way that is not specific to networking, "
    "such as the optimizer choice or the data type.",
    "3.1": "Weights, checkpoints or data cannot be read or partitioned, e.g. FileNotFoundError, a "
    "corrupted zip archive or shards that do not split evenly across ranks.",
    "3.2": "The engine or model is set up with wrong arguments or feature combinations, e.g. an "
    "invalid ds_config key or an optimizer the ZeRO stage does not accept.",
    "3.3": "Data and model do not fit together before training: size mismatch while loading a "
    "state dict, vocab size differences, or meta tensors that were never materialised.",
    "3.4": "Memory or speed goes wrong while the model is being built or sharded, such as CUDA OOM "
    "during ZeRO-3 initialisation or a peak far above what the model needs.",
    "3.5": "Generic mistakes while preparing data or model: undefined names, a wrong data "
    "directory, or a library version that behaves differently.",
    "4.1": "Training runs but the numbers are off: low TFLOPs or samples/sec, loss that will not "
    "go down, NaN/overflow, loss-scale trouble, or wrong metrics logged.",
    "4.2": "GPU or host memory runs out or leaks during training, or ZeRO offload to CPU/NVMe "
    "misbehaves, e.g. \"CUDA out of memory\" at step N or an AIO failure.",
    "4.3": "A Python-level exception during training such as AttributeError, NotImplementedError, "
    "TypeError or an API called the wrong way.",
    "4.4": "The training loop itself misbehaves: steps fail or are skipped, several models under "
    "one engine clash, or loss scaling with quantisation interrupts the run.",
    "4.5": "A framework feature does not do its job: profiler, monitor, scheduler, activation "
    "checkpointing, MoE, compression or asynchronous I/O.",
    "4.6": "Tensors or parameters have the wrong shape or dtype during training, e.g. \"size "
    "mismatch\", Half vs Float, or inconsistent shard sizes across ranks.",
    "4.7": "Collectives fail after training has started: NCCL errors or watchdog timeouts in "
    "all_reduce/all_gather, broken links between nodes, or segfaults in communication.",
    "4.8": "The job dies without a clear Python error: killed by the OOM killer, signal 9, a "
    "child process exiting with a non-zero code.",
    "4.9": "Devices or other resources are not usable during training, for example a GPU that is "
    "not recognised or not enough disk or shared memory.",
    "4.10": "Saving, loading or converting checkpoints fails or produces wrong files: missing "
    "shards, zero_to_fp32 problems, resume that restores the wrong state.",
    "4.11": "Training stops making progress without an error: one rank waits forever, GPUs sit "
    "at full utilisation doing nothing, or processes become zombies.",
    "4.12": "Training breaks because two versions no longer agree, e.g. a deprecated call removed "
    "in a newer torch or transformers release.",
    "5.1": "Inference or serving crashes or stops: errors in generate(), stuck multi-GPU "
    "generation, or a server process that exits.",
    "5.2": "Memory runs out or spikes while loading or running a model for inference, on the GPU "
    "or on the host.",
    "5.3": "Generated outputs are wrong, garbled or differ between GPUs, runs, or the plain "
    "Hugging Face model.",
    "5.4": "Inference is slower than expected: latency or tokens per second does not improve "
    "with kernel injection or more GPUs.",
    "5.5": "A model or its sharded weights cannot be loaded for inference, e.g. missing files or "
    "a checkpoint layout the engine does not understand.",
    "5.6": "Building the inference kernels or compiling the model (Triton, JIT, torch.compile) "
    "fails.",
    "5.7": "The inference path does not run on this GPU or platform, such as kernels unsupported "
    "on T4 or Triton failing on a given card.",
    "5.8": "Shapes of sharded weights or activations disagree at inference time, e.g. a "
    "tensor-parallel split that leaves mismatched dimensions.",
    "5.9": "An inference feature runs but does not behave as documented, such as a sampling or "
    "stopping option being ignored.",
    "5.10": "Problems putting the model into service: containers, endpoints, multi-node serving "
    "setups that work poorly.",
    "5.11": "Importing the inference package or one of its modules fails.",
}

_ROOT_CAUSES = {
    "R1.1": "Versions that do not fit together: torch vs CUDA vs nvcc, Python, OS, or a "
    "requirement pin that is outdated or wrong.",
    "R1.2": "The compiler toolchain is broken or incomplete: wrong gcc/nvcc/CMake, missing link "
    "libraries, a failing wheel build, or a stale JIT cache in ~/.cache/torch_extensions.",
    "R1.3": "Something required is simply absent: an uninstalled Python package, a system "
    "library such as libaio, ops that were never built, or a missing symlink.",
    "R1.4": "Paths or environment point to the wrong place: CUDA_HOME unset, the wrong "
    "virtualenv, or an import path that changed.",
    "R1.5": "A temporary outside problem: a dead link, a registry or network outage, or a "
    "mistagged Docker image.",
    "R1.6": "A bug in the framework's own packaging or platform code, such as broken path "
    "handling in its setup script.",
    "R2.1": "The launcher or its environment is used wrongly: bad hostfile or arguments, "
    "variables like MASTER_ADDR or CUDA_VISIBLE_DEVICES not passed to every node.",
    "R2.2": "Software pieces do not match for distributed use: NCCL on an unsupported OS, "
    "compiler or library versions that disagree between nodes.",
    "R2.3": "The network or system blocks the processes: SSH access, firewalls, wrong interfaces, "
    "InfiniBand or P2P settings that NCCL cannot use.",
    "R2.4": "The user misread how the launcher or its variables work, often because the "
    "documentation leaves it unclear.",
    "R3.1": "Framework APIs or preparation settings are used the wrong way, for example a "
    "sharding setting that puts a whole large model on each GPU.",
    "R3.2": "Data paths, tokenizer vocabularies or the ZeRO initialisation strategy are set up "
    "incorrectly.",
    "R3.3": "Parameters, tensors or model structure do not line up, e.g. checkpoint shapes that "
    "differ from the model definition or flattened shards.",
    "R3.4": "A dependency or framework feature is not compatible with the chosen setup, such as "
    "an optimizer that ZeRO does not support.",
    "R4.1": "A system or tool setting is wrong: ZeRO, sharding, batch size, launcher options or "
    "device selection.",
    "R4.2": "Components that do not work together: hardware, drivers, library versions, models "
    "and framework features.",
    "R4.3": "Numerics or the algorithm are unstable: fp16 overflow, loss-scale settings, "
    "precision-sensitive kernels.",
    "R4.4": "A bug in the code itself, in the user's script or the framework's kernels, "
    "optimizer, logging or RNG handling.",
    "R4.5": "Not enough memory, disk or compute for the job, or resources used wastefully.",
    "R4.6": "Data, model and computation graph disagree: dtype or vocab mismatches, a model "
    "called twice per step, layers unsuited to the chosen parallelism.",
    "R4.7": "Communication between ranks breaks down: NCCL peer-to-peer problems, ranks doing "
    "different amounts of work, out-of-sync pipeline or tensor-parallel groups.",
    "R4.8": "The framework's design does not cover this case yet or its optimisation is "
    "limited, so the fix lives in the framework.",
    "R5.1": "Resources or distributed settings for inference are wrong: sharding, mp_size versus "
    "world size, shared memory, command-line arguments.",
    "R5.2": "The inference code path itself is faulty or limited: batching, token limits, "
    "generation or sampling logic.",
    "R5.3": "Dependencies or hardware do not match the inference kernels: compilers, library "
    "versions, GPU generations.",
    "R5.4": "The inference API is called the wrong way, or a required setup step is skipped.",
    "R5.5": "The model and the framework (or the serving tool) do not fit together by design.",
    "R5.6": "Loading the model for parallel inference wastes memory or is done in a way that "
    "fails, e.g. every process loading full weights into RAM.",
}

_FIX_PATTERNS = {
    "F1": "Change how the job is set up and launched: environment variables, launcher flags, "
    "hostfiles, paths.",
    "F2": "Install matching versions: upgrade or pin the framework, torch, CUDA or a "
    "dependency, or rebuild against the right toolkit.",
    "F3": "Adjust how the framework's distributed features are used: ZeRO stage, offload, "
    "parallel sizes, communication options, API arguments.",
    "F4": "Fix the machines or the network: drivers, interconnect, firewall, SSH, faulty GPUs.",
    "F5": "Reduce or rearrange resource use: smaller batches, offload, sharding, data size, "
    "lighter models.",
    "F6": "Change code: patch the user's script, fix the framework's logic, or change how the "
    "model is served.",
}

DESCRIPTIONS: dict[str, str] = {**_STAGES, **_SYMPTOMS, **_ROOT_CAUSES, **_FIX_PATTERNS}

FIX_ADVICE: dict[str, list[str]] = {
    "F1": [
        "Print MASTER_ADDR, MASTER_PORT, RANK, LOCAL_RANK and WORLD_SIZE on every rank and "
        "compare them.",
        "Check that CUDA_VISIBLE_DEVICES and other variables reach every node (for DeepSpeed "
        "multi-node runs, list them in a .deepspeed_env file).",
        "Run the same command with a single node and a single GPU first, then scale up.",
    ],
    "F2": [
        "Check that torch.version.cuda matches the toolkit shown by nvcc --version.",
        "Compare your versions against the framework's requirements or a release known to work, "
        "and pin them.",
        "Clear ~/.cache/torch_extensions and reinstall with pip install --no-build-isolation.",
        "Run ds_report (DeepSpeed) or colossalai check -i (Colossal-AI) and fix ops marked "
        "incompatible.",
    ],
    "F3": [
        "Try another ZeRO stage or switch offload on or off to isolate the feature at fault.",
        "Check that tensor, pipeline and data parallel sizes multiply to the world size.",
        "Re-read the config keys of the feature you use (ds_config, plugin or Megatron "
        "arguments) against the current documentation.",
    ],
    "F4": [
        "Run with NCCL_DEBUG=INFO and look at which interface and transport NCCL picks.",
        "Check passwordless SSH, open ports and firewalls between all nodes.",
        "Run nvidia-smi topo -m and a small all_reduce test to find a bad GPU or link.",
    ],
    "F5": [
        "Lower the micro batch size and raise gradient accumulation to keep the global batch.",
        "Enable activation checkpointing or a higher ZeRO stage, or offload to CPU.",
        "Watch memory with nvidia-smi or torch.cuda.max_memory_allocated to find the peak.",
    ],
    "F6": [
        "Reduce the failure to a minimal script and check your own training or serving code "
        "first.",
        "Search the framework's recent commits and releases for a fix of the same error.",
        "If the framework logic is at fault, patch it locally and report the patch upstream.",
    ],
}
