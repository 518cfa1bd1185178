"""Periodic upkeep that the request path must never do: forgetting delivery ids past their
redelivery window (RELIABILITY 11 keeps them ≥ 7 days, not forever) and redelivering webhook
deliveries that failed, since GitHub never retries them by itself (RELIABILITY 14)."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from triagebot.logs import emit

log = logging.getLogger(__name__)


def redeliver_failed(client: Any, dry_run: bool = False) -> list[Any]:
    """Ask GitHub to redeliver every failed delivery of the last 3 days (same guid, so our
    dedupe still holds); returns them. Shared by ``triagebot reconcile`` and the periodic task."""
    failed = client.list_failed_deliveries()
    if not dry_run:
        for delivery in failed:
            client.redeliver(delivery.id)
    return failed


def housekeep_once(store: Any, client: Any | None) -> dict[str, int]:
    """One round: purge old delivery ids, then reconcile when App credentials are configured."""
    purged = store.purge_deliveries()
    redelivered = len(redeliver_failed(client)) if client is not None else 0
    return {"purged_deliveries": purged, "redelivered": redelivered}


def start(store: Any, make_client: Callable[[], Any] | None, interval_s: float,
          stop: threading.Event) -> threading.Thread | None:
    """A daemon thread running ``housekeep_once`` every ``interval_s`` (0 disables it). A failed
    round is logged and retried at the next interval; it never stops the workers."""
    if interval_s <= 0:
        return None

    def loop() -> None:
        while not stop.wait(interval_s):
            try:
                outcome = housekeep_once(store, make_client() if make_client else None)
                emit(log, "housekeeping", logging.INFO, **outcome)
            except Exception as exc:  # noqa: BLE001 - upkeep must not kill the process
                emit(log, "housekeeping failed", logging.WARNING,
                     error=f"{type(exc).__name__}: {exc}"[:300])

    thread = threading.Thread(target=loop, name="triagebot-housekeeping", daemon=True)
    thread.start()
    return thread
