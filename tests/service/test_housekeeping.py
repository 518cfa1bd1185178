"""Periodic upkeep: delivery ids are forgotten only after their redelivery window, and failed
deliveries are redelivered through the App API (RELIABILITY 11, 14)."""
from __future__ import annotations

import threading
import time
from pathlib import Path

from support.clock import FakeClock
from support.github import APP_ID
from support.github_fake import FakeGitHub
from triagebot.github.client import app_client
from triagebot.service import housekeeping
from triagebot.store.records import DELIVERY_TTL_S, Store


def test_purges_only_old_delivery_ids_and_redelivers_failed_ones(tmp_path: Path, rsa_pair) -> None:  # type: ignore[no-untyped-def]
    clock = FakeClock(time.time())
    store = Store(tmp_path / "h.sqlite3", clock=clock)
    store.record_delivery("old", "issues", "opened")
    clock.now += DELIVERY_TTL_S + 60
    store.record_delivery("recent", "issues", "opened")
    fake = FakeGitHub(app_public_key=rsa_pair[1])
    fake.start()
    try:
        fake.add_delivery(1, status="OK")
        fake.add_delivery(2, status="Invalid HTTP Response: 503", status_code=503)
        client = app_client(type("S", (), {"app_id": APP_ID, "private_key": rsa_pair[0],
                                           "github_api_url": fake.base_url})())
        outcome = housekeeping.housekeep_once(store, client)
    finally:
        fake.stop()
    assert outcome == {"purged_deliveries": 1, "redelivered": 1}
    assert fake.redelivered == [2]
    assert store.delivery_count() == 1


def test_disabled_interval_starts_nothing_and_a_failing_round_keeps_running(tmp_path: Path) -> None:
    stop = threading.Event()
    assert housekeeping.start(Store(tmp_path / "h.sqlite3"), None, 0, stop) is None

    class Broken:
        def purge_deliveries(self) -> int:
            raise RuntimeError("database is locked")

    thread = housekeeping.start(Broken(), None, 0.01, stop)
    time.sleep(0.1)
    assert thread is not None and thread.is_alive()
    stop.set()
    thread.join(timeout=2)
