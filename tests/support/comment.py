"""Hand-built triages for the comment/policy tests (no engine, no index)."""
from __future__ import annotations

from triagebot.domain.models import Environment, Labels, MissingInfo, Prediction, Similar, Triage

OWN_REPO = "microsoft/DeepSpeed"
COLOSSAL = "hpcaitech/ColossalAI"


def prediction(label_id: str, confidence: float, abstained: bool = False, **extra) -> Prediction:
    return Prediction(id=label_id, name=label_id, confidence=confidence, abstained=abstained, **extra)


def similar(number: int, *, repo: str = OWN_REPO, resolved: bool = True, title: str = "ZeRO-3 OOM",
            resolution: str = "Enabled CPU offload of optimizer states.", score: float = 0.8) -> Similar:
    return Similar(
        repo=repo, number=number, url=f"https://github.com/{repo}/issues/{number}", title=title,
        score=score, labels=Labels(stage="S4", symptom="4.2"), resolution=resolution,
        resolved=resolved, cross_repo=repo != OWN_REPO,
    )


def make_triage(**overrides) -> Triage:
    fields = dict(
        repo=OWN_REPO,
        number=4242,
        stage=prediction("S4", 0.91, alternatives=[("S5", 0.06)]),
        symptom=prediction("4.2", 0.72, alternatives=[("4.3", 0.12), ("4.1", 0.08)],
                           evidence=["torch.OutOfMemoryError: CUDA out of memory"]),
        root_cause=prediction("R4.5", 0.55, evidence=["offload_optimizer"]),
        fix_pattern=prediction("F5", 0.48),
        distributed_specific=prediction("yes", 0.81),
        is_bug=prediction("yes", 0.9),
        similar=[similar(101), similar(202, repo=COLOSSAL, score=0.7),
                 similar(303, resolved=False, resolution="unresolved", title="OOM at step 1", score=0.6)],
        missing_info=[MissingInfo(key="ds_report", description="Output of ds_report"),
                      MissingInfo(key="config", description="Your DeepSpeed config JSON")],
        environment=Environment(framework="deepspeed", framework_version="0.14.2", gpu_count=8),
    )
    fields.update(overrides)
    return Triage(**fields)


def nothing_stated(stage_id: str = "S4", symptom_id: str = "4.2", cause_id: str = "R4.5",
                   fix_id: str = "F5", distributed_id: str = "yes", **overrides) -> Triage:
    """A triage where nothing clears the bar (every dimension abstained under its threshold, no
    links, no requests), with the given top choices: only what ``overrides`` add is stated."""
    fields = dict(
        stage=prediction(stage_id, 0.3, abstained=True),
        symptom=prediction(symptom_id, 0.1, abstained=True),
        root_cause=prediction(cause_id, 0.1, abstained=True),
        fix_pattern=prediction(fix_id, 0.2, abstained=True),
        distributed_specific=prediction(distributed_id, 0.5, abstained=True),
        is_bug=prediction("yes", 0.5, abstained=True), similar=[], missing_info=[],
    )
    return make_triage(**{**fields, **overrides})
