"""Who may see which indexed issue, and what GitHub told us that changes it. Pure.

Every indexed issue carries where it came from (``Access``: public or private repository, its
owner, the installation, and how far a private repository lets its issues travel). Every path
that shows an indexed issue to someone (the neighbour search behind comments, the review page,
the CLI, ``eval``, LLM prompts) asks ``visible_to`` with a ``Viewer`` - the repository whose
issue is being answered. The rule, in one place:

- a public item may be shown anywhere;
- a private item is shown on issues of its own repository only, unless its repository's
  ``.github/triagebot.yml`` says ``private_issues_shown_to: owner``, which widens it to the other
  repositories of the same owner (and installation). The *source* repository decides, because it
  is its issues that travel: another repository of the same organisation may have readers who
  cannot see the source repository.

A private item never goes into an LLM prompt for another repository (``prompt_may_use``), even
where it may be shown there: that repository's model consent is not the source's.

``Change`` is one fact from a webhook (a repository made private, renamed, deleted; an issue
moved or deleted; an installation gone) and ``changed`` says what it does to one indexed item.
"""
from __future__ import annotations

from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

Visibility = Literal["public", "private"]


class Item(Protocol):
    """What the rules read of an indexed issue (``models.IndexedIssue``, which imports this
    module: a protocol keeps the import one way)."""

    @property
    def repo(self) -> str: ...
    @property
    def number(self) -> int: ...
    @property
    def visibility(self) -> str: ...
    @property
    def owner(self) -> str: ...
    @property
    def installation_id(self) -> int | None: ...
    @property
    def shared_with(self) -> str: ...

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any: ...


ItemT = TypeVar("ItemT", bound=Item)

SharedWith = Literal["repository", "owner"]
LLMPrivateRepos = Literal["off", "opt-in", "on"]


def owner_of(repo: str) -> str:
    """``owner`` of ``owner/name`` ("" when there is none)."""
    owner, sep, _ = (repo or "").partition("/")
    return owner if sep else ""


def issue_url(repo: str, number: int) -> str:
    return f"https://github.com/{repo}/issues/{number}"


class Access(BaseModel):
    """Where an indexed issue came from, recorded when it is indexed (webhook payload or API)."""

    model_config = ConfigDict(frozen=True)

    visibility: Visibility = "public"
    owner: str = ""
    installation_id: int | None = None
    shared_with: SharedWith = "repository"

    @classmethod
    def of_payload(cls, payload: dict[str, Any], shared_with: SharedWith = "repository") -> Access:
        """From a webhook payload: ``repository.private``, ``repository.owner.login`` and
        ``installation.id``. GitHub's payloads always carry ``private``."""
        repo = payload.get("repository") or {}
        return cls(visibility="private" if repo.get("private") else "public",
                   owner=(repo.get("owner") or {}).get("login") or owner_of(repo.get("full_name", "")),
                   installation_id=(payload.get("installation") or {}).get("id"),
                   shared_with=shared_with)


class Viewer(BaseModel):
    """The repository an answer is for: whose issue is being triaged or reviewed."""

    model_config = ConfigDict(frozen=True)

    repo: str = ""
    owner: str = ""
    installation_id: int | None = None

    @classmethod
    def of(cls, repo: str, installation_id: int | None = None) -> Viewer:
        return cls(repo=repo or "", owner=owner_of(repo or ""), installation_id=installation_id)


def visible_to(item: Item, viewer: Viewer | None) -> bool:
    """May ``item`` be shown on an issue of ``viewer``'s repository? (The one rule; see above.)"""
    if item.visibility == "public":
        return True
    if viewer is None or not viewer.repo:
        return False
    if item.repo.casefold() == viewer.repo.casefold():
        return True
    if item.shared_with != "owner" or not item.owner or not viewer.owner:
        return False
    same_installation = (item.installation_id is None or viewer.installation_id is None
                         or item.installation_id == viewer.installation_id)
    return item.owner.casefold() == viewer.owner.casefold() and same_installation


def prompt_may_use(visibility: str, item_repo: str, issue_repo: str) -> bool:
    """May an indexed issue's text go into an LLM prompt for an issue of ``issue_repo``? Only a
    public one, or a private one of that same repository (covered by the same consent)."""
    return visibility == "public" or (bool(issue_repo) and item_repo.casefold() == issue_repo.casefold())


def llm_allowed(private: bool, repo_setting: bool | None, operator: LLMPrivateRepos = "off") -> bool:
    """May this repository's text go to the configured model endpoint?

    ``repo_setting`` is ``llm:`` of its ``.github/triagebot.yml`` (None when unset); ``operator``
    is TRIAGEBOT_LLM_PRIVATE_REPOS. ``llm: off`` always wins. A public repository is on by default.
    A private one is off unless the operator allows it: ``opt-in`` needs the repository's own
    ``llm: on``, ``on`` makes it the default too."""
    if repo_setting is False:
        return False
    if not private:
        return True
    if operator == "on":
        return True
    return operator == "opt-in" and repo_setting is True


# changes ----------------------------------------------------------------------------------------
ChangeAction = Literal[
    "visibility",  # repository.privatized / publicized: the repository's items take its state
    "rename",  # repository.renamed / transferred: items move to the new name (and owner)
    "delete_repo",  # repository.deleted: its items go
    "forget",  # installation.deleted / installation_repositories.removed: private items go
    "delete_issue",  # issues.deleted
    "move_issue",  # issues.transferred: the item moves to its new repository and number
]


class Change(BaseModel):
    """One fact from a webhook that changes who may see indexed items, or which exist."""

    model_config = ConfigDict(frozen=True)

    action: ChangeAction
    repos: tuple[str, ...] = ()  # the repositories concerned (old names for rename/move)
    new_repo: str = ""
    number: int | None = None
    new_number: int | None = None
    access: Access | None = None  # the new state (visibility, owner, installation) where known
    installation_id: int | None = None  # forget: that installation's private items go as well


def changed(item: ItemT, change: Change) -> ItemT | None:
    """``item`` after ``change``: the same object when untouched, a copy when updated, None when
    it must leave the index."""
    in_repos = item.repo.casefold() in {r.casefold() for r in change.repos}
    if change.action == "forget":
        mine = in_repos or (change.installation_id is not None
                            and item.installation_id == change.installation_id)
        return None if mine and item.visibility == "private" else item
    if not in_repos:
        return item
    if change.action == "delete_repo":
        return None
    if change.action in ("delete_issue", "move_issue") and item.number != change.number:
        return item
    if change.action == "delete_issue":
        return None
    update: dict[str, Any] = {}
    if change.access is not None:
        update |= {"visibility": change.access.visibility,
                   "owner": change.access.owner or item.owner}
        if change.access.installation_id is not None:
            update["installation_id"] = change.access.installation_id
    if change.action in ("rename", "move_issue") and change.new_repo:
        number = change.new_number if change.action == "move_issue" and change.new_number else item.number
        update |= {"repo": change.new_repo, "number": number,
                   "url": issue_url(change.new_repo, number),
                   "owner": (change.access.owner if change.access and change.access.owner
                             else owner_of(change.new_repo))}
        if change.action == "move_issue":
            update["duplicate_of"] = None  # a number in the old repository means nothing here
    return item.model_copy(update=update) if update else item
