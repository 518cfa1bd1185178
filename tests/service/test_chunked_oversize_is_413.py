"""Issue #13: an oversized body sent with ``Transfer-Encoding: chunked`` (no Content-Length) is
refused with 413, like one with a Content-Length, instead of 401: werkzeug stopped reading at
the cap, the truncated body failed its signature, and GitHub showed a bad secret as the cause."""
from __future__ import annotations

import http.client
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.service import SECRET, encode, issue_payload, live_server
from triagebot.service import signature as webhook
from triagebot.service.app import create_app
from triagebot.settings import Settings
from triagebot.store.queue import Queue
from triagebot.store.records import Store

LIMIT = 64 * 1024


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Queue]]:
    settings = Settings(webhook_secret=SECRET, db=str(tmp_path / "c.db"), max_body_bytes=LIMIT)
    store = Store(settings.db)
    queue = Queue(store.db)
    with live_server(create_app(settings, store=store, queue=queue)) as addr:
        yield addr, queue


def post_chunked(addr: str, body: bytes, signed: bool = True) -> int:
    host, port = addr.split(":")
    headers = {"Content-Type": "application/json", "X-GitHub-Event": "issues",
               "X-GitHub-Delivery": str(uuid.uuid4())}
    if signed:
        headers["X-Hub-Signature-256"] = webhook.sign(SECRET, body)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        chunks = (body[i:i + 8192] for i in range(0, len(body), 8192))
        conn.request("POST", "/webhook", body=chunks, headers=headers, encode_chunked=True)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_oversized_chunked_body_is_413_signed_or_not(server: tuple[str, Queue]) -> None:
    addr, queue = server
    payload = issue_payload("opened")
    payload["issue"]["body"] = "x" * (3 * LIMIT)
    assert post_chunked(addr, encode(payload)) == 413
    assert post_chunked(addr, encode(payload), signed=False) == 413
    assert queue.jobs() == []


def test_chunked_body_under_the_cap_is_accepted(server: tuple[str, Queue]) -> None:
    addr, queue = server
    payload = issue_payload("opened")
    payload["issue"]["body"] = "y" * (LIMIT // 2)
    assert post_chunked(addr, encode(payload)) == 202
    assert [job.kind for job in queue.jobs()] == ["triage"]
