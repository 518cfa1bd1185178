"""Requests that tell the causes of one symptom apart. Pure.

"Run ds_report" or "share your config" fits every report and so separates no causes; maintainers
read such a checklist as noise. For each symptom of the taxonomy (paper section 3.1) a maintainer
asks for the one thing that would tell its usual causes (section 3.2) apart:

- a hang or stall: a stack of every rank (``py-spy dump``) and the ``NCCL_DEBUG=INFO`` log;
- loss divergence, NaN or an accuracy gap: the same run without the new option, and the loss;
- a CUDA device-side assert or illegal memory access: the traceback with ``CUDA_LAUNCH_BLOCKING=1``;
- out of memory: per-GPU memory at the failure, model size, micro-batch and parallel settings;
- a failed build: the full compiler output (and the CUDA versions, ``missing.py``'s ``cuda``);
- an import error: ``pip list`` of the framework and torch;
- a checkpoint that will not load: the parallel sizes used to save and to load.

``requests`` (called through ``missing.missing_info``, which has the text) records each such
request whose symptom the text speaks of (a *cue*: "hangs", "out of memory", ...) and whose item
the text lacks; ``missing.asked_in_comment`` asks them only for a symptom the comment states (or
its confident top choice inside the stated stage, or a hang the text itself reports: the stacks
request is recorded only for the program's own hang). Every presence check errs towards "present":
asking for what a report already contains is worse than not asking.
"""
from __future__ import annotations

import functools
import itertools
import re

from triagebot.domain.models import Environment, MissingInfo
from triagebot.text import signal as text_signal

# What each symptom's requests are, in priority order: keys of this module and of ``missing``
# (``traceback``, ``launcher_command``, ``hardware``, ``config``, ``ds_report``, ``cuda``,
# ``versions``). A symptom absent here falls back to the stage's own checklist.
PROFILES: dict[str, tuple[str, ...]] = {
    "1.1": ("build_log", "ds_report", "cuda", "versions"),
    "5.6": ("build_log", "ds_report", "cuda", "versions"),
    "1.2": ("pip_list", "traceback"),
    "5.11": ("pip_list", "traceback"),
    "4.12": ("pip_list", "traceback"),
    "2.1": ("stacks", "launcher_command", "traceback"),
    "2.2": ("nccl_debug", "launcher_command", "hardware"),
    "2.3": ("config", "traceback"),
    "3.1": ("ckpt_parallel", "traceback"),
    "3.2": ("config", "traceback"),
    "3.4": ("host_memory",),
    "4.1": ("baseline_run", "perf_numbers", "profile"),
    "4.2": ("host_memory",),
    "4.3": ("traceback",),
    "4.4": ("baseline_run", "traceback"),
    "4.7": ("nccl_debug", "stacks", "traceback"),
    "4.8": ("host_memory", "traceback"),
    "4.10": ("ckpt_parallel", "traceback"),
    "4.11": ("stacks", "nccl_debug"),
    "5.1": ("traceback",),
    "5.2": ("host_memory",),
    "5.3": ("baseline_output",),
    "5.4": ("perf_numbers", "profile"),
    "5.5": ("ckpt_parallel", "traceback"),
    "5.9": ("baseline_output",),
}
# The GPU-memory request (``memory``: per-GPU memory, model size, micro-batch, parallel settings) is
# recorded for the review page and never asked: in the judged samples 5 of 5 were wrong, and of
# the 21 the baseline backtest asked, most were a leak that grows over steps (the static settings
# do not explain it), a question about a documented figure, or a stock example script whose
# arguments already fix the batch and the plugin.
# Asked whatever is stated: the report quotes the error itself (a device-side assert), so the
# symptom is the reporter's own words, not a guess.
TEXT_TRIGGERED = frozenset({"launch_blocking"})
KEYS = frozenset({"build_log", "pip_list", "stacks", "nccl_debug", "memory", "host_memory",
                  "baseline_run", "baseline_output", "perf_numbers", "profile", "ckpt_parallel",
                  "launch_blocking"})

DESCRIPTIONS: dict[str, str] = {
    "nccl_debug": "The log of every rank with `NCCL_DEBUG=INFO` set.",
    "memory": "The per-GPU memory when it fails, the model's size, the micro-batch size and the "
    "parallel and sharding settings.",
    "baseline_run": "The same run with the new option turned off, to show which change brings "
    "it, and the loss curves of both.",
    "stacks": "A stack of every rank while it hangs: `py-spy dump --pid PID` for each process "
    "(`pip install py-spy`).",
    "launch_blocking": "The error again with `CUDA_LAUNCH_BLOCKING=1` set, so the traceback "
    "points at the kernel that failed.",
    "host_memory": "The end of `dmesg` on the node (it shows whether the OOM killer stopped the "
    "process) and the CPU memory in use when it stops.",
    "perf_numbers": "The speed you measure and the one you expect (for example tokens/s, "
    "samples/s or time per step), and where the expected figure comes from.",
    "profile": "A profile of a few steps (`torch.profiler` or `nsys profile`) that shows whether "
    "compute, communication or data loading takes the time.",
    "build_log": "The full build output from the first error on (`pip install -v`), not only "
    "the last lines.",
    "pip_list": "The `pip list` lines of the framework, torch and the package that fails to "
    "import, and how each was installed (pip, conda or from source).",
    "ckpt_parallel": "The parallel sizes (data, tensor and pipeline; sharding or ZeRO stage) "
    "used when the checkpoint was saved and when it is loaded.",
    "baseline_output": "The output of the same input without the distributed wrapper (one GPU, "
    "no tensor parallelism), beside the wrong one.",
}
FRAMEWORK_DESCRIPTIONS: dict[tuple[str, str], str] = {
    ("build_log", "deepspeed"): "The full build output from the first error on (`pip install -v` "
    "or the JIT build's ninja log), not only the final RuntimeError.",
    ("build_log", "horovod"): "The full output of `pip install -v --no-cache-dir horovod` from "
    "the first error on (pip hides it behind \"Command errored out\").",
    ("build_log", "megatron"): "The full build output of the extension that fails (Apex, "
    "Transformer Engine or Megatron's own) from the first error on.",
    ("pip_list", "deepspeed"): "The `pip list` lines of deepspeed, torch, transformers and the "
    "package that fails to import, and how each was installed.",
    ("pip_list", "colossalai"): "The output of `colossalai check -i` and the `pip list` line of "
    "the package that fails to import.",
    ("pip_list", "megatron"): "The Megatron-LM commit and the `pip list` lines of torch, "
    "transformer-engine and apex (or the NGC container tag).",
    ("pip_list", "accelerate"): "The output of `accelerate env`, the `pip list` line of the package "
    "that fails to import, and how each was installed (pip, conda or from source).",
    ("pip_list", "horovod"): "The `pip list` lines of horovod and of TensorFlow or PyTorch, and "
    "the output of `horovodrun --check-build`.",
    ("ckpt_parallel", "deepspeed"): "The ZeRO stage and number of GPUs used when saving and when "
    "loading the checkpoint, and how it is loaded (`load_checkpoint` or `zero_to_fp32.py`).",
    ("ckpt_parallel", "megatron"): "The `--tensor-model-parallel-size`, "
    "`--pipeline-model-parallel-size` and `--ckpt-format` used when saving and when loading.",
    ("ckpt_parallel", "colossalai"): "The plugin and its tp/pp sizes used when saving and when "
    "loading the checkpoint, and the `booster.save_model` / `load_model` calls.",
    ("baseline_output", "deepspeed"): "The output of the same prompt with plain Hugging Face "
    "`generate` and with `replace_with_kernel_inject=False`, beside the wrong one.",
    ("baseline_output", "megatron"): "The output of the same prompt with tensor and pipeline "
    "parallel size 1, beside the wrong one.",
    ("baseline_output", "colossalai"): "The output of the same prompt from the model without "
    "Colossal-AI (plain Hugging Face), beside the wrong one.",
}
# Inference has no data loader and, on one GPU, no communication to weigh: how the time was taken
# decides first (a blind audit read the training profile asked of a one-GPU `init_inference`
# timing as moot).
PROFILE_INFERENCE = ("How the time is measured (warm-up runs left out, `torch.cuda.synchronize()` "
                     "before reading the clock) and a `torch.profiler` trace of a few generate calls.")
# The change to undo in the comparison run that shows which one brings a divergence.
_BASELINE_CHANGE = {
    "deepspeed": "ZeRO stage 0 (or fp16/bf16 off)",
    "megatron": "tensor and pipeline parallel size 1 (or without --fp16/--bf16)",
    "colossalai": "`TorchDDPPlugin` instead of your plugin (or without mixed precision)",
}
_SETTINGS_PART = {
    "deepspeed": "the ZeRO stage and offload settings",
    "megatron": "the tensor/pipeline parallel sizes and recompute settings",
    "colossalai": "the plugin and its placement or offload settings",
}
# In inference the memory turns on how the model is split and its dtype, not on ZeRO.
_INFERENCE_SETTINGS_PART = {
    "deepspeed": "the `init_inference` arguments (tensor parallel size, dtype, kernel inject)",
    "megatron": "the tensor/pipeline parallel sizes",
}
_OTHER_SETTINGS_PART = "the parallel and sharding settings (ZeRO/FSDP stage, parallel sizes)"
_OTHER_INFERENCE_PART = "the tensor parallel size or device_map and the dtype"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I | re.M)


# --- cues: the text speaks of this kind of failure ---------------------------------------------
# (freezing as the program's, not the parameters': "the example freezes after printing epoch
# 1/24", "it freezes", never "frozen weights", "freeze the embeddings" or "freezing layers": on the
# shared data, 8 reports that froze parameters read as hangs, one asked for a stack of every rank)
_NOT_FROZEN_PART = (r"(?!\s+(?:the|all|its|some|most|every|these|those|any|an?|parts?|layers?|param\w*|"
                    r"weights?|embed\w*|models?|modules?|backbone|encoder|decoder|vision|text|lora|base)\b)")
_HANG = _rx(r"\b(?:hangs?|hanging|hung|stuck|deadlock\w*|stall\w*|no progress|"
            r"waits? forever|never (?:finish|return|end)s?|froze\b" + _NOT_FROZEN_PART + r"|freez(?:es|ing)\b" +
            _NOT_FROZEN_PART +
            r"|(?:it|will|would|then|just|randomly|completely) freeze\b" + _NOT_FROZEN_PART + r")\b")
# ...and "stuck trying to get PP working" (DeepSpeed#710's title): the reporter again
# (not "stuck trying to connect to the master": the program's hang)
_PERSON_AFTER = _rx(r"\s{1,20}(?:trying to (?:get|make|figure|understand|find|set up|learn|combine|use|integrate|"
                    r"port|implement)|figuring|on how)\b")
# A collective that never completed, as the watchdog reports it ("Watchdog caught collective
# operation timeout: WorkNCCL(SeqNum=305, OpType=ALLREDUCE ...", "the NCCL watchdog times out"):
# a hang the timeout ended, where a stack of every rank shows which one never joined. Not a
# rendezvous or connect timeout (``_RENDEZVOUS``, "Call to connect timeout"): nothing ran yet.
_COLLECTIVE_TIMEOUT = _rx(r"collective operation timeout|\bTimeout at NCCL work\b|"
                          r"\bwatchdog (?:thread )?(?:times? out|timed out|timeout)\b")
# A hang with nothing in Python to dump: the connection or the launch over ssh failed and says so
# ("NCCL WARN Call to connect timeout : Connection refused", "not a valid RSA private key file":
# horovod#666's answer was NCCL_SOCKET_IFNAME, ColossalAI#5213's passwordless ssh), or the report
# is about the timeout setting itself ("Timeout passed to init_process_group is not honored",
# "Setting a timeout through InitProcessGroupKwargs has no effect": the wait is expected, the
# timeout is the bug).
_TIMEOUT_SETTING = (r"\btime ?out\b[^.\n]{0,80}?\b(?:has no effect|(?:is |was )?not (?:honou?red|respected|"
                        r"applied|taken into account)|(?:is |was )?ignored|does ?n[o']t (?:seem to )?(?:apply|"
                        r"take effect))")
_TIMEOUT_SETTING_RX = _rx(_TIMEOUT_SETTING)
_NOTHING_TO_STACK = _rx(r"Connection refused|\bconnect timeout\b|No route to host|not a valid RSA private key|"
                        r"Permission denied \(publickey|Host key verification failed|ssh: connect to host|"
                        + _TIMEOUT_SETTING)
# A hang word denied ("It does not hang, it crashes") or said of a metric ("the loss is stuck at
# 11.0"), read in the 40 characters before it (``hangs``).
_NOT_A_HANG_BEFORE = _rx(
    r"(?:\b(?:not|no|never|without)|n't)\s+(?:\w+\s+)?\Z|"
    r"\b(?:loss(?:es)?|accuracy|acc|lr|learning rate|utili[sz]ation|usage|throughput|(?:grad(?:ient)?\s+)?norm|"
    r"perplexity|ppl|reward|metrics?|score)\s+(?:(?:is|was|has|have|gets?|got|seems?|remains?|keeps?|just|"
    r"always|been|completely)\s+)*\Z")
# The hang is over: fixed, gone, avoided ("the hang went away after upgrading NCCL", "no longer
# hangs", "setting NCCL_P2P_DISABLE=1 fixes the deadlock"), unless negated ("none of these fixed
# the hang", "didn't fix the hang"); the stacks of a hang that no longer happens cannot be taken.
# Not "hangs and times out after a fixed step", nor a hang that "persists after the fix".
_HANG_WORD = r"(?:hangs?|hanging|deadlocks?|freezes?|freezing|stall|stalls|stuck)"
_HANG_GONE = _rx(rf"\bno longer (?:\w+ )?{_HANG_WORD}\b|"
                 rf"\b(?:does ?n[o']t|did ?n[o']t|wo ?n[o']t) (?:\w+ )?(?:hang|deadlock|freeze|stall|get stuck)"
                 r"\b[^.\n]{0,40}?\b(?:any ?more|again|now)\b|"
                 rf"\b(?:the|this|that) {_HANG_WORD} (?:is |was |has )?(?:gone|went away|goes away|"
                 r"disappear(?:s|ed)?|vanish(?:es|ed)|(?:been )?(?:fixed|resolved|solved))\b|"
                 # (a fix done, not asked for: never "how do I fix the hang?")
                 rf"\b(?:fix(?:es|ed)|solv(?:es|ed)|resolv(?:es|ed)|avoid(?:s|ed)|gets rid of|got rid of) "
                 rf"(?:the |this |that )?{_HANG_WORD}\b")
_ASKED_AFTER = re.compile(r"[^.\n?]{0,60}\?")
_NOT_GONE = _rx(r"(?:n[o']t|\bnever|\bnone of (?:\w+ ){0,3}|\bnothing|\bneither|\bwithout)[^.\n]{0,25}$")
# The reporter stuck, not the program ("I want to try multi-node training but got stuck.",
# DeepSpeed#579: an ssh failure asked for the stacks of a hang): "stuck" right after a person
# ("I got stuck", "we are stuck"), or "but got stuck" in a sentence whose subject is "I"/"we" --
# unless a place in the run follows ("I got stuck at dist.barrier()", "stuck in init" are hangs;
# "stuck on this error" is the reporter again).
_PERSON_BEFORE = re.compile(r"(?:\b(?:I|I'?m|I am|[Ww]e|[Ww]e'?re|[Ww]e are)\s+(?:got|get|am|are|was|were|"
                            r"have been|'ve been|been)?\s*|\bbut got\s+)$")
_FIRST_PERSON = re.compile(r"\b(?:I|[Ww]e)\b")
_PLACE_AFTER = _rx(r"\s+(?:at|in|during|when|while|after|forever|inside|within)\b|"
                   r"\s+on\s+(?!(?:this|that|the|an?|my|our)\s+(?:error|issue|problem|bug)\b)")
_NCCL = _rx(r"nccl|\btime ?outs?\b|timed out|watchdog|connection (?:refused|reset|closed)|socket|"
            r"all_?reduce|all_?gather|reduce_scatter|collective|barrier|ProcessGroup")
_NCCL_NAMED = _rx(r"nccl")
_DIVERGENCE = _rx(
    r"\bloss correctness\b|\b(?:unreasonable|incorrect|unexpected) (?:training |initial )?loss\b(?! ?scal)|"
    r"\bnan\b(?! iterations)|\binf(?:inite)? loss|diverg\w*|\bnot converg\w*|(?:doesn'?t|does not|didn'?t|won'?t|"
    r"fails? to) converge|loss (?:spike|explo\w*|increas\w*|goes up|blows? up|jumps?)|"
    r"(?:higher|worse|different|wrong|abnormal|strange) (?:training )?loss|"
    r"loss (?:is|was|becomes|stays) (?:much )?(?:higher|worse|different|wrong|abnormal|nan|inf|"
    r"zero|0|constant|flat)|accuracy (?:drop|gap|degrad)\w*|"
    r"(?:lower|worse|random[\w-]*|bad|poor|low) (?:accuracy|acc|f1|results|quality)\b|"
    r"grad(?:ient)?[ _]norm (?:is )?(?:nan|inf)|"
    # a loss that does not move or converges slowly ("the loss stays at 11.93 and grad_norm at
    # 0"): a training outcome, not a speed ("it did speed training up" was read as slowness)
    r"\bloss (?:is )?stuck\b|\bloss (?:stays|remains) (?:\w+ )?(?:constant|flat|the same|unchanged)\b|"
    # "it trains worse than when it is created like this"
    r"\b(?:trains|learns|converges|performs) (?:much |far |a lot )?worse\b|"
    r"\bloss (?:does ?n[o']t|did ?n[o']t|never) (?:decrease|go down|drop|change)\b|"
    r"\bslow(?:er)? convergence|\bconverges? (?:much |very )?slow\w*|"
    r"grad(?:ient)?[ _]norm (?:stays|remains|is) (?:at )?0\b")
_PERF = _rx(r"\bslow\w*|throughput|\bspeed|\btflops?\b|\bmfu\b|tokens?/s|samples?/s|\bit/s|"
            r"latency|faster|utili[sz]ation|performance")
_MEMORY = _rx(r"out of memory|\bOOMs?\b|OutOfMemory|memory (?:usage|use|leak|consumption|footprint|"
              r"spikes?|grows?|increas\w*|errors?|issues?|problems?|reduction|efficien\w*)|"
              r"(?:gpu|cuda|vram|more|high|higher|peak|much) memory|memory (?:per|on each) gpu")
_HOST_KILL = _rx(r"\bkilled\b|SIGKILL|signal 9|exit ?code:? ?-9|exitcode\s*:\s*-9|oom[- ]?kill")
_BUILD = _rx(r"\b(?:nvcc|compil\w*|build\w*|extension|op_builder|setup\.py|wheel|ninja|gcc|g\+\+|"
             r"cmake|install\w*)")
_IMPORT = _rx(r"\bimport|ModuleNotFound|No module named|undefined symbol|has no attribute")
_CHECKPOINT = _rx(r"checkpoint|\bckpt|state_dict|zero_to_fp32|safetensors|\bresum\w*|"
                  r"\b(?:save|load)\w*\b[^.\n]{0,40}\bmodel")
_OUTPUT = _rx(r"output|result|generat\w*|garbage|gibberish|differ\w*|wrong|inconsisten\w*|"
              r"mismatch\w*|repeat\w*|answer")
_DEVICE_ASSERT = _rx(r"device-side assert|illegal memory access|misaligned address|"
                     r"unspecified launch failure|CUBLAS_STATUS_EXECUTION_FAILED")

# --- presence: the report already contains the item ---------------------------------------------
_STACKS = _rx(r"py-?spy|faulthandler|\bgdb\b|\bpstack\b|Thread 0x|most recent call first|"
              r"Current thread|dump_traceback|stack ?(?:traces?|dumps?) (?:of|from|for) "
              r"(?:all|each|every)|Thread \d+ \(\w+\)")
_NCCL_DEBUG = _rx(r"NCCL_DEBUG|NCCL INFO|\bNCCL WARN\b|NCCL debug")
_SAME_STEP = _rx(r"same (?:\w+ )?(?:step|iteration|iter|batch|place|point|line)|(?:every|each) time|"
                 r"(?:step|iteration|iter|epoch)s? \d|\d+[kKmM]? (?:steps|iterations|iters|epochs)|"
                 r"stuck step|always (?:hangs?|stuck|stops?|freezes?)|randomly|at random")
# ...or as a place in the run a hang word names ("training hangs on the first step": DeepSpeed#3032
# was asked whether it stops at the same step; "stuck during initialization"). The place is found
# first and the hang word looked for just before it: one pattern from the hang word on scanned
# the next 30 characters after every "hang" of a long body (8x slower on 100 KB of them).
# Also a quoted line or call it stops at ("hangs at "initalizing ddp"", "stuck at `accelerator.prepare`",
# "hangs while `fsdp_model.state_dict` runs"), a phase of the run ("stuck in the dataloader
# sanity-check phase", "hangs during validation", "hangs in `all_reduce`", "hangs when the program
# tries to save the model"), or the start of training ("stuck right when the model begins
# training"): on the shared data, 18 hang reports that named where it stops (each read) were asked
# whether it stops at the same step.
_PLACE_IN_RUN = _rx(r"\b(?:on|at|in|during|before|after) (?:the )?(?:very )?(?:(?:first|1st|second|last) "
                    r"(?:training )?(?:step|iteration|iter|batch|epoch|forward|backward|all_?reduce)|"
                    r"start\b|beginning\b|init\w*|start[- ]?up|warm[- ]?up)|"
                    r"\b(?:on|at|in|inside|during|while|when) [\"'`“]|"
                    r"\b(?:in|inside|during|at) (?:the )?(?:validation|evaluation|eval|sanity[- ]check\w*|"
                    r"dataloader\w*|data ?loading|saving|loading|checkpoint(?:ing)?|(?:forward|backward)"
                    r"(?: pass| step)?|optimizer step|barrier|all_?reduce|all_?gather|broadcast|state_dict)\b|"
                    r"\b(?:when|while) (?:\w+ ){0,4}?(?:saving|save|loading|load|validat\w*|evaluat\w*)\b|"
                    r"\b(?:when|as soon as|once) (?:the )?(?:\w+ )?(?:begins|starts) (?:training|to train)\b")
_STOP_WORD = _rx(r"\b(?:hangs?|hung|hanging|stuck|freez\w*|frozen|stops?|stall\w*|deadlocks?)\b[^.\n]*$")


def _says_where_it_stops(text: str) -> bool:
    """The report says where a hang stops: the same step each time, a step number, or a place in
    the run right after a hang word (within 40 characters of the same sentence)."""
    if _SAME_STEP.search(text):
        return True
    return any(_STOP_WORD.search(text, max(0, place.start() - 40), place.start())
               for place in _PLACE_IN_RUN.finditer(text))
_BASELINE = _rx(r"\bcompar\w*|\bbaseline\b|\bvs\.?\s|\bversus\b|\b(?:worse|better) than when\b|"
                r"\bwithout (?:deepspeed|zero|fsdp|"
                r"offload|fp16|bf16|mixed precision|amp|the plugin|megatron|colossal\w*|"
                r"tensor parallel\w*|pipeline parallel\w*|sequence parallel\w*|context parallel\w*)|"
                r"\bwith (?:plain |torch |pytorch )?ddp\b|\bworks? (?:fine |well |correctly |"
                r"normally |as expected )?(?:with|on|without|when|if|for)\b|\bsingle[- ]gpu\b|"
                r"\bone gpu\b|\bwhereas\b|\bwhile (?:with|using)\b|\bswitch\w* (?:to|back|off)|"
                r"\bdisabl\w*|\bturn\w* off\b|\bonly (?:with|when)\b|(?:stage|zero)[- ]?[0-3] "
                r"(?:works|is fine|gives)|\bdiffer\w* (?:between|from|across)|\bbetween\b[^.\n]{0,40}"
                r"\band\b|\bdifferent (?:results|loss\w*|outputs?|values)\b|(?:with|using) (?:pure |"
                r"plain |only )?(?:data parallel\w*|ddp|fp32)\b|\b(?:previous|old|earlier) "
                r"(?:version|release|commit)")
_LOSS_CURVE = _rx(r"loss curve|loss plot|curves?\b|wandb|tensorboard|!\[|<img|\.png|screenshot|"
                  r"\bloss (?:stays|stuck|remains|is stuck|keeps?)\b[^.\n]{0,15}\b(?:at|around) [-+]?\d|"
                  r"\bplot|\bgraph|loss[:=]?\s*[-+]?\d|lm loss|\|\s*loss|loss (?:values?|"
                  r"trajector\w*|history|logs?)\b|^\s*\|\s*\d+\s*\|\s*[-+]?\d")
_MEMORY_NUMBERS = _rx(r"Tried to allocate|total capacity|\bGi?B (?:free|reserved|allocated|used)|"
                      r"\d+(?:\.\d+)?\s*(?:GiB|GB|MiB|MB|G)\b|nvidia-smi|memory_(?:allocated|"
                      r"reserved|summary)|max_memory|see_memory_usage")
_MODEL_SIZE = _rx(r"\b\d+(?:\.\d+)?\s?[bBmM]\b|\b\d+(?:\.\d+)?\s?(?:billion|million)\b|"
                  r"param(?:eter)?s?\b[^.\n]{0,20}\d|\b(?:llama|opt|gpt|bloom|t5|qwen|mistral|"
                  r"mixtral|falcon|bert|vit|glm|chatglm|baichuan|gemma|phi|deepseek|pythia|roberta|"
                  r"whisper|clip|unet|stable[- ]diffusion|resnet)[\w.-]*")
_MICRO_BATCH = _rx(r"batch[_ -]?size|micro[_ -]?batch|\bmbs\b|\bgbs\b|\bbsz?\s*[=:]|"
                   r"per_device_train_batch|batch of \d+|\bbatch \d+")
_SETTINGS = {
    "deepspeed": _rx(r"zero[_ -]?(?:stage|optimization|[0-3]\b|\+\+|infinity)|stage\W{0,3}[0-3]\b|"
                     r"offload|ds_config|\"stage\"|init_inference\(|mp_size|tp_size|"
                     r"tensor_parallel"),
    "megatron": _rx(r"tensor[_-](?:model[_-])?parallel|pipeline[_-](?:model[_-])?parallel|"
                    r"\b[tp]p\s*[=:]?\s*\d|recompute|distributed[_-]optimizer"),
    "colossalai": _rx(r"\w+Plugin\b|placement|--plugin|\bzero\b|offload"),
}
_OTHER_SETTINGS = _rx(r"fsdp|zero|shard\w*|tensor[ _-]parallel|pipeline[ _-]parallel|\bddp\b|"
                      r"offload|device_map|\b[tp]p\s*[=:]?\s*\d")
# Memory of the host, not of the GPUs (a CPU OOM asks for dmesg, not for nvidia-smi).
_CPU_OOM = _rx(r"\b(?:cpu|host|system|RAM)\b[^.\n]{0,25}(?:\bOOM\b|out of memory|runs? out|"
               r"exhaust\w*)|(?:\bOOM\b|out of memory)[^.\n]{0,15}\b(?:cpu|host|system|RAM)\b")
_GPU_MEMORY = _rx(r"cuda out of memory|CUDA OOM|OutOfMemoryError|\b(?:gpu|cuda|device)\b[^.\n]{0,15}"
                  r"memory|vram|Tried to allocate")
_HOST_LOG = _rx(r"dmesg|oom-kill|Out of memory: Kill|Killed process|memory cgroup")
# (a number read from its first digit only: tried from every digit of "1.1.1...", the pattern
# took over ten minutes on 100 KB of it)
_PERF_NUMBERS = _rx(r"(?<![\d.,])\d[\d.,]*\s*(?:k\s*)?"
                    r"(?:wps\b|tgs\b|words?/s|tokens?/sec|tokens? per (?:second|sec|gpu)|"
                    r"tflops?|tokens?/s|tok/s|samples?/s|it/s|s/it|ms\b|seconds?|"
                    r"secs?\b|sec/|s/step|s per|mins?\b|minutes|hours?|x (?:slower|faster)|%)|"
                    r"\btflops?\b|\bmfu\b|throughput[^.\n]{0,30}\d|"
                    # a timer log: "time (ms) | optimizer_step: 1321.71"
                    r"\((?:ms|s|sec|secs|seconds)\)[^\n]{0,80}?\d")
_PROFILE = _rx(r"profil\w*|\bnsys\b|nsight|timeline|chrome trace|trace\.json|"
                # a timer log that breaks a step into phases ("time (ms) | optimizer_allgather:
                # 1.30 | optimizer_gradients: 10.25 | optimizer_step: 1321.71")
                r"\btime \((?:ms|s)\)[^\n]*?\|[^\n|]*\d[^\n|]*\|[^\n|]*\d")
# A compiler's own lines ("error:" in lower case: pip's "ERROR: Command errored out" is the
# summary that hides them).
_BUILD_LOG = _rx(r"(?-i:\berror: )|\berror [A-Z]+\d+|\bfatal error\b|FAILED: |ninja: build stopped|"
                 r"nvcc fatal|collect2|undefined reference|#include|\.(?:cu|cpp|cc|cxx|c|h|hpp):\d+|"
                 r"running build_ext|Building wheel|/usr/bin/(?:c\+\+|g\+\+|gcc)|\bcmake\b.*error")
# pip gave up choosing a version: nothing was built, so there is no build output to ask for, and
# no toolkit bears on it (ColossalAI#2570's pasted pip run, "has inconsistent version: expected
# '0.2.0', but metadata has '0.2.0+torch1.13cu11.3'", was asked for the build output and nvcc: a
# strict reader's 0; "Could not find a version that satisfies the requirement
# colossalai==0.1.10+torch1.11cu11.3" likewise, two blind audits).
_RESOLUTION_FAILED = _rx(r"No matching distribution found|Could not find a version that satisfies|"
                         r"has inconsistent version|\bResolutionImpossible\b|"
                         r"conflicting dependencies")
# A block the reporter introduces as the install's or the build's output ("Output of
# `DS_BUILD_OPS=1 pip install deepspeed`:" then the log, DeepSpeed#2707: asked for it, a 0),
# whatever lines of it the rewrite kept.
# (read on the line before each fence only: one pattern over the whole text backtracked through
# every "log of make" of a long body)
_FENCE_OPENING = re.compile(r"\n[ \t]*```")
_BUILD_OUTPUT_LINE = _rx(r"\b(?:output|logs?)\b[^\n]{0,20}?\b(?:of|from)\b[^\n]{0,60}?\b(?:pip3? install|"
                         r"setup\.py|build\w*|compil\w*|make)\b")


def _build_output_shown(text: str) -> bool:
    """A fenced block whose line before it introduces the install's or build's output."""
    for fence in _FENCE_OPENING.finditer(text):
        end = fence.start()
        while end > 0 and text[end - 1] in " \t\n":  # past blank lines to the last line with text
            end -= 1
        start = text.rfind("\n", 0, end) + 1
        if end - start <= 200 and _BUILD_OUTPUT_LINE.search(text, start, end):
            return True
    return False
_PIP_LIST = _rx(r"pip (?:list|freeze|show)|conda list|colossalai check|horovodrun --check-build|"
                r"collect_env|PyTorch version:|installed packages|package list")
# The version of a deep-learning framework other than PyTorch, as Horovod's template asks for it
# ("Framework: MXNet / Framework version: 1.5.0"): with the framework's own version, the versions
# a pip list would show are given (horovod#1016 was asked for them).
_OTHER_DL_VERSION = _rx(r"(?:tensorflow|mxnet|keras|\bjax|framework version)\W{0,4}(?:version\W{0,4})?"
                        r"v?\d+\.\d+")
# What fails to import from an installed package: a name ("cannot import name 'ColoInitContext'
# from 'colossalai.zero'") or a submodule ("No module named 'megatron.training'"), not a compiled
# extension ("colossalai._C.fused_optim", which the install may have skipped).
_IMPORT_FROM = _rx(r"cannot import name '?\w+'? from '?([A-Za-z]\w*)|No module named '?([A-Za-z]\w*)\.(?!_C\b)")
_PARALLEL_SIZES = _rx(r"(?:\btp|\bpp|\bdp|tensor[_ -](?:model[_ -])?parallel(?:[_ -]size)?|"
                      r"pipeline[_ -](?:model[_ -])?parallel(?:[_ -]size)?|world[_ ]size|"
                      r"zero[_ -]?(?:stage)?|stage)[\"']?\s*[=:]?\s*\d|\b(?:tp|pp|dp)\d+|"
                      r"\d+\s*(?:gpus|nodes|ranks|cards)|zero[- ]?[0-3]\b|"
                      r"(?:tensor|pipeline)[_-](?:model[_-])?parallel[_-]size|"
                      r"num_(?:processes|machines|gpus|nodes)\s*[=:]\s*\d|nproc[_-]per[_-]node\W{1,3}\d")
_OUTPUT_BASELINE = _rx(r"without (?:deepspeed|kernel|injection|tp|tensor parallel\w*|megatron|"
                       r"colossal\w*)|\bvs\.?\s|compar\w*|replace_with_kernel_inject\s*=\s*False|"
                       r"baseline|expected output|(?:hf|transformers|huggingface|single[- ]gpu|"
                       r"one gpu)[^.\n]{0,30}(?:gives|outputs?|produces|works|is (?:fine|correct))|"
                       # "GPT-J output on 1x 3090:", "Running on 1 GPU gives the correct output"
                       r"\boutputs? (?:on|with) (?:1|one|a single)\s?x?\s?\w+|"
                       r"\b(?:on|with) (?:1|one|a single)\s?x?\s?(?:gpu|card|device|rtx\s?\d{4}|\d{4})\b"
                       r"[^.\n]{0,30}(?:gives|outputs?|produces|works|is (?:fine|correct)|correct)")
# The CUDA error message itself suggests the setting; only the reporter's own use of it counts.
_LAUNCH_BLOCKING_HINT = _rx(r"consider passing CUDA_LAUNCH_BLOCKING=1\.?")
_LAUNCH_BLOCKING = _rx(r"CUDA_LAUNCH_BLOCKING")
# The rendezvous failed before NCCL started (torchrun's TCP store timed out or refused): no NCCL
# log exists to ask for, unless NCCL itself reported an error.
_RENDEZVOUS = _rx(r"Rendezvous(?:Connection|Timeout|Closed)?Error|\bC10d store\b|\bTCPStore\b|"
                  r"client socket has timed out")
_NCCL_FAILED = _rx(r"NCCL error|nccl\w*Error|unhandled (?:system|cuda) error|NCCL WARN|ProcessGroupNCCL|"
                   r"watchdog")


def requests(text: str, env: Environment, framework: str | None, stage: str | None = None,
             config_shown: bool = False) -> list[MissingInfo]:
    """The symptom-keyed requests this report calls for: the text speaks of the symptom (its cue)
    and lacks the item. Which of them a comment asks depends on what it states (``PROFILES``).
    ``stage``: the engine's stated stage (inference words the memory request differently);
    ``config_shown``: the report shows its configuration (``missing``'s check), which holds the
    parallel and ZeRO settings."""
    found: list[MissingInfo] = []

    def add(key: str, description: str | None = None) -> None:
        found.append(MissingInfo(key=key, description=description or describe(key, framework)))

    if _DEVICE_ASSERT.search(text) and not _LAUNCH_BLOCKING.search(
            _LAUNCH_BLOCKING_HINT.sub("", text)):
        add("launch_blocking")
    # the program's hang in the reporter's words, not a log's ("Error handling mechanism for
    # deadlock detection is uninitialized", a Lightning warning above a traceback), nor one the
    # report says is over
    gone = hang_gone(text)
    hang = hangs(text_signal.split_code(text)[0]) and not gone
    # (``missing.request_symptom`` reads this record as the text's own evidence of a hang)
    if ((hang or (_COLLECTIVE_TIMEOUT.search(text) and not gone)) and not _STACKS.search(text)
            and not _NOTHING_TO_STACK.search(text)):
        add("stacks")
    rendezvous_only = bool(_RENDEZVOUS.search(text)) and not (hang or _NCCL_FAILED.search(text))
    # (nor for a report about the timeout setting itself: the wait is expected)
    if ((hang or collective(text)) and not _NCCL_DEBUG.search(text) and not rendezvous_only
            and not _TIMEOUT_SETTING_RX.search(text)):
        add("nccl_debug", _nccl_debug(hang and not _says_where_it_stops(text),
                                      framework == "horovod" and not _NCCL_NAMED.search(text)))
    if diverges(text):
        baseline = _baseline_run(framework, not _BASELINE.search(text),
                                 not _LOSS_CURVE.search(text))
        if baseline:
            add("baseline_run", baseline)
    # speed as the reporter's words say it, not a log's columns (Megatron's every line prints
    # "throughput per GPU" and "elapsed time per iteration": Megatron-LM#2769, a loss bug, was
    # asked for a profile)
    elif _PERF.search(text_signal.split_code(text)[0]):
        if not _PERF_NUMBERS.search(text):
            add("perf_numbers")
        if not _PROFILE.search(text):
            add("profile", PROFILE_INFERENCE if stage == "S5" else None)
    host = bool(_HOST_KILL.search(text) or _CPU_OOM.search(text))
    if about_memory(text) and (_GPU_MEMORY.search(text) or not host):
        memory = _memory(text, framework, stage == "S5", config_shown)
        if memory:
            add("memory", memory)
    if host and not _HOST_LOG.search(text):
        add("host_memory")
    if _BUILD.search(text) and not (_BUILD_LOG.search(text) or _build_output_shown(text)
                                    or resolution_failed(text)):
        add("build_log")
    if _IMPORT.search(text) and not _PIP_LIST.search(text) and not (
            env.framework_version and (env.torch or _OTHER_DL_VERSION.search(text))) and not \
            _import_source_versioned(text):
        add("pip_list")
    if _CHECKPOINT.search(text) and not _PARALLEL_SIZES.search(text):
        add("ckpt_parallel", _ckpt_parallel(text, framework))
    if _OUTPUT.search(text) and not _OUTPUT_BASELINE.search(text):
        add("baseline_output")
    return found


# How a DeepSpeed checkpoint is loaded, named in the report ("If I call `load_checkpoint` with
# `load_optimizer_states=False`": DeepSpeed#2101 was asked how it is loaded, a strict reader's 0).
_LOAD_PATH = _rx(r"load_checkpoint|zero_to_fp32|get_fp32_state_dict_from_zero|"
                 r"load_state_dict_from_zero_checkpoint|ds_to_universal|load_universal")
_FSDP = _rx(r"\bfsdp\w*|FullyShardedDataParallel")
# The checkpoint request once the report says how it loads; FSDP's own settings outside the three
# frameworks with their own wording (a Lightning `FSDPStrategy` report was asked for tensor and
# pipeline sizes, which FSDP does not have).
CKPT_LOADED_DEEPSPEED = ("The ZeRO stage and number of GPUs used when saving and when loading the "
                         "checkpoint.")
CKPT_FSDP = ("The FSDP settings (`sharding_strategy`, `state_dict_type`) and the number of GPUs "
             "used when saving and when loading the checkpoint.")


def _ckpt_parallel(text: str, framework: str | None) -> str:
    """The checkpoint request in the report's own terms."""
    if framework == "deepspeed" and _LOAD_PATH.search(text):
        return CKPT_LOADED_DEEPSPEED
    if ("ckpt_parallel", framework or "") not in FRAMEWORK_DESCRIPTIONS and _FSDP.search(text):
        return CKPT_FSDP
    return describe("ckpt_parallel", framework)


def _import_source_versioned(text: str) -> bool:
    """The version of the package a name or submodule fails to import from is in the report
    ("colossalai: 0.2.8", "torch 2.5.0.dev20240617"): the name moved between releases, and
    ``pip list`` adds nothing."""
    for match in _IMPORT_FROM.finditer(text):
        package = match.group(1) or match.group(2)
        if re.search(rf"(?<![\w/.-]){re.escape(package)}[\w-]*\W{{0,4}}(?:version\W{{0,4}})?v?\d+\.\d+",
                     text, re.I):
            return True
    return False


_LEAK = _rx(r"memory leak|\bleak\w*\b[^.\n]{0,30}\bmemory\b|\bkeeps? (?:climbing|growing|increasing|rising)|"
            r"\b(?:grows?|goes up|increases?) (?:every|each|after every|with every) (?:step|iteration|epoch)|"
            r"\bshoots? up\b")


def resolution_failed(text: str) -> bool:
    """pip could not choose a version to install, and nothing was compiled (no compiler line)."""
    return bool(_RESOLUTION_FAILED.search(text)) and not _BUILD_LOG.search(text)


# The readings below are asked by ``missing`` and by ``requests`` of one report: each is
# cached for the last few texts, so a 100 KB report is searched once.
@functools.lru_cache(maxsize=8)
def leaks(text: str) -> bool:
    """The text speaks of memory that grows over steps (a leak), not of a fixed need."""
    return bool(_LEAK.search(text))


@functools.lru_cache(maxsize=8)
def diverges(text: str) -> bool:
    """The text speaks of a loss, accuracy or gradient norm that goes wrong."""
    return bool(_DIVERGENCE.search(text))


@functools.lru_cache(maxsize=8)
def about_memory(text: str) -> bool:
    """The text speaks of memory running out or growing (GPU or host)."""
    return bool(_MEMORY.search(text))


@functools.lru_cache(maxsize=8)
def collective(text: str) -> bool:
    """The text names NCCL, a collective, a timeout or a socket: the links between GPUs matter."""
    return bool(_NCCL.search(text))


@functools.lru_cache(maxsize=8)
def hangs(text: str) -> bool:
    """The text speaks of a hang or stall ("hangs", "stuck", "deadlock") of the program: not one
    it denies ("It does not hang, it crashes") nor a metric that is stuck ("the loss is stuck")."""
    return any(not _person_stuck(text, match)
               and not _NOT_A_HANG_BEFORE.search(text, max(0, match.start() - 40), match.start())
               for match in _HANG.finditer(text))


def hang_gone(text: str) -> bool:
    """The report says its hang is over: fixed, gone or avoided (``_HANG_GONE``), not negated nor
    asked ("does it no longer hang with 0.15?"), and mentions no hang after the last such phrase
    ("It no longer hangs after downgrading to 0.13, but with 0.15 it hangs at the first step")."""
    ends = [m.end() for m in _HANG_GONE.finditer(text)
            if not _NOT_GONE.search(text, max(0, m.start() - 40), m.start())
            and not _ASKED_AFTER.match(text, m.end())]
    return bool(ends) and not hangs(text[max(ends):])


def _person_stuck(text: str, match: re.Match[str]) -> bool:
    """The hang word is "stuck" with the reporter, not the program, as its subject."""
    if match.group(0).lower() != "stuck" or _PLACE_AFTER.match(text, match.end()):
        return False
    if _PERSON_AFTER.match(text, match.end()):
        return True
    # (within 300 characters before it: slicing back to the last "." of a long text without one
    # was quadratic, 22 s on 100 KB of "I got stuck ")
    lo = max(0, match.start() - 300)
    sentence = text[max(lo - 1, text.rfind(".", lo, match.start()), text.rfind("\n", lo, match.start())) + 1:
                    match.start()]
    person = _PERSON_BEFORE.search(sentence)
    return person is not None and (not person.group(0).startswith("but")
                                   or bool(_FIRST_PERSON.search(sentence[: person.start()])))


def describe(key: str, framework: str | None) -> str:
    """The request in the framework's own terms (the generic wording for other repositories)."""
    return FRAMEWORK_DESCRIPTIONS.get((key, framework or ""), DESCRIPTIONS.get(key, ""))


def _nccl_debug(ask_same_step: bool, horovod: bool = False) -> str:
    """The NCCL log request; for a hang whose report does not say where it stops, also that. A
    Horovod report that does not name NCCL gets Horovod's own log first (its stall warnings name
    the ranks that never joined; a blind audit read NCCL_DEBUG alone, asked of a Horovod hang over
    Gloo or MPI, as the wrong tool)."""
    tail = ", and whether it stops at the same step every time" if ask_same_step else ""
    if horovod:
        return (f"The log of every rank with `HOROVOD_LOG_LEVEL=debug` set (and `NCCL_DEBUG=INFO` "
                f"if it runs on NCCL){tail}.")
    return f"The log of every rank with `NCCL_DEBUG=INFO` set{tail}."


def _baseline_run(framework: str | None, no_baseline: bool, no_curve: bool) -> str | None:
    """The comparison that shows which change brings a divergence, and/or the loss it shows."""
    change = _BASELINE_CHANGE.get(framework or "", "the new option turned off (plain DDP, or "
                                  "without mixed precision or sharding)")
    if no_baseline and no_curve:
        return f"The loss curves of your run and of the same run with {change}, to show which " \
               "change brings it."
    if no_baseline:
        return f"The same run with {change}, to show which change brings it."
    if no_curve:
        return "The loss curve (or the logged loss per step) of both runs."
    return None


def _memory(text: str, framework: str | None, inference: bool, config_shown: bool) -> str | None:
    """What of per-GPU memory, model size, micro-batch and parallel settings the report lacks."""
    settings = config_shown or _SETTINGS.get(framework or "", _OTHER_SETTINGS).search(text)
    return _memory_request(framework, inference, not _MEMORY_NUMBERS.search(text),
                           not _MODEL_SIZE.search(text), not _MICRO_BATCH.search(text),
                           not settings)


def _memory_request(framework: str | None, inference: bool, numbers: bool, size: bool,
                    batch: bool, settings: bool) -> str | None:
    """The memory request naming only the parts that are missing (None: nothing is)."""
    parts = []
    if numbers:
        parts.append("the per-GPU memory when it fails (the full out-of-memory line)")
    if size:
        parts.append("the model's size")
    if batch:
        parts.append("the batch size and sequence length" if inference
                     else "the micro-batch size and sequence length")
    if settings:
        parts.append(_INFERENCE_SETTINGS_PART.get(framework or "", _OTHER_INFERENCE_PART)
                     if inference else _SETTINGS_PART.get(framework or "", _OTHER_SETTINGS_PART))
    if not parts:
        return None
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return listed[0].upper() + listed[1:] + "."


@functools.cache
def all_descriptions() -> frozenset[str]:
    """Every request text this module can write: the comment keeps code spans only in these."""
    texts = set(DESCRIPTIONS.values()) | set(FRAMEWORK_DESCRIPTIONS.values())
    texts |= {_nccl_debug(*flags) for flags in itertools.product((False, True), repeat=2)}
    texts |= {CKPT_LOADED_DEEPSPEED, CKPT_FSDP, PROFILE_INFERENCE}
    for framework in (*_BASELINE_CHANGE, None):
        for flags in itertools.product((False, True), repeat=5):
            texts.add(_memory_request(framework, *flags) or "")
        for no_baseline, no_curve in itertools.product((False, True), repeat=2):
            texts.add(_baseline_run(framework, no_baseline, no_curve) or "")
    return frozenset(texts - {""})
