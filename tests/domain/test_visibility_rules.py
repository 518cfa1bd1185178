"""Who may see which indexed issue (the one rule), model consent, and what each webhook fact does
to an indexed item. All pure."""
from __future__ import annotations

import json

import pytest

from triagebot.domain.models import IndexedIssue, Labels
from triagebot.domain.visibility import Access, Change, Viewer, changed, llm_allowed, prompt_may_use, visible_to

LABELS = Labels(stage="S4", symptom="4.2")


def item(repo: str = "acme/secret", number: int = 5, **fields) -> IndexedIssue:
    return IndexedIssue(repo=repo, number=number, title="t", labels=LABELS, **fields)


def test_public_items_are_visible_everywhere_even_without_a_viewer() -> None:
    public = item("pub/lic")
    assert visible_to(public, Viewer.of("someone/else")) and visible_to(public, None)


def test_private_item_only_on_issues_of_its_own_repository() -> None:
    secret = item(visibility="private", installation_id=1)
    assert visible_to(secret, Viewer.of("acme/secret"))
    assert visible_to(secret, Viewer.of("ACME/Secret"))  # GitHub names are case-insensitive
    for other in ("acme/public", "other/proj", ""):
        assert not visible_to(secret, Viewer.of(other, 1))
    assert not visible_to(secret, None)


def test_owner_sharing_is_the_source_repositorys_choice_and_stays_in_its_installation() -> None:
    shared = item(visibility="private", installation_id=1, shared_with="owner")
    assert visible_to(shared, Viewer.of("acme/public", 1))
    assert visible_to(shared, Viewer.of("acme/public"))  # installation unknown: owner decides
    assert not visible_to(shared, Viewer.of("acme/public", 2))  # same name, another installation
    assert not visible_to(shared, Viewer.of("other/proj", 1))
    assert not visible_to(item(visibility="private"), Viewer.of("acme/public"))  # not shared


def test_prompts_never_take_another_repositorys_private_issue() -> None:
    assert prompt_may_use("public", "pub/lic", "acme/x")
    assert prompt_may_use("private", "acme/secret", "acme/secret")
    assert not prompt_may_use("private", "acme/secret", "acme/public")
    assert not prompt_may_use("private", "acme/secret", "")


@pytest.mark.parametrize(("private", "setting", "operator", "allowed"), [
    (False, None, "off", True), (False, False, "on", False), (False, True, "off", True),
    (True, None, "off", False), (True, True, "off", False), (True, None, "opt-in", False),
    (True, True, "opt-in", True), (True, None, "on", True), (True, False, "on", False),
])
def test_model_consent(private: bool, setting: bool | None, operator: str, allowed: bool) -> None:
    assert llm_allowed(private, setting, operator) is allowed  # type: ignore[arg-type]


def test_old_index_rows_load_as_public_items_of_the_repositorys_owner() -> None:
    old = {"repo": "microsoft/DeepSpeed", "number": 1, "title": "x", "labels": {"stage": "S1"}}
    loaded = IndexedIssue.model_validate_json(json.dumps(old))
    assert (loaded.visibility, loaded.owner, loaded.installation_id) == ("public", "microsoft", None)
    assert loaded.shared_with == "repository"


def test_access_from_a_webhook_payload() -> None:
    payload = {"repository": {"full_name": "acme/secret", "private": True,
                              "owner": {"login": "acme"}}, "installation": {"id": 7}}
    assert Access.of_payload(payload) == Access(visibility="private", owner="acme", installation_id=7)
    assert Access.of_payload({"repository": {"full_name": "a/b"}}).visibility == "public"


def test_visibility_change_flips_only_that_repositorys_items() -> None:
    private = Change(action="visibility", repos=("acme/secret",),
                     access=Access(visibility="private", owner="acme", installation_id=1))
    flipped = changed(item(), private)
    assert flipped.visibility == "private" and flipped.installation_id == 1
    untouched = item("other/proj")
    assert changed(untouched, private) is untouched


def test_rename_and_transfer_move_items_with_their_url_and_owner() -> None:
    change = Change(action="rename", repos=("acme/old",), new_repo="newco/new",
                    access=Access(visibility="private", owner="newco"))
    moved = changed(item("acme/old", 3), change)
    assert (moved.repo, moved.number, moved.owner, moved.visibility) == ("newco/new", 3, "newco", "private")
    assert moved.url == "https://github.com/newco/new/issues/3"


def test_issue_moved_or_deleted_and_repository_deleted() -> None:
    move = Change(action="move_issue", repos=("acme/secret",), number=5, new_repo="pub/lic",
                  new_number=40, access=Access(visibility="public", owner="pub"))
    moved = changed(item(visibility="private", duplicate_of=2), move)
    assert (moved.repo, moved.number, moved.visibility, moved.duplicate_of) == ("pub/lic", 40, "public", None)
    other = item(number=6)
    assert changed(other, move) is other
    assert changed(item(), Change(action="delete_issue", repos=("acme/secret",), number=5)) is None
    assert changed(item(), Change(action="delete_repo", repos=("acme/secret",))) is None


def test_forgetting_takes_private_items_of_the_repositories_or_installation_only() -> None:
    forget = Change(action="forget", repos=("acme/secret",), installation_id=9)
    assert changed(item(visibility="private"), forget) is None
    assert changed(item("elsewhere/x", visibility="private", installation_id=9), forget) is None
    kept_public = item()
    assert changed(kept_public, forget) is kept_public  # public issues are public knowledge
    other = item("other/proj", visibility="private", installation_id=3)
    assert changed(other, forget) is other
