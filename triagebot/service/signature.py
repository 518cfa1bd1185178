"""Webhook signature checks over the raw body bytes. Pure: no Flask, no parsing.

GitHub signs the exact bytes it sent; any re-serialisation (key order, escapes, trailing newline)
changes them, so callers pass ``request.get_data()`` untouched. Comparison is constant-time."""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

PREFIX = "sha256="


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def sign(secret: str | bytes, body: str | bytes) -> str:
    """The ``X-Hub-Signature-256`` value GitHub would send for ``body``."""
    digest = hmac.new(_as_bytes(secret), _as_bytes(body), hashlib.sha256).hexdigest()
    return PREFIX + digest


def verify(secret: str | bytes, body: str | bytes, header: str | None) -> bool:
    """True only for a well-formed ``sha256=`` signature of ``body`` under ``secret``.

    A missing secret is a programming/config error (it would accept forged requests), so it
    raises; a missing or malformed header is just an untrusted request and returns False."""
    if not secret:
        raise ValueError("webhook secret is missing")
    if body is None:
        raise ValueError("webhook body is missing")
    if not header or not header.startswith(PREFIX):
        return False
    expected = sign(secret, body).encode("ascii")
    return hmac.compare_digest(expected, header.strip().encode("utf-8", "replace"))


def verify_any(secrets: Iterable[str | bytes], body: str | bytes, header: str | None) -> bool:
    """Verify-with-fallback during secret rotation: any configured secret may match."""
    keys = [s for s in secrets if s]
    if not keys:
        raise ValueError("webhook secret is missing")
    return any(verify(key, body, header) for key in keys)
