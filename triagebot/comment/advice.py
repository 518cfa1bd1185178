"""First things to try, per fix pattern, in the words and tools of each framework. Pure.

A tip is only offered when the fix pattern is stated (the linked resolved issues speak for
themselves, with their own resolutions). Each tip names the frameworks, stages and
symptoms it fits, so a Megatron-LM report is never told to run ``ds_report``, and a Python import
error never gets advice about the CUDA toolkit. A tip with conditions is only used when those
dimensions are stated; tips without conditions fit any report of the fix pattern.

Only our own text lives here (no links, no mentions); commands are in backticks and rendered as
code spans by the comment.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_TIPS = 2

_BUILD = frozenset({"1.1", "5.6"})
_LAUNCH = frozenset({"2.1", "2.3"})  # processes or settings wrong at start-up
_NCCL = frozenset({"2.2", "4.7"})  # ranks that cannot reach each other
_IMPORT = frozenset({"1.2", "5.11"})


@dataclass(frozen=True)
class Tip:
    """One piece of advice and where it applies (an empty set: anywhere)."""

    text: str
    pattern: str
    frameworks: frozenset[str] = frozenset()
    stages: frozenset[str] = frozenset()
    symptoms: frozenset[str] = frozenset()
    # Advice about one launcher fits only a report that uses it (or names none at all).
    launchers: frozenset[str] = frozenset()

    def fits(self, framework: str | None, stage: str | None, symptom: str | None,
             launcher: str | None = None) -> bool:
        return ((not self.frameworks or framework in self.frameworks)
                and (not self.stages or stage in self.stages)
                and (not self.symptoms or symptom in self.symptoms)
                and (not self.launchers or launcher is None or launcher in self.launchers))

    @property
    def specificity(self) -> int:
        return (bool(self.frameworks) + bool(self.stages) + bool(self.symptoms)
                + bool(self.launchers))


def _tip(text: str, pattern: str, frameworks: str = "", stages: str = "",
         symptoms: frozenset[str] = frozenset(), launchers: tuple[str, ...] = ()) -> Tip:
    return Tip(text, pattern, frozenset(frameworks.split()), frozenset(stages.split()), symptoms,
               frozenset(launchers))


TIPS: tuple[Tip, ...] = (
    # F1 Configure environment and launch settings
    _tip("The `deepspeed` launcher sets `CUDA_VISIBLE_DEVICES` itself: pick GPUs with "
         "`--include localhost:0,1` or a hostfile, and list variables other nodes need in "
         "`.deepspeed_env`.", "F1", "deepspeed", "S2", _LAUNCH, launchers=("deepspeed",)),
    _tip("`colossalai run` starts the other ranks over SSH: check passwordless SSH to every host "
         "and that each host finds the same Python environment.", "F1", "colossalai", "S2",
         launchers=("colossalai run",)),
    _tip("Check that `--nnodes`, `--nproc_per_node`, `--master_addr` and `--master_port` are the "
         "same in every node's `torchrun` command.", "F1", "megatron pytorch", "S2",
         launchers=("torchrun", "torch.distributed.launch")),
    _tip("Run `horovodrun --check-build` to see which frameworks and controllers (MPI, Gloo) this "
         "Horovod build supports.", "F1", "horovod"),
    _tip("Set `TORCH_DISTRIBUTED_DEBUG=DETAIL` to see which rank fails to join the process group.",
         "F1", "pytorch", "S2"),
    _tip("Print `MASTER_ADDR`, `MASTER_PORT`, `RANK`, `LOCAL_RANK` and `WORLD_SIZE` on every rank "
         "and compare them.", "F1", "deepspeed colossalai megatron pytorch", "S2", _LAUNCH),
    _tip("Run with `NCCL_DEBUG=INFO` to see which network interface NCCL picks, and set "
         "`NCCL_SOCKET_IFNAME` to the one the nodes reach each other on.", "F1", "", "", _NCCL),
    _tip("Check that `CUDA_HOME` points at the toolkit `nvcc` comes from, and that `PATH` and "
         "`LD_LIBRARY_PATH` name the same one.", "F1", "", "S1"),
    _tip("Run the same command on one node with one GPU first, then scale up.", "F1"),
    # F2 Manage versions and dependencies
    _tip("Build against the toolkit that matches `torch.version.cuda` (point `CUDA_HOME` at it) "
         "and delete `~/.cache/torch_extensions` before building again.", "F2", "deepspeed", "",
         _BUILD),
    _tip("Run `colossalai check -i` to compare the CUDA versions of PyTorch and of the toolkit.",
         "F2", "colossalai", "", _BUILD),
    _tip("Reinstall with `pip install --no-cache-dir horovod`, with `HOROVOD_WITH_PYTORCH=1` or "
         "`HOROVOD_WITH_TENSORFLOW=1` for the framework you use, then check the result with "
         "`horovodrun --check-build`.", "F2", "horovod", "S1"),
    _tip("Check that `torch.version.cuda` matches what `nvcc --version` prints; native ops must "
         "be built with the CUDA major version PyTorch was built with.", "F2", "", "", _BUILD),
    _tip("Compare the installed versions (`pip list`) with the release the code you run was "
         "written for: a name that cannot be imported was usually added, moved or removed in "
         "another release, so upgrade or downgrade to match it.", "F2", "", "", _IMPORT),
    _tip("Use the NGC PyTorch container that the Megatron-LM release was tested with, or match "
         "its Transformer Engine and Apex versions.", "F2", "megatron"),
    _tip("Compare your versions with the framework's release notes or a combination known to "
         "work, and pin them.", "F2"),
    # F3 Tune distributed APIs, communication and features
    _tip("Try another ZeRO stage, or turn optimizer and parameter offload on or off, to find the "
         "feature at fault.", "F3", "deepspeed"),
    _tip("Try another plugin (for example `LowLevelZeroPlugin` instead of `GeminiPlugin`) to find "
         "the feature at fault.", "F3", "colossalai"),
    _tip("Check that tensor x pipeline x data parallel sizes equal the number of GPUs, then turn "
         "optional features off one at a time.", "F3", "megatron"),
    _tip("Check that every rank calls the same collectives in the same order, with the same "
         "tensor names.", "F3", "horovod"),
    _tip("Set `TORCH_DISTRIBUTED_DEBUG=DETAIL`; it reports ranks that call collectives in another "
         "order or with other shapes.", "F3", "pytorch"),
    _tip("Check the options of the feature you use against the current documentation of your "
         "version.", "F3"),
    # F4 Maintain network and hardware infrastructure
    _tip("Run with `NCCL_DEBUG=INFO` to see which interface and transport NCCL picks; "
         "`NCCL_SOCKET_IFNAME` selects another.", "F4"),
    _tip("Run `nvidia-smi topo -m` and a small all_reduce test (nccl-tests) to find a bad GPU or "
         "link.", "F4"),
    # F5 Optimize memory, model and data resources
    _tip("Lower the micro batch size and raise `gradient_accumulation_steps` to keep the global "
         "batch, or offload the optimizer states to CPU.", "F5", "deepspeed", "S3 S4"),
    _tip("Lower the batch size or sequence length and turn on gradient checkpointing; "
         "`GeminiPlugin` can also offload to CPU.", "F5", "colossalai", "S3 S4"),
    _tip("Lower `--micro-batch-size`, add `--recompute-activations` or "
         "`--use-distributed-optimizer`, or raise the tensor or pipeline parallel size.", "F5",
         "megatron", "S3 S4"),
    _tip("Watch `torch.cuda.max_memory_allocated()` around the failing step to see where memory "
         "peaks.", "F5"),
    # F6 Revise code, logic and serving behavior
    _tip("Problems of this kind are usually fixed by a code change: check whether the latest "
         "release or the main branch already contains it.", "F6"),
    _tip("Reduce the failure to a minimal script to separate your own code from the framework's.",
         "F6"),
)


def tips_for(pattern: str | None, framework: str | None, stage: str | None,
             symptom: str | None, launcher: str | None = None) -> list[str]:
    """At most ``MAX_TIPS`` tips for ``pattern``, the most specific first; none without a pattern.
    ``launcher`` is the one the report uses (``Environment.launcher``), None when it names none."""
    if not pattern or not stage:
        # with no stated stage, a fix pattern alone only earns generic advice ("pin your
        # versions" under a logic bug): maintainers read it as noise, so none is given
        return []
    fitting = [t for t in TIPS if t.pattern == pattern
               and t.fits(framework, stage, symptom, launcher)]
    fitting.sort(key=lambda t: -t.specificity)  # stable: table order among equals
    if fitting and fitting[0].specificity:  # a generic tip beside a specific one repeats it
        fitting = [t for t in fitting if t.specificity]
    return [t.text for t in fitting[:MAX_TIPS]]
