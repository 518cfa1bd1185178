"""The shape of a webhook payload, checked at the boundary before routing.

A signature only proves who sent the bytes, not that the fields have the types routing relies
on: a signed delivery with ``"issue": "x"``, a string issue number or ``"sender": []`` used to
crash the receiver with a 500. ``problem`` validates exactly the fields ``routing`` reads (types
strict: GitHub never sends a number as a string; numbers within what the database stores) and
leaves every other field alone, so GitHub adding fields never breaks delivery."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

MAX_ISSUE_NUMBER = 2**31 - 1  # the jobs table's INTEGER on PostgreSQL
MAX_ID = 2**63 - 1  # BIGINT


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class Account(_Part):
    login: StrictStr | None = None
    type: StrictStr | None = None


class Issue(_Part):
    number: StrictInt = Field(ge=0, le=MAX_ISSUE_NUMBER)
    state_reason: StrictStr | None = None
    user: Account | None = None


class Repository(_Part):
    """Its visibility and owner decide who may see its indexed issues (``visibility.Access``)."""

    full_name: StrictStr | None = None
    name: StrictStr | None = None
    private: StrictBool | None = None
    owner: Account | None = None


class Installation(_Part):
    id: StrictInt | None = Field(default=None, ge=0, le=MAX_ID)
    account: Account | None = None


class Label(_Part):
    name: StrictStr | None = None


class Comment(_Part):
    body: StrictStr | None = None
    author_association: StrictStr | None = None
    user: Account | None = None


class OldValue(_Part):
    from_: StrictStr | None = Field(default=None, alias="from")


class RepositoryChanges(_Part):
    name: OldValue | None = None  # repository.renamed: the name before


class PreviousOwner(_Part):
    organization: Account | None = None
    user: Account | None = None


class OwnerChanges(_Part):
    from_: PreviousOwner | None = Field(default=None, alias="from")  # repository.transferred


class Changes(_Part):
    """What routing reads of ``changes``: an issue's transfer, a repository's rename or
    transfer. Other events' changes (titles, bodies, labels ...) pass as they are."""

    new_issue: Issue | None = None
    new_repository: Repository | None = None
    repository: RepositoryChanges | None = None
    owner: OwnerChanges | None = None


class Payload(_Part):
    """The fields routing reads; each may be absent or null (events differ), never mistyped."""

    action: StrictStr | None = None
    sender: Account | None = None
    issue: Issue | None = None
    repository: Repository | None = None
    installation: Installation | None = None
    label: Label | None = None
    comment: Comment | None = None
    changes: Changes | None = None
    repositories: list[Repository] | None = None
    repositories_added: list[Repository] | None = None
    repositories_removed: list[Repository] | None = None


def problem(payload: dict[str, Any]) -> str | None:
    """None when routing can read the payload; else one line naming the first bad field."""
    try:
        Payload.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "payload"
        return f"{where}: {first['msg']}"[:200]
    return None
