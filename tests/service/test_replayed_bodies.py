"""A captured, validly signed delivery replayed under new delivery ids (measured before the fix:
13 re-triages in 150 tries) queues nothing: the body's hash is kept with the delivery record for
the replay window and a second delivery of the same bytes is answered 200 "ignored: replayed
body", like a redelivery. Real HTTP, real signatures, real SQLite."""
from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support.clock import FakeClock
from support.service import SECRET, encode, issue_payload, live_server, post
from triagebot.service.app import create_app
from triagebot.settings import Settings
from triagebot.store.queue import REPLAY_WINDOW_S, Queue
from triagebot.store.records import Store


def serve(tmp_path: Path, clock: FakeClock):  # type: ignore[no-untyped-def]
    settings = Settings(webhook_secret=SECRET, db=str(tmp_path / "r.sqlite3"))
    store = Store(settings.db)
    queue = Queue(store.db, clock=clock)
    return live_server(create_app(settings, store=store, queue=queue)), queue


def test_150_replays_under_new_delivery_ids_queue_one_job(tmp_path: Path) -> None:
    server, queue = serve(tmp_path, FakeClock())
    body = encode(issue_payload("opened"))
    with server as address:
        answers = [post(address, body, delivery=str(uuid.uuid4())) for _ in range(150)]
    assert answers[0] == (202, {"ok": "queued 1"})
    assert all(a == (200, {"ok": "ignored: replayed body"}) for a in answers[1:])
    assert len(queue.jobs()) == 1


def test_concurrent_replays_cannot_slip_past_each_other(tmp_path: Path) -> None:
    server, queue = serve(tmp_path, FakeClock())
    body = encode(issue_payload("opened", number=8))
    with server as address, ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda _i: post(address, body)[0], range(40)))
    assert statuses.count(202) == 1 and len(queue.jobs()) == 1


def test_redelivery_and_new_events_still_work_and_the_window_ends(tmp_path: Path) -> None:
    clock = FakeClock()
    server, queue = serve(tmp_path, clock)
    body = encode(issue_payload("opened"))
    with server as address:
        assert post(address, body, delivery="d-1")[0] == 202
        assert post(address, body, delivery="d-1") == (200, {"ok": "redelivery"})  # GitHub's own
        assert post(address, encode(issue_payload("edited", number=9, changes={"body": {}})))[0] == 202
        clock.now += REPLAY_WINDOW_S + 1  # past the window the hash is forgotten with the id
        assert post(address, body, delivery="d-2")[0] == 202
    assert queue.db.query("SELECT COUNT(*) FROM deliveries")[0][0] == 3
