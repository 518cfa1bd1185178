"""Keeping who-may-see-what current in the index: repositories made private or public, renamed,
transferred or deleted; issues moved or deleted; installations removed (their private items go).

Decisions are ``domain.visibility.changed`` (pure); this module only applies them to the index
under the same write lock as every other index writer (``learning.live``), so a change made by a
worker is saved before any other process writes, and engines pick it up on their next
``refresh()`` (the first step of every job)."""
from __future__ import annotations

from typing import Any

from triagebot.domain.visibility import Change, changed
from triagebot.engine.index import IssueIndex
from triagebot.learning.live import is_live, writable


def apply_change(index: IssueIndex, change: Change) -> tuple[int, int]:
    """Apply one change to ``index`` in memory; returns (items updated, items removed)."""
    return index.retag(lambda item: changed(item, change))


def concerns(index: IssueIndex, change: Change) -> bool:
    """Does ``change`` touch any item? (Most repository events concern repositories with nothing
    indexed; those must not rewrite the whole index.)"""
    return any(changed(item, change) is not item for item in index.items)


class IndexKeeper:
    """Applies ``Change``s to a ``LiveEngine``/``LiveIndex`` (saved under the index write lock) or
    an ``Engine``/``IssueIndex`` (saved to ``index_dir`` when given)."""

    def __init__(self, target: Any, index_dir: Any = None) -> None:
        self.target, self.index_dir = target, index_dir

    def current(self) -> IssueIndex:
        live = getattr(self.target, "live", self.target)
        return live.current() if is_live(live) else getattr(self.target, "index", self.target)

    def apply(self, change: Change) -> tuple[int, int]:
        """(items updated, items removed); the index is written only when something changes. A
        ``LiveEngine`` target then refreshes, as the indexer does after writing, so the engine that
        made the change never shows what it just hid."""
        if not concerns(self.current(), change):
            return 0, 0
        with writable(self.target, self.index_dir) as index:
            counts = apply_change(index, change)
        refresh = getattr(self.target, "refresh", None)
        if callable(refresh):
            refresh()
        return counts

    def repos_of(self, installation_id: int) -> set[str]:
        """Repositories of the items indexed from this installation (public ones too)."""
        return {item.repo for item in self.current().items if item.installation_id == installation_id}
