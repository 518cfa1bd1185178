"""``/review``: where maintainers accept or correct the bot's labels and see how it is doing.

Protected by the admin token: a login form sets a signed session cookie (Flask's SECRET_KEY is
derived from the token, so rotating the token logs everyone out) naming a session kept in the
database, which logging out deletes: the cookie is worthless afterwards. Login attempts are
limited per client address and in all (``review.guard``). Every POST form carries a per-session
CSRF token; cookies are HttpOnly and SameSite=Strict, and Secure everywhere but on a loopback
address. Pages load nothing external and run no JavaScript (CSP ``default-src 'none'``). A bad
parameter (repeated, not a number, out of range) is a 400. A decision is written to the feedback
table and into the index at once (``learning``). Similar issues are listed only where
``domain.visibility.visible_to`` lets the row's repository see them, as they are now."""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, abort, current_app, redirect, render_template, request, session, url_for
from flask.sessions import SecureCookieSessionInterface
from markupsafe import Markup

from triagebot.learning import live as learning
from triagebot.review import charts, guard
from triagebot.review import data as review_data
from triagebot.settings import ConfigError, Settings
from triagebot.store.records import Feedback, Store
from triagebot.text import sanitize

MIN_TOKEN_CHARS = 16
# What a client without a session gets; a Bearer header is the usual mistake, so say how it works.
LOGIN_HINT = ("login required: open {login} in a browser and enter TRIAGEBOT_ADMIN_TOKEN there; the "
              "page keeps a session cookie (an Authorization: Bearer header is not accepted)\n")
MAX_NUMBER = 2**31 - 1
_NUMBER = re.compile(r"[0-9]{1,10}")
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
bp = Blueprint("review", __name__, url_prefix="/review", template_folder="templates")


class _Sessions(SecureCookieSessionInterface):
    """Secure cookies, except over plain HTTP to a loopback address (development and tests)."""

    def get_cookie_secure(self, app: Flask) -> bool:
        host = (request.host or "").rsplit(":", 1)[0].strip("[]")
        return not (host == "localhost" or _loopback(host))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def install(app: Flask, settings: Settings, store: Store,
            index_dir: str | Path | None = None, live: Any = None) -> None:
    """Register the review page on ``app`` (called by ``create_app`` when a token is set)."""
    token = settings.admin_token.get_secret_value()
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"TRIAGEBOT_ADMIN_TOKEN must be at least {MIN_TOKEN_CHARS} characters")
    app.secret_key = hmac.new(token.encode(), b"triagebot review session", hashlib.sha256).hexdigest()
    app.config.update(SESSION_COOKIE_SAMESITE="Strict", SESSION_COOKIE_HTTPONLY=True,
                      SESSION_COOKIE_NAME="triagebot_review")
    app.session_interface = _Sessions()
    live = live or learning.LiveIndex(index_dir or settings.index_dir)  # or the database's (#14)
    app.extensions["triagebot_review"] = {"token": token, "store": store, "live": live}
    app.register_blueprint(bp)


def _ctx() -> dict[str, Any]:
    return current_app.extensions["triagebot_review"]


def csrf_token() -> str:
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(32)
    return str(session["csrf"])


@bp.app_context_processor
def _inject() -> dict[str, Any]:
    return {"csrf_token": csrf_token}


def _logged_in() -> bool:
    """A signed cookie naming a session the database still holds (logout deletes it)."""
    sid = session.get("sid")
    return (session.get("admin") is True and isinstance(sid, str)
            and _ctx()["store"].session_alive(sid))


@bp.before_request
def _guard() -> Any:
    """Login first (browsers are sent to the form, anything else gets 401), then CSRF on POST."""
    if request.endpoint != "review.login" and not _logged_in():
        session.clear()
        if request.method == "GET" and "text/html" in request.headers.get("Accept", ""):
            return redirect(url_for("review.login"))
        return Response(LOGIN_HINT.format(login=url_for("review.login")), 401, {"Content-Type": "text/plain"})
    if request.method == "POST":
        sent = _one(request.form, "csrf")
        if not sent or not hmac.compare_digest(sent, str(session.get("csrf", ""))):
            abort(403, "missing or wrong CSRF token; reload the page")
    return None


def _one(values: Any, name: str, default: str = "") -> str:
    """The single value of a form or query parameter; a repeated one is a 400, not a guess."""
    given = values.getlist(name)
    if len(given) > 1:
        abort(400, f"{name} given {len(given)} times")
    return given[0] if given else default


def _number(value: str) -> int:
    if not _NUMBER.fullmatch(value) or int(value) > MAX_NUMBER:
        abort(400, "the issue number must be a positive integer")
    return int(value)


@bp.after_request
def _headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    if request.method == "GET":
        return render_template("review/login.html", error=None)
    store: Store = _ctx()["store"]
    wait, attempt = guard.admit_guess(store, request.remote_addr or "?", time.time())
    if attempt is None:
        seconds = math.ceil(wait)
        page = render_template("review/login.html",
                               error=f"Too many attempts; try again in {seconds} s.")
        return page, 429, {"Retry-After": str(seconds)}
    given = _one(request.form, "token").encode()
    if not hmac.compare_digest(given, _ctx()["token"].encode()):
        return render_template("review/login.html", error="That token is not right."), 401
    guard.forgive(store, attempt)
    session.clear()
    session.update(admin=True, csrf=secrets.token_urlsafe(32),
                   sid=guard.open_session(store, time.time()))
    return redirect(url_for("review.index"))


@bp.post("/logout")
def logout() -> Any:
    _ctx()["store"].end_session(str(session.get("sid", "")))
    session.clear()
    return redirect(url_for("review.login"))


@bp.get("")
def index() -> Any:
    only = _one(request.args, "filter")
    only = only if only in ("low", "pending") else ""
    rows = review_data.recent(_ctx()["store"], only=only, lookup=_lookup())
    return render_template("review/list.html", rows=rows, only=only)


def _lookup() -> Callable[[str, int], Any] | None:
    """Indexed items as they are now, for the visibility check of each row's similar issues;
    None (nothing shown) when the index cannot be read."""
    try:
        index = _ctx()["live"].current()
    except (ValueError, OSError) as exc:
        current_app.logger.warning("similar issues not shown: %s", exc)
        return None

    def lookup(repo: str, number: int) -> Any:
        row = index.row_of((repo, number))
        return index.items[row] if row is not None else None

    return lookup


@bp.post("/decide")
def decide() -> Any:
    form = request.form
    repo, dimension, choice = _one(form, "repo"), _one(form, "dimension"), _one(form, "choice")
    action, only = _one(form, "action"), _one(form, "filter")
    if dimension not in review_data.DIMENSIONS or not sanitize.valid_repo(repo):
        abort(400, "unknown dimension or repository")
    number = _number(_one(form, "number"))
    row = _row(repo, number)
    dim = next(d for d in row.dimensions if d.dimension == dimension)
    new_id = dim.predicted if action == "accept" else choice
    if new_id not in dim.options:
        abort(400, f"{new_id!r} is not a valid {dimension} here")
    record(repo, number, dimension, dim.predicted, new_id)
    shown = only if only in ("low", "pending") else None
    return redirect(url_for("review.index", filter=shown) + f"#{_anchor(row)}")


def _row(repo: str, number: int) -> review_data.ReviewRow:
    store: Store = _ctx()["store"]
    stored = store.get_triage(repo, number)
    if stored is None:
        abort(404, "no triage of that issue")
    return review_data.review_row(repo, number, stored.triage, stored.updated_at,
                                  store.feedback(repo, number))


def _anchor(row: review_data.ReviewRow) -> str:
    return f"{row.repo.replace('/', '-')}-{row.number}"


def record(repo: str, number: int, dimension: str, old_id: str, new_id: str) -> bool:
    """Feedback first (the durable record), then the index (immediately useful)."""
    _ctx()["store"].add_feedback(Feedback(repo=repo, number=number, dimension=dimension,
                                          old_id=old_id, new_id=new_id, who="admin", source="page"))
    try:
        return learning.correct_index(_ctx()["live"], repo, number, dimension, new_id)
    except (ValueError, OSError) as exc:  # index missing or unreadable: the feedback is kept
        current_app.logger.warning("index not updated for %s#%s: %s", repo, number, exc)
        return False


@bp.get("/stats")
def stats() -> Any:
    dimension = _one(request.args, "dimension", "stage")
    dimension = dimension if dimension in review_data.DIMENSIONS else "stage"
    data = review_data.stats(_ctx()["store"], dimension)
    return render_template("review/stats.html", data=data, dimensions=review_data.DIMENSIONS,
                           pictures=pictures(data), rate=review_data.overall_rate)


def pictures(data: dict[str, Any]) -> dict[str, Markup]:
    """Inline SVGs; every label inside is escaped by ``charts``."""
    return {"confusion": Markup(charts.confusion_svg(data["confusion_labels"], data["confusion"],
                                                     data["dimension"])),
            "acceptance": Markup(charts.acceptance_svg(data["acceptance"]))}
