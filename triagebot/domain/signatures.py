"""Error signatures and keywords of distributed deep-learning bugs, with the labels they point to.

Each ``Signal`` is one family of tell-tale strings (compiler errors, NCCL failures, OOM messages,
launcher flags, ...) and the taxonomy ids it is evidence for, weighted by how strongly. The
weights are domain knowledge about DeepSpeed, Megatron-LM, Colossal-AI, Horovod and
torch.distributed, written once and never fitted to particular issues; a learned classifier can
re-weight the same signals through ``rules.features``. Stage, symptom, root-cause and fix-pattern
ids never collide, so one ``votes`` dict holds all four dimensions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Signal:
    """A keyword family: its pattern, the labels it supports, and whether it implies distribution."""

    name: str
    pattern: re.Pattern[str]
    votes: dict[str, float] = field(default_factory=dict)
    distributed: float = 0.0
    # Votes that replace ``votes`` once the text shows training had already been running: the
    # same NCCL error means a setup problem at start-up but a communication error at step 2000.
    in_training: dict[str, float] | None = None


def _s(name: str, pattern: str, votes: dict[str, float], distributed: float = 0.0,
       flags: int = re.I, in_training: dict[str, float] | None = None) -> Signal:
    return Signal(name, re.compile(pattern, flags), votes, distributed, in_training)


SIGNALS: list[Signal] = [
    # --- S1: package build & import -------------------------------------------------------
    _s("build_compiler", r"error: command '[^'\n]{0,80}(?:gcc|g\+\+|c\+\+|cl\.exe|nvcc)'|nvcc fatal|"
       r"cc1plus|collect2|ld: cannot find|CMake Error|compilation terminated|error: identifier|"
       r"#error|fatal error: [\w/.]+\.h",
       {"S1": 3, "1.1": 3, "R1.2": 2, "R1.1": 1, "F2": 1, "5.6": 2}),
    _s("build_tooling", r"Failed building wheel|Building wheel|bdist_wheel|setup\.py|"
       r"subprocess-exited-with-error|legacy-install-failure|--no-build-isolation|\bninja\b|"
       r"pip3? install|conda install|build_ext|from source",
       {"S1": 2, "1.1": 2, "R1.2": 1, "F2": 1}),
    _s("build_ops", r"op_builder|DS_BUILD_\w+|\bCUDA_EXT\b|BUILD_EXT|cpp_extension|torch_extensions|"
       r"\bJIT\b|fused_adam|cpu_adam|async_io|transformer_inference|fused_lamb|TORCH_CUDA_ARCH_LIST|"
       r"colossalai\.kernel|csrc/|\.cu\b|ds_report",
       {"S1": 1.5, "1.1": 2, "R1.2": 1, "R1.3": 0.5, "5.6": 1}),
    _s("cuda_home", r"CUDA_HOME|CUDA_PATH|nvcc: not found|nvcc not found|No CUDA runtime is found|"
       r"cuda_runtime(?:_api)?\.h|libcudart|LD_LIBRARY_PATH|CUDA_HOME environment variable",
       {"S1": 2, "1.1": 1.5, "R1.4": 2.5, "F1": 1.5}),
    _s("shared_object", r"undefined symbol|cannot open shared object file|GLIBCXX_\d|GLIBC_\d|"
       r"libstdc\+\+|\.so: cannot|ELF header",
       {"S1": 2, "1.1": 1, "1.2": 1.5, "R1.1": 2, "R1.2": 1, "F2": 2}),
    _s("import_error", r"ModuleNotFoundError|ImportError|No module named|cannot import name|"
       r"failed to import|import error",
       {"S1": 2.5, "1.2": 3, "5.11": 2, "R1.3": 1.5, "R1.1": 1, "F2": 1.5}),
    _s("syntax_error", r"SyntaxError|IndentationError|invalid syntax",
       {"S1": 1, "1.2": 2, "R1.1": 1, "F2": 1}),
    _s("version_conflict", r"which is incompatible|ResolutionImpossible|conflicting dependencies|"
       r"version conflict|requires (?:torch|python|cuda)|unsupported (?:version|python)|"
       r"incompatible (?:version|with)|not compatible with|only supports?|mismatch(?:ed)? versions?|"
       r"version mismatch|compiled (?:against|with) (?:a )?different",
       {"S1": 1.5, "1.1": 1, "R1.1": 3, "R2.2": 1, "R3.4": 1.5, "R4.2": 1.5, "R5.3": 1.5, "4.12": 1.5,
        "F2": 3}),
    _s("platform", r"\bwindows\b|\bwin(?:10|11|32|64)\b|\bWSL2?\b|macOS|\bmac os|apple silicon|"
       r"\barm64\b|aarch64|ppc64|\bROCm\b|\bHIP\b|AVX-?512|illegal instruction|\bMPS\b",
       {"S1": 1.5, "1.1": 1.5, "R1.1": 1.5, "R2.2": 1, "5.7": 1, "R5.3": 1, "F2": 1.5}),
    _s("acquisition", r"docker pull|manifest unknown|pull access denied|broken link|dead link|"
       r"link is (?:broken|dead|invalid)|unable to download|download(?:ing)? (?:fails?|error)|"
       r"HTTP Error 40[34]|404 Not Found|ReadTimeout|rate limit",
       {"S1": 1.5, "1.3": 3, "R1.5": 3, "F4": 1}),
    _s("install_words", r"\binstall(?:ation|ing|ed)?\b|\bcompil(?:e|ed|ing|ation)\b|\bwheel\b|"
       r"\brequirements\.txt\b|\bpip\b",
       {"S1": 1, "1.1": 1, "R1.1": 0.5}),
    # --- S2: communication setup ----------------------------------------------------------
    _s("launcher_flags", r"--hostfile|--master[_-]addr|--master[_-]port|--nnodes|--node[_-]rank|"
       r"--nproc[_-]per[_-]node|--num[_-]gpus|--num[_-]nodes|--include|--launcher|hostfile|\bpdsh\b|"
       r"\.deepspeed_env",
       {"S2": 2, "2.1": 2, "R2.1": 2, "F1": 1.5}, distributed=1.5),
    _s("launcher_cmd", r"\btorchrun\b|torch\.distributed\.(?:launch|run)|colossalai run|"
       r"accelerate launch|horovodrun|\bmpirun\b|\bmpiexec\b|\bsrun\b|\bsbatch\b|"
       r"(?:^|\s)deepspeed\s+(?:--[\w-]+|[\w./-]+\.py)",
       {"S2": 1, "2.1": 1, "R2.1": 1}, distributed=1.5, flags=re.I | re.M),
    _s("rank_env", r"MASTER_ADDR|MASTER_PORT|LOCAL_RANK|WORLD_SIZE|\bRANK\b|node_rank|local_rank|"
       r"world_size|CUDA_VISIBLE_DEVICES|SLURM_\w+|OMPI_\w+|PMI_\w+",
       {"S2": 2, "2.1": 2, "R2.1": 2, "R2.4": 1, "F1": 2}, distributed=2),
    _s("pg_init", r"init_process_group|init_distributed|colossalai\.launch|launch_from_torch|"
       r"initialize_model_parallel|rendezvous|\bc10d\b|TCPStore|store_based_barrier|"
       r"DistStoreError|hvd\.init|MPI_Init",
       {"S2": 3, "2.1": 2.5, "R2.1": 1.5, "F1": 1}, distributed=2),
    _s("nccl", r"NCCL error|ncclInternalError|ncclSystemError|ncclUnhandledCudaError|ncclRemoteError|"
       r"ncclInvalidUsage|NCCL WARN|NCCL_[A-Z_]+|\bNCCL\b|ProcessGroupNCCL",
       {"S2": 1.5, "S4": 0.6, "2.2": 2.5, "4.7": 2.5, "R2.3": 1.5, "R4.7": 2, "F4": 1, "F3": 0.5},
       distributed=2.5, in_training={"S4": 2, "4.7": 3, "R4.7": 2.5, "F3": 1}),
    _s("connection", r"Connection refused|Connection reset|Connection closed by|No route to host|"
       r"Address already in use|EADDRINUSE|errno: ?(?:111|98|113)|Network is unreachable|"
       r"\bfirewall\b|\bInfiniBand\b|\bRoCE\b|\bibv_|passwordless|ssh: connect|Permission denied \(publickey|"
       r"socket|DistNetworkError",
       {"S2": 3, "2.2": 3, "2.1": 1, "4.7": 1, "R2.3": 3, "F4": 2.5}, distributed=2.5,
       in_training={"S4": 2, "4.7": 2.5, "R4.7": 2, "F4": 1.5}),
    _s("coll_timeout", r"Watchdog caught collective operation timeout|collective operation timeout|"
       r"Timeout\(ms\)|timed out|\btimeout\b|DEADLINE_EXCEEDED|heartbeat",
       {"S2": 1, "S4": 0.8, "2.2": 2, "4.7": 2, "4.11": 1, "R4.7": 1.5, "R2.3": 1, "F3": 1},
       distributed=1.5, in_training={"S4": 1.5, "4.7": 2.5, "4.11": 1.5, "R4.7": 2, "F3": 1}),
    _s("device_detect", r"no CUDA GPUs are available|invalid device ordinal|cudaErrorNoDevice|"
       r"is_available\(\)\s*(?:returns?|is|=)?\s*False|device count|only \d+ GPUs? (?:found|visible|detected)|"
       r"(?:not|cannot|can't|unable to) (?:detect|find|see|recogni[sz]e) (?:the |any |all )?GPUs?|"
       r"GPUs? (?:not|is not|are not) (?:found|detected|recogni[sz]ed|visible)",
       {"S2": 2.5, "2.1": 2.5, "4.9": 2, "R2.1": 1.5, "R4.2": 1, "F1": 1.5}, distributed=1),
    _s("multi_node", r"multi[- ]?node|multiple (?:nodes|machines|hosts)|\b\d+\s*nodes\b|two nodes|"
       r"inter[- ]node|cross[- ]node|across (?:nodes|machines)|\bworker-?\d+:",
       {"S2": 1.5, "2.1": 1, "2.2": 1, "R2.1": 1, "R2.3": 1}, distributed=2.5),
    _s("mpi_slurm", r"\bslurm\b|\bsrun\b|\bopenmpi\b|\bmpi4py\b|\bgloo\b|\bLSF\b|\bPBS\b|\bkubernetes\b|"
       r"\bk8s\b|\bdocker swarm\b",
       {"S2": 1.5, "2.1": 1.5, "R2.1": 1, "R2.3": 1, "F1": 1}, distributed=1.5),
    # --- S3: data & model preparation -----------------------------------------------------
    _s("dataset", r"\bdataset\b|dataloader|data loader|tokeni[sz]er|\bvocab|preprocess|"
       r"\.idx\b|indexed dataset|data[_-]path|merge[_-]file|DistributedSampler|\bsampler\b|\.jsonl\b|"
       r"blendable|data_impl",
       {"S3": 2, "3.1": 2, "R3.2": 2, "3.3": 0.5}),
    _s("model_load", r"from_pretrained|load_state_dict|safetensors|pytorch_model\.bin|"
       r"PytorchStreamReader|central directory|checkpoint[_ ]conver|convert(?:ing)? (?:the |a )?"
       r"(?:hf |huggingface )?(?:checkpoint|model|weights)|hf2mcore|\bloader_|\bsaver_",
       {"S3": 2, "3.1": 2.5, "5.5": 2, "R3.2": 1, "R5.6": 1}),
    _s("zero_init", r"zero\.Init|zero_init|deepspeed\.initialize|GeminiDDP|\bGemini\b|LowLevelZero|"
       r"HybridParallelPlugin|\bbooster\b|\bplugin\b|\bprepare\(|engine initiali[sz]",
       {"S3": 2, "3.2": 2, "3.4": 0.5, "R3.1": 2, "R3.2": 1, "F3": 1.5}, distributed=1.5),
    _s("file_missing", r"FileNotFoundError|No such file or directory|does not exist|"
       r"(?:cannot|can't|could not|unable to) (?:find|locate|open)",
       {"S3": 1.5, "3.1": 2, "5.5": 1, "4.10": 1, "R3.2": 2, "1.2": 0.5, "R1.4": 1, "F1": 1.5}),
    _s("meta_tensor", r"meta tensor|meta device|Cannot copy out of meta|is_meta|\bmeta\b.{0,20}tensor",
       {"S3": 2.5, "3.3": 2.5, "R3.3": 2, "F3": 1}, distributed=1),
    _s("config_error", r"ds_config|config\.json|zero_optimization|\bconfig(?:uration)?\b|"
       r"unrecognized arguments|invalid choice|KeyError|ValidationError|extra fields not permitted|"
       r"is not a valid|must be (?:set|specified|divisible|one of|an? )|should be divisible",
       {"S3": 1, "3.2": 2, "2.3": 1.5, "R3.1": 1.5, "R4.1": 1.5, "R5.1": 1, "F3": 1.5, "F1": 0.5}),
    _s("shape_mismatch", r"size mismatch|shape mismatch|shapes cannot be multiplied|mat1 and mat2|"
       r"must match the size|does not match|doesn't match|dimension(?:s)? (?:mismatch|out of range)|"
       r"mismatch(?:ed)? (?:in )?(?:shape|size|dim)|invalid for input of size|\bshape\b",
       {"S3": 1, "S4": 0.5, "3.3": 2.5, "4.6": 2.5, "5.8": 2.5, "R3.3": 2, "R4.6": 2, "F6": 1}),
    _s("dtype_mismatch", r"expected scalar type|dtype|Half and Float|BFloat16|Float16|found at least two "
       r"devices|Expected all tensors to be on the same device|expected .{0,30}but (?:got|found)",
       {"3.3": 1.5, "4.6": 2, "5.8": 1.5, "R4.6": 1.5, "R3.3": 1, "F6": 1}),
    # --- S4: training & evaluation --------------------------------------------------------
    _s("training", r"\btrain(?:ing|er|s)?\b|\biteration|\bepochs?\b|backward|optimizer\.step|"
       r"engine\.step|\bfine-?tun|\bpre-?train|gradient accumulation|learning rate|\bwarmup|"
       r"pretrain_gpt|finetune|\bloss\b|global_step|micro[_ -]batch",
       {"S4": 1.5, "4.4": 0.5}),
    _s("training_started", r"after (?:\d+|a few|some|several|many) (?:steps|iterations|iters|epochs|"
       r"hours|minutes)|(?:at|in|on) (?:step|iteration|iter|epoch) \d+|during (?:the )?training|"
       r"(?:in the )?middle of (?:the )?training|mid-training|training (?:runs|ran|works|worked|goes|"
       r"went|proceeds) (?:fine|well|normally|ok)|elapsed time per iteration|\blm loss\b|"
       r"\bloss\s*[:=]\s*\d|\biteration\s+\d+\s*/",
       {"S4": 2}),
    _s("gpu_oom", r"CUDA out of memory|OutOfMemoryError|out of memory|\bOOM\b|CUBLAS_STATUS_ALLOC_FAILED",
       {"S4": 1.5, "S5": 0.3, "4.2": 3, "5.2": 3, "3.4": 2, "R4.5": 2, "R4.1": 1, "R5.1": 1,
        "R3.1": 1, "F5": 2, "F3": 1}, distributed=0.3),
    _s("host_oom", r"oom[- ]?killer|\bKilled\b|signal 9|SIGKILL|exit(?:code| code|_code)?[: ]*-9\b|"
       r"(?:CPU|host|system) (?:memory|RAM)|\bRAM\b|swap",
       {"S4": 1, "4.2": 1.5, "4.8": 2, "5.2": 1.5, "R4.5": 2, "R5.6": 1.5, "F5": 2}),
    _s("memory_words", r"memory (?:usage|consumption|leak|footprint|spike)|peak memory|\bVRAM\b|"
       r"GPU memory|max_memory_allocated|memory fragmentation|empty_cache|memory increas",
       {"S4": 1, "4.2": 2, "5.2": 1.5, "3.4": 1.5, "R4.5": 1.5, "F5": 1.5}),
    _s("offload", r"offload|\bnvme\b|\baio\b|libaio|cpu_offload|offload_optimizer|offload_param|"
       r"pin_memory|ZeRO-Infinity",
       {"S4": 1.5, "4.2": 2.5, "4.5": 1, "R4.1": 1.5, "F3": 1.5}, distributed=1.5),
    _s("numerics", r"\bnan\b|\binf\b|overflow|loss[ _]scal|Attempted loss scale|grad(?:ient)?[ _]norm|"
       r"\bdiverg|underflow|skipping step|loss (?:spikes?|explod|becomes|is) |fp16|bf16|mixed precision|"
       r"\bamp\b|dynamic_loss",
       {"S4": 2, "4.1": 2, "4.4": 1.5, "R4.3": 3, "F3": 1.5}),
    _s("performance", r"\bslow(?:er|ly|down)?\b|throughput|TFLOPs|TFLOPS|samples/s|samples per second|"
       r"tokens?/s|tok/s|\bit/s|\bs/it|latency|\bspeed(?:up)?\b|\bfaster\b|performance|profil|bandwidth|"
       r"utili[sz]ation|\bMFU\b|efficien",
       {"S4": 1.5, "4.1": 2.5, "5.4": 2.5, "3.4": 1, "R4.8": 1.5, "R4.1": 1, "F3": 1.5}),
    _s("accuracy", r"accuracy|converge|loss (?:does not|doesn't|not|never) (?:decrease|go down|drop)|"
       r"loss curve|perplexity|eval(?:uation)? loss|validation loss|lm loss|different (?:loss|results?)|"
       r"reproduc|wrong (?:result|value|gradient)",
       {"S4": 1.5, "4.1": 2.5, "5.3": 1, "R4.3": 1.5, "R4.4": 1}),
    _s("python_exc", r"AttributeError|NotImplementedError|NameError|TypeError|UnboundLocalError|"
       r"has no attribute|unexpected keyword argument|missing \d+ required positional|"
       r"is not (?:yet )?(?:supported|implemented)",
       {"S4": 1, "4.3": 2.5, "3.5": 1.5, "5.1": 1.5, "1.2": 1, "R4.4": 2, "R5.4": 1.5, "R4.2": 0.5,
        "F6": 2}),
    _s("runtime_error", r"RuntimeError|AssertionError|\bassert\b|ValueError|IndexError",
       {"4.3": 1, "4.4": 1, "3.2": 0.5, "5.1": 1, "R4.4": 1, "F6": 1}),
    _s("cuda_kernel", r"illegal memory access|device-side assert|CUBLAS_STATUS|CUDNN_STATUS|"
       r"CUDA error|misaligned address|an illegal instruction|cudaErrorIllegal|unspecified launch failure",
       {"S4": 1, "4.2": 1, "4.3": 1.5, "5.1": 1, "R4.4": 2, "R4.2": 1, "F6": 1, "F2": 1}),
    _s("crash", r"Segmentation fault|SIGSEGV|core dumped|signal 11|SIGABRT|terminate called|Bus error|"
       r"Fatal Python error|ChildFailedError|exits? with (?:return )?code|exited with|"
       r"returned non-zero exit status|Killing subprocess|SIGTERM|terminated",
       {"S4": 1, "4.8": 2.5, "5.1": 1.5, "4.7": 0.5, "R4.2": 1, "R4.5": 1, "F2": 0.5},
       distributed=0.5),
    _s("collective", r"all_?reduce|all_?gather|reduce_?scatter|\bbroadcast\b|\bbarrier\b|all_?to_?all|"
       r"\bcollective\b|\bp2p\b|isend|irecv|send/recv",
       {"S4": 1, "4.7": 2, "4.11": 1, "R4.7": 2.5, "F3": 1}, distributed=2),
    _s("hang", r"\bhangs?\b|\bhanging\b|\bhung\b|\bstuck\b|\bfreez|\bfrozen\b|deadlock|no progress|"
       r"never (?:finish|return|end|complete)|wait(?:s|ing)? (?:forever|indefinitely)|\bstall|zombie|"
       r"100% (?:GPU )?util",
       {"S4": 2, "S2": 0.5, "4.11": 3.5, "5.1": 1.5, "2.1": 1, "R4.7": 2, "F3": 1}, distributed=1),
    _s("checkpoint", r"checkpoint|load_checkpoint|save_checkpoint|zero_to_fp32|mp_rank_\d+|"
       r"global_step\d+|universal checkpoint|ds_to_universal|\bresum(?:e|ing)\b|optim_states|\.distcp|"
       r"dist_cp|save_pretrained|consolidat|state_dict|save_16bit_model",
       {"S4": 2, "4.10": 3.5, "3.1": 1, "5.5": 1, "R4.4": 1.5, "R4.2": 1, "F3": 1, "F6": 1}),
    _s("parallelism", r"tensor[- ]?(?:model[- ])?parallel|pipeline[- ]?(?:model[- ])?parallel|\btp_size|"
       r"\bpp_size|sequence[- ]parallel|context[- ]parallel|expert[- ]parallel|\bMoE\b|data[- ]parallel|"
       r"\bDDP\b|DistributedDataParallel|\bFSDP\b|\bZeRO\b|zero[_ ]stage|\"stage\":\s*[123]|"
       r"model[- ]parallel|\bmp_size\b|Ulysses|\bTP\s*=|\bPP\s*=",
       {"S4": 1, "R4.1": 1, "R4.7": 0.5, "F3": 1.5}, distributed=2),
    _s("incompat_words", r"deprecated|no longer (?:supported|exists)|removed in|was removed|"
       r"breaking change|regression|after (?:upgrading|updating|bumping)|new(?:er)? (?:version|release)|"
       r"older version|downgrad|upgrad|\bnightly\b",
       {"4.12": 2.5, "R4.2": 2, "R3.4": 1.5, "R5.3": 1, "R1.1": 1, "F2": 2.5}),
    _s("gpu_setup", r"nvidia-smi|driver version|CUDA driver version is insufficient|\bXid\b|\bECC\b|"
       r"NVLink|nvidia-smi topo|\bPCIe\b|shared memory|/dev/shm|\bdisk (?:space|full)|No space left",
       {"4.9": 2.5, "R4.2": 1, "R4.5": 1, "F4": 2, "F1": 0.5}),
    _s("component", r"profiler|flops_profiler|\bmonitor\b|wandb|tensorboard|\blogg(?:er|ing)\b|"
       r"lr[_ ]scheduler|\btimer\b|activation checkpointing|gradient checkpointing|curriculum|"
       r"compression|quantiz|\blora\b|\bpeft\b|\bMoE\b|autotun|comms_logger|eigenvalue",
       {"S4": 1, "4.5": 2.5, "R4.4": 1.5, "R4.8": 1, "F6": 1, "F3": 1}),
    # --- S5: inference --------------------------------------------------------------------
    _s("inference", r"init_inference|InferenceEngine|\binference\b|kernel_inject|"
       r"replace_with_kernel_inject|\.generate\(|\bgenerat(?:e|ion|ing)\b|text[- ]generation|serving|"
       r"\bserve\b|DeepSpeed-MII|\bMII\b|FastGen|\bvLLM\b|TensorRT|\bAutoTP\b|max_new_tokens|"
       r"max_tokens|top_[kp]\b|beam search|\bprompts?\b|\bdecod(?:e|ing)\b",
       {"S5": 3, "5.1": 1.5, "R5.2": 1.5, "R5.1": 0.5}),
    _s("inference_output", r"garbage|gibberish|nonsense|repeat(?:ed|ing|s)? (?:tokens|words|output)|"
       r"different (?:output|result|answer)s?|outputs? (?:is|are) (?:wrong|different|incorrect|empty)|"
       r"inconsisten|wrong output|incorrect output|not the same|differ(?:s|ent)? from (?:huggingface|hf|"
       r"baseline|the original)",
       {"S5": 1.5, "5.3": 3, "4.1": 1, "R5.2": 2, "R5.4": 1, "F6": 1}),
    _s("serving", r"\bdocker\b|kubernetes|\bk8s\b|\bdeploy|endpoint|\bgrpc\b|REST API|\bserver\b|"
       r"\bclient\b|\bport\b",
       {"5.10": 2, "S5": 0.5, "R5.1": 1, "F1": 1}),
    _s("jit_compile", r"\btriton\b|torch\.compile|inductor|\bjit\b|compil(?:e|ation|ing) (?:the )?kernel|"
       r"cuda graph",
       {"5.6": 2, "5.7": 1, "R5.3": 2, "1.1": 0.5, "F2": 1}),
    _s("hardware_compat", r"\bT4\b|\bV100\b|\bsm_\d\d|compute capability|arch(?:itecture)? (?:not )?"
       r"supported|not supported on (?:this )?(?:GPU|device)|no kernel image is available|\bAMD\b|\bROCm\b",
       {"5.7": 2.5, "R5.3": 2, "1.1": 0.5, "R4.2": 1, "F2": 1.5}),
    # --- context (no direct votes) --------------------------------------------------------
    _s("traceback", r"Traceback \(most recent call last\)|File \"[^\"\n]{1,300}\", line \d+|"
       r"^\s*\[rank\d+\]:|\b[A-Za-z_]\w{0,60}?(?:Error|Exception): ",
       {}, flags=re.M),
    _s("question", r"\bhow (?:to|do|can|should)\b|is it possible|\bquestion\b|\bany (?:idea|advice|help)|"
       r"does .{0,40} support|\bdocumentation\b|\bdocs?\b|\btutorial\b|\bexample\b",
       {"R2.4": 1.5, "R3.1": 0.5}),
    _s("feature_request", r"feature request|\[FEATURE\]|\benhancement\b|would be (?:nice|great)|"
       r"\bproposal\b|support for\b|please (?:add|support)",
       {"R4.8": 1.5, "R5.2": 0.5, "F6": 1}),
]

# When no text says how a root cause was fixed, this is the usual remedy (domain knowledge).
FIX_OF_ROOT_CAUSE: dict[str, str] = {
    "R1.1": "F2", "R1.2": "F2", "R1.3": "F2", "R1.4": "F1", "R1.5": "F4", "R1.6": "F6",
    "R2.1": "F1", "R2.2": "F2", "R2.3": "F4", "R2.4": "F1",
    "R3.1": "F3", "R3.2": "F1", "R3.3": "F6", "R3.4": "F2",
    "R4.1": "F3", "R4.2": "F2", "R4.3": "F3", "R4.4": "F6", "R4.5": "F5", "R4.6": "F6",
    "R4.7": "F3", "R4.8": "F6",
    "R5.1": "F3", "R5.2": "F6", "R5.3": "F2", "R5.4": "F6", "R5.5": "F2", "R5.6": "F5",
}


# The shapes of error *messages* - what a log prints when something failed - as opposed to the
# topic keywords above ("nccl", "pip install", "checkpoint"), which also occur in any sentence an
# attacker writes. Only a line of the report matching one of these is ever quoted back as evidence,
# and then attributed to the report (RELIABILITY 38): "official fix: pip install nccl-fixer" is
# a topic match, not an error line, and is never shown.
ERROR_SIGNATURE = re.compile(
    r"\b[A-Za-z_][\w.]{0,80}?(?:Error|Exception|Failure|Failed)\b"
    r"|\bNCCL (?:error|WARN)|\bnccl[A-Z]\w*Error\b|Watchdog caught|collective operation timeout"
    r"|\btimed out\b|\btimeout\b|Timeout\(ms\)"
    r"|out of memory|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|\bCUDA error\b|illegal memory access"
    r"|device-side assert|misaligned address|unspecified launch failure"
    r"|Segmentation fault|core dumped|\bSIG(?:SEGV|ABRT|KILL|TERM|BUS)\b|terminate called"
    r"|Fatal Python error|\bKilled\b|oom[- ]?killer|exit ?code[: =]+-?\d|exited with (?:return )?code"
    r"|returned non-zero exit status"
    r"|undefined symbol|cannot open shared object file|No module named|cannot import name"
    r"|\berror:|fatal error|nvcc fatal|Failed building wheel|subprocess-exited-with-error"
    r"|CMake Error|build stopped|compilation terminated"
    r"|No such file or directory|size mismatch|shape mismatch|shapes cannot be multiplied"
    r"|expected scalar type|Connection refused|Connection reset|No route to host"
    r"|Address already in use|Traceback \(most recent call last\)|Attempted loss scale"
    r"|Gradient overflow|\bloss (?:is|became|becomes|goes to) nan\b",
    re.I,
)


def error_signature(line: str) -> bool:
    """Does ``line`` read as an error message (not merely mention a topic)?"""
    return bool(ERROR_SIGNATURE.search(line or ""))
