"""A small stateful fake of GitHub's REST API on 127.0.0.1, for tests that go through PyGithub.

    fake = FakeGitHub()
    base_url = fake.start()          # http://127.0.0.1:<port>
    fake.add_issue("o/r", 1, title="NCCL hang")
    fake.fail_next("POST", r"/comments$", 502)   # next matching request answers 502
    fake.fail_until("*", r"", 502, until=t)        # every request answers 502 until clock() >= t
    ...
    fake.comments("o/r", 1); fake.requests; fake.stop()

It keeps issues, comments, labels, repo labels, files and webhook deliveries, records every
request (method, path, query, headers, JSON body), paginates with Link headers like GitHub, and
mints installation tokens that expire on the injected clock (expired token -> 401).

It also plays GitHub's side of the App itself: the App-manifest flow (the web page at
``/settings/apps/new`` that a browser posts a manifest to, its redirect with a code, and
``POST /app-manifests/{code}/conversions``, which registers the App, mints its key pair and from
then on checks the App's JWTs with it), ``GET /app``, ``GET /app/installations`` and, with an
installation token, ``GET /installation/repositories``:

    fake.register_app(slug="triagebot")            # or let the manifest flow do it
    fake.add_installation(7, "octo-org", ["octo-org/repo"])"""
from __future__ import annotations

import base64
import html
import itertools
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

Response = tuple[int, dict[str, str], Any]


def app_key_pair() -> tuple[str, str]:
    """A fresh RSA key pair for a test App: (private PEM for triagebot, public PEM for the fake,
    which checks the App JWT with it)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any
    status: int = 0
    form: dict[str, str] = field(default_factory=dict)  # an HTML form's fields (the web pages)


@dataclass
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    headers: dict[str, str]
    body: Any
    times: int
    until: float | None = None  # a window on the fake's clock instead of a count


@dataclass
class _Repo:
    private: bool = False
    labels: list[str] = field(default_factory=list)
    issues: dict[int, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeGitHub:
    def __init__(self, clock: Callable[[], float] = time.time, token_ttl: float = 3600.0,
                 app_public_key: str | None = None) -> None:
        self.clock = clock
        self.token_ttl = token_ttl
        self.app_public_key = app_public_key
        self.requests: list[Recorded] = []
        self.repos: dict[str, _Repo] = {}
        self.comment_store: dict[int, dict[str, Any]] = {}
        self.tokens: dict[str, float] = {}  # minted installation token -> expiry
        self.token_requests: list[dict[str, Any]] = []
        self.deliveries: list[dict[str, Any]] = []
        self.redelivered: list[int] = []
        self.created_labels: list[str] = []
        self.rate_headers: dict[str, str] = {}
        self.app: dict[str, Any] | None = None  # the registered App (GET /app)
        self.installations: dict[int, dict[str, Any]] = {}
        self.token_installations: dict[str, int] = {}
        self.manifest_codes: dict[str, dict[str, Any]] = {}  # code -> manifest, until converted
        self.manifests: list[dict[str, Any]] = []  # every manifest a browser posted
        self._faults: list[_Fault] = []
        self._ids = itertools.count(1001)
        self._lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self.base_url = ""

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> str:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self.base_url

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # ---- state -----------------------------------------------------------------------------
    def repo(self, full_name: str) -> _Repo:
        return self.repos.setdefault(full_name, _Repo())

    def add_label(self, repo: str, *names: str) -> None:
        self.repo(repo).labels.extend(n for n in names if n not in self.repo(repo).labels)

    def add_file(self, repo: str, path: str, text: str) -> None:
        self.repo(repo).files[path] = text

    def add_issue(self, repo: str, number: int, title: str = "", body: str = "", *,
                  state: str = "open", labels: tuple[str, ...] = (), user: str = "alice",
                  user_type: str = "User", pull_request: bool = False,
                  state_reason: str | None = None) -> dict[str, Any]:
        now = _iso(self.clock())
        issue = {"number": number, "title": title, "body": body, "state": state,
                 "state_reason": state_reason, "labels": list(labels), "user": (user, user_type),
                 "pull_request": pull_request, "created_at": now, "updated_at": now,
                 "closed_at": now if state == "closed" else None, "comments": []}
        self.repo(repo).issues[number] = issue
        return issue

    def add_comment(self, repo: str, number: int, body: str, user: str = "alice",
                    user_type: str = "User") -> int:
        cid = next(self._ids)
        self.comment_store[cid] = {"id": cid, "repo": repo, "number": number, "body": body,
                                   "user": (user, user_type), "created_at": _iso(self.clock())}
        self.repo(repo).issues[number]["comments"].append(cid)
        return cid

    def add_delivery(self, delivery_id: int, status: str = "OK", status_code: int = 200, *,
                     guid: str | None = None, event: str = "issues", action: str = "opened",
                     delivered_at: float | None = None, redelivery: bool = False) -> None:
        self.deliveries.append({
            "id": delivery_id, "guid": guid or f"guid-{delivery_id}", "status": status,
            "status_code": status_code, "event": event, "action": action, "redelivery": redelivery,
            "delivered_at": _iso(self.clock() if delivered_at is None else delivered_at),
            "duration": 0.1, "installation_id": 1, "repository_id": 1})

    def register_app(self, app_id: int = 4242, slug: str = "triagebot",
                     permissions: dict[str, str] | None = None,
                     events: list[str] | None = None, public_key: str | None = None) -> dict[str, Any]:
        """The App ``GET /app`` describes (what the manifest flow registers); by default with the
        permissions and events triagebot's manifest asks for."""
        self.app = {"id": app_id, "slug": slug, "node_id": "A_x", "name": slug,
                    "client_id": f"Iv1.{app_id:012x}", "owner": self.user_json("octo-org", "Organization"),
                    "html_url": f"{self.base_url}/apps/{slug}", "description": "",
                    "external_url": "https://bot.example", "created_at": _iso(self.clock()),
                    "updated_at": _iso(self.clock()),
                    "permissions": dict(permissions if permissions is not None else
                                        {"issues": "write", "metadata": "read", "contents": "read"}),
                    "events": list(events if events is not None else ["issues", "issue_comment", "repository"])}
        if public_key is not None:
            self.app_public_key = public_key
        return self.app

    def add_installation(self, installation_id: int, account: str, repos: list[str],
                         permissions: dict[str, str] | None = None, suspended: bool = False) -> None:
        """An installation of the App on ``account`` with access to ``repos``; ``permissions``
        what its owner accepted (a token asking for more is refused with 422, as GitHub does)."""
        self.installations[installation_id] = {
            "account": account, "repos": list(repos), "suspended": suspended,
            "permissions": dict(permissions or (self.app or {}).get("permissions")
                                or {"issues": "write", "metadata": "read", "contents": "read"})}
        for repo in repos:
            self.repo(repo)

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        ids = self.repo(repo).issues[number]["comments"]
        return [self.comment_store[i] for i in ids]

    def labels_of(self, repo: str, number: int) -> list[str]:
        return list(self.repo(repo).issues[number]["labels"])

    def fail_next(self, method: str, path_regex: str, status: int,
                  headers: dict[str, str] | None = None, body: Any = None, times: int = 1) -> None:
        """The next ``times`` requests matching method and path regex get this canned answer."""
        body = body if body is not None else {"message": HTTPStatus(status).phrase}
        self._faults.append(_Fault(method.upper(), re.compile(path_regex), status,
                                   dict(headers or {}), body, times))

    def fail_until(self, method: str, path_regex: str, status: int, until: float,
                   headers: dict[str, str] | None = None, body: Any = None) -> None:
        """An outage: every request matching method (``*``: any) and path regex gets this canned
        answer while the fake's clock is before ``until``."""
        body = body if body is not None else {"message": HTTPStatus(status).phrase}
        self._faults.append(_Fault(method.upper(), re.compile(path_regex), status,
                                   dict(headers or {}), body, 0, until))

    def writes(self) -> list[Recorded]:
        return [r for r in self.requests if r.method not in ("GET", "HEAD")]

    # ---- dispatch --------------------------------------------------------------------------
    def handle(self, rec: Recorded) -> Response:
        with self._lock:
            self.requests.append(rec)
            answer = self._fault(rec) or self._auth(rec) or self._route(rec)
            rec.status = answer[0]
            return answer

    def _fault(self, rec: Recorded) -> Response | None:
        for fault in self._faults:
            if fault.method not in ("*", rec.method) or not fault.pattern.search(rec.path):
                continue
            if fault.until is not None and self.clock() < fault.until:
                return fault.status, fault.headers, fault.body
            if fault.times > 0:
                fault.times -= 1
                return fault.status, fault.headers, fault.body
        return None

    def _auth(self, rec: Recorded) -> Response | None:
        kind, _, cred = rec.headers.get("authorization", "").partition(" ")
        if kind.lower() == "token" and cred in self.tokens and self.tokens[cred] <= self.clock():
            return 401, {}, {"message": "Bad credentials"}
        as_app = rec.path == "/app" or rec.path.startswith("/app/")
        if as_app and kind.lower() != "bearer":
            return 401, {}, {"message": "A JSON web token could not be decoded"}
        if as_app and self.app_public_key and not self._jwt_ok(cred):
            return 401, {}, {"message": "'Expiration time' claim ('exp') is too far in the future"}
        return None

    def _jwt_ok(self, token: str) -> bool:
        import jwt  # PyJWT, a PyGithub dependency

        try:
            claims = jwt.decode(token, self.app_public_key, algorithms=["RS256"],
                                options={"verify_exp": False, "verify_iat": False})
        except jwt.PyJWTError:
            return False
        now = self.clock()
        issuer_ok = self.app is None or str(claims.get("iss")) in (str(self.app["id"]), self.app["client_id"])
        return issuer_ok and claims["iat"] <= now and now < claims["exp"] <= now + 600

    def _route(self, rec: Recorded) -> Response:
        for method, pattern, func in _ROUTES:
            match = pattern.fullmatch(rec.path)
            if match and method == rec.method:
                status, headers, body = func(self, rec, *[unquote(g) for g in match.groups()])
                return status, {**self.rate_headers, **headers}, body
        return 404, {}, {"message": "Not Found"}

    # ---- JSON shapes (close to GitHub's, enough for PyGithub and the OpenAPI schema) ------
    def user_json(self, login: str, kind: str = "User") -> dict[str, Any]:
        url = f"{self.base_url}/users/{quote(login)}"
        return {"login": login, "id": abs(hash(login)) % 10**6, "node_id": "U_x", "type": kind,
                "avatar_url": "https://avatars.example/u", "gravatar_id": "", "url": url,
                "html_url": f"https://github.com/{quote(login)}", "site_admin": False,
                **{k: f"{url}/{k[:-4]}" for k in (
                    "followers_url", "following_url", "gists_url", "starred_url",
                    "subscriptions_url", "organizations_url", "repos_url", "events_url",
                    "received_events_url")}}

    def label_json(self, repo: str, name: str) -> dict[str, Any]:
        return {"id": abs(hash(name)) % 10**6, "node_id": "L_x", "name": name, "color": "ededed",
                "default": False, "description": None,
                "url": f"{self.base_url}/repos/{repo}/labels/{quote(name, safe='')}"}

    def issue_json(self, repo: str, issue: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/repos/{repo}/issues/{issue['number']}"
        data = {"id": issue["number"] + 10**6, "node_id": "I_x", "url": url,
                "repository_url": f"{self.base_url}/repos/{repo}",
                "labels_url": f"{url}/labels{{/name}}", "comments_url": f"{url}/comments",
                "events_url": f"{url}/events", "html_url": f"https://github.com/{repo}/issues/{issue['number']}",
                "number": issue["number"], "state": issue["state"],
                "state_reason": issue["state_reason"], "title": issue["title"],
                "body": issue["body"], "user": self.user_json(*issue["user"]),
                "labels": [self.label_json(repo, n) for n in issue["labels"]],
                "assignee": None, "assignees": [], "milestone": None, "locked": False,
                "active_lock_reason": None, "comments": len(issue["comments"]),
                "closed_at": issue["closed_at"], "created_at": issue["created_at"],
                "updated_at": issue["updated_at"], "author_association": "NONE"}
        if issue["pull_request"]:
            data["pull_request"] = {"url": url, "html_url": url, "diff_url": url, "patch_url": url}
        return data

    def comment_json(self, c: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/repos/{c['repo']}/issues/comments/{c['id']}"
        return {"id": c["id"], "node_id": "C_x", "url": url, "body": c["body"],
                "html_url": f"https://github.com/{c['repo']}/issues/{c['number']}#c{c['id']}",
                "issue_url": f"{self.base_url}/repos/{c['repo']}/issues/{c['number']}",
                "user": self.user_json(*c["user"]), "created_at": c["created_at"],
                "updated_at": c["created_at"], "author_association": "NONE"}

    def paginate(self, rec: Recorded, items: list[Any]) -> Response:
        per_page = min(int(rec.query.get("per_page", 30)), 100)
        page = max(int(rec.query.get("page", 1)), 1)
        last = max(1, -(-len(items) // per_page))
        links = []
        for rel, target in (("prev", page - 1), ("next", page + 1), ("last", last), ("first", 1)):
            if 1 <= target <= last and (rel in ("first", "last") or target != page):
                query = urlencode({**rec.query, "page": target, "per_page": per_page})
                links.append(f'<{self.base_url}{rec.path}?{query}>; rel="{rel}"')
        headers = {"Link": ", ".join(links)} if last > 1 else {}
        return 200, headers, items[(page - 1) * per_page: page * per_page]


# ---- routes ------------------------------------------------------------------------------
def _issue(fake: FakeGitHub, repo: str, number: str) -> dict[str, Any] | None:
    return fake.repos.get(repo, _Repo()).issues.get(int(number))


def get_repo(fake: FakeGitHub, rec: Recorded, repo: str) -> Response:
    if repo not in fake.repos:
        return 404, {}, {"message": "Not Found"}
    owner, name = repo.split("/")
    return 200, {}, {"id": 1, "name": name, "full_name": repo, "default_branch": "main",
                     "owner": fake.user_json(owner, "Organization"), "private": fake.repos[repo].private,
                     "url": f"{fake.base_url}/repos/{repo}"}


def get_issue(fake: FakeGitHub, rec: Recorded, repo: str, number: str) -> Response:
    issue = _issue(fake, repo, number)
    if issue is None:
        return 404, {}, {"message": "Not Found"}
    return 200, {}, fake.issue_json(repo, issue)


def list_issues(fake: FakeGitHub, rec: Recorded, repo: str) -> Response:
    state = rec.query.get("state", "open")
    issues = sorted(fake.repo(repo).issues.values(), key=lambda i: (i["created_at"], i["number"]))
    chosen = [fake.issue_json(repo, i) for i in issues if state in ("all", i["state"])]
    if rec.query.get("direction", "desc") == "desc":
        chosen.reverse()
    return fake.paginate(rec, chosen)


def list_comments(fake: FakeGitHub, rec: Recorded, repo: str, number: str) -> Response:
    if _issue(fake, repo, number) is None:
        return 404, {}, {"message": "Not Found"}
    return fake.paginate(rec, [fake.comment_json(c) for c in fake.comments(repo, int(number))])


def create_comment(fake: FakeGitHub, rec: Recorded, repo: str, number: str) -> Response:
    if _issue(fake, repo, number) is None:
        return 404, {}, {"message": "Not Found"}
    body = (rec.json or {}).get("body", "")
    if len(body) > 65536:
        return 422, {}, {"message": "Validation Failed", "errors": [
            {"resource": "IssueComment", "code": "custom", "field": "body",
             "message": "body is too long (maximum is 65536 characters)"}]}
    cid = fake.add_comment(repo, int(number), body, "triagebot[bot]", "Bot")
    return 201, {}, fake.comment_json(fake.comment_store[cid])


def edit_comment(fake: FakeGitHub, rec: Recorded, repo: str, cid: str) -> Response:
    comment = fake.comment_store.get(int(cid))
    if comment is None or comment["repo"] != repo:
        return 404, {}, {"message": "Not Found"}
    comment["body"] = (rec.json or {}).get("body", comment["body"])
    return 200, {}, fake.comment_json(comment)


def add_labels(fake: FakeGitHub, rec: Recorded, repo: str, number: str) -> Response:
    issue = _issue(fake, repo, number)
    if issue is None:
        return 404, {}, {"message": "Not Found"}
    names = rec.json["labels"] if isinstance(rec.json, dict) else rec.json
    for name in names:
        if name not in fake.repo(repo).labels:  # GitHub silently creates unknown labels
            fake.created_labels.append(name)
            fake.add_label(repo, name)
        if name not in issue["labels"]:
            issue["labels"].append(name)
    return 200, {}, [fake.label_json(repo, n) for n in issue["labels"]]


def remove_label(fake: FakeGitHub, rec: Recorded, repo: str, number: str, name: str) -> Response:
    issue = _issue(fake, repo, number)
    if issue is None or name not in issue["labels"]:
        return 404, {}, {"message": "Label does not exist"}
    issue["labels"].remove(name)
    return 200, {}, [fake.label_json(repo, n) for n in issue["labels"]]


def repo_labels(fake: FakeGitHub, rec: Recorded, repo: str) -> Response:
    return fake.paginate(rec, [fake.label_json(repo, n) for n in fake.repo(repo).labels])


def get_contents(fake: FakeGitHub, rec: Recorded, repo: str, path: str) -> Response:
    text = fake.repo(repo).files.get(path)
    if text is None:
        return 404, {}, {"message": "Not Found"}
    raw = text.encode()
    url = f"{fake.base_url}/repos/{repo}/contents/{path}"
    return 200, {}, {"type": "file", "encoding": "base64", "size": len(raw),
                     "name": path.rsplit("/", 1)[-1], "path": path, "sha": "0" * 40, "url": url,
                     "content": base64.encodebytes(raw).decode(), "git_url": url,
                     "html_url": url, "download_url": url, "_links": {"self": url, "git": url, "html": url}}


_LEVELS = {"read": 1, "write": 2, "admin": 3}


def access_token(fake: FakeGitHub, rec: Recorded, installation_id: str) -> Response:
    installation = fake.installations.get(int(installation_id))
    if fake.installations and installation is None:
        return 404, {}, {"message": "Not Found"}
    asked = (rec.json or {}).get("permissions") or {}
    granted = (installation or {}).get("permissions", {})
    if installation is not None and any(_LEVELS.get(level, 9) > _LEVELS.get(granted.get(name, ""), 0)
                                        for name, level in asked.items()):
        return 422, {}, {"message": "The permissions requested are not granted to this installation."}
    token = "ghs_" + secrets.token_urlsafe(24).replace("-", "_")
    fake.tokens[token] = fake.clock() + fake.token_ttl
    fake.token_installations[token] = int(installation_id)
    fake.token_requests.append({"installation_id": int(installation_id), **(rec.json or {})})
    permissions = (rec.json or {}).get("permissions") or {"issues": "write", "metadata": "read"}
    return 201, {}, {"token": token, "expires_at": _iso(fake.tokens[token]),
                     "permissions": permissions, "repository_selection": "all"}


def list_deliveries(fake: FakeGitHub, rec: Recorded) -> Response:
    per_page = min(int(rec.query.get("per_page", 30)), 100)
    start = int(rec.query.get("cursor") or 0)
    newest_first = sorted(fake.deliveries, key=lambda d: d["id"], reverse=True)
    headers = {}
    if start + per_page < len(newest_first):
        query = urlencode({"per_page": per_page, "cursor": start + per_page})
        headers["Link"] = f'<{fake.base_url}{rec.path}?{query}>; rel="next"'
    return 200, headers, newest_first[start:start + per_page]


def redeliver(fake: FakeGitHub, rec: Recorded, delivery_id: str) -> Response:
    if not any(d["id"] == int(delivery_id) for d in fake.deliveries):
        return 404, {}, {"message": "Not Found"}
    fake.redelivered.append(int(delivery_id))
    return 202, {}, {}


def get_app(fake: FakeGitHub, rec: Recorded) -> Response:
    return (200, {}, fake.app) if fake.app is not None else (404, {}, {"message": "Not Found"})


def list_installations(fake: FakeGitHub, rec: Recorded) -> Response:
    return fake.paginate(rec, [
        {"id": i, "account": fake.user_json(inst["account"], "Organization"),
         "app_id": (fake.app or {}).get("id", 1), "target_type": "Organization",
         "repository_selection": "selected", "permissions": inst["permissions"],
         "events": (fake.app or {}).get("events", []),
         "suspended_at": _iso(fake.clock()) if inst["suspended"] else None}
        for i, inst in sorted(fake.installations.items())])


def installation_repositories(fake: FakeGitHub, rec: Recorded) -> Response:
    kind, _, token = rec.headers.get("authorization", "").partition(" ")
    installation = fake.installations.get(fake.token_installations.get(token, -1))
    if kind.lower() != "token" or installation is None:
        return 401, {}, {"message": "Bad credentials"}
    repos = [{"id": n, "full_name": name, "name": name.split("/")[1],
              "private": fake.repo(name).private, "owner": fake.user_json(name.split("/")[0], "Organization")}
             for n, name in enumerate(installation["repos"], 1)]
    return 200, {}, {"total_count": len(repos), "repositories": repos}


def new_app_page(fake: FakeGitHub, rec: Recorded, org: str | None = None) -> Response:
    """GitHub's "Create GitHub App" page for a posted manifest: the user confirms, and GitHub
    sends the browser to the manifest's ``redirect_url`` with a one-time code and the ``state``."""
    try:
        manifest = json.loads(rec.form.get("manifest", ""))
        redirect = manifest["redirect_url"]
    except (ValueError, KeyError, TypeError):
        return 422, {}, "<p>Invalid GitHub App configuration</p>"
    fake.manifests.append({**manifest, "_org": org})
    code = secrets.token_hex(10)
    fake.manifest_codes[code] = manifest
    state = rec.query.get("state", "")
    target = f"{redirect}?{urlencode({'code': code, 'state': state})}"
    page = (f"<!doctype html><title>Create GitHub App</title><h1>Create GitHub App</h1>"
            f"<p id='app-name'>{html.escape(manifest.get('name', ''))}</p>"
            f"<p id='owner'>{html.escape(org or 'octocat')}</p>"
            f"<a id='create' href='{html.escape(target, quote=True)}'>Create GitHub App for "
            f"{html.escape(org or 'octocat')}</a>")
    return 200, {}, page


def convert_manifest(fake: FakeGitHub, rec: Recorded, code: str) -> Response:
    """Registers the App of the manifest ``code`` was issued for; the code works once."""
    manifest = fake.manifest_codes.pop(code, None)
    if manifest is None:
        return 404, {}, {"message": "Not Found"}
    private, public = app_key_pair()
    app = fake.register_app(app_id=next(fake._ids), slug=re.sub(r"[^a-z0-9-]+", "-", manifest["name"].lower()),
                            permissions=manifest.get("default_permissions"),
                            events=manifest.get("default_events"), public_key=public)
    app["hook_url"] = (manifest.get("hook_attributes") or {}).get("url")
    return 201, {}, {**app, "pem": private, "webhook_secret": secrets.token_hex(20),
                     "client_secret": secrets.token_hex(20)}


_R = r"/repos/([^/]+/[^/]+)"
_ROUTES: list[tuple[str, re.Pattern[str], Callable[..., Response]]] = [
    (m, re.compile(p), f) for m, p, f in [
        ("GET", _R, get_repo),
        ("GET", _R + r"/issues", list_issues),
        ("GET", _R + r"/issues/(\d+)", get_issue),
        ("GET", _R + r"/issues/(\d+)/comments", list_comments),
        ("POST", _R + r"/issues/(\d+)/comments", create_comment),
        ("PATCH", _R + r"/issues/comments/(\d+)", edit_comment),
        ("POST", _R + r"/issues/(\d+)/labels", add_labels),
        ("DELETE", _R + r"/issues/(\d+)/labels/([^/]+)", remove_label),
        ("GET", _R + r"/labels", repo_labels),
        ("GET", _R + r"/contents/(.+)", get_contents),
        ("POST", r"/app/installations/(\d+)/access_tokens", access_token),
        ("GET", r"/app/hook/deliveries", list_deliveries),
        ("GET", r"/app", get_app),
        ("GET", r"/app/installations", list_installations),
        ("GET", r"/installation/repositories", installation_repositories),
        ("POST", r"/settings/apps/new", new_app_page),
        ("POST", r"/organizations/([^/]+)/settings/apps/new", new_app_page),
        ("POST", r"/app-manifests/([^/]+)/conversions", convert_manifest),
        ("POST", r"/app/hook/deliveries/(\d+)/attempts", redeliver),
    ]
]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1  # one write per response (headers + body): no Nagle/delayed-ACK stalls
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        form = "x-www-form-urlencoded" in self.headers.get("Content-Type", "")
        rec = Recorded(self.command, parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()},
                       {k.lower(): v for k, v in self.headers.items()},
                       None if form or not raw else json.loads(raw),
                       form={k: v[-1] for k, v in parse_qs(raw.decode()).items()} if form else {})
        status, headers, body = self.server.fake.handle(rec)  # type: ignore[attr-defined]
        page = isinstance(body, str)  # the web pages of the manifest flow
        payload = b"" if status == 204 else body.encode() if page else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8" if page else "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _serve
