"""``triagebot index sync``: bring a repository's closed issues into the index.

Resumable: after each page the index is saved, then a small state file records the page reached,
so an interrupted sync (Ctrl-C, a crash, a rate limit that outlasts its patience) starts again
at that page. An issue already in the index is never ingested again, so the few issues of a page
that were saved just before an interruption are skipped on the next run, not duplicated.
Rate-limit aware: ``RateLimited`` means wait GitHub's ``retry_after`` and go on where it stopped."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from triagebot.domain import repo_config
from triagebot.domain.visibility import Access, LLMPrivateRepos, Viewer, llm_allowed
from triagebot.github.errors import RateLimited
from triagebot.github.port import GitHubPort, IssueState
from triagebot.learning import closed_issue
from triagebot.learning.live import ClosedEntry, LiveEngine, embedded, labels_of
from triagebot.llm import summary as llm_summary

MAX_WAITS = 5  # consecutive rate-limit waits without progress before giving up (RELIABILITY 26)
Progress = Callable[[str], None]
Summarize = Callable[[str, str], "str | None"]  # (title, discussion) -> one sentence, or None


class SyncState(BaseModel):
    """What survives an interruption: where to resume and what was done so far."""

    repo: str
    since: str | None = None
    page: int = 0
    ingested: int = 0
    confirmed: int = 0
    predicted: int = 0
    skipped: int = 0
    finished: bool = False

    @classmethod
    def load(cls, path: Path, repo: str, since: str | None) -> SyncState:
        """The saved state for this repo and ``since``; a fresh one otherwise (or when finished)."""
        try:
            state = cls.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(repo=repo, since=since)
        if state.repo != repo or state.since != since or state.finished:
            return cls(repo=repo, since=since)
        return state

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.model_dump(), indent=1), encoding="utf-8")
        os.replace(tmp, path)


class Syncer:
    """One sync run. ``sleep`` and ``progress`` are injectable so tests neither wait nor print."""

    def __init__(self, port: GitHubPort, engine: LiveEngine, repo: str, state_path: Path, *,
                 since: datetime | None = None, store: Any = None,
                 sleep: Callable[[float], None] = time.sleep, progress: Progress = lambda _m: None,
                 max_waits: int = MAX_WAITS, summarize: Summarize | None = None,
                 llm_private_repos: LLMPrivateRepos = "off") -> None:
        self.port, self.engine, self.repo, self.state_path = port, engine, repo, state_path
        self.since, self.store, self.sleep, self.progress = since, store, sleep, progress
        self.max_waits, self.summarize = max_waits, summarize
        self.llm_private_repos = llm_private_repos
        self.state = SyncState.load(state_path, repo, since.isoformat() if since else None)
        self.pending: list[ClosedEntry] = []
        self.mapping: closed_issue.Mapping = {}
        self.access, self.llm = Access(visibility="private"), False

    def run(self) -> SyncState:
        config = self._config()
        self.mapping = closed_issue.inverse_label_map(config)
        self.access, self.llm = self._access(config)
        waits = 0
        while True:
            before = self.state.ingested
            try:
                self._pages()
                break
            except RateLimited as exc:
                self._flush(self.state.page)
                waits = 0 if self.state.ingested > before else waits + 1
                if waits > self.max_waits:
                    raise
                self.progress(f"rate limited; waiting {exc.retry_after:.0f}s, then resuming at "
                              f"page {self.state.page}")
                self.sleep(max(exc.retry_after, 0.0))
            finally:
                self._flush(self.state.page)
        self.state.finished = True
        self.state.save(self.state_path)
        return self.state

    def _config(self) -> Any:
        return repo_config.parse_repo_config(self.port.read_file(self.repo, repo_config.CONFIG_PATH))

    def _access(self, config: Any) -> tuple[Access, bool]:
        """Who may see the synced issues (the repository's visibility now, from the API; private
        when it cannot be read) and whether its text may go to the model (``llm_allowed``)."""
        info = self.port.repository(self.repo)
        private = info is None or info.private
        installation = getattr(self.port, "installation_id", None) or None  # 0: a token port
        access = Access(visibility="private" if private else "public",
                        owner=info.owner if info else "", installation_id=installation,
                        shared_with=config.private_issues_shown_to)
        return access, llm_allowed(private, config.llm, self.llm_private_repos)

    def _pages(self) -> None:
        known = {item.key for item in self.engine.index.items}
        issues = self.port.iter_closed_issues(self.repo, self.since, start_page=self.state.page)
        for page, issue in issues:
            if page != self.state.page:
                self._flush(page)
            if issue.is_pull_request or (issue.repo, issue.number) in known:
                self.state.skipped += 1
                continue
            self.pending.append(self._entry(issue))
            known.add((issue.repo, issue.number))

    def _entry(self, issue: IssueState) -> ClosedEntry:
        comments = self.port.list_comments(issue.repo, issue.number)
        labels = closed_issue.confirmed_labels(closed_issue.mapped_ids(issue.labels, self.mapping))
        is_bug = "not_a_bug" not in closed_issue.mapped_ids(issue.labels, self.mapping)
        status = "confirmed"
        if labels is None:
            labels, is_bug, status = *self._predict(issue), "predicted"
        reason = closed_issue.close_reason(issue.state_reason)
        resolution = self._resolution(issue, comments) if reason in ("completed", "unknown") \
            else closed_issue.UNRESOLVED
        dup = closed_issue.duplicate_of(comments) if reason == "duplicate" else None
        return ClosedEntry(issue, labels, is_bug, resolution, status, dup,  # type: ignore[arg-type]
                           access=self.access)

    def _resolution(self, issue: IssueState, comments: list[Any]) -> str:
        """The LLM's sanitised sentence when one is configured and answers, else the offline
        extract. Only issues a maintainer explained are summarised: no reply, nothing to tell."""
        offline = closed_issue.resolution_line(comments)
        if self.summarize is None or not self.llm or offline == closed_issue.UNRESOLVED:
            return offline
        return self.summarize(issue.title, llm_summary.discussion(comments)) or offline

    def _predict(self, issue: IssueState) -> tuple[Any, bool]:
        triage = self.engine.triage(issue.to_issue(),
                                    viewer=Viewer.of(issue.repo, self.access.installation_id),
                                    llm=self.llm)
        if self.store is not None and self.store.get_triage(issue.repo, issue.number) is None:
            self.store.save_triage(triage, None, None)  # reviewable on /review; author not counted
        return labels_of(triage)

    def _flush(self, next_page: int) -> None:
        """Index what was collected, save it, then record the page reached (in that order)."""
        if self.pending:
            entries, self.pending = self.pending, []
            rows = embedded(self.engine.embedder, entries)  # before the lock: nobody waits on the model
            with self.engine.live.writing() as index:
                index.add(*rows)
            self.engine.refresh()  # what was just written (maybe into a newer copy) is known now
            self.state.ingested += len(entries)
            self.state.confirmed += sum(e.status == "confirmed" for e in entries)
            self.state.predicted += sum(e.status == "predicted" for e in entries)
            self.progress(f"page {self.state.page}: {self.state.ingested} issues indexed "
                          f"({self.state.confirmed} confirmed, {self.state.predicted} predicted)")
        self.state.page = next_page
        self.state.save(self.state_path)


def default_state_path(index_dir: Path, repo: str) -> Path:
    return index_dir / f"sync-{repo.replace('/', '__')}.json"
