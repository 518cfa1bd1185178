"""A repository's own settings, from ``.github/triagebot.yml``. Pure: text in, ``RepoConfig`` out.

The file is written by maintainers of the repo being triaged, so it is untrusted input too: it is
read with a SafeLoader, and a bad file or a bad field never stops triage. The broken part falls back
to its default and the reason is kept in ``errors`` (shown on the review page and in the CLI).

Example::

    mode: apply            # suggest (default) | apply | off
    comment: useful        # useful (default) | always | never
    label_map:
      "4.2": "memory"      # taxonomy id -> existing repo label
      S1: "build"
      distributed_specific: "distributed"
    thresholds:
      symptom: 0.5
    llm: off               # never send this repository's issues to the model endpoint
    private_issues_shown_to: owner   # repository (default) | owner: see domain.visibility
"""
from __future__ import annotations

from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from triagebot.domain import taxonomy
from triagebot.text import sanitize

CONFIG_PATH = ".github/triagebot.yml"
MAX_CONFIG_CHARS = 64_000
MAX_LABEL_CHARS = 50  # GitHub's limit for a label name
# Non-taxonomy keys of ``label_map``: labels for the two yes/no predictions.
SPECIAL_KEYS = ("distributed_specific", "not_a_bug")


class Thresholds(BaseModel):
    """Minimum calibrated confidence for a prediction to become a label (mode ``apply``).

    Each default sits well above chance for its number of classes (stage 1/5, symptom 1/34, root
    cause 1/28, fix pattern 1/6, distributed 1/2) and is stricter where a wrong label misleads more:
    the stage decides which symptom and root cause are even possible, so it needs a clear majority;
    symptoms are read straight off the error and are fairly separable; root causes are the hardest
    to see in an opening report, so a lower bar still labels some of them; a binary call needs to
    be clearly better than a coin. Re-tune against cross-validated reliability before ``apply``."""

    model_config = ConfigDict(extra="forbid")

    stage: float = Field(default=0.5, ge=0.0, le=1.0)
    symptom: float = Field(default=0.4, ge=0.0, le=1.0)
    root_cause: float = Field(default=0.35, ge=0.0, le=1.0)
    fix_pattern: float = Field(default=0.4, ge=0.0, le=1.0)
    distributed_specific: float = Field(default=0.6, ge=0.0, le=1.0)


class RepoConfig(BaseModel):
    """Per-repository behaviour. ``label_map`` is the label allow-list: the bot applies only its
    values and ``needs_review_label``, and never creates labels."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    mode: Literal["suggest", "apply", "off"] = "suggest"
    # When the bot speaks on an issue: ``useful`` comments only when something for the reporter
    # clears the bar (a relevant link, a diagnosis, advice, a specific request) and labels when a
    # label is stated even without a comment (``comment.posting``); ``always`` comments on every
    # issue, ``never`` neither comments nor labels. Every triage is recorded for the review page.
    comment: Literal["useful", "always", "never"] = "useful"
    label_map: dict[str, str] = Field(default_factory=dict)
    needs_review_label: str = Field(default="triage: needs-review", min_length=1, max_length=MAX_LABEL_CHARS)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    # Precision a statement must reach to appear in the public comment, per kind (stage, symptom,
    # root_cause, fix_pattern, distributed_specific, not_a_bug, link, fix_link, reporter_link);
    # unset kinds keep the
    # defaults (0.90 stage, 0.85 symptom, 0.70 root cause and fix pattern; engine.calibration).
    precision: dict[Literal["stage", "symptom", "root_cause", "fix_pattern", "distributed_specific",
                            "not_a_bug", "link", "fix_link", "reporter_link"], float] = Field(default_factory=dict)
    allowed_repos: list[str] = Field(default_factory=list)
    # Model consent: off keeps this repository's text away from any LLM endpoint; unset means the
    # default (on for public repositories, the operator's TRIAGEBOT_LLM_PRIVATE_REPOS for private).
    llm: bool | None = None
    # Where this (private) repository's closed issues may be shown: its own issues only, or the
    # issues of the other repositories of the same owner. Public repositories' issues go anywhere.
    private_issues_shown_to: Literal["repository", "owner"] = "repository"
    errors: list[str] = Field(default_factory=list, exclude=True)

    @field_validator("precision")
    @classmethod
    def _sensible_precision(cls, value: dict[str, float]) -> dict[str, float]:
        for kind, target in value.items():
            if not 0.5 <= target <= 0.99:
                raise ValueError(f"precision.{kind} must be between 0.5 and 0.99, not {target}")
        return value

    @field_validator("mode", mode="before")
    @classmethod
    def _yaml_off(cls, value: object) -> object:
        """YAML 1.1 reads a bare ``off`` as the boolean false."""
        return "off" if value is False else value

    @field_validator("comment", mode="before")
    @classmethod
    def _yaml_bool(cls, value: object) -> object:
        """``comment: no`` / ``off`` / ``false`` reach us as a YAML boolean: never; true: always."""
        if isinstance(value, bool):
            return "always" if value else "never"
        return value

    @field_validator("label_map")
    @classmethod
    def _known_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key, label in value.items():
            problem = label_map_problem(key, label)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("allowed_repos")
    @classmethod
    def _repo_names(cls, value: list[str]) -> list[str]:
        bad = [r for r in value if not sanitize.valid_repo(r)]
        if bad:
            raise ValueError(f"not owner/name: {bad[:3]}")
        return value


def label_map_problem(key: object, label: object) -> str | None:
    """Why one ``label_map`` entry is unusable, or None when it is fine."""
    if not isinstance(key, str) or not (_is_taxonomy_id(key) or key in SPECIAL_KEYS):
        return f"label_map: {key!r} is not a taxonomy id"
    if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL_CHARS:
        return f"label_map: label for {key!r} must be a name of 1-{MAX_LABEL_CHARS} characters"
    return None


def _is_taxonomy_id(key: str) -> bool:
    return any(taxonomy.label(dim, key) is not None for dim in taxonomy.DIMENSIONS)


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps numbers as strings: ``4.10:`` would otherwise become the float 4.1
    and collide with symptom ``4.1``. Pydantic turns "0.5" back into a float where one is wanted."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if not tag.endswith((":float", ":int"))]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def parse_repo_config(text: str | None) -> RepoConfig:
    """Parse the file's text (None when the repo has none). Never raises."""
    if text is None or not text.strip():
        return RepoConfig()
    if len(text) > MAX_CONFIG_CHARS:
        return RepoConfig(errors=[f"{CONFIG_PATH} is longer than {MAX_CONFIG_CHARS} characters; ignored"])
    try:
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - SafeLoader subclass
    except yaml.YAMLError as exc:
        return RepoConfig(errors=[f"{CONFIG_PATH} is not valid YAML: {_first_line(exc)}"])
    if not isinstance(data, dict):
        return RepoConfig(errors=[f"{CONFIG_PATH} must be a mapping of settings"])
    return _validate(data)


def _validate(data: dict[Any, Any]) -> RepoConfig:
    """Validate, dropping (and recording) bad label_map entries and then any bad top-level field."""
    errors: list[str] = []
    data = dict(data)
    if "errors" in data:  # our own output field, not a setting
        data.pop("errors")
        errors.append("errors: not a setting; ignored")
    if isinstance(data.get("label_map"), dict):
        data["label_map"] = _clean_label_map(data["label_map"], errors)
    for _ in range(len(data) + 1):
        try:
            return RepoConfig.model_validate({**data, "errors": errors})
        except ValidationError as exc:
            field = _bad_field(exc, data)
            if field is None:
                break
            errors.append(f"{field}: {exc.errors()[0]['msg']}; using the default")
            data.pop(field)
    return RepoConfig(errors=errors + ["configuration could not be read; using defaults"])


def _clean_label_map(raw: dict[Any, Any], errors: list[str]) -> dict[Any, Any]:
    kept = {}
    for key, label in raw.items():
        problem = label_map_problem(key, label)
        if problem:
            errors.append(problem)
        else:
            kept[key] = label.strip()
    return kept


def _bad_field(exc: ValidationError, data: dict[Any, Any]) -> str | None:
    for error in exc.errors():
        loc = error.get("loc") or ()
        if loc and loc[0] in data:
            return str(loc[0])
    return None


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or ["error"])[0][:200]
