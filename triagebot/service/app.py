"""The webhook receiver: ``create_app`` builds a Flask app; nothing happens at import.

The request path only caps size, verifies the signature over the raw bytes, parses, records the
delivery and enqueues jobs - no GitHub, LLM or embedding call - so GitHub gets its 2xx in
milliseconds. Only signature failures are 401; valid but ignored deliveries are 2xx. A body
already delivered under another delivery id within the replay window (8 days) is a replay of a
captured delivery: answered 200 and nothing is queued (GitHub's own redeliveries keep their id)."""
from __future__ import annotations

import hashlib
import json
import logging
import time
import traceback
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from triagebot.logs import emit
from triagebot.review import page as review
from triagebot.service import payload as payload_shape
from triagebot.service.routing import route
from triagebot.service.signature import verify_any
from triagebot.settings import Settings
from triagebot.store.queue import Queue, ReplayedBody
from triagebot.store.records import Store

log = logging.getLogger("triagebot.service.app")


def create_app(settings: Settings, *, store: Store | None = None, queue: Queue | None = None,
               index_loaded: Callable[[], bool] = lambda: False, live: Any = None) -> Flask:
    """``live``: the index the review page reads and corrects (default: the data directory's)."""
    settings.require_serving()
    store = store or Store(settings.db)
    queue = queue or Queue(store.db, max_attempts=settings.max_attempts)
    app = Flask("triagebot")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    receiver = Receiver(settings, queue)
    app.add_url_rule("/webhook", "webhook", receiver.handle, methods=["POST"])
    app.add_url_rule("/healthz", "healthz", lambda: healthz(store, queue, index_loaded))
    app.register_error_handler(RequestEntityTooLarge, _too_large)
    app.register_error_handler(Exception, _unhandled)
    app.extensions["triagebot"] = {"store": store, "queue": queue}
    if settings.admin_token.get_secret_value():  # the review page exists only with a token
        review.install(app, settings, store, live=live)
    return app


def _too_large(_: Exception) -> tuple[Response, int]:
    return jsonify(error="payload too large"), 413


def _unhandled(exc: Exception) -> Any:
    """A bug or an outage on the request path: one log line with what an operator needs (type,
    traceback, delivery id), and a 500 that makes GitHub record the delivery as failed (so
    ``reconcile`` redelivers it). HTTP errors keep their own status."""
    if isinstance(exc, HTTPException):
        return exc
    emit(log, "unhandled exception", logging.ERROR, path=request.path, method=request.method,
         delivery=request.headers.get("X-GitHub-Delivery", ""),
         event=request.headers.get("X-GitHub-Event", ""), error=type(exc).__name__,
         message=str(exc)[:300], traceback=traceback.format_exc()[-4000:])
    return jsonify(error="internal error"), 500


def healthz(store: Store, queue: Queue, index_loaded: Callable[[], bool]) -> tuple[Response, int]:
    db_ok = store.db.ping()
    body = {"db": db_ok, "queue_depth": queue.depth() if db_ok else None,
            "dead_letters": queue.dead_count() if db_ok else None,
            "index_loaded": bool(index_loaded())}
    return jsonify(body), 200 if db_ok else 503


class Receiver:
    def __init__(self, settings: Settings, queue: Queue) -> None:
        self.secrets = settings.webhook_secrets()
        self.max_bytes = settings.max_body_bytes
        self.bot_login = settings.bot_login
        self.queue = queue

    def handle(self) -> tuple[Response, int]:
        started = time.monotonic()
        delivery = request.headers.get("X-GitHub-Delivery", "")
        event = request.headers.get("X-GitHub-Event", "")
        answer, status, fields = self._handle(delivery, event)
        emit(log, "delivery", logging.INFO if status < 400 else logging.WARNING,
             delivery=delivery, event=event, status=status,
             ms=round((time.monotonic() - started) * 1000, 1), **fields)
        return jsonify(answer), status

    def _handle(self, delivery: str, event: str) -> tuple[dict[str, Any], int, dict[str, Any]]:
        if (request.content_length or 0) > self.max_bytes:
            return {"error": "payload too large"}, 413, {}
        body = request.get_data(cache=True)  # raw bytes
        if request.content_length is None and len(body) >= self.max_bytes:
            # chunked: werkzeug stops reading at the cap instead of refusing, so the truncated
            # body would fail its signature (401) and GitHub would show the wrong cause
            return {"error": "payload too large"}, 413, {}
        signature = request.headers.get("X-Hub-Signature-256")
        if not verify_any(self.secrets, body, signature):
            return {"error": "bad or missing X-Hub-Signature-256"}, 401, {}
        payload = _parse(body)
        if payload is None or not event or not delivery:
            return {"error": "malformed delivery (JSON body, event and delivery id needed)"}, 400, {}
        problem = payload_shape.problem(payload)
        if problem is not None:  # signed, but not what GitHub sends: refuse, never crash
            return {"error": f"malformed delivery: {problem}"}, 400, {"problem": problem}
        action = payload.get("action")
        if event == "ping":
            return {"ok": "pong"}, 200, {}
        specs = route(event, payload, self.bot_login)
        if not specs:
            return {"ok": "ignored"}, 200, {"action": action, "outcome": "ignored"}
        try:
            fresh = self.queue.accept(delivery, event, action, specs,
                                      body_hash=hashlib.sha256(body).hexdigest())
        except ReplayedBody:  # 2xx like a redelivery: nothing failed that GitHub should retry
            return {"ok": "ignored: replayed body"}, 200, {"action": action, "outcome": "replay"}
        outcome = f"queued {len(specs)}" if fresh else "redelivery"
        return {"ok": outcome}, 202 if fresh else 200, {"action": action, "outcome": outcome}


def _parse(body: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: absurdly deep JSON
        return None
    return payload if isinstance(payload, dict) else None
