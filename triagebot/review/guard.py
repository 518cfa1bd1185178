"""Who gets into ``/review``: login attempts limited per client address and in all, and sessions
that end on the server when their holder logs out (a copied cookie is worthless afterwards).

The limit is a pure function of the failed attempts' times (``login_wait``); the attempts and the
open sessions live in the database, so every web process behind the same database enforces the
same budget and honours the same logouts."""
from __future__ import annotations

import secrets
from collections.abc import Sequence

from triagebot.store.records import Store

ADDRESS_FREE = 5  # failed guesses an address may make before it must wait
ADDRESS_WINDOW_S = 900.0  # failures older than this no longer count against an address
BASE_WAIT_S = 60.0  # the wait after the ADDRESS_FREE-th failure; doubles with every further one
MAX_WAIT_S = 900.0
GLOBAL_PER_MINUTE = 30  # failed guesses per minute from all addresses together
SESSION_TTL_S = 12 * 3600.0


def login_wait(now: float, address_failures: Sequence[float], all_failures: Sequence[float]) -> float:
    """Seconds before this address's next guess may be checked (0: now).

    An address gets ``ADDRESS_FREE`` guesses, then waits ``BASE_WAIT_S`` after its last failure,
    doubling per further failure up to ``MAX_WAIT_S``; failures older than ``ADDRESS_WINDOW_S`` are
    forgiven. Whatever the addresses, at most ``GLOBAL_PER_MINUTE`` failures are checked per
    minute, so a botnet guesses at under one token a second in all."""
    mine = sorted(t for t in address_failures if t > now - ADDRESS_WINDOW_S)
    wait = 0.0
    if len(mine) >= ADDRESS_FREE:
        wait = mine[-1] + min(BASE_WAIT_S * 2 ** (len(mine) - ADDRESS_FREE), MAX_WAIT_S) - now
    everyone = sorted(t for t in all_failures if t > now - 60.0)
    if len(everyone) >= GLOBAL_PER_MINUTE:
        wait = max(wait, everyone[-GLOBAL_PER_MINUTE] + 60.0 - now)
    return max(wait, 0.0)


def admit_guess(store: Store, address: str, now: float) -> tuple[float, int | None]:
    """(wait, attempt id). With no wait, the attempt is recorded as a failure *before* the token
    is compared, in the same transaction as the check, so a burst of parallel guesses cannot all
    pass the limit at once; ``forgive`` removes it when the token was right."""
    with store.db.transaction():
        wait = login_wait(now, store.login_failures(address, now - ADDRESS_WINDOW_S),
                          store.login_failures(None, now - 60.0))
        if wait > 0:
            return wait, None
        return 0.0, store.add_login_attempt(address, now)


def forgive(store: Store, attempt: int | None) -> None:
    if attempt is not None:
        store.drop_login_attempt(attempt)


def open_session(store: Store, now: float) -> str:
    """A new server-side session id (the cookie carries it, signed)."""
    sid = secrets.token_urlsafe(32)
    store.open_session(sid, now, now + SESSION_TTL_S)
    return sid
