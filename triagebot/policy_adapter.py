"""The one seam between the job code and the repo policy modules (``repo_config``, ``policy``),
which are written separately. If they are missing, conservative fallbacks apply: suggest-only mode,
no labels, and only the plain ``/triage rerun`` command."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from triagebot.models import Triage
from triagebot.ports import GitHubPort

CONFIG_PATH = ".github/triagebot.yml"
TRUSTED = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


@dataclass(frozen=True)
class FallbackConfig:
    mode: str = "suggest"


@dataclass(frozen=True)
class FallbackCommand:
    action: str
    dimension: str | None = None
    value: str | None = None


def load_config(port: GitHubPort, repo: str) -> Any:
    text = port.read_file(repo, CONFIG_PATH)
    try:
        from triagebot.repo_config import RepoConfig
    except ImportError:
        return FallbackConfig()
    return RepoConfig.parse(text)


def labels(triage: Triage, config: Any, current: list[str], human_removed: set[str],
           repo_labels: list[str]) -> list[str]:
    try:
        from triagebot import policy
    except ImportError:
        return []
    return list(policy.labels_to_apply(triage, config, current, human_removed, repo_labels))


def may_command(author_association: str) -> bool:
    try:
        from triagebot import policy
    except ImportError:
        return author_association in TRUSTED
    return bool(policy.may_command(author_association))


def parse_command(body: str) -> Any:
    try:
        from triagebot import policy
    except ImportError:
        return _fallback_parse(body)
    return policy.parse_command(body)


def _fallback_parse(body: str) -> FallbackCommand | None:
    words = body.strip().split()
    if words[:1] != ["/triage"]:
        return None
    if words[1:2] == ["rerun"]:
        return FallbackCommand("rerun")
    if words[1:2] in (["not-bug"], ["not_bug"]):
        return FallbackCommand("not_bug")
    if len(words) >= 3 and words[1] in ("stage", "symptom", "root_cause", "fix_pattern"):
        return FallbackCommand("set", words[1], words[2])
    return None
