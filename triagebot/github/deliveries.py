"""Which webhook deliveries to redeliver (RELIABILITY 14).

GitHub never redelivers by itself; redelivery keeps the X-GitHub-Delivery guid and is possible for
3 days. A guid counts as failed only if none of its attempts (original or redelivery) is OK, so a
reconcile run does not redeliver what an earlier run already fixed."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

from pydantic import BaseModel

from triagebot.github.restjson import next_link

REDELIVERY_WINDOW = timedelta(days=3)


class Delivery(BaseModel):
    id: int
    guid: str
    status: str = ""
    status_code: int = 0
    event: str = ""
    action: str | None = None
    delivered_at: datetime
    redelivery: bool = False


def failed_deliveries(rows: Iterable[dict[str, Any]], now: datetime,
                      window: timedelta = REDELIVERY_WINDOW) -> list[Delivery]:
    """Latest attempt per guid that never succeeded and is still inside the redelivery window."""
    latest: dict[str, Delivery] = {}
    succeeded: set[str] = set()
    for row in rows:
        d = Delivery.model_validate(row)
        if d.status.upper() == "OK":
            succeeded.add(d.guid)
        elif now - d.delivered_at < window:
            if d.guid not in latest or d.delivered_at > latest[d.guid].delivered_at:
                latest[d.guid] = d
    return sorted((d for g, d in latest.items() if g not in succeeded), key=lambda d: d.delivered_at)


def past_window(rows_page: list[dict[str, Any]], now: datetime,
                window: timedelta = REDELIVERY_WINDOW) -> bool:
    """Deliveries come newest first: once a page ends before the window, stop paging."""
    if not rows_page:
        return True
    return now - Delivery.model_validate(rows_page[-1]).delivered_at >= window


Request = Callable[[str, str, "dict[str, Any] | None"], "tuple[dict[str, Any], Any]"]


class AppClient:
    """The two App-level calls ``triagebot reconcile`` needs; ``request`` (built in github.py)
    authenticates as the App and maps errors to triagebot.github.errors."""

    def __init__(self, request: Request, clock: Callable[[], float] = time.time) -> None:
        self._request, self._clock = request, clock

    def list_failed_deliveries(self, max_pages: int = 20) -> list[Delivery]:
        """Failed deliveries of the last 3 days whose guid never succeeded, oldest first."""
        now = datetime.fromtimestamp(self._clock(), timezone.utc)
        rows: list[dict[str, Any]] = []
        url: str | None = "/app/hook/deliveries"
        params: dict[str, Any] | None = {"per_page": 100}
        for _ in range(max_pages):
            headers, page = self._request("GET", url, params)  # type: ignore[arg-type]
            rows.extend(page)
            url, params = next_link(headers.get("link", "")), None
            if not url or past_window(page, now):
                break
        return failed_deliveries(rows, now)

    def redeliver(self, delivery_id: int) -> None:
        """Same X-GitHub-Delivery guid as the original, so our dedupe still applies."""
        self._request("POST", f"/app/hook/deliveries/{int(delivery_id)}/attempts", None)
