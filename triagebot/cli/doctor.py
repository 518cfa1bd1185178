"""``triagebot doctor``: is this installation ready to serve? One line per check, ✓ or ✗ with the
fix, exit status 1 on any ✗. ``triagebot serve`` and ``triagebot worker`` run the same checks at
start-up: a missing or unusable App id or key stops them with one line (exit 2) instead of a
first job failing deep inside PyGithub and being retried as if GitHub were down.

The checks are plain functions returning ``Check`` values; the only side effects are the reads
they exist for (GitHub's ``GET /app``, ``/app/installations``, ``/installation/repositories``;
the index; the database; Redis), and none writes anything."""
from __future__ import annotations

import argparse
import os
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from triagebot.engine.index import IndexError_, IssueIndex
from triagebot.github import app_manifest
from triagebot.github.client import AppProbe
from triagebot.settings import DEFAULT_INDEX, ConfigError, Settings

MIN_WEBHOOK_SECRET_CHARS = 16
MIN_ADMIN_TOKEN_CHARS = 16  # review.page.MIN_TOKEN_CHARS; checked equal by a test
MAX_INSTALLATIONS_CHECKED = 10
_APP_ID = re.compile(r"[0-9]+|Iv[0-9A-Za-z.]+")  # a numeric App id or a client id
SECRET_HINT = "python -c 'import secrets; print(secrets.token_hex(32))'"


@dataclass(frozen=True)
class Check:
    """One verdict. ``fatal``: serving cannot work at all (serve refuses to start)."""

    ok: bool
    what: str
    detail: str
    fix: str = ""
    fatal: bool = False

    def line(self) -> str:
        head = f"{'✓' if self.ok else '✗'} {self.what}: {self.detail}"
        return head if self.ok or not self.fix else f"{head} - fix: {self.fix}"


def _good(what: str, detail: str) -> Check:
    return Check(True, what, detail)


def _bad(what: str, detail: str, fix: str, fatal: bool = False) -> Check:
    return Check(False, what, detail, fix, fatal)


# -- settings (no I/O) ----------------------------------------------------------------------------

def settings_checks(settings: Settings) -> list[Check]:
    """The settings the App needs, without asking anyone: id, key (it must parse), secret."""
    checks = [_app_id(settings.app_id), _private_key(settings.private_key.get_secret_value()),
              _webhook_secret(settings.webhook_secret.get_secret_value())]
    token = settings.admin_token.get_secret_value()
    if token and len(token) < MIN_ADMIN_TOKEN_CHARS:
        checks.append(_bad("review page", f"TRIAGEBOT_ADMIN_TOKEN has {len(token)} characters",
                           f"use at least {MIN_ADMIN_TOKEN_CHARS} ({SECRET_HINT}), or leave it "
                           "empty to turn the page off", fatal=True))
    return checks


def _app_id(app_id: str) -> Check:
    if not app_id:
        return _bad("App id", "TRIAGEBOT_APP_ID is empty",
                    "run `triagebot setup`, or copy the App ID from the App's settings page", fatal=True)
    if not _APP_ID.fullmatch(app_id):
        return _bad("App id", f"TRIAGEBOT_APP_ID {app_id[:20]!r} is neither an App ID nor a client ID",
                    "copy the numeric App ID from the App's settings page", fatal=True)
    return _good("App id", app_id)


def _private_key(pem: str) -> Check:
    what = "private key"
    if not pem.strip():
        return _bad(what, "TRIAGEBOT_PRIVATE_KEY (or TRIAGEBOT_PRIVATE_KEY_PATH) is empty",
                    "run `triagebot setup`, or generate a key on the App's settings page and set "
                    "TRIAGEBOT_PRIVATE_KEY_PATH to the downloaded .pem file", fatal=True)
    try:
        key = load_pem_private_key(pem.strip().encode(), password=None)
    except (ValueError, TypeError):
        return _bad(what, "TRIAGEBOT_PRIVATE_KEY does not parse as a PEM private key",
                    "give the whole .pem GitHub generated, BEGIN and END lines included "
                    "(in .env: one quoted line with \\n, or TRIAGEBOT_PRIVATE_KEY_PATH)", fatal=True)
    if not isinstance(key, rsa.RSAPrivateKey):
        return _bad(what, "the key is not an RSA key", "generate a key on the App's settings page",
                    fatal=True)
    return _good(what, f"RSA {key.key_size} bits")


def _webhook_secret(secret: str) -> Check:
    what = "webhook secret"
    if not secret:
        return _bad(what, "TRIAGEBOT_WEBHOOK_SECRET is empty",
                    f"run `triagebot setup`, or set the App's webhook secret ({SECRET_HINT})", fatal=True)
    if len(secret) < MIN_WEBHOOK_SECRET_CHARS:
        return _bad(what, f"TRIAGEBOT_WEBHOOK_SECRET has only {len(secret)} characters",
                    f"use at least {MIN_WEBHOOK_SECRET_CHARS} random characters ({SECRET_HINT}), "
                    "here and on the App's settings page")
    return _good(what, f"{len(secret)} characters")


# -- GitHub -----------------------------------------------------------------------------------------

def github_checks(settings: Settings, probe: Any) -> list[Check]:
    """As the App: who it is, what it may do and hear, where it is installed and which
    repositories each installation gives it (``probe``: ``github.client.AppProbe``)."""
    answer = probe.get("/app")
    if not answer.ok:
        return [_auth_failure(settings, answer)]
    app = answer.data or {}
    slug, html_url = str(app.get("slug") or ""), str(app.get("html_url") or "")
    owner = (app.get("owner") or {}).get("login", "?")
    checks = [_good("GitHub App", f"authenticated as {slug} (App id {app.get('id')}, owner {owner}) "
                                  f"at {settings.github_api_url}")]
    if slug and slug != settings.app_slug:
        checks.append(_bad("App slug", f"TRIAGEBOT_APP_SLUG is {settings.app_slug!r} but the App is "
                           f"{slug!r}: the bot would not recognise its own comments",
                           f"set TRIAGEBOT_APP_SLUG={slug}"))
    missing = app_manifest.missing_permissions(app.get("permissions") or {})
    checks.append(_bad("permissions", f"missing {', '.join(missing)}",
                       "App settings -> Permissions & events; then accept the new permissions on "
                       "each installation") if missing else
                  _good("permissions", ", ".join(f"{k}: {v}" for k, v in app_manifest.PERMISSIONS.items())))
    events = app_manifest.missing_events(list(app.get("events") or []))
    checks.append(_bad("events", f"not subscribed to {', '.join(events)}",
                       "App settings -> Permissions & events -> Subscribe to events") if events else
                  _good("events", ", ".join(app_manifest.EVENTS)))
    return checks + installation_checks(probe, html_url)


def _auth_failure(settings: Settings, answer: Any) -> Check:
    if answer.status == 0:
        return _bad("GitHub App", f"{answer.message} at {settings.github_api_url}",
                    "check TRIAGEBOT_GITHUB_API_URL (GitHub Enterprise: https://HOST/api/v3) and the network")
    if answer.status in (401, 404):
        return _bad("GitHub App", f"GitHub rejected the App's credentials ({answer.status}: "
                    f"{answer.message or 'no message'})",
                    "check that TRIAGEBOT_APP_ID is this App's id and TRIAGEBOT_PRIVATE_KEY one of "
                    "its current keys (App settings -> Private keys), and that this machine's clock is right")
    return _bad("GitHub App", f"GET /app answered {answer.status}: {answer.message}",
                "try again later; if it persists, check https://www.githubstatus.com")


def installation_checks(probe: Any, html_url: str) -> list[Check]:
    answer = probe.get("/app/installations")
    install_here = f"{html_url}/installations/new" if html_url else "the App's page -> Install App"
    if not answer.ok:
        return [_bad("installations", f"GET /app/installations answered {answer.status}: {answer.message}",
                     "try again later")]
    installations = list(answer.data or [])
    if not installations:
        return [_bad("installations", "the App is not installed on any account",
                     f"install it on the repositories to triage: {install_here}")]
    checks = [_good("installations", f"{len(installations)} "
                    f"({', '.join(_account(i) for i in installations[:MAX_INSTALLATIONS_CHECKED])})")]
    for inst in installations[:MAX_INSTALLATIONS_CHECKED]:
        what = f"installation {inst.get('id')} ({_account(inst)})"
        if inst.get("suspended_at"):
            checks.append(_bad(what, "suspended", "unsuspend it in the account's settings -> GitHub Apps"))
            continue
        repos = probe.installation_get(int(inst["id"]), "/installation/repositories")
        if not repos.ok:
            checks.append(_bad(what, f"no token with the permissions the bot needs ({repos.status}: "
                               f"{repos.message})", "accept the App's requested permissions in the "
                               "account's settings -> GitHub Apps -> Configure"))
            continue
        names = [r.get("full_name", "?") for r in (repos.data or {}).get("repositories", [])]
        total = (repos.data or {}).get("total_count", len(names))
        if not names:
            checks.append(_bad(what, "no repositories selected", f"choose repositories: {install_here}"))
        else:
            shown = ", ".join(names[:5]) + (", …" if total > 5 else "")
            checks.append(_good(what, f"{total} repositories: {shown}"))
    return checks


def _account(installation: dict[str, Any]) -> str:
    return str((installation.get("account") or {}).get("login", "?"))


# -- local parts --------------------------------------------------------------------------------

def local_checks(settings: Settings) -> list[Check]:
    return [index_check(settings), database_check(settings.db)] + (
        [redis_check(settings.queue_url)] if settings.queue_url else [])


def index_check(settings: Settings) -> Check:
    """The index the service will use: TRIAGEBOT_INDEX, else the live one in the data directory,
    else (first start) the shipped seed index it is copied from."""
    if settings.index is not None or (settings.index_dir / "manifest.json").exists():
        path = settings.index_dir
    else:
        path = DEFAULT_INDEX
    try:
        index = IssueIndex.load(path)
    except IndexError_ as exc:
        return _bad("index", str(exc), "set TRIAGEBOT_INDEX to an index directory, or unset it to "
                    "use the shipped seed index", fatal=True)
    seeded = "" if path != DEFAULT_INDEX else f", the seed copied to {settings.index_dir} on first start"
    return _good("index", f"{len(index)} issues in {path} ({index.embedder_name}{seeded})")


def database_check(url: str) -> Check:
    """SQLite: the file opens (read only) or its folder can take it; PostgreSQL: ``SELECT 1``."""
    what = "database"
    if url.startswith(("postgresql://", "postgres://")):
        try:
            import psycopg

            with psycopg.connect(url, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
        except ImportError:
            return _bad(what, "TRIAGEBOT_DB is a PostgreSQL URL but psycopg is not installed",
                        "pip install 'triagebot[postgres]'", fatal=True)
        except Exception as exc:  # noqa: BLE001 - psycopg's errors are many; the message says which
            return _bad(what, f"PostgreSQL does not answer: {_one_line(exc)}",
                        "check TRIAGEBOT_DB (user, password, host, database) and that the server runs")
        return _good(what, "PostgreSQL answers")
    path = Path(url)
    if not path.exists():
        folder = path.parent if str(path.parent) else Path(".")
        if folder.exists() and not _writable(folder):
            return _bad(what, f"cannot create {path}: {folder} is not writable",
                        "set TRIAGEBOT_DB to a writable path", fatal=True)
        return _good(what, f"SQLite {path} (created on first start)")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # reads the header
    except sqlite3.Error as exc:
        return _bad(what, f"SQLite {path}: {exc}", "check the file (is it a SQLite database?)", fatal=True)
    return _good(what, f"SQLite {path}")


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK)


def redis_check(url: str) -> Check:
    try:
        from redis import Redis

        Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3).ping()
    except ImportError:
        return _bad("Redis", "TRIAGEBOT_QUEUE_URL is set but redis/rq are not installed",
                    "pip install 'triagebot[redis]'", fatal=True)
    except Exception as exc:  # noqa: BLE001 - connection refused, auth, DNS: the message says which
        return _bad("Redis", f"{_one_line(exc)}", "check TRIAGEBOT_QUEUE_URL and that Redis runs "
                    "(jobs still run from the database meanwhile)")
    return _good("Redis", "answers")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


# -- commands -------------------------------------------------------------------------------------

def run_checks(settings: Settings, probe_factory: Callable[[Settings], Any] | None = None) -> list[Check]:
    """Every check, in the order a maintainer fixes things; GitHub is asked only once the
    settings it needs are usable."""
    checks = settings_checks(settings)
    if not any(c.fatal for c in checks[:2]):  # App id and key usable
        probe = (probe_factory or _probe)(settings)
        checks += github_checks(settings, probe)
    else:
        checks.append(_bad("GitHub App", "not asked: the App id or key above is unusable", "fix those first"))
    return checks + local_checks(settings)


def _probe(settings: Settings) -> Any:
    return AppProbe(settings)


def require_app(settings: Settings, receiver: bool = True, worker: bool = True) -> None:
    """What ``serve`` and ``worker`` refuse to start without, as one line naming the variable:
    a process that receives webhooks needs the secret, one that runs jobs (``worker``, or
    ``serve`` with worker threads) the App's id and key."""
    for check in settings_checks(settings):
        needed = {"webhook secret": receiver, "review page": receiver}.get(check.what, worker)
        if check.fatal and needed:
            raise ConfigError(f"{check.detail}; {check.fix}")


def start_up_checks(settings: Settings, receiver: bool = True, worker: bool = True) -> None:
    """``serve`` / ``worker`` start-up: refuse (``require_app``) on what cannot work, then run the
    doctor's other checks on a background thread, printing their lines to stderr, so the listener
    is not held up by GitHub's answer time. A receiver-only process (``serve --workers 0``) never
    calls GitHub, so it neither needs nor checks the App."""
    require_app(settings, receiver, worker)

    def report() -> None:
        try:
            checks = run_checks(settings) if worker else local_checks(settings)
        except Exception as exc:  # noqa: BLE001 - a check that crashes must not stop the service
            checks = [_bad("start-up checks", _one_line(exc), "run `triagebot doctor`")]
        print_checks([c for c in checks if c.what != "webhook secret" or receiver], sys.stderr)

    threading.Thread(target=report, name="triagebot-doctor", daemon=True).start()


def print_checks(checks: Iterable[Check], out: Any = None) -> bool:
    """Print one line per check; True when all passed."""
    out = out or sys.stdout
    ok = True
    for check in checks:
        print(check.line(), file=out, flush=True)
        ok &= check.ok
    return ok


def register(sub: Any) -> None:
    doctor = sub.add_parser("doctor", help="check settings, the GitHub App, the index and the "
                            "database; one line per check, exit 1 on any failure")
    doctor.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    ok = print_checks(run_checks(settings))
    print("all checks passed" if ok else "some checks failed; fix the lines marked ✗ and run "
          "`triagebot doctor` again")
    return 0 if ok else 1
