"""Errors raised at the GitHub edge, so callers never see PyGithub's exception types."""
from __future__ import annotations


class GitHubError(Exception):
    """Any failure talking to GitHub."""


class RateLimited(GitHubError):
    """GitHub asked us to slow down; retry the job no sooner than ``retry_after`` seconds."""

    def __init__(self, message: str = "rate limited", retry_after: float = 60.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TransientError(GitHubError):
    """A 5xx or a network failure: safe to retry the whole (idempotent) job later."""


class NotFound(GitHubError):
    """404/410: the object is gone or was never there."""


class Forbidden(GitHubError):
    """403 that is not a rate limit: missing permission or a blocked resource."""


class TooLong(GitHubError):
    """422 because a body exceeds GitHub's size limit."""
