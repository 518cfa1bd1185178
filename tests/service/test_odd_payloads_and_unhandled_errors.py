"""Issue #13: signed but oddly typed payloads get 400 and a log line, never a 500, and nothing is
queued; an unhandled exception on the request path logs its type, traceback and the delivery
id (before: "Exception on /webhook [POST]" and nothing else). Real HTTP, real signatures, every
GitHub example payload still accepted (the shape check must never refuse what GitHub sends)."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from support.service import SECRET, encode, issue_payload, live_server, load_examples, post
from triagebot.service.app import create_app
from triagebot.settings import Settings
from triagebot.store.queue import Queue
from triagebot.store.records import Store


def _with(base: dict, **fields: object) -> dict:
    return {**base, **fields}


OPENED = issue_payload("opened")
COMMENT = issue_payload("created", comment={"body": "/triage rerun", "author_association": "MEMBER",
                                            "user": {"login": "m"}})
RENAMED = {"action": "renamed", "repository": {"full_name": "org/new", "name": "new", "private": False,
                                              "owner": {"login": "org"}},
           "changes": {"repository": {"name": {"from": "old"}}}, "installation": {"id": 42},
           "sender": {"login": "alice", "type": "User"}}
ODD = {
    "issue number is a word": ("issues", _with(OPENED, issue={"number": "seven"})),
    "issue number is a float": ("issues", _with(OPENED, issue={"number": 7.5})),
    "issue number is null": ("issues", _with(OPENED, issue={"number": None})),
    "issue number past the database's integer": ("issues", _with(OPENED, issue={"number": 10**30})),
    "issue is a string": ("issues", _with(OPENED, issue="7")),
    "sender is a string": ("issues", _with(OPENED, sender="alice")),
    "sender is a list": ("issues", _with(OPENED, sender=["alice"])),
    "repository is a string": ("issues", _with(OPENED, repository="org/repo")),
    "installation id is a string": ("issues", _with(OPENED, installation={"id": "42"})),
    "action is a list": ("issues", _with(OPENED, action=["opened"])),
    "label is a string": ("issues", _with(issue_payload("labeled"), label="bug")),
    "comment is a string": ("issue_comment", _with(COMMENT, comment="/triage rerun")),
    "comment body is a number": ("issue_comment", _with(COMMENT, comment={"body": 5})),
    "repositories are strings": ("installation", {"action": "created", "repositories": ["org/a"],
                                                  "installation": {"id": 1}, "sender": {"login": "o"}}),
    # the fields privacy's routing reads (issue #10): visibility, owner, renames and transfers
    "repository private is a string": ("issues", _with(OPENED, repository={
        "full_name": "org/repo", "private": "false"})),
    "repository owner is a string": ("issues", _with(OPENED, repository={
        "full_name": "org/repo", "owner": "org"})),
    "repository name is a number": ("repository", _with(RENAMED, repository={
        "full_name": "org/new", "name": 5, "private": False})),
    "old name is a number": ("repository", _with(RENAMED, changes={"repository": {"name": {"from": 5}}})),
    "previous owner is a string": ("repository", _with(RENAMED, action="transferred",
                                                       changes={"owner": {"from": "old-org"}})),
    "transferred issue is a number": ("issues", _with(issue_payload("transferred"), changes={
        "new_issue": 8, "new_repository": {"full_name": "org/other", "private": False}})),
    "transferred-to repository is a string": ("issues", _with(issue_payload("transferred"), changes={
        "new_issue": {"number": 8}, "new_repository": "org/other"})),
}


@pytest.fixture
def server(tmp_path: Path):  # type: ignore[no-untyped-def]
    settings = Settings(webhook_secret=SECRET, db=str(tmp_path / "o.db"))
    store = Store(settings.db)
    queue = Queue(store.db)
    with live_server(create_app(settings, store=store, queue=queue)) as addr:
        yield addr, queue


@pytest.mark.parametrize("case", sorted(ODD))
def test_oddly_typed_signed_payload_is_400_logged_and_queues_nothing(
        server, case: str, caplog: pytest.LogCaptureFixture) -> None:
    addr, queue = server
    event, payload = ODD[case]
    with caplog.at_level(logging.INFO, logger="triagebot"):
        status, body = post(addr, encode(payload), event=event, delivery=f"odd-{len(case)}")
    assert status == 400 and "malformed" in body["error"]
    assert queue.jobs() == []
    [line] = [json.loads(r.getMessage()) for r in caplog.records if "odd-" in r.getMessage()]
    assert line["status"] == 400 and line["problem"] and line["delivery"] == f"odd-{len(case)}"


def test_hundred_thousand_deep_json_is_400_not_500(server) -> None:
    addr, queue = server
    assert post(addr, b"[" * 100_000 + b"]" * 100_000)[0] == 400
    assert post(addr, b'{"a":' * 100_000 + b"1" + b"}" * 100_000)[0] == 400
    assert queue.jobs() == []


def test_every_github_example_payload_passes_the_shape_check() -> None:
    from triagebot.service.payload import problem

    examples = load_examples()
    if examples is None:
        pytest.skip("@octokit/webhooks-examples not installed")
    checked = 0
    for payloads in examples.values():
        for payload in payloads:
            assert problem(payload) is None, payload.get("action")
            checked += 1
    assert checked > 100


class Exploding(Queue):
    def accept(self, *args: object, **kwargs: object) -> bool:
        raise RuntimeError("database went away")


def test_unhandled_exception_logs_type_traceback_and_delivery(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = Settings(webhook_secret=SECRET, db=str(tmp_path / "x.db"))
    store = Store(settings.db)
    app = create_app(settings, store=store, queue=Exploding(store.db))
    with live_server(app) as addr, caplog.at_level(logging.INFO, logger="triagebot"):
        status, body = post(addr, encode(OPENED), delivery="boom-1")
    assert status == 500 and body == {"error": "internal error"}
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert any("RuntimeError" in m and "Traceback" in m and "boom-1" in m
               and "database went away" in m for m in lines), lines
    with live_server(app) as addr:  # HTTP errors keep their status
        import http.client

        conn = http.client.HTTPConnection(addr, timeout=5)
        conn.request("GET", "/no-such-page")
        assert conn.getresponse().status == 404
