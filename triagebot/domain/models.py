"""Pydantic models at the boundaries: what comes in (an issue), what is stored (an indexed issue)
and what goes out (a triage). Every other module passes these around instead of loose dicts, so a
malformed record fails loudly at the edge instead of deep inside the pipeline."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from triagebot.domain import taxonomy
from triagebot.domain.visibility import SharedWith, Visibility, owner_of

MAX_TITLE_CHARS = 1_000
MAX_BODY_CHARS = 262_144  # GitHub caps bodies at 65,536 chars; we accept more from files and cut later
# How summaries of issues without a fix begin. The stored resolutions are written by people and
# models, so "unresolved in the excerpt" or "No real answer; ..." mean the same as "unresolved".
UNKNOWN_RESOLUTION_PREFIXES = (
    "unresolved", "no real answer", "no answer", "no resolution", "unknown", "n/a", "not resolved",
    "no confirmed fix",  # DeepSpeed#2897's: a suspicion, read as harm under "fixed"
)


# A summary that ends by saying nothing fixed it ("... the thread ends without a fix", "... so it
# was not confirmed as fixed", "the outcome was not reported") is no fix to offer a reporter under
# "How similar issues were fixed", whatever it tried first (maintainers scored such a link as
# harm: a DeepSpeed reinstall that "Windows users still could not" use, offered to Horovod).
_ENDS_WITHOUT_FIX = re.compile(
    r"\b(?:closed|ends?|ended) without (?:a |any )?(?:fix|resolution|solution|answer)\b[^;]*$|"
    r"\bcontent is not in the thread\b|\bno result was reported\b|\bnever confirmed\b|"
    r"\b(?:was|is) not confirmed\b|\b(?:outcome|result) (?:was|is) (?:not|never) reported\b|"
    r"\bstill could not\b", re.I)


def known_resolution(text: str | None) -> bool:
    """True when ``text`` says how an issue was fixed; the one test behind every "resolved"."""
    cleaned = (text or "").strip().lower()
    return (bool(cleaned) and not cleaned.startswith(UNKNOWN_RESOLUTION_PREFIXES)
            and not _ENDS_WITHOUT_FIX.search(cleaned))


class Issue(BaseModel):
    """An issue as the bot sees it when it is opened: only what exists at that moment."""

    model_config = ConfigDict(extra="ignore")

    repo: str = ""
    number: int | None = None
    url: str = ""
    title: str = Field(default="", max_length=MAX_TITLE_CHARS)
    body: str = Field(default="", max_length=MAX_BODY_CHARS)

    @field_validator("body", "title", mode="before")
    @classmethod
    def _none_is_empty(cls, value: object) -> object:
        return "" if value is None else value

    @property
    def key(self) -> tuple[str, int | None]:
        return (self.repo, self.number)


class Labels(BaseModel):
    """Taxonomy labels of one issue (ids of ``taxonomy``; ``unknown`` where not determined)."""

    model_config = ConfigDict(extra="ignore")

    stage: str
    symptom: str = taxonomy.UNKNOWN
    root_cause: str = taxonomy.UNKNOWN
    fix_pattern: str = taxonomy.UNKNOWN
    distributed_specific: bool | None = None

    @field_validator("stage")
    @classmethod
    def _known_stage(cls, value: str) -> str:
        if value not in taxonomy.STAGES:
            raise ValueError(f"unknown stage id {value!r}")
        return value

    @field_validator("symptom", "root_cause", "fix_pattern")
    @classmethod
    def _known_id(cls, value: str, info) -> str:  # type: ignore[no-untyped-def]
        if not taxonomy.is_valid(info.field_name, value):
            raise ValueError(f"unknown {info.field_name} id {value!r}")
        return value


LabelStatus = Literal["confirmed", "predicted"]
CloseReason = Literal["completed", "not_planned", "duplicate", "open", "unknown"]


class IndexedIssue(BaseModel):
    """A historical issue in the index: metadata only (no body is ever stored).

    ``visibility``, ``owner``, ``installation_id`` and ``shared_with`` say who may see it
    (``domain.visibility``). They default to a public item of the repository's owner: the shipped
    seed index was built from public trackers, and index files written before these fields
    existed load unchanged."""

    model_config = ConfigDict(extra="ignore")

    repo: str
    number: int
    url: str = ""
    title: str = ""
    state: str = "closed"
    close_reason: CloseReason = "unknown"
    labels: Labels
    is_bug: bool = True
    resolution: str = "unresolved"
    status: LabelStatus = "confirmed"
    duplicate_of: int | None = None
    visibility: Visibility = "public"
    owner: str = ""
    installation_id: int | None = None
    shared_with: SharedWith = "repository"
    # ids of the diagnoses (``domain/diagnoses.linking``) whose error its report showed: ids
    # of our table, never the report's words; a report with the same error links to it
    diagnoses: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _owner_from_repo(self) -> IndexedIssue:
        if not self.owner:
            self.owner = owner_of(self.repo)
        return self

    @property
    def key(self) -> tuple[str, int]:
        return (self.repo, self.number)

    @property
    def resolved(self) -> bool:
        """Offered as "how it was fixed" only when closed as completed with a known resolution."""
        return (known_resolution(self.resolution) and self.state == "closed"
                and self.close_reason in ("completed", "unknown"))


class LabelledIssue(Issue):
    """A training/evaluation record: the issue text plus its labels (``issues.jsonl`` format)."""

    repo: str
    number: int
    labels: Labels
    state: str = "closed"
    is_bug: bool = True
    resolution: str = "unresolved"
    close_reason: CloseReason = "unknown"
    visibility: Visibility = "public"  # a record from a private tracker says so; it then stays home

    def to_indexed(self, status: LabelStatus = "confirmed",
                   signatures: Sequence[str] = ()) -> IndexedIssue:
        return IndexedIssue(
            repo=self.repo,
            number=self.number,
            url=self.url,
            title=self.title,
            state=self.state,
            close_reason=self.close_reason,
            labels=self.labels,
            is_bug=self.is_bug,
            resolution=self.resolution,
            status=status,
            visibility=self.visibility,
            diagnoses=tuple(signatures),
        )


FLAG_DIMENSIONS = taxonomy.FLAGS
FLAG_YES = frozenset({"yes", "true", "1", "y"})
FLAG_NO = frozenset({"no", "false", "0", "n"})


class Prediction(BaseModel):
    """One predicted dimension: the chosen id, its calibrated confidence, and why.

    ``abstained`` is true when the confidence is under the dimension's threshold: the bot then
    says it is unsure instead of guessing (``id`` still holds the best guess for evaluation).
    It is the one gate on what the public comment asserts: the engine sets it (calibrated
    thresholds, the hierarchy, "not a bug" only), and ``Triage.stated`` reads it for the comment,
    the labels and the backtest alike."""

    id: str
    name: str
    confidence: float = Field(ge=0.0, le=1.0)
    abstained: bool = False
    alternatives: list[tuple[str, float]] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    # Conclusions drawn from the detected environment ("PyTorch was built with CUDA 11.8, but nvcc
    # reports CUDA 12.1"): shown as prose, while ``evidence`` holds quotes of the reporter's text.
    facts: list[str] = Field(default_factory=list)


class Environment(BaseModel):
    """Setup facts pulled from the issue text (``ds_report``, ``collect_env``, pip lists, prose)."""

    framework: str | None = None
    framework_version: str | None = None
    torch: str | None = None
    cuda_torch: str | None = None
    cuda_nvcc: str | None = None
    nccl: str | None = None
    python: str | None = None
    transformers: str | None = None
    gpu_model: str | None = None
    gpu_count: int | None = None
    nodes: int | None = None
    os: str | None = None
    launcher: str | None = None

    def cuda_mismatch(self) -> bool:
        """Torch built for one CUDA major.minor while nvcc is another: a classic build failure."""
        if not (self.cuda_torch and self.cuda_nvcc):
            return False
        return self.cuda_torch.split(".")[:2] != self.cuda_nvcc.split(".")[:2]


class MissingInfo(BaseModel):
    """One item of the "please add" checklist, keyed so templates and tests can rely on it."""

    key: str
    description: str


class Similar(BaseModel):
    """A neighbour from the index, as shown to users."""

    repo: str
    number: int
    url: str
    title: str
    score: float
    relevance: float = 0.0  # P(same problem), the calibrated link score (engine.relevance)
    # an unresolved link shown to the reporter: nearly the same text or a maintainer's
    # "duplicate of" (``engine.triage.similar_issues``); otherwise it waits in the maintainers'
    # block
    for_reporter: bool = False
    # a resolved issue whose fix is below the fixes' own gate: listed with its fix for
    # maintainers, not offered to the reporter
    fix_held_back: bool = False
    labels: Labels
    resolution: str
    resolved: bool
    cross_repo: bool = False
    status: LabelStatus = "confirmed"

    @model_validator(mode="after")
    def _resolved_needs_resolution(self) -> Similar:
        """A neighbour flagged resolved whose resolution says nothing (from an older index or a
        refiner) is not offered as "how it was fixed"."""
        if self.resolved and not known_resolution(self.resolution):
            self.resolved = False
        return self


class Diagnosed(BaseModel):
    """A diagnosis the report's own error implies (``domain.diagnoses``): the id of its entry in
    that table and the few values quoted from the report that its template takes. Only the id
    and checked values are kept, never text: the comment renders the table's own template, so a
    stored or hand-made triage cannot put words in the bot's mouth."""

    id: str = Field(max_length=40)
    values: dict[str, str] = Field(default_factory=dict)


class Triage(BaseModel):
    """The bot's whole answer for one issue. Rendering and labelling read only this."""

    repo: str = ""
    number: int | None = None
    title: str = ""  # the issue's, for the review page; never rendered into a comment
    stage: Prediction
    symptom: Prediction
    root_cause: Prediction
    fix_pattern: Prediction
    distributed_specific: Prediction
    is_bug: Prediction
    similar: list[Similar] = Field(default_factory=list)
    missing_info: list[MissingInfo] = Field(default_factory=list)
    # Empty by default: triages stored before diagnoses existed load unchanged.
    diagnoses: list[Diagnosed] = Field(default_factory=list)
    environment: Environment = Field(default_factory=Environment)
    source: Literal["offline", "llm", "offline+llm"] = "offline"
    notes: list[str] = Field(default_factory=list)

    def prediction(self, dimension: str) -> Prediction:
        return getattr(self, dimension)

    def stated(self, dimension: str) -> str | bool | None:
        """What the public comment asserts for ``dimension``; None where it asserts nothing.

        The one definition behind the comment (``comment.sections``), the posting decision and
        the backtest's ``stated`` (``engine.evaluate.backtest_row``), so what is measured is what
        is posted. A taxonomy dimension gives its id, a flag True/False; asserted only when not
        ``abstained``, with a real id, a symptom or root cause never outside a stated stage, and
        of ``is_bug`` only "not a bug" (False). For a triage the engine made, that is exactly
        ``not abstained`` (the engine withholds the rest itself, and also a symptom or root cause
        without its stage); the checks here keep a triage from elsewhere (an older stored one, a
        hand-made one) from asserting a contradiction."""
        pred = self.prediction(dimension)
        if pred.abstained:
            return None
        if dimension in FLAG_DIMENSIONS:
            value = pred.id.strip().lower()
            if value not in FLAG_YES | FLAG_NO:
                return None
            return None if dimension == "is_bug" and value in FLAG_YES else value in FLAG_YES
        if taxonomy.label(dimension, pred.id) is None:
            return None
        stage = self.stated("stage") if dimension in taxonomy.IN_STAGE else None
        if stage is not None and taxonomy.stage_of(dimension, pred.id) != stage:
            return None  # a symptom of another stage contradicts the stated one
        return pred.id
