"""Errors raised at the GitHub edge, so callers (the queue, the worker) decide between retry, wait
and give up without ever seeing PyGithub's exception types."""

from __future__ import annotations


class GitHubError(Exception):
    """Any failure talking to GitHub."""


class TransientError(GitHubError):
    """A 5xx or a network failure: safe to retry the whole (idempotent) job later with backoff."""


class RateLimited(GitHubError):
    """403/429 from a primary or secondary limit. ``retry_after`` is GitHub's own wait in seconds
    (``Retry-After``, or ``x-ratelimit-reset`` - now), which the queue honours over its backoff."""

    def __init__(self, message: str = "rate limited", retry_after: float = 60.0) -> None:
        super().__init__(message)
        self.retry_after = float(retry_after)


class WritesPaced(RateLimited):
    """Our own write pacer has no slot for ``retry_after`` seconds (a flood of writes on the
    installation). Raised before anything is sent or booked, so the job can be put back instead
    of sleeping past its lease (another worker would re-claim it and post a second comment).
    Like ``QuotaPaused`` it is not the job's fault and costs it no attempt."""


class QuotaPaused(GitHubError):
    """The installation's primary quota is below its reserve (RELIABILITY 27): the job waits
    ``retry_after`` seconds for the reset. Not a failure, so it costs the job no attempt."""

    def __init__(self, message: str = "quota low", retry_after: float = 60.0) -> None:
        super().__init__(message)
        self.retry_after = float(retry_after)


class NotFound(GitHubError):
    """404/410: the issue, comment or repository is gone; the job is skipped, not retried."""


class Forbidden(GitHubError):
    """403 that is not a rate limit: missing permission or a blocked resource."""


class TooLong(GitHubError):
    """422 because a body exceeds GitHub's size limit (the handler posts a shortened fallback)."""
