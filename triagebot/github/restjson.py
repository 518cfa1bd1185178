"""GitHub REST JSON -> triagebot models and errors (pure; no PyGithub here).

Kept apart from github.py so webhook handlers can parse a payload's ``issue`` object with the same
function the port uses, and so error mapping is testable without HTTP."""
from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from triagebot.github.errors import Forbidden, GitHubError, NotFound, RateLimited, TooLong, TransientError
from triagebot.github.port import CommentState, IssueState
from triagebot.github.ratelimit import rate_limit_wait


def parse_body(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return {"message": raw.decode(errors="replace")}


def needs_body(status: int, headers: Mapping[str, str]) -> bool:
    """Only a bare 403 needs its body read to tell a secondary limit from a permission error."""
    h = {k.lower(): v for k, v in headers.items()}
    return status == 403 and "retry-after" not in h and h.get("x-ratelimit-remaining") != "0"


def message_of(data: Any) -> str:
    return str(data.get("message") or "") if isinstance(data, dict) else ""


def error_for(status: int, headers: Mapping[str, str], data: Any, now: float) -> GitHubError:
    """The triagebot error for a failed GitHub response (messages never carry credentials)."""
    wait = rate_limit_wait(status, headers, message_of(data), now)
    if wait is not None:
        return RateLimited(f"GitHub rate limit ({status})", retry_after=wait)
    text = f"GitHub answered {status}: {message_of(data)}"
    if status >= 500 or status == 401:  # 401: the token was dropped; a retry mints a new one
        return TransientError(text)
    if status in (404, 410):
        return NotFound(text)
    if status == 422 and "too long" in json.dumps(data).lower():
        return TooLong(text)
    return Forbidden(text) if status == 403 else GitHubError(text)


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def issue_state(repo: str, d: dict[str, Any]) -> IssueState:
    """An issue object from the REST API or a webhook payload."""
    user = d.get("user") or {}
    return IssueState(
        repo=repo, number=d["number"], title=d.get("title") or "", body=d.get("body") or "",
        state=d.get("state") or "open", state_reason=d.get("state_reason"),
        labels=[lb["name"] if isinstance(lb, dict) else str(lb) for lb in d.get("labels") or []],
        author=user.get("login", ""), author_type=user.get("type", "User"),
        is_pull_request="pull_request" in d, url=d.get("html_url") or "",
        closed_at=_time(d.get("closed_at")), updated_at=_time(d.get("updated_at")))


def comment_state(d: dict[str, Any]) -> CommentState:
    user = d.get("user") or {}
    return CommentState(id=d["id"], body=d.get("body") or "", author=user.get("login", ""),
                        author_type=user.get("type", "User"),
                        author_association=d.get("author_association") or "NONE",
                        created_at=_time(d.get("created_at")))


def setting(settings: Any, *names: str, default: Any = None) -> Any:
    """First non-empty attribute among ``names`` (SecretStr unwrapped)."""
    for name in names:
        value = getattr(settings, name, None)
        if value is not None and value != "":
            return value.get_secret_value() if hasattr(value, "get_secret_value") else value
    return default


def next_link(link_header: str) -> str | None:
    """The rel="next" target of a Link header."""
    for part in link_header.split(","):
        target, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            return target.strip().strip("<>")
    return None
