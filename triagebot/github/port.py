"""Narrow interfaces the rest of the code talks to, so tests can fake the edges.

``github.py`` (the only module importing PyGithub) implements ``GitHubPort``; handlers and the sync
command receive a port as an argument and never build one themselves."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel, Field

from triagebot.domain.models import MAX_BODY_CHARS, MAX_TITLE_CHARS, Issue


class IssueState(BaseModel):
    """An issue as GitHub reports it now (the worker re-reads this; deliveries may be stale)."""

    repo: str
    number: int
    title: str = ""
    body: str = ""
    state: str = "open"  # open | closed
    state_reason: str | None = None  # completed | not_planned | duplicate | reopened | None
    labels: list[str] = Field(default_factory=list)
    author: str = ""
    author_type: str = "User"
    is_pull_request: bool = False
    url: str = ""
    closed_at: datetime | None = None
    updated_at: datetime | None = None

    def to_issue(self) -> Issue:
        """The engine's view of this issue: the one conversion every job, the indexer and
        ``index sync`` use. Title and body are cut to what ``Issue`` accepts (GitHub's own caps
        are lower, a GitHub Enterprise Server's or a fake's may not be)."""
        return Issue(repo=self.repo, number=self.number, url=self.url,
                     title=self.title[:MAX_TITLE_CHARS], body=self.body[:MAX_BODY_CHARS])


class CommentState(BaseModel):
    id: int
    body: str = ""
    author: str = ""
    author_type: str = "User"
    author_association: str = "NONE"
    created_at: datetime | None = None


class RepoInfo(BaseModel):
    """A repository as GitHub reports it now: who may see its issues."""

    full_name: str
    private: bool
    owner: str = ""


class GitHubPort(Protocol):
    """The GitHub calls triagebot makes for one installation. Budget per triaged issue: one issue
    read, one comment listing, one comment write, one label write."""

    def get_issue(self, repo: str, number: int) -> IssueState | None:
        """None when the issue is gone (404/410)."""

    def list_comments(self, repo: str, number: int) -> list[CommentState]: ...

    def create_comment(self, repo: str, number: int, body: str) -> int:
        """Returns the new comment id."""

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None: ...

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """Adds existing labels only; never creates a label."""

    def remove_label(self, repo: str, number: int, label: str) -> None: ...

    def repo_labels(self, repo: str) -> list[str]: ...

    def read_file(self, repo: str, path: str) -> str | None:
        """A file of the default branch (e.g. ``.github/triagebot.yml``); None when absent."""

    def repository(self, repo: str) -> RepoInfo | None:
        """The repository's visibility and owner now; None when it is gone (404)."""

    def iter_closed_issues(
        self, repo: str, since: datetime | None = None, start_page: int = 0
    ) -> Iterator[tuple[int, IssueState]]:
        """Closed issues (no pull requests), oldest first, with the page each came from so a sync
        can resume after an interruption."""
