"""The "what information is missing" checklist. Pure.

Half of a maintainer's first reply is usually a request for facts the reporter left out. Which
facts matter depends on the stage and on the framework: a build failure is about versions and the
CUDA toolkit, a multi-node failure about the launch command and the machines, and only DeepSpeed
has ``ds_report``. Two steps, with one owner each:

- ``missing_info`` (called by the engine) lists what the text really lacks, in the priority order
  of the engine's best-guess stage, worded for the repository's framework;
- ``asked`` (called by the comment) keeps at most ``MAX_ASKED`` of them that fit what the comment
  *states*: the stated stage's own items, or only the generic ones when the stage is not stated.

A request for something the report already contains is worse than no request (the reporter
learns the bot did not read it), so every check errs towards "present".
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from triagebot.domain import diagnoses, environment, symptom_requests, taxonomy
from triagebot.domain.models import Environment, MissingInfo, Triage
from triagebot.text import signal as text_signal

MAX_ITEMS = 5   # gaps the engine records (review page, backtest)
MAX_ASKED = 3   # requests one public comment makes: a reporter answers three, not eight

DESCRIPTIONS: dict[str, str] = {
    "versions": "The versions of the framework, PyTorch and CUDA.",
    "cuda": "The CUDA version PyTorch was built with (torch.version.cuda) and nvcc --version.",
    "ds_report": "The full output of ds_report.",
    "traceback": "The full error and traceback as text (with several ranks, from the first that "
    "failed).",
    "launcher_command": "The exact launch command, with the hostfile or node arguments.",
    "hardware": "The GPU model, GPUs per node, number of nodes and the network between them.",
    "config": "The configuration in use (config file or arguments).",
    "repro": "A minimal script or the exact steps that reproduce it.",
}
# The same request in each framework's own terms, so a Megatron-LM reporter is never asked for a
# DeepSpeed config or tool.
FRAMEWORK_DESCRIPTIONS: dict[tuple[str, str], str] = {
    ("versions", "deepspeed"): "The versions of DeepSpeed, PyTorch and CUDA.",
    ("versions", "colossalai"): "The output of colossalai check -i (Colossal-AI, PyTorch and CUDA "
    "versions).",
    ("versions", "megatron"): "The Megatron-LM commit or release and the PyTorch, Transformer "
    "Engine and CUDA versions (or the NGC container tag).",
    ("versions", "horovod"): "The versions of Horovod and PyTorch or TensorFlow, and the output of "
    "horovodrun --check-build.",
    ("versions", "pytorch"): "The output of python -m torch.utils.collect_env.",
    ("config", "deepspeed"): "The DeepSpeed config JSON.",
    ("config", "colossalai"): "The plugin and Booster settings (the plugin's arguments).",
    ("config", "megatron"): "The full Megatron arguments (parallel sizes, batch sizes, precision).",
    ("config", "horovod"): "The Horovod settings (the HOROVOD_ environment variables, fusion and "
    "compression).",
    ("launcher_command", "deepspeed"): "The exact deepspeed launch command (and the hostfile for "
    "several nodes).",
    ("launcher_command", "colossalai"): "The exact colossalai run or torchrun command (and the "
    "hostfile for several nodes).",
    ("launcher_command", "megatron"): "The exact torchrun or srun command with its node arguments.",
    ("launcher_command", "horovod"): "The exact horovodrun or mpirun command, with the hosts.",
    ("launcher_command", "pytorch"): "The exact torchrun command with its node arguments.",
    # Accelerate's tracker: its own report tool and config file, whatever backend runs under it
    # (a blind audit read ds_report, "the DeepSpeed config JSON" and "the exact launch command"
    # asked of accelerate#2885 and #2818 as the wrong tools)
    ("versions", "accelerate"): "The output of `accelerate env` (it prints the Accelerate, PyTorch "
    "and platform versions and the accelerate config).",
    ("config", "accelerate"): "The accelerate config in use (the `default_config.yaml` that "
    "`accelerate config` writes, or the file given to `--config_file`).",
    ("launcher_command", "accelerate"): "The exact `accelerate launch` command with its arguments.",
}
# Accelerate's launch is its command and the config file it reads: asked together while the config
# is not shown (accelerate#2818, about what `accelerate config` writes for several machines), and
# the DeepSpeed settings asked as the config's `deepspeed_config` section, where they live.
ACCELERATE_LAUNCH_AND_CONFIG = ("The exact `accelerate launch` command and the accelerate config it "
                                "reads (the `default_config.yaml` that `accelerate config` writes, or "
                                "the file given to `--config_file`).")
ACCELERATE_DEEPSPEED_CONFIG = ("The accelerate config in use (the `default_config.yaml` that `accelerate "
                               "config` writes, or the file given to `--config_file`), with its "
                               "`deepspeed_config` section.")
# DeepSpeed under Accelerate: named (``environment.mentions``), or as its ZeRO stage ("zero3",
# "ZeRO stage 2"), which under Accelerate only DeepSpeed has.
_ZERO_STAGE = re.compile(r"\bzero[-_ ]?(?:[1-3]\b|stage)", re.I)
# An accelerate config named: it holds the settings the config request is about.
_ACCELERATE_CONFIG_MENTION = re.compile(r"\baccelerate config\b|\bdefault_config\.ya?ml\b|--config_file\b",
                                        re.I)
# ...or given as the answers to `accelerate config`'s questions, one to a line ("Do you want to use
# DeepSpeed? [yes/NO]: No", "How many processes in total will you use? [1]: 2": accelerate#248).
# (no "?" inside: from every "?" of "?(?(?(..." the lazy 200 characters took 0.2 s on 100 KB)
_ACCELERATE_ANSWER = re.compile(r"\?[ \t]*[(\[][^\n?]{0,200}?[)\]]:[ \t]*\S")

# torchrun exists from PyTorch 1.10: a report on an older release launches with
# torch.distributed.launch (or mp.spawn), and asking it for a torchrun command was read as not
# having read the version.
LEGACY_TORCH_LAUNCH = "The exact python -m torch.distributed.launch command with its node arguments."
# A job started by SLURM with no launcher named (Lightning's SLURM support, srun over a plain
# script): a torchrun command does not exist there; two blind audits read asking for one as the
# wrong tool (Lightning on a SLURM cluster, a job "under SLURM, inside an apptainer container").
SLURM_LAUNCH = ("The sbatch script (its `#SBATCH` node, task and GPU lines) and the srun line that "
                "starts the training.")
_SLURM = re.compile(r"\bslurm\b|\bsbatch\b|\bsrun\b|#SBATCH", re.I)
_NAMED_LAUNCHER = re.compile(r"\btorchrun\b|torch\.distributed\.(?:launch|run)\b|\bdeepspeed\s+(?:--|\S+\.py)|"
                             r"accelerate launch|colossalai run|\bmpirun\b|\bhorovodrun\b|\bmp\.spawn\b",
                             re.I)
# The job script attached ("Attached: output.txt and multinode_trainer.slurm.txt"): the launch
# is in it. Found by the file's extension, then "attach" on its line (``_job_script_attached``):
# a pattern for the file's whole name backtracked through "1.1.1..." for 90 s on 100 KB.
_JOB_SCRIPT = re.compile(r"\w\.(?:slurm|sbatch)\b", re.I)
# "with several ranks" asked of a single-GPU run or of a build was read as not having read it
ONE_PROCESS_TRACEBACK = "The full error and traceback as text."
# ...and of a report that shows one process ("world_size = 1" before `init_inference`,
# DeepSpeed#2956; "devices: 1"; "--nproc_per_node=1" on one node; a run "on a single GPU" with no
# launcher): a blind audit read the several ranks asked of it as not having read it. Only when
# nothing speaks of several (a second setting, ranks in a log, GPUs or nodes counted, a hostfile,
# DDP or FSDP); "a single GPU" counts only when no launcher is named.
_ONE_PROCESS = re.compile(
    r"\bworld[_ ]?size[\"']?[ \t]*[=:][ \t]*\[?1\b(?![.\d])|"
    r"(?<![\w.])[\"']?devices[\"']?[ \t]*[=:][ \t]*1\b(?![.\d])|"
    r"--(?:nproc[_-]per[_-]node|num[_-]gpus|num_processes)[ =]1\b(?![.\d])|"
    r"^[ \t]*num_processes[ \t]*:[ \t]*1[ \t]*$", re.I | re.M)
_ONE_GPU = re.compile(r"\b(?:on|with|using) (?:a single|one|1) GPU\b", re.I)
_SEVERAL_PROCESSES = re.compile(
    r"\bworld[_ ]?size[\"']?[ \t]*[=:][ \t]*\[?(?:[2-9]|\d{2,})|"
    r"[\"']?devices[\"']?[ \t]*[=:][ \t]*(?:[2-9]|\d{2,}|\[\d+,)|"
    r"--(?:nproc[_-]per[_-]node|num[_-]gpus|num_processes|nnodes|num[_-]nodes)[ =](?:[2-9]|\d{2,})|"
    r"\bnum_nodes[ \t]*=[ \t]*(?:[2-9]|\d{2,})|\brank[ \t]*[:=][ \t]*[1-9]|"
    r"^[ \t]*num_(?:processes|machines)[ \t]*:[ \t]*(?:[2-9]|\d{2,})|"
    r"\brank[ :=]?[1-9]|\branks\b|\b(?:[2-9]|\d{2,}|two|four|eight)[ \t]*(?:x[ \t]*)?(?:GPUs|nodes|"
    r"machines|VMs|hosts|servers|instances|processes|cards|workers)\b|"
    r"\bmulti[- ]?(?:gpu|node|machine|process)|\bseveral (?:GPUs|nodes)|"
    r"\b(?:all|both) (?:the )?GPUs\b|hostfile|\bDDP\b|DistributedDataParallel|\bFSDP\b|mp\.spawn", re.I | re.M)


def _one_process(text: str, env: Environment) -> bool:
    """The report shows a single process and nothing of several (``_ONE_PROCESS``)."""
    one = bool(_ONE_PROCESS.search(text)) or (env.launcher is None and bool(_ONE_GPU.search(text)))
    return one and not _SEVERAL_PROCESSES.search(text)


# The report shows its error only as a screenshot (DeepSpeed#4136: "Multi-node training gives me
# this error:" and an image): a strict reader's first request for it, since an image can be
# neither searched nor matched against known errors -- by maintainers or by this bot.
IMAGE_TRACEBACK = ("The error as text, copied from the terminal (the full traceback): a screenshot "
                   "cannot be searched or matched to known issues.")
# A report of a sentence or two that says something goes wrong and shows nothing of it ("My model
# isn't compatible with GeminiDDP.", "Bug report."): what happened is the first thing a maintainer
# asks for. Such reports were silent (no error mentioned, so no traceback request, and nothing
# stated); maintainers reading them scored the silence below a one-line request (reads R4).
BARE_TRACEBACK = ("What you see when it goes wrong, as text: the full error and traceback, or the "
                  "output that shows the problem.")
# On an AMD GPU the toolkit is ROCm: asking a ROCm report for CUDA versions was read as not having
# read its title ("Installing on an AMD ROCm system", DeepSpeed#3091).
ROCM_VERSIONS = {
    "deepspeed": "The versions of DeepSpeed, PyTorch and ROCm (torch.version.hip).",
    "": "The versions of the framework, PyTorch and ROCm (torch.version.hip).",
}
_ROCM = re.compile(r"\bROCm\b|\bhipcc\b|\bAMD (?:GPUs?|Instinct|Radeon)\b|\bMI[123]\d0X?\b", re.I)
# ds_report for the one half of it the report lacks: a report giving DeepSpeed's release ("not
# working with zero3 in v0.9.4", DeepSpeed#3836) or PyTorch's ("PyTorch 1.5 for CUDA 10.2",
# DeepSpeed#1595) was asked for the whole output, read as asking for what it gives.
DS_REPORT_TORCH = "The PyTorch and CUDA versions (ds_report prints them under \"DeepSpeed general environment info\")."
DS_REPORT_FRAMEWORK = "The DeepSpeed version (or the full output of ds_report)."
# One node, as the launch command says ("CUDA_VISIBLE_DEVICES=0,1 python -m
# torch.distributed.launch --nproc_per_node 2"): the nodes and the network between them are
# given (pytorch#65288 was asked for them); what is left is the GPUs and how they connect.
ONE_NODE_HARDWARE = "The GPU model and how the GPUs are connected (the output of nvidia-smi topo -m)."
_ONE_NODE_LAUNCH = re.compile(r"--(?:nproc[_-]per[_-]node|num[_-]gpus|num_processes)[ =]+\d", re.I)
_MANY_NODES = re.compile(r"hostfile|--node[_-]rank\b|--master[_-]addr\b|--rdzv[_-]endpoint\b|num_machines\b|"
                         r"--nnodes[ =]+\$|\bsrun\b[^\n]{0,80}\s-N\s*\d|\s-H\s+[\w.-]+,|"
                         r"\bmulti[- ]?(?:node|machine|host)|\b(?:nodes|machines|hosts|servers)\b",
                         re.I)
# Memory that runs out turns on the GPU's memory, not on how GPUs are connected: a blind audit read
# "nvidia-smi topo -m" and "the network between them" asked of an OOM as moot (2 of 2).
MEMORY_HARDWARE = "The GPU model and its memory, and the number of GPUs and nodes the job uses."
# Several nodes with their count and the GPUs per node in the command ("--nnodes=2
# --nproc_per_node=1": pytorch#79388 was asked for both): what is left is the GPUs and the network.
NODES_GIVEN_HARDWARE = "The GPU model and the network between the nodes (InfiniBand, RoCE or Ethernet)."
_ONE_NODE = re.compile(r"--(?:nnodes|num[_-]nodes|num_machines)[ =]+1\b|--standalone\b", re.I)
_NODE_COUNT = re.compile(r"--(?:nnodes|num[_-]nodes|num_machines)[ =]+(?:\d+:)?(?:[2-9]|\d{2})", re.I)
# Megatron's versions without Transformer Engine's, for a report saying TE is not installed:
# asking for its version was read as not having read the report (maintainers' reads M and N).
MEGATRON_VERSIONS_WITHOUT_TE = ("The Megatron-LM commit or release and the PyTorch and CUDA "
                                "versions (or the NGC container tag).")
# The versions request without CUDA for a report that gives the CUDA version (nvcc's "release
# 11.7" beside a traceback, "cuda10.2", a CUDA_HOME of ".../cuda-11.1"): ColossalAI#3076 was asked
# for the CUDA version it shows, a blind audit's "GIVEN (partly)". Only CUDA can be given here: a
# report giving the framework's or PyTorch's version is asked no versions at all.
VERSIONS_WITHOUT_CUDA: dict[str, str] = {
    DESCRIPTIONS["versions"]: "The versions of the framework and PyTorch.",
    FRAMEWORK_DESCRIPTIONS[("versions", "deepspeed")]: "The versions of DeepSpeed and PyTorch.",
    FRAMEWORK_DESCRIPTIONS[("versions", "colossalai")]: "The Colossal-AI and PyTorch versions (the output "
    "of colossalai check -i).",
    FRAMEWORK_DESCRIPTIONS[("versions", "megatron")]: "The Megatron-LM commit or release and the PyTorch "
    "and Transformer Engine versions (or the NGC container tag).",
    MEGATRON_VERSIONS_WITHOUT_TE: "The Megatron-LM commit or release and the PyTorch version (or the NGC "
    "container tag).",
}
_TE_MISSING = re.compile(r"No module named '?transformer_engine|transformer[ _-]?engine\W{0,3}"
                         r"(?:is |was )?not (?:installed|available|found)|\bTE is not installed", re.I)
_TORCH_RELEASE = re.compile(r"(?<![\w/.-])(?:torch|pytorch|pt)(?:[-_ ]?version)?[\s:=`'\"*(-]{0,4}v?(\d+)\.(\d+)",
                            re.I)

_ORDER: dict[str, list[str]] = {
    "S1": ["ds_report", "versions", "cuda", "traceback", "repro"],
    "S2": ["launcher_command", "hardware", "traceback", "ds_report", "versions", "config"],
    "S3": ["traceback", "config", "ds_report", "versions", "repro"],
    "S4": ["traceback", "config", "ds_report", "versions", "hardware", "launcher_command", "repro"],
    "S5": ["traceback", "ds_report", "versions", "hardware", "repro", "config", "cuda"],
}
# What may be asked while the stage is not stated: requests that fit any report.
GENERIC_ORDER = ["traceback", "versions", "config", "repro"]
# Items the text itself calls for (an error mentioned but not pasted, a config mentioned but not
# shown, the stacks of a hang it describes: ``request_symptom``): specific to this report even
# when nothing else is stated.
TEXT_TRIGGERED = frozenset({"traceback", "config", "stacks"}) | symptom_requests.TEXT_TRIGGERED
# ds_report prints the framework, torch and CUDA versions, so asking for it covers these two.
_COVERED_BY_DS_REPORT = {"versions", "cuda"}
_NEEDS_DISTRIBUTED = {"launcher_command", "hardware"}
# Recorded for the review page, never asked: the CUDA versions were wrong 8 of 18 times in three
# blind, strictly judged samples of posted requests (a ROCm or CPU-only build, a packaging error
# of op_builder, a build without torch installed); a build's versions request already names CUDA.
RECORDED_ONLY = frozenset({"cuda"})
# Symptoms without an error to paste (slow, hanging, wrong numbers) and import errors, where the
# CUDA toolkit plays no part.
_NO_TRACEBACK_SYMPTOMS = frozenset({"4.1", "4.11", "5.3", "5.4", "5.9"})
_NO_CUDA_SYMPTOMS = frozenset({"1.2", "1.3", "5.11"})
# The machines matter only for these symptoms (connections between GPUs and nodes, memory, speed,
# collectives, hangs, kills, serving), the launch command outside communication setup only for
# the last few; a checkpoint or shape bug needs neither, a launcher bug no GPU model.
_HARDWARE_SYMPTOMS = frozenset({"2.2", "3.4", "4.1", "4.2", "4.7", "4.8", "4.9", "4.11", "5.2",
                                "5.4", "5.7", "5.10"})
_LAUNCH_SYMPTOMS = frozenset({"4.7", "4.8", "4.9", "4.11", "5.10"})

# Not a measure of numbers: "over 50% relative error" between two runs' losses is no error to
# paste (Megatron-LM#1754, a divergence whose only image is the loss chart). Read by both the
# error mention and the error noun that introduces a screenshot (``_ERROR_NOUN``).
_NOT_A_MEASURE = (r"(?<!relative )(?<!absolute )(?<!squared )(?<!numerical )(?<!rounding )"
                  r"(?<!approximation )")
_ERROR_MENTION = re.compile(
    _NOT_A_MEASURE +
    r"\b(?:error|exception|fail(?:s|ed|ure)?|crash(?:es|ed)?|segfault|traceback|raises?d?|abort(?:s|ed)?)\b",
    re.I,
)
_NO_ERROR = re.compile(
    r"\bno (?:\w+ )?(?:error|traceback|exception|stack ?trace)s?\b|"
    # ...but not "a 2-node run works without any errors", which is about another setup
    r"(?<!works )(?<!worked )(?<!runs )(?<!ran )(?<!run )(?<!fine )"
    # ("crashes by itself without giving any useful error output": ColossalAI#6175)
    r"\bwithout (?:any |an )?(?:\w+ ){0,2}(?:(?:useful|helpful|meaningful|clear) )?"
    r"(?:error|traceback|exception|message|output)s?\b|"
    r"\b(?:does ?n[o']t|did ?n[o']t|never|nothing) (?:\w+ )?(?:throws?|raises?|shows?|prints?|gives?|"
    r"reports?|logs?)\b[^.\n]{0,30}\b(?:error|exception|traceback)|\bsilently\b|"
    r"\bno (?:output|logs?|messages?) (?:at all|whatsoever)\b",
    re.I,
)
_TRACE = re.compile(
    r"Traceback \(most recent call last\)|File \"[^\"\n]{1,300}\", line \d+|"
    # "error: command 'gcc' failed", or "this error:" with the error on the next lines; not a
    # sentence introducing nothing ("I run into this error:" ending the report), which is all
    # that is left when the error was a screenshot or never pasted
    r"\b[A-Z]\w{0,60}?(?:Error|Exception)\b\s*:|error:(?=[ \t]*(?:\n[ \t]*){0,2}\S)|\bERROR\b|"
    r"Segmentation fault|core dumped|"
    r"^[ \t]*\[E[ \]]|NCCL WARN|\bnccl\w*Error\b|CUDA error|terminate called|what\(\):|"
    r"exit ?code|exit status|\bKilled\b|signal \d+|SIG(?:KILL|SEGV|ABRT|TERM)\b|"
    # a shell's own error line is the whole error: there is no traceback to paste
    r"\w: command not found\b|\bcommand not found\b|"
    # an import error's message names what is missing; its traceback adds nothing
    r"\bcannot import name\b|\bNo module named\b|\bundefined symbol\b|"
    # the out-of-memory message is the whole error ("CUDA out of memory. Tried to allocate 25.10 GiB")
    r"\bout of memory\. Tried to allocate\b",
    re.M,
)
_FENCE = re.compile(r"```[^\n`]{0,200}\n(.*?)(?:```|\Z)", re.S)  # (an info string never holds a backtick)
# A bare report: a body this short (after cleaning removed the template), no code, no question,
# and words saying that something goes wrong ("doesn't work", "misbehaves", "has no effect",
# "Bug report.", "runs out of memory").
BARE_BODY_CHARS = 250
_GOES_WRONG = re.compile(
    r"\b(?:does ?n[o']t|do ?n[o']t|is ?n[o']t|wo ?n[o']t|can ?n?[o']?t|unable to)\b|"
    + _NOT_A_MEASURE + r"\berrors?\b|"
    r"\b(?:bugs?|fail\w*|crash\w*|broken|breaks?|incompatible|misbehaves?|no effect|"
    r"wrong|incorrect|out of memory)\b", re.I)
_ASSERTION = re.compile(r"\bassert(?:ion)?\b", re.I)  # "否则报 assert chunk_size % self.pg_size == 0"
# ...but a question, or a hang or a slowdown, which has no error to show (its own requests ask
# for the stacks or the speed: ``symptom_requests``)
_NOT_BARE = re.compile(r"\?|\bquestions?\b|\bhow (?:to|do|can|should)\b|\bhang\w*|\bstuck\b|"
                       r"\bfreez\w*|\bdeadlock\w*|\bslow\w*|\bfaster\b|\bspeed\w*|\bthroughput\b|"
                       r"\bperformance\b|\bflops\b|\butili[sz]ation\b", re.I)
# The reporter says the error's log is attached ("the main error in the log is about NCCL
# initialization (full log attached)"): asking for it again reads as not having read the report.
_LOG_ATTACHED = re.compile(
    r"\b(?:full |complete |whole |error |training |output )?(?:logs?|traceback|output) (?:is |are )?attached\b|"
    r"\battached (?:the |my |a )?(?:full |complete |whole |error )?(?:logs?|traceback|output)\b|"
    r"\b(?:see|in) the attached (?:logs?|file|output)\b|"
    # a log file uploaded to the issue ("[run.log](https://github.com/user-attachments/files/
    # 20204314/run.log)"): Megatron-LM#1576 was asked for the traceback it had attached
    r"github\.com/(?:user-attachments|[\w.-]+/[\w.-]+)/files/(?:\d+/)?[^\s)\]/]{1,255}\.(?:log|txt|out|err)\b"
    # ...and as the cleaned text keeps it, the link's target gone ("Log: [cudagraph_error.log]("):
    # Megatron-LM#3871 was asked for the error its uploaded log holds (not ".txt": a linked
    # requirements.txt or CMakeLists.txt is no log)
    r"|\[[^\[\]\n]{0,200}\.(?:log|out|err)\]\(",
    re.I)
# A block the reporter introduces as what the program printed ("The output is:", "**Logs**").
_OUTPUT_BLOCK = re.compile(
    r"\b(?:output|logs?|errors?|trace(?:back)?|prints?|printed|shows?|says?)\b[^\n]{0,40}\n\s*```|"
    # ...or as what it failed with ("loading a model now fails with:")
    r"\b(?:(?:fails?|failed|failing|crash(?:es|ed)?|dies|died|exits?|exited) with|raises?|throws?|"
    r"complains?)\b[^\n]{0,40}:[ \t]*\n\s*```",
    re.I,
)
# ds_report's output, or the reporter saying they ran or attached it ("ds_report output was
# attached"): asking for it again was read by maintainers as not having read the report.
_DS_REPORT = re.compile(r"DeepSpeed general environment info|deepspeed info\s*\.{3,}|op name\s*\.{3,}|"
                        r"DeepSpeed C\+\+/CUDA extension op report|\bds_report\b", re.I)
_CONTAINER = re.compile(
    r"nvcr\.io/|\b(?:pytorch|nemo|tensorflow)\s*:\s*\d{2}\.\d{2}|\bNGC\b[^\n]{0,40}\b\d{2}\.\d{2}\b", re.I)
_COLLECT_ENV = re.compile(
    r"PyTorch version:|Is debug build:|collect_env|__version__|"
    # a filled-in environment list ("- `Accelerate` version: 0.22.0", "PyTorch version (GPU?): 2.0")
    r"\bversion\b[^\n:]{0,20}:\s*v?\d+\.\d+|"
    r"\b(?:from|on) (?:the )?(?:latest )?(?:\w+ )?(?:master|main) branch\b",
    re.I,
)
# A "Versions" / "Environment" section of an issue template that the reporter filled in.
_VERSION_SECTION = re.compile(
    r"^#{1,4}\s*(?:versions?|environment|system info)\s*\n(?:[^#\n]*\n){0,15}?[^#\n]*\d+\.\d+",
    re.I | re.M,
)
# A version written where the environment reader does not look (it feeds the classifier and is
# left alone): "**DeepSpeed version**: 0.15.0", "PT 2.0", "torch-'1.13.1+cu117'", "colossal=0.4.9",
# "deepspeed-0.10.1.tar.gz", "installed version `0.16.1`", an egg or wheel in a path, a docker image tag
# ("uber/horovod:0.15.2-tf1.12.0"), an NGC release named in prose ("the NeMo containers from
# 25.04 on"), "deadlocks on v1.1", a "Version 1.1.0" list item or a nightly build. CUDA, NCCL and
# Python alone do not count: the request is for the framework and torch.
_VERSIONED = (r"deepspeed|megatron(?:[-_ ]?(?:lm|core))?|mcore|colossal(?:-?ai)?|horovod|torch|"
              r"pytorch|pt|accelerate|transformers|transformer[-_ ]?engine|te|tensorflow|"
              r"tf(?:-nightly(?:-[cg]pu)?)?|apex|nemo|(?:pytorch[-_ ])?lightning|flash[-_ ]?attn|"
              r"jax|mxnet|vllm|ds")
_AFTER_NAME = (r"(?:[-_ ]?(?:version|ver\.?|release))?(?:\*\*|__)?"
               # "colossal=0.4.9", never "ppl without deepspeed = 29.76"
               # "Update transformer-engine version to 2.18.0" (Megatron-LM's CI report, asked for it)
               r"(?:\s*(?:is|of|was|==|>=|:|\(|-|_|@|`|'|\")\s*|=|(?<=version) to ){0,3}\s*(?:version\s*)?"
               r"[`'\"]?v?\d+\.\d+")
_VERSION_MENTION = re.compile(
    rf"(?<![\w/.-])(?:{_VERSIONED}){_AFTER_NAME}|"
    rf"site-packages/(?:{_VERSIONED})\w*-\d+\.\d+|"
    r"\b[\w.-]{1,100}/[\w.-]{1,100}:v?\d+\.\d+|"
    r"\b(?:container|image)s?\b[^\n]{0,30}\b\d{2}\.\d{2}\b|\b\d{2}\.\d{2}(?:-py3)? (?:container|image)|"
    r"\b(?:on|with|using|in|to|from|since|after|before) v\d+\.\d+\b|"
    r"^\s*(?:\d+\.\s*|[-*]\s*)?version\s*:?\s*v?\d+\.\d+|"
    # "I just installed version `0.16.1`", "is it missing from `0.16.1`?"
    r"\bversion\s*[`'\"]v?\d+\.\d+|\b(?:installed|using|running|from|on|with|in|to)\s+[`'\"]v?\d+\.\d+[\w.+-]*[`'\"]|"
    r"\bnightl(?:y|ies)\b|"
    # "With the latest release, v0.6.5, I built from source" (DeepSpeed#2060: a strict reader's 0
    # for asking the version the first sentence gives)
    r"(?<!tools, )\b(?:release|tag)[,:]?\s+`?v?\d+\.\d+(?:\.\d+)?\b|"  # not nvcc's "tools, release 11.7"
    # a template's "Versions" heading (cleaned away) answered with the branch alone
    r"^\s*(?:main|master)\s*$",
    re.I | re.M)
# The same for torch alone and for each framework alone: ds_report is asked outside builds only
# when one of the two is missing.
_TORCH_MENTION = re.compile(
    rf"(?<![\w/.-])(?:torch|pytorch|pt){_AFTER_NAME}|site-packages/torch-\d+\.\d+|"
    r"\b(?:torch|pytorch)\b[^\n]{0,20}\bnightl(?:y|ies)\b", re.I)
_FRAMEWORK_MENTION = {
    "deepspeed": re.compile(rf"(?<![\w/.-])(?:deepspeed|ds){_AFTER_NAME}|"
                            r"site-packages/deepspeed-\d+\.\d+|"
                            # at a commit: "DeepSpeed `cf443004`", "deepspeed commit 22969fa7"
                            r"\bdeepspeed\W{1,3}(?:commit\W{1,3})?(?=[a-f]*\d)[0-9a-f]{7,40}\b", re.I),
}
_BUILD_MENTION = re.compile(
    r"\b(?:nvcc|compil\w*|build\w*|extension|op_builder|setup\.py|wheel|ninja|gcc|g\+\+|cuda_home|"
    r"undefined symbol|cannot open shared object)",
    re.I,
)
# A build without CUDA ("-DUSE_CUDA=OFF", a CPU-only wheel): the CUDA versions play no part.
_NO_CUDA = re.compile(r"USE_CUDA=(?:OFF|0|FALSE)\b|\bcpu[- ]?only (?:build|wheel|torch|pytorch)\b|"
                      r"\bcpuonly\b|\+cpu\b|"
                      # ...or an AMD GPU: ROCm's PyTorch has no CUDA toolkit to ask about
                      r"\bROCm\b", re.I)
# The machines named in other words than a GPU model: a network ("over InfiniBand", "RoCE"), a
# cloud instance ("g4dn.12xlarge", "NC24s_v2", "DGX"), or a consumer card by number ("2x 3090").
_HARDWARE_ELSEWHERE = re.compile(
    r"\binfini[- ]?band\b|\bRoCE(?:v2)?\b|\bethernet\b|\bEFA\b|\bIB\b|\bNVLink\b|"
    r"\b(?:p[2-5]d?e?|g[3-6]dn?|g6e)\.\d*x?l(?:arge)?\b|\bN[CDV]\d+\w*_v\d\b|\bDGX\b|"
    r"\b\d\s?[x×*]\s?(?:RTX\s?)?\d{4}\b|\b(?:RTX|GTX)\s?\d{4}|\b(?:20[6-8]0|30[6-9]0|40[6-9]0|50[6-9]0)(?:\s?Ti)?\b",
    re.I)
_CONFIG_MENTION = re.compile(
    r"ds_config|deepspeed[_ ]config|zero[_ ]optimization|(?-i:\bZeRO\b|\bZERO\b)|zero[-_ ]stage|"
    # ZeRO in lower case only as a stage or a feature: never "GPU utilization drops to zero" or a
    # "non-zero size"
    r"(?<!non-)(?<!non )\bzero[-_ ]?(?:[0-3]\b|\+\+|infinity|inference|init\b|offload)|\bzero[23]\b|"
    r"\bdeepspeed\.zero\b|\blow[-_ ]?level[-_ ]?zero|"
    # a plugin, but not NCCL's network plugin ("NET/Plugin : No plugin found (libnccl-net.so)")
    r"(?<!NET/)(?<!No )\bplugin\b|offload|--deepspeed\b",
    re.I,
)
_CONFIG_BODY = re.compile(
    r"\{\s*\"\w+\"\s*:|\"(?:zero_optimization|train_batch_size|train_micro_batch_size_per_gpu|fp16|bf16|"
    r"optimizer)\"|^\s*zero_optimization\s*:|\b[A-Za-z]\w{0,40}Plugin\s*\(|--(?:tensor|pipeline)-model-parallel-size|--micro-batch-size|"
    r"--plugin[ =][\"']?\w+|"
    # the ZeRO or offload settings as the example script's flags ("--zero_stage 2",
    # "--disk-offload"), or the stock example's own config ("the DeepSpeedExamples OPSD Hybrid
    # Engine configuration with ZeRO stage 3")
    r"--zero[_-]stage[ =]+\d|--(?:disk|cpu|nvme)[_-]offload\b|--offload\b|"
    r"\b(?:DeepSpeedExamples|the examples?'?s?)\b[^.\n]{0,60}\bconfig(?:uration)?\b",
    re.I | re.M,
)
# (names read within bounds, here and below: an unbounded name tried from every position of
# "a-a-a-..." or "a_a_a_..." took 20-60 s on 100 KB)
_REPRO = re.compile(
    r"```|^ {4}\S|\bimport \w+|\bpython3? [\w./-]+|\b(?:deepspeed|torchrun|srun|mpirun|bash|sh|"
    r"colossalai run|accelerate launch)\s+\S|to reproduce|steps?:|^\s*\d+\.\s+\S|"
    r"\bcolossalai check\b|\b(?:examples?|scripts?|tests?)/[\w./-]+|\b\w[\w-]{0,100}\.(?:py|sh)\b|"
    # the steps in prose: "I followed the README and ran the training command", "running the
    # training example with cifar10"
    r"\bfollow(?:ed|ing)\b[^.\n]{0,40}\b(?:readme|examples?|tutorials?|guides?|instructions|docs?|"
    r"documentation|steps)\b|\b(?:ran|run|running)\s+the\s+(?:[\w-]+\s+){0,3}?(?:examples?|tutorials?|"
    r"demos?)\b|"
    # a named example ("the mnist_advanced example freezes")
    r"\b\w{1,60}[_-]\w{1,60} (?:example|demo)\b|"
    # the command it ran, quoted ("running `colossalai -i' gives the error": ColossalAI#2940, a
    # strict reader's 0 for asking the steps)
    r"\b(?:ran|run|running|runs|executing|executed)\s+`[^`\n]{2,100}?[`'’]",
    re.I | re.M,
)
_LAUNCH_FLAGS = re.compile(r"--(?:hostfile|nnodes|nproc[_-]per[_-]node|num[_-]gpus|num[_-]nodes)\b|"
                           # a hostfile's lines, or an accelerate config that sets the nodes
                           r"^\s*\S+\s+slots=\d+|^\s*num_machines\s*:\s*\d|"
                           r"^\s*deepspeed_multinode_launcher\s*:|"
                           # the rendezvous each node is given ("init_method=\"tcp://10.0.0.1:10087\"",
                           # "NODE_RANK=$rank MASTER_ADDR=$master nemo llm pretrain ...")
                           r"\binit_method\s*=|--dist[-_]url\b|\b(?:MASTER_ADDR|NODE_RANK|NNODES|NUM_NODES)=\S|"
                           # a launch script the reporter says is below or attached
                           r"(?i:\b(?:slurm|sbatch|batch|launch|job|submission) script (?:below|attached)\b|"
                           r"\battached (?:slurm|sbatch|batch|launch|job) script\b)", re.M)
# A command line that starts the job (``CUDA_VISIBLE_DEVICES=3 python main.py``, ``bash run.sh``):
# the reporter has shown how they launch, even without a distributed launcher.
_COMMAND_LINE = re.compile(
    r"(?:^|[\s`$>])(?:python3?|bash|sh)\s+(?:-m\s+[\w.]+|-c\b|[\w./-]*\.(?:py|sh)\b|"
    r"[\w.-]*/[\w./-]+)|"
    # any launcher with arguments: the reporter has shown how the job starts, whatever starts it;
    # an argument is a flag, a path or a script ("the torchrun command" in prose is none)
    r"\b(?:torchx\s+run|torchrun|colossalai\s+run|deepspeed|accelerate\s+launch|srun|mpirun|"
    r"horovodrun|kubectl\s+apply|sbatch)\s+(?:-{1,2}\w|[\w.-]*/|[\w.-]+\.(?:py|sh|yaml|yml|json)\b)",
    re.M)


# The framework's own package did not install: its tools (``ds_report``, ``horovodrun
# --check-build``) cannot run yet, and asking for them was read by maintainers as not having read
# the report.
_INSTALL_FAILED = re.compile(
    r"Failed (?:to )?build(?:ing)? (?:wheel|deepspeed|horovod)|ERROR: Command errored out|"
    r"ERROR: Could not build wheels|subprocess-exited-with-error|error: legacy-install-failure|"
    r"Running setup\.py install for \w+ \.{3} error|pip install[^\n]{0,80}\n[^`]{0,400}?\berror\b|"
    # or installed without its command-line tools ("horovodrun: command not found")
    r"\b(?:horovodrun|ds_report|deepspeed|colossalai): command not found|"
    # or the reporter says so: "pip install . fails", "Building DeepSpeed from source fails",
    # "pip install of DeepSpeed fails", "DeepSpeed fails to build on Windows"
    r"\b(?:pip3? install|install(?:ing|ation)?|build(?:ing)?|compil(?:e|ing))(?: of)?\s+(?:-\S+\s+)*"
    r"[`'\"]?(?:\.|deepspeed|horovod|colossal-?ai)(?:==[\w.]+)?[`'\"]?(?=[\s`'\",]|$)[^\n.]{0,40}?"
    r"\b(?:fails?|failed|failing)\b|"
    r"\b(?:deepspeed|horovod|colossal-?ai)\s+(?:(?:fails?|failed) to (?:build|install|compile)|"
    r"(?:install(?:ation)?|build) fail(?:s|ed))\b|"
    r"\bpip install (?:fails|failed)\b|"
    # "Installing on an AMD ROCm system fails", "Unable to install horovod", "Error when installing
    # DeepSpeed" (never "after installing X, training fails", where the package is installed)
    r"(?<!after )(?<!since )(?<!when )\binstall(?:ing|ation)\b[^.,;\n]{0,60}?\b(?:fails?|failed)\b|"
    r"\bunable to install\b|\b(?:errors?|fails?|failed) (?:when|while) installing\b",
    re.I)


# The framework's own version tool fails: asking for its output cannot be answered.
_TOOL_FAILED = re.compile(r"\bcolossalai check\b[^.\n]{0,40}\b(?:errors?|fails?|failed|crash\w*)\b|"
                          r"\b(?:errors?|fails?|failed)\b[^.\n]{0,30}\bcolossalai check\b", re.I)


# DeepSpeed itself fails to import ("`import deepspeed` fails in a python env that has
# numpy>=2.0.0"): ds_report imports it too, so it cannot run.
_IMPORT_FAILED = re.compile(r"\bimport(?:ing)? deepspeed`?\s+(?:fails|failed|raises|breaks|errors?)\b", re.I)


# The report is about building the package (a wheel, an extension, the compiler's own error):
# a training configuration plays no part (a DeepSpeed config JSON asked of a Windows wheel build
# was read as not having read the report).
_BUILDING = re.compile(
    r"setup\.py\s+(?:install|bdist_wheel|build|develop)|\bbdist_wheel\b|\bbuild_ext\b|"
    r"Error building extension|\bDS_BUILD_[A-Z_]+|fatal error (?:LNK|C)\d+|ninja: build stopped|"
    r"error: command '[^'\n]*(?:gcc|g\+\+|nvcc|cl\.exe)'", re.I)
# A permalink to lines of the framework's source: the reporter has read the code and says where
# it goes wrong; asking for their configuration or a script was read as dismissive.
_SOURCE_LINE = re.compile(r"/blob/[\w.-]{1,40}/[\w./-]+#L\d+")


# ...at a commit: the framework's exact version is in the link.
_PINNED_SOURCE_LINE = re.compile(r"/blob/[0-9a-f]{7,40}/[\w./-]+#L\d+")


# The line that introduces a screenshot as the error names it ("gives me this error:", "the
# error below", "the traceback:"); a verb ("fails to converge. Loss curve:") introduces a chart.
_ERROR_NOUN = re.compile(_NOT_A_MEASURE + r"\b(?:errors?|exceptions?|trace ?backs?|stack ?traces?)\b", re.I)


# A link's target on that line: "[link2](https://discuss.pytorch.org/t/keep-getting-cuda-oom-error-...)"
# names no error of the report's own (DeepSpeed#4047, whose only image is a paper's table).
_LINK_TARGET = re.compile(r"\]\([^()\s\]]{0,500}\)|https?://\S+")


def _image_labels(raw: str, without_template: bool = False) -> Iterator[str]:
    """The last line of text before each image of the raw report: what introduces it ("gives me
    this error:", "**ds_report output**"). ``without_template``: a template's own lines left out."""
    for before in text_signal.before_images(raw):
        if without_template:
            before = text_signal.strip_template(before)
        lines = [line for line in before.split("\n") if line.strip()]
        if lines:
            yield lines[-1]


def image_shown(raw: str) -> bool:
    """The raw report shows an image (a screenshot, a memory or loss graph). A bare report of
    memory with one is not asked what it sees (DeepSpeed#3286's and #3590's memory graphs were
    read as asked again for what they show); a screenshot that is the whole report still is
    (ColossalAI#2877: its error only as a picture)."""
    return any(True for _ in text_signal.before_images(raw if isinstance(raw, str) else ""))


def error_in_image(raw: str) -> bool:
    """The raw report introduces an image as its error: the last line of text before it names
    the error (``_ERROR_NOUN``) and does not say there is none. The error exists, but not as text
    anyone can search. Not a loss chart, a memory graph or a template's "Screenshots" heading
    (DeepSpeed's template puts "See error" a few lines above it), whose own line names no error."""
    for label in _image_labels(raw, without_template=True):
        label = _LINK_TARGET.sub("]", label)
        if _ERROR_NOUN.search(label) and not _NO_ERROR.search(label):
            return True
    return False


# A tool's output or the environment shown as a screenshot under its heading ("**ds_report
# output**" then an image: DeepSpeed#2923 was asked for the ds_report it showed, a strict reader's
# 0): the versions are there for a maintainer's eye, though not for the text.
_VERSIONS_SHOWN = re.compile(r"^[\W_]*(?:(?:my |the )?(?:ds_report|collect_env|colossalai check(?: -i)?|"
                             r"pip (?:list|freeze))(?: output)?|(?:my |the )?(?:environment|versions?|"
                             r"system info)(?: info(?:rmation)?)?)[\W_]*$", re.I)


# DeepSpeed's template section "**ds_report output**" filled in with a code block: cleaning takes
# the heading away with the template, and a shortened paste may keep none of the lines
# ``_DS_REPORT`` knows (DeepSpeed#5718: "Setting ds_accelerator to cpu ..." and "...").
_DS_REPORT_SECTION = re.compile(r"ds_report output\W{0,6}\n\s*```[^\n]*\n\s*[^`\s]", re.I)


def versions_shown(raw: str) -> bool:
    """The raw report shows its versions where the cleaned text cannot see them: a filled
    "ds_report output" section, or an image under a heading or label that is only a version
    tool's output or the environment ("**ds_report output**", "Environment:"). Not a sentence
    that mentions a version ("After updating to the latest version I get this error:") before
    a screenshot of something else."""
    raw = raw if isinstance(raw, str) else ""
    return bool(_DS_REPORT_SECTION.search(raw)) or any(
        _VERSIONS_SHOWN.search(label) for label in _image_labels(raw))


def cites_source(raw: str) -> bool:
    """The raw report (before cleaning removes links) points at lines of source code."""
    return bool(_SOURCE_LINE.search(raw if isinstance(raw, str) else ""))


def pins_source(raw: str) -> bool:
    """The raw report points at lines of source code at a commit (``/blob/<sha>/...#L12``)."""
    return bool(_PINNED_SOURCE_LINE.search(raw if isinstance(raw, str) else ""))


def bare_report(text: str) -> bool:
    """The report (title, then the cleaned body: ``signal.full_text``) says in a sentence or two
    that something goes wrong and shows nothing else: no code, log or error text, no question,
    not a hang, a slowdown or a divergence, nor a report that says there is no error to show or
    that its log is attached."""
    body = text.partition("\n")[2].strip()
    return (len(body) < BARE_BODY_CHARS and "```" not in body and not _TRACE.search(text)
            and not _ASSERTION.search(text)
            and not _NOT_BARE.search(text) and not _NO_ERROR.search(text)
            and not _LOG_ATTACHED.search(text) and not symptom_requests.diverges(text)
            and bool(_GOES_WRONG.search(text)))


def missing_info(text: str, env: Environment, stage: str | None, distributed: bool,
                 framework: str | None = None, cites_source: bool = False,
                 pinned_source: bool = False, error_image: bool = False,
                 versions_raw: bool = False, image_shown: bool = False) -> list[MissingInfo]:
    """Items a maintainer would ask for first, given what the report already contains: the
    stage's checklist (at most ``MAX_ITEMS``), then the requests keyed by symptom that the text
    calls for (``symptom_requests``; the comment asks those only for a symptom it states). A
    feature, documentation or roadmap request lacks nothing a bug report would.

    ``framework`` is a hint from the repository (``deepspeed`` for deepspeedai/DeepSpeed); the
    text's own framework is used when it is absent. ``cites_source``: the raw report links to
    lines of source code (``cites_source``; the cleaned ``text`` has no links left);
    ``pinned_source``: at a commit (``pins_source``), which gives the framework's version: on the
    shared data's backtest 12 of the 13 version or ds_report requests such reports got were read
    as asking for what the link already says (the reporter is pointing at code). ``error_image``:
    the raw report shows its error as a screenshot (``error_in_image``), so the traceback is asked
    for as text, and why. ``versions_raw``: the raw report shows the versions where the
    cleaned text cannot see them (``versions_shown``), so no version request is made.
    ``image_shown``: the raw report shows an image (``image_shown``), so a bare report of memory
    is not asked what it sees: the graph shows it."""
    text = text if isinstance(text, str) else ""
    framework = framework or env.framework
    if not_a_bug_text(text) or howto_question(text) or reporter_diagnosed(text):
        return []
    # read when first needed, once (each a search of up to 100 KB)
    installing = functools.cache(lambda: bool(_INSTALL_FAILED.search(text)))
    config_shown = functools.cache(lambda: _config_shown(text))
    # the config shown, or (Accelerate) its questions answered: asked by the config request and
    # by Accelerate's launch request, which then leaves the config out
    config_given = functools.cache(lambda: config_shown() or (
        framework == "accelerate" and _accelerate_answers(text)))
    # read once: the ds_report check and its wording both ask (two searches of up to 100 KB each)
    framework_given = functools.cache(lambda: _framework_given(text, env, framework))
    torch_given = functools.cache(lambda: _torch_given(text, env))
    checks = {
        # ds_report (pasted or said to be attached) prints the framework, torch and CUDA versions
        "versions": lambda: not (env.framework_version or env.torch or _versions_elsewhere(text)
                                 or _DS_REPORT.search(text) or pinned_source or versions_raw),
        # a build, or an install that failed: not the word "install" in an inference report's
        # setup steps or an import error's "how do I install it", nor pip failing to choose a
        # version (nothing was built)
        "cuda": lambda: not (env.cuda_torch or env.cuda_nvcc or _DS_REPORT.search(text)
                             or _NO_CUDA.search(text) or versions_raw)
        and bool(_BUILD_MENTION.search(text) or installing())
        and not symptom_requests.resolution_failed(text),
        "ds_report": lambda: framework == "deepspeed" and not _DS_REPORT.search(text)
        and not (versions_raw and stage != "S1")  # a build wants the op table all the same
        and (stage == "S1" or not (pinned_source or (framework_given() and torch_given())))
        and not installing() and not _IMPORT_FAILED.search(text),
        # a report pointing at the lines of source that go wrong has explained the error: on the
        # shared data's backtest 5 of 5 traceback requests such reports got were read as needless
        "traceback": lambda: _error_without_trace(text, error_image) and not cites_source,
        # the command itself, not the launcher's name in prose ("a torchrun command not found")
        "launcher_command": lambda: not _LAUNCH_FLAGS.search(text) and not _COMMAND_LINE.search(text)
        and not _job_script_attached(text),
        # the GPU model is what the answer turns on; a report that names it and not the count
        # was read as already giving the hardware
        # (not for a code-level bug pointing at source lines, nor for a divergence: a loss or a
        # gradient norm that goes wrong turns on the numerics, not on the machines; nor for a
        # memory leak, which grows over steps whatever the GPU)
        "hardware": lambda: env.gpu_model is None and not _HARDWARE_ELSEWHERE.search(text)
        and not cites_source and not symptom_requests.diverges(text)
        and not symptom_requests.leaks(text),
        "config": lambda: bool(_CONFIG_MENTION.search(text) or (framework == "accelerate"
                                                                 and _ACCELERATE_CONFIG_MENTION.search(text)))
        and not config_given()
        and not _BUILDING.search(text) and not cites_source,
        "repro": lambda: not _REPRO.search(text) and not cites_source,
    }
    found: list[MissingInfo] = []
    for key in _ORDER.get(stage or "", _ORDER["S4"]):
        if key in _NEEDS_DISTRIBUTED and not distributed:
            continue
        if key in _COVERED_BY_DS_REPORT and any(item.key == "ds_report" for item in found):
            continue
        if key in ("config", "launcher_command") and any(
                item.description == ACCELERATE_LAUNCH_AND_CONFIG for item in found):
            continue  # (Accelerate's launch request asked for its config with it)
        if checks[key]():
            # the framework's own version tool cannot run before it installs: the plain wording
            # (or fails itself: "running colossalai check gives me an error")
            own = None if key == "versions" and (installing() or _TOOL_FAILED.search(text)) else framework
            description = describe(key, own)
            if key == "launcher_command" and own == "pytorch" and _before_torchrun(text, env):
                description = LEGACY_TORCH_LAUNCH
            if (key == "launcher_command" and own in (None, "pytorch") and _SLURM.search(text)
                    and not _NAMED_LAUNCHER.search(text)):
                description = SLURM_LAUNCH
            if key == "traceback" and (not distributed or stage == "S1" or _one_process(text, env)):
                description = ONE_PROCESS_TRACEBACK
            if key == "traceback" and error_image:
                description = IMAGE_TRACEBACK
            if key == "versions" and own == "megatron" and _TE_MISSING.search(text):
                description = MEGATRON_VERSIONS_WITHOUT_TE
            if key == "versions" and own in (None, "deepspeed") and _ROCM.search(text):
                description = ROCM_VERSIONS.get(own or "", ROCM_VERSIONS[""])
            if key == "versions" and (env.cuda_nvcc or env.cuda_torch):
                description = VERSIONS_WITHOUT_CUDA.get(description, description)
            if key == "ds_report" and stage != "S1":
                description = _ds_report_request(framework_given(), torch_given(), framework)
            if key == "hardware":
                description = _hardware_request(text, framework)
            if own == "accelerate":
                description = _accelerate_request(key, description, text, found, config_given())
            found.append(MissingInfo(key=key, description=description))
        if len(found) >= MAX_ITEMS:
            break
    # a bare report is asked what it shows when it goes wrong, after the stage's own requests (a
    # report that already gets three keeps them: the comment makes three)
    # (an image beside a report of memory shows what goes wrong; a screenshot that is the whole
    # report is still asked)
    memory_image = image_shown and (symptom_requests.leaks(text)
                                    or symptom_requests.about_memory(text))
    if (not error_image and not memory_image and not cites_source and len(found) < MAX_ITEMS
            and all(item.key != "traceback" for item in found) and bare_report(text)):
        found.append(MissingInfo(key="traceback", description=BARE_TRACEBACK))
    found += symptom_requests.requests(text, env, framework, stage, config_shown())
    if any(item.key == "nccl_debug" for item in found) and _one_process(text, env):
        # (one process has no peer to talk to: its NCCL log shows nothing)
        found = [item for item in found if item.key != "nccl_debug"]
    if asks_for_a_feature(text):
        found = [item for item in found if item.key not in NOT_FOR_A_FEATURE]
    if narrowed_down(text):
        return [item for item in found if item.key not in MOOT_WHEN_NARROWED]
    return found


def describe(key: str, framework: str | None) -> str:
    """The request in the framework's own terms (the generic wording for other repositories)."""
    if key in symptom_requests.KEYS:
        return symptom_requests.describe(key, framework)
    return FRAMEWORK_DESCRIPTIONS.get((key, framework or ""), DESCRIPTIONS.get(key, ""))


def asked(items: list[MissingInfo], stage: str | None, symptom: str | None = None,
          distributed: bool | None = None, question: bool = False) -> list[MissingInfo]:
    """The requests one public comment makes, given what it states (None: not stated).

    A stated stage asks its own items in its priority order; with no stated stage only the
    generic ones (traceback, versions, config, repro). The launch command only for communication
    setup or a distributed symptom it explains (collectives, hangs), the hardware only for a
    stated symptom it explains (connections, memory, speed), no CUDA for an import error, no
    traceback for a slow, hanging or wrong-output report, nothing for a stated question."""
    if question:
        return []
    allowed = set(_ORDER.get(stage or "", GENERIC_ORDER))
    picked: list[MissingInfo] = []
    for item in items:  # already in the stage's priority order (``missing_info``)
        if item.key not in allowed or item.key in RECORDED_ONLY or item.key in (p.key for p in picked):
            continue
        if item.key in _NEEDS_DISTRIBUTED and not (stage == "S2" or distributed):
            continue
        if item.key == "hardware" and symptom not in _HARDWARE_SYMPTOMS:
            continue
        if item.key == "launcher_command" and stage != "S2" and symptom not in _LAUNCH_SYMPTOMS:
            continue
        if item.key == "cuda" and symptom in _NO_CUDA_SYMPTOMS:
            continue
        if item.key == "traceback" and symptom in _NO_TRACEBACK_SYMPTOMS:
            continue
        picked.append(item)
    return picked[:MAX_ASKED]


def asked_in_comment(triage: Triage) -> list[MissingInfo]:
    """The requests the public comment makes for ``triage``. Shared by the comment and the
    backtest's ``missing``.

    First what tells the causes of the symptom apart (``symptom_requests.PROFILES``), for the
    symptom the comment states or, inside a stated stage, its confident top choice
    (``request_symptom``), and a request the reporter's own error calls for whatever is stated
    (``symptom_requests.TEXT_TRIGGERED``); the profile's own checklist items (a traceback, the
    launch command) join them. With none of the symptom's own requests left to make, ``asked``
    given what the comment states (``Triage.stated``). Nothing for a question, feature or
    documentation request. Never what a diagnosis of the report's error makes pointless
    (``diagnoses.moot``: the CUDA versions when the error already names both)."""
    if probably_not_a_bug(triage):
        return []
    moot = diagnoses.moot(triage.diagnoses)
    items = [i for i in triage.missing_info if i.key not in moot]
    picked = [i for i in items if i.key in symptom_requests.TEXT_TRIGGERED]
    symptom_id = request_symptom(triage)
    for key in symptom_requests.PROFILES.get(symptom_id or "", ()):
        picked += [i for i in items if i.key == key and i.key not in {p.key for p in picked}][:1]
    if any(i.key in symptom_requests.KEYS for i in picked):
        return picked[:MAX_ASKED]
    stage, symptom = triage.stated("stage"), triage.stated("symptom")
    distributed = triage.stated("distributed_specific")
    return asked(items, stage=stage if isinstance(stage, str) else None,
                 symptom=symptom if isinstance(symptom, str) else None,
                 distributed=distributed if isinstance(distributed, bool) else None)


# The symptom's top choice is confident enough to key requests on when the stage is stated and
# it is this sure: on 5-fold CV of the shared data, 51 of the 56 issues it adds get only
# requests that fit their annotated symptom (0.91; 33 of 35 at 0.8, 57 of 66 at 0.6).
REQUEST_CONFIDENCE = 0.7


# The symptom whose requests a report gets when its text says the job hangs and no symptom is
# stated (``request_symptom``): a stack of every rank and the NCCL log, as for a stated hang;
# while communication setup is stated, the stacks and the launch command, as for a stated
# initialization failure (2.1: 22 of the 24 shared reports of that stage that say they hang). On
# the shared data the answer to such a hang was the launch more often than NCCL (SLURM's
# ntasks-per-node, mpirun's network options, "may be caused by a wrong launch command").
HANG_SYMPTOM = "4.11"
HANG_SYMPTOM_BY_STAGE = {"S2": "2.1"}


def request_symptom(triage: Triage) -> str | None:
    """The symptom whose requests the comment makes: the stated one, else the top choice when it
    lies in the stated stage with at least ``REQUEST_CONFIDENCE``, else a hang the text itself
    reports (``_hang_in_text``)."""
    stated = triage.stated("symptom")
    if isinstance(stated, str):
        return stated
    stage, pred = triage.stated("stage"), triage.symptom
    if (isinstance(stage, str) and pred.confidence >= REQUEST_CONFIDENCE
            and taxonomy.stage_of("symptom", pred.id) == stage):
        return pred.id
    if not _hang_in_text(triage):
        return None
    return HANG_SYMPTOM_BY_STAGE.get(stage, HANG_SYMPTOM) if isinstance(stage, str) else HANG_SYMPTOM


def _hang_in_text(triage: Triage) -> bool:
    """The report says in its own words that its distributed job hangs ("training hangs at step 0
    with 8 GPUs", "stuck at initializing ddp", "Watchdog caught collective operation timeout"),
    while the classifier is not sure of the symptom: the stacks request is recorded
    (``symptom_requests.requests`` records it only for the program's hang, not a reporter who
    got stuck, frozen weights or a hang the report says is over, and only while the report shows
    no stacks), the comment states a distributed job, and neither a build (a compile that hangs
    waits on a lock, not on NCCL) nor a question's title ("[QUESTION] Reason A2A Overlap hangs on
    torch < 2.6.0?" asks why, not for help to find where). Without it such reports got only the
    generic checklist."""
    if triage.stated("distributed_specific") is not True or triage.stated("stage") == "S1":
        return False
    title = triage.title or ""
    if _HOWTO_TITLE.search(title) or _QUESTION_TITLE.search(title) or _NOT_A_BUG_TITLE.search(title):
        return False
    return any(item.key == "stacks" for item in triage.missing_info)


# Titles the reporter tagged as a documentation or feature request, a proposal, a roadmap or a
# task list (29 of the 31 tagged titles in the shared data are no bug; "[QUESTION]" is not among
# them: Megatron-LM's template puts it on bug reports), or that start by asking for something to
# be added or supported (4 of 4), also behind a component's tag or after a colon ("[FSDP][BE]
# Support for MixedPrecision(...)", "[FSDP] `use_orig_params=True`: support non-uniform
# requires_grad": 3 of 3 no bug), and a test issue ("Test" / "Just a test.").
_NOT_A_BUG_TAG = re.compile(
    r"^\s*(?:\[\s*(?:docs?|documentation|feature(?: request)?|rfc|enhancement|proposal|request|"
    r"roadmap|todo|tracking(?: issue)?|discussion|potential contribution|shardformer)\s*\]|"
    r"(?:feature request|request|roadmap|todo|rfc|proposal)\s*:|roadmap\b|tracking issue\b|"
    r"(?:\[[^\]\n]{1,30}\][ \t]*(?::[ \t]*)?)*(?:please add|add|support|implement)\s+\w|"
    r"[^:\n]{0,80}:\s*(?:support|implement)\s+\w|"
    r"(?:just )?(?:a )?test(?:ing)?\s*\.?\s*(?=\n|\Z)|"
    # a maintainer's own task: "Look into OOM from sharded gradscaler on CPU workloads"
    r"look into\b)", re.I)
# The bodies of feature and documentation templates (DeepSpeed's, PyTorch's, Colossal-AI's), a
# roadmap, or a task list of three or more open items.
_NOT_A_BUG_BODY = re.compile(
    r"\bfeature request\b|describe the feature|the feature, motivation|^#{1,4}\s*(?:motivation|"
    r"proposal|pitch)\b|is your feature request|describe the solution you'd like|the doc issue|"
    r"\broadmap\b|\btracking issue\b|\bthis issue tracks\b|^#{1,4}\s*(?:TODOs?|tasks|plan)\s*$|"
    # PyTorch's documentation template
    r"^#{1,4}\s*📚\s*documentation\b",
    re.I | re.M)
_OPEN_TASK = re.compile(r"^\s*[-*] \[ \] ", re.M)


def probably_not_a_bug(triage: Triage) -> bool:
    """A bug checklist (traceback, repro, versions) or debugging advice under a documentation or
    feature request, a roadmap or a task list reads as not having read it: none when "not a bug"
    is stated or the title says so (``not_a_bug_text`` reads the body, in ``missing_info``)."""
    return triage.stated("is_bug") is False or bool(_NOT_A_BUG_TAG.search(triage.title or ""))


def not_a_bug_text(text: str) -> bool:
    """The report's text (title first) is a feature, documentation or roadmap request."""
    return bool(_NOT_A_BUG_TAG.search(text) or _NOT_A_BUG_BODY.search(text)
                or len(_OPEN_TASK.findall(text)) >= 3)


# A title that asks how to do something or whether something is supported ("How do I run
# inference on llama2?", "Is gradient accumulation supported by HybridParallelPlugin?", "[QUESTION]
# Any plans to optimize TP scheduling?"); "how do I fix <error>" is a bug report.
_HOWTO_TITLE = re.compile(
    r"^\s*(?:\[[^\]\n]{0,30}\][ \t]*(?::[ \t]*)?)*(?:"
    r"how (?:do|does|can|could|to|should|would|is|are)\b(?![^?\n]{0,12}\b(?:fix|solve|resolve|debug|"
    r"avoid|get rid|get past|work ?around)\b)|"
    r"what (?:is|are|does)\b|which\b|is there\b|are there\b|any (?:plans?|way|support)\b|"
    r"(?:is|are) [^?\n]{0,60}\bsupported\b|(?:does|do|can|will) [^?\n]{0,60}\bsupport\b|"
    r"can (?:i|we|you|one)\b|should (?:i|we)\b|(?:request|questions?) (?:about|on|for|regarding)\b)",
    re.I)
# A title tagged as a question ("[QUESTION] CUDA graph support when world size > 1", "[Help]
# Saving and loading ZeRO-3 models", "[QNA] ...") or ending in a question mark ("llama60b
# training reported at 58G max memory usage?"). Megatron-LM's template puts "[QUESTION]" on bug
# reports too, so like a how-to title it counts only without an error, a traceback or a hang
# (and never "how to fix ...?").
_QUESTION_TITLE = re.compile(
    r"^(?![^\n]*\b(?:fix|solve|resolve|debug|avoid|get rid|get past|work ?around)\b)(?:"
    r"\s*(?:\[[^\]\n]{0,30}\][ \t]*(?::[ \t]*)?)*\[\s*(?:question|q|qna|help)\s*\]|[^\n]*[?？]\s*$)", re.I)


_NOT_A_BUG_TITLE = re.compile(r"\bnot a bug\b", re.I)


# A body that says it is a question ("Question about compatibility between Huggingface and
# Megatron-LM", "I have a question about the supervised instruct tuning") or asks whether or how
# something can be done ("Is that possible? ... how do I set it up?", "I'd like to see how a
# custom schedule can be specified"): like a how-to title, only without an error or a hang.
_QUESTION_BODY = re.compile(
    # (blanks before it read within the line: "\s*" from every line start crossed all the blank
    # lines after it, 50 s on 100 KB of them)
    r"^[ \t]*questions? (?:about|on|regarding|comparing)\b|\bI have (?:a|some|two|a few) questions?\b|"
    r"\bhow (?:do|can|should|could) (?:I|we)\b[^.\n]{0,80}\?|"
    # ...or of anything ("How should fp8 training be configured in Megatron-LM?"), never "How can
    # this happen?" ending a bug report, nor how to get past a problem or to speed something up
    r"\bhow (?:should|does|do|can|could|would|to)\b"
    r"(?!\s+(?:this|that|it|these|those)\s+(?:happen|occur|be|come)\b)"
    r"(?![^?\n]{0,40}\b(?:fix|solve|resolve|debug|avoid|get rid|get past|work ?around|deal with|speed|"
    r"faster|slow)\w*\b)"
    r"[^.\n?]{0,80}\?|"
    r"\bis (?:it|that|this|there)\b[^.\n]{0,40}\bpossible\b[^.\n]{0,40}\?|"
    r"\b(?:I'?d|I would) like to (?:see|know|understand|ask (?:how|whether))\b|"
    # where to read about it, whether it works with something ("Is there any resource on how to
    # do that?", "Does deepspeed work with AMD CPUs?")
    r"\bis there (?:any|a) (?:resource|documentation|doc|docs|guide|tutorial|example)s?\b|"
    r"\b(?:does|do) (?:\w+[ -]){1,3}(?:work|run) (?:with|on)\b[^.\n?]{0,40}\?|"
    # asks the maintainers for something of theirs ("Could you share the parameters and data used
    # to get that result?", ColossalAI#3702: a bug checklist asked of it was read as harm)
    # (their own things only: "Could you provide a fix?" or "explain why?" asks about a bug)
    r"\b(?:could|can|would) you (?:please )?(?:share|release|publish|provide)\b[^.\n]{0,30}\b(?:parameters|"
    r"settings|hyper-?parameters|config\w*|scripts?|data(?:set)?s?|weights|checkpoints?|recipes?)\b"
    r"[^.\n]{0,60}\?|"
    # in Chinese: "请问你们的训练效率测试结果是怎么测出来的？" ("may I ask how ... was measured?")
    r"请问[^\n]{0,80}[?？]", re.I | re.M)
# A report that asks for a feature or a change in so many words ("Out-of-the-box support for
# multi-node training on SLURM would be handy", "Is support for bf16 training planned for the near
# future?", "Request to change the CUDA_VISIBLE_DEVICES handling", "Please add ...") and pastes no
# error: the bug checklist (``BUG_STYLE``) answers nothing in it, even where it says what fails
# today ("it kept failing"). The settings the request is about may still be asked. Only in the
# prose: a quoted docstring's "would be nice" is not the reporter's.
_FEATURE_ASK = re.compile(
    r"\bwould be (?:really |very |so |extremely )?(?:nice|great|handy|helpful|useful|cool)\b|"
    r"\b(?:please|could you|can you|would you) (?:please )?(?:add\b(?!\s+(?:an? )?(?:test|check|fix|warning|assert))|"
    r"support|consider (?:adding|supporting)|"
    r"implement|provide an? option)\b|"
    r"^[ \t]*(?:\[[^\]\n]{0,30}\][ \t]*(?::[ \t]*)?)*request to (?:change|add|support)\b|\bfeature request\b|"
    r"\bany plans? (?:to\b(?!\s+fix)|for\b|on\b)|\bplanned\b[^.\n?]{0,40}\?|\bplans? to support\b|"
    # "could a utility be added that lets me plug in a customizable tensorboard?"
    r"\b(?:could|can|should) (?:\w+[ -]){1,4}be (?:added|made available)\b", re.I | re.M)
# The requests of a bug report: what went wrong, how to make it happen again, and the versions.
BUG_STYLE = frozenset({"traceback", "repro", "versions", "ds_report", "cuda"})
# ...and the launch command, which a feature that does not exist yet was never run with
NOT_FOR_A_FEATURE = BUG_STYLE | {"launcher_command"}


def asks_for_a_feature(text: str) -> bool:
    """The report asks for a feature or a change (``_FEATURE_ASK``, in its prose), shows no error
    and reports no hang or divergence of its own ("Random-level accuracy when combining
    `param_init_fn` with `sync_module_states=True`" ends "it would be great if FSDP supported this
    out of the box": a bug report with a wish, whose versions still matter)."""
    return not reports_a_problem(text) and bool(_FEATURE_ASK.search(text_signal.split_code(text)[0]))


# An error, a failure or a hang said in Chinese ("报错", "失败", "卡住"): the report is a bug report.
_CHINESE_PROBLEM = re.compile(r"报错|错误|异常|失败|卡住|卡死|崩溃|溢出")


def reports_a_problem(text: str) -> bool:
    """The report shows or names a problem of its own: an error, a traceback, a hang, a loss or
    accuracy going wrong, or a failure said in Chinese. A question or a wish beside one is a bug
    report ("Is there any documentation on this? The accuracy drops to random after resuming.").
    The problem first: in a log it is found at once, where the question patterns read it all."""
    return bool(_ERROR_MENTION.search(text) or _TRACE.search(text) or symptom_requests.hangs(text)
                or _CHINESE_PROBLEM.search(text) or symptom_requests.diverges(text))


def howto_question(text: str) -> bool:
    """The report (title first) asks how to do something or whether something is supported (in
    its title or its body), and mentions no error, traceback or hang: a bug checklist (versions,
    a script, ds_report) answers nothing in it. On the shared data's backtest 20 of the 21
    requests such reports got asked for what the question does not need."""
    title, _, body = text.partition("\n")
    return not reports_a_problem(text) and bool(
        _HOWTO_TITLE.search(title) or _NOT_A_BUG_TITLE.search(title)
        or _QUESTION_TITLE.search(title) or _QUESTION_BODY.search(body))


# The reporter has found the cause or a fix ("It turned out to be stuck compiling fused_kernels,
# and deleting megatron/fused_kernel/build seems to get rid of the problem", "Adding
# replace_with_kernel_inject=True makes the error disappear", "The cause is that some of the
# weights are frozen", "I believe I see what's going on"): a debugging checklist asks for what
# their diagnosis made pointless (on the baseline backtest, every request such reports got).
_DIAGNOSED = re.compile(
    r"\bit turn(?:ed|s) out\b|"
    r"\bmakes? the (?:error|problem|issue|hang|crash)s? (?:go away|disappear|vanish)\b|"
    r"\bgets? rid of the (?:problem|error|issue|hang)\b|"
    r"\bthe (?:root )?cause (?:is|was|seems to be) (?:that|the|a|in)\b|"
    r"\bI (?:believe|think) I (?:see|know|found|understand) what'?s going on\b|"
    r"\bas a workaround,? I\b|\bworkaround for now\b|"
    # a regression bisected to a commit ("my guess is that the regression comes from commit 8abdaee")
    r"\bbisect(?:ed|ing)\b|\b(?:regression|slowdown|problem|bug) (?:comes|came) from (?:commit|PR)\b|"
    r"\bposting this in case\b|\bin case (?:it'?s|it is|this is) useful\b|"
    # a change of the framework's own code that ends the problem ("Simply adding a `dist.barrier()`
    # inside the `_pre_state_dict_hook` function ... gets me past the problem", pytorch#143536;
    # "With my modification:" and the patched function, Megatron-LM#873): stacks and versions
    # asked of both hangs (not "I can't get past this error")
    r"\b(?:gets|got) (?:me|us) past (?:the|this) (?:problem|error|issue|hang|deadlock)\b|"
    r"\bwith my (?:modification|fix|patch)(?:es|s)?\s*:|"
    # the option whose absence triggers it ("If `--bert-no-binary-head` isn't specified, the
    # script ... fails"; "it makes complete sense that `--bert-no-binary-head` is needed")
    r"\bif `[^`\n]{1,60}` (?:is ?n[o']t|is not) (?:specified|set|passed|given|used)\b|"
    r"\bmakes? (?:complete |perfect |total )?sense that [^.\n]{0,80}\b(?:is|are) (?:needed|required)\b|"
    # a section of its own: "## Root Cause Analysis" (the blocking site located over four runs)
    r"^#{1,4}\s*root[- ]cause(?: analysis)?\s*$", re.I | re.M)


# What makes it go away, found by the reporter: a change that makes it work ("After adding
# find_unused_parameters=True it works", "If I hardcode NCCL_SOCKET_IFNAME ..., the script works",
# "works after downgrading to Torch 1.6.0", "Calling `get_state_dict_type()` works around it",
# "Either of these two things avoids the problem"), or a release it works on ("fine with
# 0.10.2", "but not on the big-science branch"), or the change that triggers it ("As soon as I
# uncomment `callbacks.append(...)`", "Without flashattention it works fine"). Two blind audits
# of posted checklists read the versions, the repro and the A/B run asked of such reports as moot
# (7 reports), one as asking for what it gives (DeepSpeed#5242, a 0). Not a symptom's own
# contrast: "runs fine on 4 GPUs", "works with 7B models", "but not with the 1.3b ones", "if I
# use one GPU it works".
_RELEASE = r"v?\d+(?:\.\d+)+(?!\w|\.\d)"  # "0.10.2", "v0.9.0": not "1.3b" (a model's size)
_CHANGE = (r"(?:add|set|remov|downgrad|upgrad|chang|disabl|enabl|revert|uncomment|comment(?:ing)? out|"
           r"hardcod|pinn?|instal|switch|replac|patch)\w*")
# (not "..., everything before the training step is fine, but as soon as training starts it hangs")
_WORKS = (r"(?:works|worked|runs fine|ran fine|is fine|goes away|went away|disappears|disappeared|"
          r"is gone)\b(?!,? but\b)")
_WORKED_AROUND = re.compile(
    rf"\b(?:after|by|once|when) (?:I )?{_CHANGE}\b[^.\n]{{0,100}}?\b{_WORKS}|"
    rf"\bif I {_CHANGE}\b[^.\n]{{0,100}}?\b{_WORKS}|"
    rf"\b{_WORKS} (?:again |fine |well )?(?:after|by|once|when) (?:I )?{_CHANGE}\b|"
    r"\bas soon as I (?:uncomment|comment out|add|enable|disable|set|remove)\b|"
    # "Without flashattention it works fine"
    rf"\bwithout [\w`.-]+,? (?:it |the \w+ |everything )?(?:{_WORKS}|trains fine)|"
    r"\bworks around (?:it|this|the (?:problem|issue|error|bug))\b|"
    r"\b(?:avoids|fixes|fixed|solves|solved|resolves|resolved) the (?:problem|error|issue|hang|crash)\b|"
    rf"\b(?:works|worked|fine(?!-)|ok(?:ay)?)\b[^.\n]{{0,30}}?\b(?:on|with|in|using) (?:\w+[ =-]{{1,2}})?{_RELEASE}|"
    rf"\bbut not (?:on|with|in) (?:the )?(?:[\w.-]+ branch|master|main|{_RELEASE})",
    re.I)
# "it no longer works after upgrading", "none of these fixed the problem": the change broke it, or
# nothing helped
_NEGATED = re.compile(r"(?:n[o']t|\bno longer|\bnever|\bnone of (?:\w+ ){0,3}|\bnothing|\bneither|\bstopped)"
                      r"[^.\n]{0,25}$", re.I)


def reporter_diagnosed(text: str) -> bool:
    """The reporter says what causes the problem or what makes it go away."""
    return bool(_DIAGNOSED.search(text))


# What a report that found its trigger, a workaround or a release it works on (``narrowed_down``)
# is not asked: its versions, a run to compare, the steps (it named the change that matters). The
# error itself, when not shown, is still asked ("As soon as I set the `tp-comm-overlap` flag to
# True, training fails" shows no error).
MOOT_WHEN_NARROWED = frozenset({"versions", "ds_report", "cuda", "repro", "baseline_run",
                                "baseline_output"})


def narrowed_down(text: str) -> bool:
    """The reporter names the change that makes it work or fail, or a release it works on
    (``_WORKED_AROUND``), not negated ("it no longer works after upgrading")."""
    return any(not _NEGATED.search(text[max(0, m.start() - 40):m.start()])
               for m in _WORKED_AROUND.finditer(text))


def specific(items: list[MissingInfo], stage: str | None) -> bool:
    """Whether these requests are worth a comment on their own: asked because of the stated stage,
    or because the text itself calls for them (an error mentioned but not pasted, a hang the
    report describes: the stacks are asked only for a stated symptom, inside its stated stage,
    or for a hang in the text, ``request_symptom``)."""
    return any(stage is not None or item.key in TEXT_TRIGGERED for item in items)


def is_template(item: MissingInfo) -> bool:
    """Whether ``item`` holds one of this module's own requests, word for word (so the comment
    may keep its backticks as code spans); a stored or hand-made description is user text."""
    if item.key in symptom_requests.KEYS:
        return item.description in symptom_requests.all_descriptions()
    return (item.description in DESCRIPTIONS.values() or item.description in FRAMEWORK_DESCRIPTIONS.values()
            or item.description in (LEGACY_TORCH_LAUNCH, ONE_PROCESS_TRACEBACK, IMAGE_TRACEBACK,
                                    BARE_TRACEBACK, SLURM_LAUNCH,
                                    MEGATRON_VERSIONS_WITHOUT_TE, DS_REPORT_TORCH,
                                    DS_REPORT_FRAMEWORK, ONE_NODE_HARDWARE, NODES_GIVEN_HARDWARE,
                                    MEMORY_HARDWARE, ACCELERATE_LAUNCH_AND_CONFIG,
                                    ACCELERATE_DEEPSPEED_CONFIG)
            or item.description in ROCM_VERSIONS.values() or item.description in VERSIONS_WITHOUT_CUDA.values())


# "...this error:" ending its line: what followed it was a screenshot, when the report shows one
_INTRODUCED_ERROR = re.compile(r"error:[ \t]*$", re.M)


def _error_without_trace(text: str, error_image: bool = False) -> bool:
    """The report mentions an error but shows none (and does not say there is none). With
    ``error_image``, a line introducing the error ("gives me this error:") introduced the
    screenshot, whatever prose follows it."""
    traced = _INTRODUCED_ERROR.sub("error", text) if error_image else text
    if not _ERROR_MENTION.search(text) or _TRACE.search(traced) or _NO_ERROR.search(text):
        return False
    if _OUTPUT_BLOCK.search(text) or _LOG_ATTACHED.search(text):
        return False  # what the program printed is there (or attached), even without a traceback
    return not any(_ERROR_MENTION.search(block) for block in _FENCE.findall(text))


# A "key: value" line of a YAML config (an accelerate or Hydra config pasted in a code block).
_YAML_LINE = re.compile(r"^\s*[A-Za-z_][\w.-]{0,60}\s*:\s*\S", re.M)
# A code block the reporter introduces as the config ("The FSDP config lives in config.yaml:").
_CONFIG_BLOCK = re.compile(r"\bconfig\w*\b[^\n]{0,60}\n\s*```", re.I)
# A config listed as bullets under its name, as `accelerate env` prints it ("`Accelerate` default
# config:" then "- distributed_type: DEEPSPEED" ... "- deepspeed_config: {...}"): a strict reader
# scored the config request on such a report as asking for what it gives.
_CONFIG_LIST = re.compile(r"\bconfig\w*:[ \t]*\n(?:[ \t]*[-*][ \t]+\w+:[^\n]*\n){3,}", re.I)
# ... as a config, not a "System config:" list of versions: one of the settings is a launcher's.
_CONFIG_KEY = re.compile(r"^[ \t]*[-*][ \t]+(?:distributed_type|zero_stage|mixed_precision|num_processes|"
                         r"\w+_config)[ \t]*:", re.M)


# A plugin's argument written next to its name, in prose ("LowLevelZeroPlugin ... together with
# `cpu_offload=True`", "Hybrid Parallel Plugin, zero_stage=1", "use_fp8=True in
# HybridParallelPlugin"), or a block of settings one to a line ("pp=2", "tp=2", "zero_stage=0").
_SETTING = r"(?<![\w.])[A-Za-z_]\w{1,40}\s?=\s?(?:True|False|None|true|false|-?\d[\w.]*)\b"
_PLUGIN = (r"(?:\b\w{1,60}Plugin\b|\b(?:hybrid[ _]parallel|gemini|low[ _]?level[ _]?zero|torch[ _]?ddp|"
           r"torch[ _]?fsdp|moe[ _]hybrid[ _]parallel) plugin\b)")
# ...or in Chinese prose: "插件用的是gemini plugin，策略为auto" (the plugin is Gemini, its placement auto)
_PLUGIN_ARGUMENT = re.compile(rf"{_PLUGIN}[^\n]{{0,160}}?{_SETTING}|{_SETTING}[^\n]{{0,160}}?{_PLUGIN}|"
                              # (Chinese text has no word boundary before "gemini")
                              r"(?<![A-Za-z])(?:[A-Z]\w{1,60}Plugin|(?:hybrid[ _]parallel|gemini|"
                              r"low[ _]?level[ _]?zero|torch[ _]?ddp|torch[ _]?fsdp) plugin)[^\n]{0,20}?"
                              r"(?:策略|placement(?:[_ ]policy)?)\s*"
                              r"(?:为|是|=|:|：)\s*\w+",
                              re.I)
_SETTING_LINE = re.compile(rf"^\s*{_SETTING}\s*,?\s*$", re.M)


def _config_shown(text: str) -> bool:
    """The configuration is in the report: a DeepSpeed JSON, plugin arguments (in code or in
    prose: "LowLevelZeroPlugin ... `cpu_offload=True`"), Megatron flags, a code block introduced
    as the config, three or more settings listed under a "config:" line, or a block of three or
    more YAML "key: value" or "key=value" settings."""
    return bool(_CONFIG_BODY.search(text) or _CONFIG_BLOCK.search(text)
                or any(_CONFIG_KEY.search(m.group(0)) for m in _CONFIG_LIST.finditer(text))
                or _PLUGIN_ARGUMENT.search(text)) or any(
        len(_YAML_LINE.findall(block)) >= 3 or len(_SETTING_LINE.findall(block)) >= 3
        for block in _FENCE.findall(text))


def _versions_elsewhere(text: str) -> bool:
    """Versions given in a form the environment reader leaves alone: an NGC container tag, which
    fixes every version in it, the output of collect_env or of ``__version__``, a build "from the
    master branch", a filled-in "Versions" section, or a version written in prose, backticks or a
    path (``_VERSION_MENTION``)."""
    return bool(_CONTAINER.search(text) or _COLLECT_ENV.search(text)
                or _VERSION_SECTION.search(text) or _VERSION_MENTION.search(text))


def _before_torchrun(text: str, env: Environment) -> bool:
    """The report runs a PyTorch release older than 1.10, which has no torchrun."""
    found = [m.groups() for m in _TORCH_RELEASE.finditer(text)]
    if env.torch:
        found += re.findall(r"^(\d+)\.(\d+)", env.torch)
    return any(int(major) == 0 or (int(major) == 1 and int(minor) < 10) for major, minor in found)


# A bare release in the framework's own tracker, in the title ("not working with zero3 in
# v0.9.4") or opening a sentence ("With v0.9.4, Alpaca starts..."): its own. Not "upgraded
# transformers to v4.36" in the body, another package's.
_OWN_RELEASE = re.compile(r"\b(?:on|with|using|in|since|after|before|from|to) v\d+\.\d+", re.I)
_OWN_RELEASE_OPENING = re.compile(r"(?:^|[.!?]\s+)(?:on|with|using|in|since|after) v\d+\.\d+", re.I | re.M)


def _framework_given(text: str, env: Environment, framework: str | None) -> bool:
    own = _FRAMEWORK_MENTION.get(framework or "")
    title = text.partition("\n")[0]
    return bool(env.framework_version or (own and own.search(text))
                or (own and (_OWN_RELEASE.search(title) or _OWN_RELEASE_OPENING.search(text))))


def _job_script_attached(text: str) -> bool:
    """A SLURM job script named on a line that says it is attached."""
    for match in _JOB_SCRIPT.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        if "attach" in text[start:end if end >= 0 else len(text)].lower():
            return True
    return False


def _hardware_request(text: str, framework: str | None) -> str:
    """The hardware request for what the launch command leaves open: with the GPUs per node in
    it, the node count read first ("--nnodes=1" is one node whatever the prose says). For memory
    that runs out, with no hang or collective in sight, the GPU's memory, not its links."""
    if symptom_requests.about_memory(text) and not (symptom_requests.hangs(text)
                                                    or symptom_requests.collective(text)):
        return MEMORY_HARDWARE
    if not _ONE_NODE_LAUNCH.search(text):
        return describe("hardware", framework)
    if _NODE_COUNT.search(text):
        return NODES_GIVEN_HARDWARE
    if not _ONE_NODE.search(text) and _MANY_NODES.search(text):
        return describe("hardware", framework)
    return ONE_NODE_HARDWARE


def _accelerate_answers(text: str) -> bool:
    """Three or more answers to `accelerate config`'s questions: the config, as the reporter gave it."""
    return len(_ACCELERATE_ANSWER.findall(text)) >= 3


def _accelerate_request(key: str, description: str, text: str, found: list[MissingInfo],
                        config_given: bool) -> str:
    """Accelerate's launch and config requests: the launch command with the config it reads while
    the config is neither shown nor already asked; the config with its ``deepspeed_config``
    section when DeepSpeed runs under it. ``config_given``: the config shown or its questions
    answered (``missing_info``'s, read once)."""
    if (key == "launcher_command" and not config_given
            and all(item.key != "config" for item in found)):
        return ACCELERATE_LAUNCH_AND_CONFIG
    if key == "config" and (environment.mentions(text, "deepspeed") or _ZERO_STAGE.search(text)):
        return ACCELERATE_DEEPSPEED_CONFIG
    return description


def _torch_given(text: str, env: Environment) -> bool:
    return bool(env.torch or _TORCH_MENTION.search(text))


def _ds_report_request(framework_given: bool, torch_given: bool, framework: str | None) -> str:
    """ds_report, or only the half of what it prints that the report lacks."""
    if framework_given and not torch_given:
        return DS_REPORT_TORCH
    if torch_given and not framework_given:
        return DS_REPORT_FRAMEWORK
    return describe("ds_report", framework)
