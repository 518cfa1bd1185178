"""The one pipeline: issue text -> embedding -> neighbours -> prediction -> Triage. Pure given its parts.

STUB: interface fixed; implementation to follow."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from triagebot.models import Issue, Similar, Triage


class Refiner(Protocol):
    """Something that may sharpen an offline triage (the LLM path). Must never raise: on any failure
    it returns ``offline`` unchanged with a note saying why."""

    def refine(self, issue: Issue, offline: Triage, neighbours: list[Similar]) -> Triage: ...


class Engine:
    """Everything triage needs, loaded once per process (model, index, classifier)."""

    @classmethod
    def load(cls, index_dir: str | Path, refiner: Refiner | None = None) -> "Engine":
        raise NotImplementedError

    def triage(self, issue: Issue) -> Triage:
        raise NotImplementedError
