"""The one place where human knowledge flows into the index: corrections from the review page and
commands, newly closed issues, and refitting the classifier.

The index directory is shared by processes (the web tier's review page, worker threads, the sync
command), so every write takes a file lock, reloads the index first when another process saved
since, and saves before releasing: no writer ever overwrites another's change with a stale copy.
``LiveIndex.current`` picks up a newer save on its next call; a ``LiveEngine`` does so when told,
by ``refresh()``, which every job calls first (and the indexer after writing), so a correction
becomes a neighbour's label for the very next job while no triage reloads anything midway."""
from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triagebot.domain import rules, taxonomy
from triagebot.domain.models import MAX_TITLE_CHARS, IndexedIssue, Issue, Labels, LabelStatus, Triage
from triagebot.domain.visibility import Access, Viewer
from triagebot.engine.analysis import analyse_many, stack
from triagebot.engine.embed import Embedder, load_embedder
from triagebot.engine.index import IssueIndex
from triagebot.engine.triage import Engine
from triagebot.github.port import IssueState
from triagebot.learning.closed_issue import close_reason

RETRAIN_STAMP = "retrain.stamp"  # touched by ``triagebot retrain``: running engines refit
PUBLIC = Access()  # what callers that predate visibility index: a public item


class LiveIndex:
    """An index directory plus the copy loaded from it, refreshed when the directory is newer."""

    def __init__(self, directory: str | Path, index: IssueIndex | None = None) -> None:
        self.directory = Path(directory)
        self._index = index
        self._seen = self._stamp() if index is not None else -1
        self._lock = threading.RLock()

    def _stamp(self) -> int:
        return _mtime_ns(self.directory / "manifest.json")

    def current(self) -> IssueIndex:
        """The index as last saved by anyone (reloaded only when the manifest changed)."""
        with self._lock:
            stamp = self._stamp()
            if self._index is None or stamp != self._seen:
                self._index, self._seen = IssueIndex.load(self.directory), stamp
            return self._index

    @contextmanager
    def writing(self) -> Iterator[IssueIndex]:
        """Exclusive, fresh, saved afterwards (also across processes)."""
        with self._lock, _file_lock(self.directory / ".write.lock"):
            index = self.current()
            yield index
            index.save(self.directory)
            self._seen = self._stamp()


def _mtime_ns(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class LiveEngine:
    """An ``Engine`` whose index follows the directory when ``refresh()`` is called: the worker's
    engine (``service.assembly.build_engine``). The classifier is kept across reloads; ``retrain``
    refits it."""

    def __init__(self, live: Any, embedder: Embedder, refiner: Any = None) -> None:
        """``live``: a ``LiveIndex`` (a directory) or a ``shared.SharedIndex`` (the database),
        whose trainer's classifier is taken when there is one (fitted here otherwise, once, at
        load: never by a job)."""
        self.live = live
        if _shared(live):
            stored = live.classifier_since(0)
            self._engine = Engine(live.current(), embedder, stored[1] if stored else None, refiner)
            self._fitted = stored[0] if stored else 0
            return
        self._engine = Engine(live.current(), embedder, refiner=refiner)
        self._fitted = _mtime_ns(live.directory / RETRAIN_STAMP)

    @classmethod
    def load(cls, directory: str | Path, embedder: Embedder | None = None,
             refiner: Any = None) -> LiveEngine:
        live = LiveIndex(directory)
        return cls(live, embedder or load_embedder(live.current().embedder_name), refiner)

    def refresh(self) -> None:
        """Follow the index on disk: take the copy another process saved since (keeping the
        fitted classifier), and refit when ``triagebot retrain`` asked for it. The one place this
        engine reloads anything; a job calls it before it reads and decides."""
        index = self.live.current()
        if index is not self._engine.index:
            old = self._engine
            self._engine = Engine(index, old.embedder, old.classifier, old.refiner)
        if _shared(self.live):  # the trainer's newer classifier, if any: loaded, never fitted here
            stored = self.live.classifier_since(self._fitted)
            if stored is not None:
                old = self._engine
                self._engine = Engine(index, old.embedder, stored[1], old.refiner)
                self._fitted = stored[0]
            return
        stamp = _mtime_ns(self.live.directory / RETRAIN_STAMP)
        if stamp != self._fitted:
            self._engine.retrain()
            self._fitted = stamp

    @property
    def engine(self) -> Any:
        """The engine as of the last ``refresh()`` (reading it reloads nothing)."""
        return self._engine

    @property
    def index(self) -> IssueIndex:
        return self._engine.index

    @property
    def embedder(self) -> Embedder:
        return self._engine.embedder

    @property
    def refiner(self) -> Any:
        """The LLM refiner the engine was built with (None offline); ``eval`` reads its stats."""
        return self._engine.refiner

    def triage(self, issue: Issue, exclude: frozenset[tuple[str, int]] = frozenset(),
               viewer: Viewer | None = None, llm: bool = True,
               targets: dict[str, float] | None = None) -> Triage:
        """Neighbours only ``viewer`` may see (``domain.visibility``); the model only when ``llm``
        (the repository's consent); ``targets``: the repository's ``precision:``."""
        return self._engine.triage(issue, exclude, targets=targets, viewer=viewer, llm=llm)

    def retrain(self) -> None:
        self._engine.retrain()

    def repos(self) -> set[str]:
        return self._engine.repos()


def _shared(live: Any) -> bool:
    """Is ``live`` the database's index (``shared.SharedIndex``) rather than a directory?"""
    return callable(getattr(live, "classifier_since", None))


def is_live(target: Any) -> bool:
    """A live index (``LiveIndex`` or ``SharedIndex``): one that writers lock and record."""
    return callable(getattr(target, "writing", None)) and callable(getattr(target, "current", None))


# corrections ---------------------------------------------------------------------------------
def corrected_item(item: IndexedIssue, dimension: str, new_id: str) -> IndexedIssue:
    """``item`` with one dimension set by a human and marked confirmed. Pure. A new stage clears a
    symptom or root cause that no longer belongs to it (the hierarchy must hold)."""
    if dimension not in taxonomy.ALL_DIMENSIONS:
        raise ValueError(f"unknown dimension {dimension!r}")
    if dimension == "is_bug":
        return item.model_copy(update={"is_bug": _yes(new_id), "status": "confirmed"})
    labels = item.labels.model_dump()
    labels[dimension] = _yes(new_id) if dimension == "distributed_specific" else new_id
    for dim in taxonomy.IN_STAGE:
        if labels[dim] != taxonomy.UNKNOWN and taxonomy.stage_of(dim, labels[dim]) != labels["stage"]:
            if dim == dimension:
                raise ValueError(f"{dim} {new_id!r} is not in stage {labels['stage']}")
            labels[dim] = taxonomy.UNKNOWN
    return item.model_copy(update={"labels": Labels(**labels), "status": "confirmed"})


def _yes(value: str) -> bool:
    return str(value).lower() in ("yes", "true", "1")


def correct_index(target: Any, repo: str, number: int, dimension: str, new_id: str,
                     index_dir: str | Path | None = None) -> bool:
    """Set one dimension of an indexed issue now and save. ``target`` is a ``LiveIndex``, a
    ``LiveEngine``, an ``Engine`` or an ``IssueIndex`` (the last two save to ``index_dir`` when
    given). False when the issue is not in the index yet: the correction then waits in the
    feedback table and joins the index with the issue when it closes (``index_add`` job)."""
    with writable(target, index_dir) as index:
        row = index.row_of((repo, number))
        if row is None:
            return False
        index.update_labels((repo, number), corrected_item(index.items[row], dimension, new_id))
        return True


def correct_by_command(target: Any, repo: str, number: int, dimension: str, new_id: str) -> bool:
    """A maintainer's ``/triage`` correction of an indexed issue, as ``correct_index``, except
    that a symptom or root cause of another stage brings its stage along (as
    ``corrections.apply_correction`` does for the stored triage) instead of being refused. False
    when the issue is not indexed or the value is not one the dimension takes."""
    stage = taxonomy.stage_of(dimension, new_id) if dimension in taxonomy.IN_STAGE else None
    try:
        with writable(target, None) as index:
            row = index.row_of((repo, number))
            if row is None:
                return False
            item = index.items[row]
            if stage is not None and item.labels.stage != stage:
                item = corrected_item(item, "stage", stage)
            index.update_labels((repo, number), corrected_item(item, dimension, new_id))
    except ValueError:
        return False
    refresh = getattr(target, "refresh", None)
    if callable(refresh):
        refresh()
    return True


@contextmanager
def writable(target: Any, index_dir: str | Path | None) -> Iterator[IssueIndex]:
    live = getattr(target, "live", target)
    if is_live(live):
        with live.writing() as index:
            yield index
        return
    index = getattr(target, "index", target)
    yield index
    if index_dir is not None:
        index.save(index_dir)


# new closed issues ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ClosedEntry:
    """One closed issue ready to index: its state (the body is embedded, never stored)."""

    issue: IssueState
    labels: Labels
    is_bug: bool
    resolution: str
    status: LabelStatus
    duplicate_of: int | None = None
    access: Access = PUBLIC  # who may see it (public unless the payload or API said private)


def add_closed_issues(index: IssueIndex, embedder: Embedder, entries: list[ClosedEntry]) -> int:
    """Embed title+body of each issue in one batch and add (or replace) them; returns new rows."""
    if not entries:
        return 0
    return index.add(*embedded(embedder, entries))


def embedded(embedder: Embedder, entries: list[ClosedEntry]) -> tuple[list[IndexedIssue], Any, Any]:
    """The items, vectors and rule features of ``entries`` (title+body embedded in one batch),
    ready for ``IssueIndex.add``: computed before a writer takes the index lock, so nobody waits
    on the model while it is held."""
    issues = [e.issue.to_issue() for e in entries]
    analysed = analyse_many(issues, embedder)
    vectors, features = stack(analysed, len(rules.FEATURE_NAMES))
    return [indexed_item(e, a.signatures) for e, a in zip(entries, analysed)], vectors, features


def indexed_item(entry: ClosedEntry, signatures: Sequence[str] = ()) -> IndexedIssue:
    issue = entry.issue
    return IndexedIssue(
        repo=issue.repo, number=issue.number, url=issue.url, title=issue.title[:MAX_TITLE_CHARS],
        state="closed", close_reason=close_reason(issue.state_reason), labels=entry.labels,
        is_bug=entry.is_bug, resolution=entry.resolution, status=entry.status,
        duplicate_of=entry.duplicate_of, visibility=entry.access.visibility,
        owner=entry.access.owner, installation_id=entry.access.installation_id,
        shared_with=entry.access.shared_with, diagnoses=tuple(signatures))


def add_closed_issue(index: IssueIndex, embedder: Embedder, issue_state: IssueState,
                     labels: Labels, resolution: str = "unresolved",
                     status: LabelStatus = "confirmed", is_bug: bool = True,
                     access: Access = PUBLIC) -> bool:
    """One issue; True when it was new to the index."""
    entry = ClosedEntry(issue_state, labels, is_bug, resolution, status, access=access)
    return add_closed_issues(index, embedder, [entry]) == 1


def labels_of(triage: Triage) -> tuple[Labels, bool]:
    """The engine's answer as index labels (for issues nobody labelled)."""
    ids = {dim: triage.prediction(dim).id for dim in taxonomy.DIMENSIONS}
    distributed = triage.distributed_specific.id == "yes"
    return Labels(**ids, distributed_specific=distributed), triage.is_bug.id != "no"


def make_indexer(engine: LiveEngine, store: Any = None) -> Callable[..., None]:
    """The ``indexer(issue_state, labels, access=None, llm=True)`` the service's ``index_add`` job
    calls for a closed issue. Labels come from the stored triage with human corrections; without
    them the engine triages the issue now (with the model only when ``llm``, the repository's
    consent) and it is indexed as "predicted" (and stored, so the review page can confirm it).
    ``access`` (from the webhook payload) records who may see the item; without it the item is
    public, as the callers that predate visibility assumed."""

    def indexer(issue: IssueState, labels: Labels | None, access: Access | None = None,
                llm: bool = True) -> None:
        access = access or Access()
        status: LabelStatus = "confirmed" if labels and _was_reviewed(store, issue) else "predicted"
        is_bug = True
        if labels is None:
            triage = engine.triage(issue.to_issue(),
                                   viewer=Viewer.of(issue.repo, access.installation_id), llm=llm)
            labels, is_bug = labels_of(triage)
            if store is not None:
                store.save_triage(triage, None, None)  # author None: not counted by flood limits
        rows = embedded(engine.embedder, [ClosedEntry(issue, labels, is_bug, "unresolved", status,
                                                     access=access)])
        with engine.live.writing() as index:
            index.add(*rows)
        engine.refresh()  # the index just written may be a newer copy than the engine's

    return indexer


def _was_reviewed(store: Any, issue: IssueState) -> bool:
    if store is None:
        return False
    return any(fb.source in ("page", "command") for fb in store.feedback(issue.repo, issue.number))


def retrain(engine: Any, directory: str | Path | None = None) -> dict[str, Any]:
    """Refit the classifier on the index as it is now; returns what it learned from. With
    ``directory``, engines of running workers over that index refit on their next triage."""
    start = time.perf_counter()
    engine.retrain()
    if directory is not None:
        (Path(directory) / RETRAIN_STAMP).write_text(time.strftime("%Y-%m-%dT%H:%M:%S\n"))
    items = engine.index.items
    confirmed = sum(item.status == "confirmed" for item in items)
    return {"issues": len(items), "confirmed": confirmed, "predicted": len(items) - confirmed,
            "seconds": round(time.perf_counter() - start, 2)}
