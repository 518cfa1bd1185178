"""Delivery -> jobs. Pure: looks only at the event name, the action and the payload.

Unknown events and actions map to no jobs (the receiver still answers 2xx). Events caused by any
bot - and by this App in particular - map to no jobs, so the bot never reacts to itself."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from triagebot.domain.visibility import Access, Change, owner_of
from triagebot.service import policy
from triagebot.service.policy import COMMAND_PREFIX, TRUSTED_ASSOCIATIONS
from triagebot.store.queue import CANCEL, JobSpec

VISIBILITY = "visibility"  # the job kind that keeps indexed items' visibility current


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
    access = Access.of_payload(payload).model_dump() if kind != CANCEL else None
    return JobSpec(kind=kind, payload=extra, dedupe_key=key, installation_id=installation,
                   repo=repo, number=number, access=access)


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


def deleted(payload: dict[str, Any]) -> list[JobSpec]:
    """Cancel pending work; the issue leaves the index and our records."""
    repo = (payload.get("repository") or {}).get("full_name", "")
    number = int((payload.get("issue") or {}).get("number", 0))
    change = Change(action="delete_issue", repos=(repo,), number=number)
    return [_issue_spec(payload, CANCEL), _change_spec(payload, change, number)]


def transferred(payload: dict[str, Any]) -> list[JobSpec]:
    """Cancel pending work; the indexed item moves to its new repository and number, taking that
    repository's visibility (a public issue moved into a private repository becomes private)."""
    repo = (payload.get("repository") or {}).get("full_name", "")
    number = int((payload.get("issue") or {}).get("number", 0))
    changes = payload.get("changes") or {}
    new_repo = changes.get("new_repository") or {}
    new_number = (changes.get("new_issue") or {}).get("number")
    if not new_repo.get("full_name") or not new_number:  # moved where we cannot tell: it leaves
        change = Change(action="delete_issue", repos=(repo,), number=number)
        return [_issue_spec(payload, CANCEL), _change_spec(payload, change, number)]
    access = Access(visibility="private" if new_repo.get("private", True) else "public",
                    owner=(new_repo.get("owner") or {}).get("login") or owner_of(new_repo.get("full_name", "")))
    change = Change(action="move_issue", repos=(repo,), number=number,
                    new_repo=new_repo.get("full_name", ""), new_number=new_number, access=access)
    return [_issue_spec(payload, CANCEL), _change_spec(payload, change, number)]


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


def repository(payload: dict[str, Any]) -> list[JobSpec]:
    """``repository`` events: privatized/publicized, renamed, transferred, deleted."""
    repo = payload.get("repository") or {}
    full, action = repo.get("full_name", ""), payload.get("action")
    access = Access.of_payload(payload)
    if action in ("privatized", "publicized"):
        change = Change(action="visibility", repos=(full,), access=access)
    elif action == "deleted":
        change = Change(action="delete_repo", repos=(full,))
    else:
        old = _old_name(payload)
        if not old or old == full:
            return []
        change = Change(action="rename", repos=(old,), new_repo=full, access=access)
    return [_change_spec(payload, change)]


def _old_name(payload: dict[str, Any]) -> str:
    """The repository's full name before a rename or a transfer."""
    repo, changes = payload.get("repository") or {}, payload.get("changes") or {}
    if payload.get("action") == "renamed":
        old = ((changes.get("repository") or {}).get("name") or {}).get("from")
        return f"{owner_of(repo.get('full_name', ''))}/{old}" if old else ""
    previous = (changes.get("owner") or {}).get("from") or {}
    login = ((previous.get("organization") or previous.get("user")) or {}).get("login")
    return f"{login}/{repo.get('name', '')}" if login else ""


def _change_spec(payload: dict[str, Any], change: Change, number: int | None = None) -> JobSpec:
    installation = (payload.get("installation") or {}).get("id")
    return JobSpec(kind=VISIBILITY, payload={"change": change.model_dump(mode="json")},
                   installation_id=installation, repo=change.repos[0] if change.repos else None,
                   number=number)


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
    ("issues", "deleted"): deleted,
    ("issues", "transferred"): transferred,
    ("issues", "labeled"): labelled,
    ("issues", "unlabeled"): labelled,
    ("issue_comment", "created"): commented,
    **{("installation", a): installation for a in
       ("created", "deleted", "suspend", "unsuspend", "new_permissions_accepted")},
    ("installation_repositories", "added"): installation,
    ("installation_repositories", "removed"): installation,
    **{("repository", a): repository for a in
       ("privatized", "publicized", "renamed", "transferred", "deleted")},
}
