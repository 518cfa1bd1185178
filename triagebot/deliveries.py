"""Which webhook deliveries to redeliver (RELIABILITY 14).

GitHub never redelivers by itself; redelivery keeps the X-GitHub-Delivery guid and is possible for
3 days. A guid counts as failed only if none of its attempts (original or redelivery) is OK, so a
reconcile run does not redeliver what an earlier run already fixed."""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Iterable

from pydantic import BaseModel

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
