"""``triagebot setup``: register the GitHub App through GitHub's App-manifest flow, as Probot does,
so nothing is pasted by hand.

1. A small page on this machine (``http://127.0.0.1:3000/``) posts the manifest
   (``github.app_manifest.manifest``: permissions, events, webhook URL on the user's host) to
   GitHub's *new App* page (``/settings/apps/new``, or an organisation's), with a random
   ``state``.
2. The user confirms on GitHub; GitHub sends the browser back to ``/callback`` here with a
   one-time code (and our ``state``, checked, so no other site can feed us a code).
3. The code is exchanged (``POST /app-manifests/{code}/conversions``) for the App's id, slug,
   webhook secret and private key, which are written to ``.env`` (mode 0600; other lines kept),
   with a fresh review-page token when there is none.

GitHub Enterprise Server works the same through ``TRIAGEBOT_GITHUB_API_URL``
(``https://HOST/api/v3``; its web pages at ``https://HOST``)."""
from __future__ import annotations

import argparse
import html
import json
import os
import secrets
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from triagebot.cli.errors import UserError
from triagebot.github import app_manifest
from triagebot.github.client import convert_manifest
from triagebot.settings import DEFAULT_ENV_FILE, Settings, env_file_line, read_env_file

DEFAULT_PORT = 3000
DEFAULT_TIMEOUT_S = 900.0  # GitHub's codes live an hour; a forgotten setup should not run for ever
ADMIN_TOKEN_BYTES = 24  # 32 characters, above the review page's 16


def register(sub: Any) -> None:
    setup = sub.add_parser("setup", help="register the GitHub App through GitHub's manifest flow and "
                           "write its id, key and secrets to .env")
    setup.add_argument("--url", required=True, metavar="URL",
                       help="public https address of this bot (webhooks go to URL/webhook)")
    setup.add_argument("--name", default="triagebot", help="the App's name on GitHub (unique there)")
    setup.add_argument("--org", default=None, help="register the App under this organisation "
                       "(default: your personal account)")
    setup.add_argument("--host", default="127.0.0.1", help="address of the local setup page")
    setup.add_argument("--port", type=int, default=DEFAULT_PORT, help="port of the local setup page (0: any)")
    setup.add_argument("--force", action="store_true", help="replace an App id already in the env file")
    setup.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help=argparse.SUPPRESS)
    setup.set_defaults(func=cmd_setup)


@dataclass
class Flow:
    """One run of the manifest flow: what the local page posts and what came back."""

    api_url: str
    public_url: str
    name: str
    org: str | None
    state: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    redirect_url: str = ""
    app: dict[str, Any] | None = None
    done: threading.Event = field(default_factory=threading.Event)
    written: Path | None = None

    def form_action(self) -> str:
        where = f"/organizations/{quote(self.org, safe='')}" if self.org else ""
        return f"{app_manifest.web_url(self.api_url)}{where}/settings/apps/new?state={self.state}"

    def manifest_json(self) -> str:
        return json.dumps(app_manifest.manifest(self.name, self.public_url, self.redirect_url))


def cmd_setup(args: argparse.Namespace, settings: Settings) -> int:
    target: Path = getattr(args, "env_file", None) or DEFAULT_ENV_FILE
    public = args.url.rstrip("/")
    if not public.startswith(("https://", "http://")):
        raise UserError(f"--url must be the bot's public http(s) address, not {args.url!r}")
    existing = read_env_file(target) if target.is_file() else {}
    if existing.get("TRIAGEBOT_APP_ID") and not args.force:
        raise UserError(f"{target} already holds TRIAGEBOT_APP_ID={existing['TRIAGEBOT_APP_ID']}; "
                        "give --force to register a new App and replace it")
    flow = Flow(api_url=settings.github_api_url, public_url=public, name=args.name, org=args.org)
    server = ThreadingHTTPServer((args.host, args.port), _handler(flow, target, settings))
    server.daemon_threads = True
    port = server.server_address[1]
    flow.redirect_url = f"http://{args.host}:{port}/callback"
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    print(f"Open http://{args.host}:{port}/ in a browser on this machine to register the App on "
          f"{app_manifest.web_url(settings.github_api_url)}", flush=True)
    try:
        if not flow.done.wait(args.timeout):
            raise UserError(f"no answer from GitHub within {args.timeout:.0f} s; run `triagebot setup` again")
    finally:
        server.shutdown()
        server.server_close()
    app = flow.app or {}
    print(f"wrote the App's settings to {target} (mode 0600): TRIAGEBOT_APP_ID={app.get('id')}, "
          f"TRIAGEBOT_APP_SLUG={app.get('slug')}, the webhook secret and the private key")
    print(f"next: install the App on the repositories to triage: {_install_url(app)}")
    print("then: triagebot doctor   (checks everything), triagebot serve   (runs the bot)")
    return 0


def _install_url(app: dict[str, Any]) -> str:
    return f"{app.get('html_url', '')}/installations/new"


def env_values(app: dict[str, Any], api_url: str, existing: dict[str, str]) -> dict[str, str]:
    """What the exchange gives us, as settings. A review-page token is made up when the file has
    none (the page stays off without one)."""
    values = {"TRIAGEBOT_APP_ID": str(app["id"]), "TRIAGEBOT_APP_SLUG": str(app["slug"]),
              "TRIAGEBOT_WEBHOOK_SECRET": str(app["webhook_secret"]),
              "TRIAGEBOT_PRIVATE_KEY": str(app["pem"])}
    if api_url.rstrip("/") != "https://api.github.com":
        values["TRIAGEBOT_GITHUB_API_URL"] = api_url
    if not existing.get("TRIAGEBOT_ADMIN_TOKEN"):
        values["TRIAGEBOT_ADMIN_TOKEN"] = secrets.token_urlsafe(ADMIN_TOKEN_BYTES)
    return values


def merge_env_text(old: str, values: dict[str, str]) -> str:
    """``old`` with the lines of ``values``' keys replaced in place (later repeats dropped) and the
    rest appended; comments and other settings are kept as they were."""
    out, seen = [], set()
    lines = old.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        key = line.split("=", 1)[0].strip().removeprefix("export ").strip() if "=" in line else ""
        if key in values and not line.lstrip().startswith("#"):
            rest = line.split("=", 1)[1].lstrip()
            if rest[:1] in ("'", '"'):  # a quoted value may run over several lines
                quote_char, text = rest[0], rest[1:]
                while not _closes(text, quote_char) and i < len(lines):
                    text += "\n" + lines[i]
                    i += 1
            if key not in seen:
                out.append(env_file_line(key, values[key]))
                seen.add(key)
            continue
        out.append(line)
    missing = [k for k in values if k not in seen]
    if missing:
        out += ["", "# written by `triagebot setup`"] + [env_file_line(k, values[k]) for k in missing]
    return "\n".join(out).lstrip("\n") + "\n"


def _closes(text: str, quote_char: str) -> bool:
    escaped = False
    for ch in text:
        if ch == quote_char and not escaped:
            return True
        escaped = ch == "\\" and quote_char == '"' and not escaped
    return False


def write_env_file(target: Path, values: dict[str, str]) -> None:
    """Write atomically and readable by the owner only (0600): the file holds the App's key."""
    old = target.read_text(encoding="utf-8") if target.is_file() else ""
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(merge_env_text(old, values))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            "<style>body{font-family:system-ui,sans-serif;max-width:46em;margin:3em auto;line-height:1.5}"
            "button{font-size:1.1em;padding:.5em 1em}code{background:#f3f3f3;padding:0 .2em}</style>"
            f"</head><body><h1>{html.escape(title)}</h1>{body}</body></html>").encode()


def _handler(flow: Flow, target: Path, settings: Settings) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # the terminal shows our lines only
            pass

        def _send(self, status: int, title: str, body: str) -> None:
            payload = _page(title, body)
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("Referrer-Policy", "no-referrer")
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            parts = urlsplit(self.path)
            if parts.path == "/":
                self._start()
            elif parts.path == "/callback":
                self._callback({k: v[-1] for k, v in parse_qs(parts.query).items()})
            else:
                self._send(404, "Not found", "<p>Nothing here; go to <a href='/'>the setup page</a>.</p>")

        def _start(self) -> None:
            where = f"the organisation <b>{html.escape(flow.org)}</b>" if flow.org else "your account"
            self._send(200, "Register triagebot on GitHub", (
                f"<p>This registers a GitHub App named <b>{html.escape(flow.name)}</b> under {where} on "
                f"<code>{html.escape(app_manifest.web_url(flow.api_url))}</code>, with webhooks sent "
                f"to <code>{html.escape(flow.public_url)}/webhook</code> and the permissions the bot "
                f"needs ({html.escape(', '.join(f'{k}: {v}' for k, v in app_manifest.PERMISSIONS.items()))})."
                " GitHub asks you to confirm; then it sends you back here and the App's id, key and "
                f"secrets are written to <code>{html.escape(str(target))}</code>.</p>"
                f"<form method='post' action='{html.escape(flow.form_action(), quote=True)}'>"
                f"<input type='hidden' name='manifest' value='{html.escape(flow.manifest_json(), quote=True)}'>"
                "<button id='register' type='submit'>Register the GitHub App</button></form>"))

        def _callback(self, query: dict[str, str]) -> None:
            if flow.done.is_set():
                self._send(409, "Already done", "<p>The App is registered; this page can be closed.</p>")
                return
            if not secrets.compare_digest(query.get("state", ""), flow.state) or not query.get("code"):
                self._send(400, "Not from this setup", "<p>This answer does not belong to the setup "
                           "started here (wrong or missing <code>state</code>); start again at "
                           "<a href='/'>the setup page</a>.</p>")
                return
            answer = convert_manifest(flow.api_url, query["code"])
            if not answer.ok:
                print(f"triagebot: GitHub refused the code ({answer.status}: {answer.message}); "
                      "start again from the setup page", file=sys.stderr, flush=True)
                self._send(502, "GitHub refused the code", f"<p>{html.escape(str(answer.status))}: "
                           f"{html.escape(answer.message)}. Codes work once and for one hour; "
                           "<a href='/'>start again</a>.</p>")
                return
            app = dict(answer.data or {})
            existing = read_env_file(target) if target.is_file() else {}
            write_env_file(target, env_values(app, flow.api_url, existing))
            flow.app, flow.written = app, target
            install = _install_url(app)
            self._send(200, "The App is registered", (
                f"<p id='done'>GitHub App <b>{html.escape(str(app.get('slug')))}</b> (id "
                f"{html.escape(str(app.get('id')))}) is registered; its settings are in "
                f"<code>{html.escape(str(target))}</code>.</p><ol>"
                f"<li><a id='install' href='{html.escape(install, quote=True)}'>Install it</a> on the "
                "repositories to triage.</li><li>Run <code>triagebot doctor</code>, then "
                "<code>triagebot serve</code>.</li></ol>"))
            flow.done.set()

    return Handler
