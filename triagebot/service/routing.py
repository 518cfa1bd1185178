"""Delivery -> jobs. Pure: looks only at the event name, the action and the payload.

Unknown events and actions map to no jobs (the receiver still answers 2xx). Events caused by any
bot - and by this App in particular - map to no jobs, so the bot never reacts to itself."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triagebot.service import policy
from triagebot.service.policy import COMMAND_PREFIX, TRUSTED_ASSOCIATIONS
from triagebot.store.queue import CANCEL, JobSpec


def route(event: str, payload: dict[str, Any], bot_login: str) -> list[JobSpec]:
    if _from_bot(payload, bot_login):
        return []
    handler = ROUTES.get((event, payload.get("action")))
    return handler(payload) if handler else []


def _from_bot(payload: dict[str, Any], bot_login: str) -> bool:
    """Loop guard. Being a bot never grants trust; it only ever makes us ignore an event."""
    sender = payload.get("sender") or {}
    return sender.get("type") == "Bot" or sender.get("login") == bot_login


def _issue_spec(payload: dict[str, Any], kind: str, **extra: Any) -> JobSpec:
    repo = (payload.get("repository") or {}).get("full_name", "")
    number = int((payload.get("issue") or {}).get("number", 0))
    key = f"{kind}:{repo}#{number}" if kind in ("triage", "index_add") else None
    installation = (payload.get("installation") or {}).get("id")
    return JobSpec(kind=kind, payload=extra, dedupe_key=key, installation_id=installation,
                   repo=repo, number=number)


def _is_pr(payload: dict[str, Any]) -> bool:
    return "pull_request" in (payload.get("issue") or {})


def opened(payload: dict[str, Any]) -> list[JobSpec]:
    return [] if _is_pr(payload) else [_issue_spec(payload, "triage", reason=payload["action"])]


def edited(payload: dict[str, Any]) -> list[JobSpec]:
    """Re-triage only when the text changed; label or milestone edits are not a new issue."""
    changes = payload.get("changes") or {}
    if _is_pr(payload) or not ({"title", "body"} & set(changes)):
        return []
    return [_issue_spec(payload, "triage", reason="edited")]


def closed(payload: dict[str, Any]) -> list[JobSpec]:
    cancel = _issue_spec(payload, CANCEL)
    reason = (payload.get("issue") or {}).get("state_reason")
    if reason not in (None, "completed") or _is_pr(payload):
        return [cancel]
    return [cancel, _issue_spec(payload, "index_add")]


def gone(payload: dict[str, Any]) -> list[JobSpec]:
    return [_issue_spec(payload, CANCEL)]


def labelled(payload: dict[str, Any]) -> list[JobSpec]:
    label = (payload.get("label") or {}).get("name")
    if not label:
        return []
    who = (payload.get("sender") or {}).get("login", "")
    return [_issue_spec(payload, "feedback", action=payload["action"], label=label, who=who)]


def commented(payload: dict[str, Any]) -> list[JobSpec]:
    """Only explicit ``/triage`` commands from people with write access reach a job. A re-run is
    an ordinary triage job for the issue, so it shares the triage dedupe key and never runs
    beside another triage of the same issue (which could post a second comment)."""
    comment = payload.get("comment") or {}
    body = (comment.get("body") or "").lstrip()
    trusted = comment.get("author_association") in TRUSTED_ASSOCIATIONS
    if _is_pr(payload) or not body.startswith(COMMAND_PREFIX) or not trusted:
        return []
    command = policy.parse_command(body)
    if command is not None and command.action == "rerun":  # the same job (and key) as `opened`
        return [_issue_spec(payload, "triage", reason="command")]
    author = (comment.get("user") or {}).get("login", "")
    return [_issue_spec(payload, "command", body=body[:1000], who=author,
                        association=comment.get("author_association"))]


def installation(payload: dict[str, Any]) -> list[JobSpec]:
    inst = payload.get("installation") or {}
    repos = payload.get("repositories") or payload.get("repositories_added") or []
    removed = payload.get("repositories_removed") or []
    body = {"action": payload.get("action"), "account": (inst.get("account") or {}).get("login", ""),
            "added": [r.get("full_name", "") for r in repos],
            "removed": [r.get("full_name", "") for r in removed]}
    return [JobSpec(kind="installation", payload=body, installation_id=inst.get("id"))]


Router = Callable[[dict[str, Any]], list[JobSpec]]
ROUTES: dict[tuple[str, str | None], Router] = {
    ("issues", "opened"): opened,
    ("issues", "reopened"): opened,
    ("issues", "edited"): edited,
    ("issues", "closed"): closed,
    ("issues", "deleted"): gone,
    ("issues", "transferred"): gone,
    ("issues", "labeled"): labelled,
    ("issues", "unlabeled"): labelled,
    ("issue_comment", "created"): commented,
    **{("installation", a): installation for a in
       ("created", "deleted", "suspend", "unsuspend", "new_permissions_accepted")},
    ("installation_repositories", "added"): installation,
    ("installation_repositories", "removed"): installation,
}
