"""The only module that imports PyGithub: GitHub App auth and the ``GitHubPort`` implementation.

Choices that differ from PyGithub's defaults, and why (RELIABILITY 18-29):
- writes (POST/PATCH) are never retried by the HTTP layer: a 502 after GitHub stored a comment
  would otherwise post it twice; the job-level retry plus the comment marker handles it instead;
- rate-limit waits longer than ``max_rate_limit_wait`` surface as ``RateLimited`` so the queue
  reschedules the job rather than a worker sleeping past its timeout;
- installation tokens are refreshed 5 minutes before expiry (PyGithub: 20 s), tolerating clock
  skew between us and GitHub, and on an injectable clock so expiry can be tested;
- objects are built lazily, so reading an issue is one GET and writing a comment one POST.

PyGithub (with requests and urllib3 under it) is a heavy package, a third of a second to import,
which ``triagebot --help`` and every offline command would pay at start-up: it is imported by
``_pygithub()`` on the first call that talks to GitHub, and our subclasses of its retry and auth
classes are built there too (they cannot exist before their bases)."""
from __future__ import annotations

import base64
import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from triagebot.github import app_manifest, deliveries, restjson
from triagebot.github.errors import GitHubError, NotFound, RateLimited, TransientError, WritesPaced
from triagebot.github.port import CommentState, IssueState, RepoInfo
from triagebot.github.ratelimit import QuotaTracker, WritePacer, rate_limit_wait
from triagebot.github.restjson import setting
from triagebot.text import secrets as redact

if TYPE_CHECKING:  # annotations only; ``_pygithub()`` imports PyGithub when it is first needed
    import requests
    from github import Auth, Github, GithubException, GithubIntegration
    from github.GithubException import RateLimitExceededExceedsMaxWait
    from urllib3 import Retry

DEFAULT_API = "https://api.github.com"
TOKEN_PERMISSIONS = app_manifest.PERMISSIONS  # what the installation token asks for
TOKEN_REFRESH_MARGIN = timedelta(minutes=5)
MAX_RATE_LIMIT_WAIT = 20.0  # seconds a worker may block on a rate limit; below the job timeout
MAX_PACED_WAIT = 10.0  # seconds a write may wait for its pacer slot; far below the 60 s job lease
MAX_IN_FLIGHT = 10  # requests at once per installation and process (GitHub allows 100)
REPO_CACHE_S = 300.0  # a repo's config file and label list are re-read at most every 5 minutes
Clock = Callable[[], float]


@dataclass(frozen=True)
class _PyGithub:
    """PyGithub's names this module uses, and our subclasses of its classes (``_pygithub()``)."""

    Auth: Any  # the module github.Auth
    Github: type[Github]
    GithubIntegration: type[GithubIntegration]
    GithubException: type[GithubException]
    RateLimitExceededExceedsMaxWait: type[RateLimitExceededExceedsMaxWait]
    RequestException: type[requests.RequestException]  # a connection failure under PyGithub
    Retry: Any  # ours: GithubRetry for idempotent methods only, bounded waits, injectable sleep
    AppAuth: Any  # ours: the App's JWT on an injectable clock
    InstallationAuth: Any  # ours: one cached installation token, refreshed early


class _Token(Protocol):
    """Our installation auth as the port sees it: a token that can be dropped (401) and closed."""

    def invalidate(self) -> None: ...

    def close(self) -> None: ...


@functools.cache
def _pygithub() -> _PyGithub:
    """Import PyGithub (heavy, see the module docstring) and build our subclasses, once."""
    import requests
    from github import Auth, Github, GithubException, GithubIntegration, GithubRetry
    from github.GithubException import RateLimitExceededExceedsMaxWait
    from github.Requester import Requester
    from urllib3 import Retry
    from urllib3.exceptions import MaxRetryError

    class _Retry(GithubRetry):
        """GithubRetry for idempotent methods only, with every wait bounded and on an injectable sleep."""

        def __init__(self, sleep: Callable[[float], None] = time.sleep, clock: Clock = time.time,
                     **kwargs: Any) -> None:
            self._sleep_fn, self._clock = sleep, clock
            self._forced_wait: float | None = None
            super().__init__(**kwargs)

        def new(self, **kw: Any) -> _Retry:
            kw.update(sleep=self._sleep_fn, clock=self._clock)
            return super().new(**kw)

        def increment(self, method: str | None = None, url: str | None = None,  # type: ignore[override]
                      response: Any = None, error: Exception | None = None, _pool: Any = None,
                      _stacktrace: Any = None) -> Retry:
            if response is None or response.status not in (403, 429):
                return super().increment(method, url, response, error, _pool, _stacktrace)
            status, headers = response.status, dict(response.headers)
            body = (restjson.parse_body(self.get_content(response, url or ""))
                    if restjson.needs_body(status, headers) else None)
            wait = rate_limit_wait(status, headers, restjson.message_of(body), self._clock())
            exceeded = RateLimitExceededExceedsMaxWait(status, body, headers, wait=wait)
            try:
                if wait is None:  # a permission 403: retrying cannot help
                    raise Requester.createException(status, headers, body)  # type: ignore[arg-type]
                if self.max_rate_limit_wait is not None and wait > self.max_rate_limit_wait:
                    raise exceeded
                retry = Retry.increment(self, method, url, response, error, _pool, _stacktrace)
            except (MaxRetryError, GithubException) as exc:
                _release(response)  # urllib3 only returns the connection when we do not raise
                raise (exceeded if isinstance(exc, MaxRetryError) else exc) from None
            retry._forced_wait = wait
            return retry

        def sleep(self, response: Any = None) -> None:
            wait = self._forced_wait if self._forced_wait is not None else self.get_backoff_time()
            if wait > 0:
                self._sleep_fn(wait)

    class _AppAuth(Auth.AppAuth):
        """App JWT (RS256, iat = now-60, exp = now+300) computed on the injected clock."""

        def __init__(self, app_id: int | str, private_key: str, clock: Clock = time.time) -> None:
            super().__init__(app_id, private_key)
            self._clock = clock

        def create_jwt(self, expiration: int | None = None) -> str:
            now = int(self._clock())
            payload = {"iat": now + self._jwt_issued_at,
                       "exp": now + (expiration or self._jwt_expiry), "iss": self._app_id}
            signed = self._sign_func(payload)  # type: ignore[misc]
            return signed.decode() if isinstance(signed, bytes) else signed

    class _InstallationAuth(Auth.Auth):
        """Caches one installation token and mints a new one TOKEN_REFRESH_MARGIN before expiry."""

        def __init__(self, integration: GithubIntegration, installation_id: int,
                     permissions: dict[str, str] | None, clock: Clock = time.time) -> None:
            self._integration, self._installation_id = integration, installation_id
            self._permissions, self._clock = permissions, clock
            self._cached: Any = None
            self._lock = threading.Lock()

        token_type = "token"

        @property
        def token(self) -> str:
            with self._lock:
                if self._cached is None or self._stale():
                    self._cached = self._integration.get_access_token(
                        self._installation_id, permissions=self._permissions)
                return self._cached.token

        def _stale(self) -> bool:
            now = datetime.fromtimestamp(self._clock(), timezone.utc)
            return self._cached.expires_at - TOKEN_REFRESH_MARGIN <= now

        def invalidate(self) -> None:
            self._cached = None

        def close(self) -> None:
            self._integration.close()

        _masked_token = "token (installation token removed)"

    return _PyGithub(Auth=Auth, Github=Github, GithubIntegration=GithubIntegration,
                     GithubException=GithubException,
                     RateLimitExceededExceedsMaxWait=RateLimitExceededExceedsMaxWait,
                     RequestException=requests.RequestException, Retry=_Retry, AppAuth=_AppAuth,
                     InstallationAuth=_InstallationAuth)


def _release(response: Any) -> None:
    with contextlib.suppress(Exception):
        response.drain_conn(), response.release_conn()


def make_retry(sleep: Callable[[float], None] = time.sleep, clock: Clock = time.time,
               max_rate_limit_wait: float = MAX_RATE_LIMIT_WAIT) -> Retry:
    """3 retries with exponential backoff for GET/DELETE on 5xx/429/rate-limit 403; never POST/PATCH."""
    retry: Retry = _pygithub().Retry(sleep=sleep, clock=clock, total=3, backoff_factor=0.5, backoff_max=8,
                  status_forcelist=[429, 500, 502, 503, 504], raise_on_status=False,
                  allowed_methods=frozenset({"GET", "HEAD", "DELETE", "PUT", "OPTIONS"}),
                  respect_retry_after_header=True, max_rate_limit_wait=max_rate_limit_wait)
    return retry


def translate(exc: GithubException, now: float) -> GitHubError:
    """PyGithub exception -> triagebot.github.errors, using GitHub's own wait rules for rate limits."""
    if isinstance(exc, _pygithub().RateLimitExceededExceedsMaxWait) and exc.wait is not None:
        return RateLimited(f"GitHub rate limit ({exc.status})", retry_after=exc.wait)
    return restjson.error_for(exc.status, exc.headers or {}, exc.data, now)


@contextlib.contextmanager
def _mapped(clock: Clock, auth: _Token | None = None) -> Iterator[None]:
    """Turn PyGithub/requests failures into triagebot.github.errors; a rejected token is dropped."""
    pygithub = _pygithub()
    try:
        yield
    except pygithub.GithubException as exc:
        if exc.status == 401 and auth is not None:
            auth.invalidate()
        raise translate(exc, clock()) from None
    except pygithub.RequestException as exc:
        raise TransientError(f"GitHub unreachable: {type(exc).__name__}") from None


def _app_auth(settings: Any, clock: Clock) -> tuple[str, Auth.AppAuth]:
    """(API base URL, App JWT auth) from settings with app_id, private_key, github_api_url."""
    redact.install()
    base_url = setting(settings, "github_api_url", "github_base_url", default=DEFAULT_API)
    return base_url, _pygithub().AppAuth(setting(settings, "app_id", "github_app_id"),
                                         setting(settings, "private_key", "github_private_key"), clock)


def _client_kwargs(base_url: str, retry: Retry, per_page: int = 100) -> dict[str, Any]:
    # PyGithub's own pacing (seconds_between_*) is per process and sleeps on the real clock;
    # WritePacer replaces it so the budget can be shared and tested (RELIABILITY 24, 29).
    return dict(base_url=base_url.rstrip("/"), retry=retry, per_page=per_page, timeout=15,
                seconds_between_requests=None, seconds_between_writes=None)


class PyGithubPort:
    """``GitHubPort`` for one installation. Every call maps PyGithub errors to triagebot.github.errors;
    writes wait for the installation's WritePacer slot first.

    One port serves all worker threads of a process for its installation, so it also caps what is
    in flight (RELIABILITY 25): one write at a time (held across the pacer's wait and the request
    itself, which the pacer alone does not cover) and MAX_IN_FLIGHT requests in total.
    A repository's config file and label list change rarely, so they are cached for
    REPO_CACHE_S: a triaged issue then costs 4 calls, within the budget of RELIABILITY 27."""

    def __init__(self, gh: Github, installation_id: int, *, pacer: WritePacer | None = None,
                 quota: QuotaTracker | None = None, clock: Clock = time.time,
                 auth: _Token | None = None, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self._gh, self.installation_id = gh, installation_id
        self._pacer, self._quota, self._clock, self._auth = pacer, quota, clock, auth
        self._cache: dict[tuple[str, ...], tuple[float, Any]] = {}
        self._writing = threading.Lock()
        self._in_flight = threading.BoundedSemaphore(max_in_flight)

    @contextlib.contextmanager
    def _call(self, write: bool = False) -> Iterator[None]:
        with self._writing if write else contextlib.nullcontext():
            if write and self._pacer is not None:
                self._check_pace(self._pacer)
                self._pacer.acquire(self.installation_id)
            with self._in_flight:
                try:
                    with _mapped(self._clock, self._auth):
                        yield
                finally:
                    self._observe_quota()

    def _check_pace(self, pacer: WritePacer) -> None:
        """Refuse (without booking a slot) a write whose slot is more than MAX_PACED_WAIT away:
        sleeping for it could outlast the job's lease, and the queue can wait for it instead."""
        delay = pacer.delay(self.installation_id)
        if delay > MAX_PACED_WAIT:
            raise WritesPaced(f"write budget of installation {self.installation_id} is spent "
                              f"for {delay:.0f}s", retry_after=delay)

    def _fresh(self, key: tuple[str, ...], fetch: Callable[[], Any]) -> Any:
        """``fetch()``'s answer, reused for REPO_CACHE_S on the port's clock (errors are not kept)."""
        now, hit = self._clock(), self._cache.get(key)
        if hit is None or now - hit[0] >= REPO_CACHE_S:
            hit = (now, fetch())
            self._cache[key] = hit
        return hit[1]

    def _observe_quota(self) -> None:
        if self._quota is not None:
            req = self._gh.requester
            self._quota.observe(self.installation_id, *req.rate_limiting, req.rate_limiting_resettime or 0)

    def close(self) -> None:
        self._gh.close()
        if self._auth is not None:
            self._auth.close()

    def _issue(self, repo: str, number: int) -> Any:
        return self._gh.get_repo(repo).get_issue(number)  # lazy: no request yet

    def get_issue(self, repo: str, number: int) -> IssueState | None:
        try:
            with self._call():
                return restjson.issue_state(repo, self._issue(repo, number).raw_data)
        except NotFound:
            return None

    def list_comments(self, repo: str, number: int) -> list[CommentState]:
        with self._call():
            return [restjson.comment_state(c._rawData) for c in self._issue(repo, number).get_comments()]

    def create_comment(self, repo: str, number: int, body: str) -> int:
        with self._call(write=True):
            return self._issue(repo, number).create_comment(body).id

    def edit_comment(self, repo: str, comment_id: int, body: str) -> None:
        with self._call(write=True):
            self._issue(repo, 0).get_comment(comment_id).edit(body)

    def add_labels(self, repo: str, number: int, labels: list[str]) -> None:
        """GitHub creates unknown labels on this endpoint, so names are checked against the repo's."""
        existing = set(self.repo_labels(repo))
        wanted = [name for name in dict.fromkeys(labels) if name in existing]
        if wanted:  # PyGithub's add_to_labels posts a bare array; the OpenAPI contract wants this
            with self._call(write=True):
                self._gh.requester.requestJsonAndCheck(
                    "POST", f"/repos/{repo}/issues/{number}/labels", input={"labels": wanted})

    def remove_label(self, repo: str, number: int, label: str) -> None:
        """Idempotent: a label already gone is success (404)."""
        path = f"/repos/{repo}/issues/{number}/labels/{quote(label, safe='')}"
        with contextlib.suppress(NotFound), self._call(write=True):
            self._gh.requester.requestJsonAndCheck("DELETE", path)

    def repo_labels(self, repo: str) -> list[str]:
        return list(self._fresh(("labels", repo), lambda: self._fetch_labels(repo)))

    def _fetch_labels(self, repo: str) -> list[str]:
        with self._call():
            return [lb.name for lb in self._gh.get_repo(repo).get_labels()]

    def read_file(self, repo: str, path: str) -> str | None:
        return self._fresh(("file", repo, path), lambda: self._fetch_file(repo, path))

    def _fetch_file(self, repo: str, path: str) -> str | None:
        try:
            with self._call():
                content = self._gh.get_repo(repo).get_contents(path)
        except NotFound:
            return None
        if isinstance(content, list) or content.encoding != "base64":
            return None
        return base64.b64decode(content._rawData["content"]).decode("utf-8", errors="replace")

    def repository(self, repo: str) -> RepoInfo | None:
        """One GET /repos/{repo} (not cached: visibility decides who sees its issues)."""
        try:
            with self._call():
                raw = self._gh.get_repo(repo, lazy=False).raw_data
        except NotFound:
            return None
        return RepoInfo(full_name=raw.get("full_name") or repo, private=bool(raw.get("private")),
                        owner=(raw.get("owner") or {}).get("login", ""))

    def iter_closed_issues(self, repo: str, since: datetime | None = None,
                           start_page: int = 0) -> Iterator[tuple[int, IssueState]]:
        """Yields (page, issue); resume an interrupted sync with start_page = the last page seen."""
        filters: dict[str, Any] = {"state": "closed", "sort": "created", "direction": "asc"}
        if since is not None:
            filters["since"] = since
        pages = self._gh.get_repo(repo).get_issues(**filters)
        page = start_page
        while True:
            with self._call():
                items = pages.get_page(page)
            for item in items:  # _rawData: .raw_data would re-GET each lazily listed element
                if "pull_request" not in item._rawData:
                    yield page, restjson.issue_state(repo, item._rawData)
            if len(items) < self._gh.per_page:
                return
            page += 1


def installation_port(settings: Any, installation_id: int, *, clock: Clock = time.time,
                      sleep: Callable[[float], None] = time.sleep, pacer: WritePacer | None = None,
                      quota: QuotaTracker | None = None,
                      permissions: dict[str, str] | None = TOKEN_PERMISSIONS) -> PyGithubPort:
    """A port acting as the App installation ``installation_id`` (from the payload's
    ``installation.id``). ``settings`` needs app_id, private_key, github_api_url."""
    base_url, app_auth = _app_auth(settings, clock)
    kwargs = _client_kwargs(base_url, make_retry(sleep, clock))
    pygithub = _pygithub()
    auth = pygithub.InstallationAuth(pygithub.GithubIntegration(auth=app_auth, **kwargs),
                                     installation_id, permissions, clock)
    gh = pygithub.Github(auth=auth, lazy=True, **kwargs)
    return PyGithubPort(gh, installation_id, pacer=pacer, quota=quota, clock=clock, auth=auth)


def token_port(token: str, base_url: str = DEFAULT_API, *, clock: Clock = time.time,
               sleep: Callable[[float], None] = time.sleep, **kw: Any) -> PyGithubPort:
    """A port on a fixed token (a PAT for the sync command, or tests)."""
    redact.install()
    pygithub = _pygithub()
    gh = pygithub.Github(auth=pygithub.Auth.Token(token), lazy=True,
                         **_client_kwargs(base_url, make_retry(sleep, clock)))
    return PyGithubPort(gh, 0, clock=clock, **kw)


def port_for_repo(settings: Any, repo: str) -> PyGithubPort:
    """The ``index sync`` port: a token (``TRIAGEBOT_GITHUB_TOKEN``) when one is configured, else
    the App's own installation on ``repo`` (found through ``GET /repos/{repo}/installation``)."""
    token = setting(settings, "github_token", default="")
    if token:
        return token_port(token, settings.github_api_url)
    base_url, app_auth = _app_auth(settings, time.time)
    integration = _pygithub().GithubIntegration(auth=app_auth, **_client_kwargs(base_url, make_retry()))
    owner, _, name = repo.partition("/")
    with _mapped(time.time):
        installation = integration.get_repo_installation(owner, name)
    return installation_port(settings, installation.id)


def app_client(settings: Any, *, clock: Clock = time.time,
               sleep: Callable[[float], None] = time.sleep) -> deliveries.AppClient:
    """Client acting as the App itself (JWT) for ``triagebot reconcile``. PyGithub has no API for
    /app/hook/deliveries, so it uses PyGithub's requester (same auth, retry and error mapping)."""
    base_url, app_auth = _app_auth(settings, clock)
    requester = _pygithub().Github(auth=app_auth, **_client_kwargs(base_url, make_retry(sleep, clock))).requester

    def request(verb: str, url: str, params: dict[str, Any] | None = None) -> tuple[dict[str, Any], Any]:
        with _mapped(clock):
            return requester.requestJsonAndCheck(verb, url, parameters=params)

    return deliveries.AppClient(request, clock)


@dataclass(frozen=True)
class Answer:
    """One answer of GitHub as ``triagebot doctor`` reads it: the status (0 when GitHub could not
    be reached at all), the JSON, and GitHub's message, so each check can name what to fix."""

    status: int
    data: Any
    message: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def _answer(call: Callable[[], Any]) -> Answer:
    pygithub = _pygithub()
    try:
        _headers, data = call()
        return Answer(200, data)
    except pygithub.GithubException as exc:
        return Answer(exc.status, exc.data, restjson.message_of(exc.data))
    except pygithub.RequestException as exc:
        return Answer(0, None, f"GitHub unreachable: {type(exc).__name__}")


class AppProbe:
    """Read-only calls as the App (JWT) and as one of its installations, for ``triagebot doctor``
    and the start-up checks of ``serve``: GET /app, GET /app/installations and, with an
    installation token, GET /installation/repositories. Nothing is retried for long: the doctor
    reports an outage rather than waiting it out."""

    def __init__(self, settings: Any, clock: Clock = time.time) -> None:
        self._settings, self._clock = settings, clock
        base_url, app_auth = _app_auth(settings, clock)
        self._kwargs = _client_kwargs(base_url, make_retry(time.sleep, clock, max_rate_limit_wait=0))
        self._kwargs["timeout"] = 10
        self._app_auth = app_auth
        self._requester = _pygithub().Github(auth=app_auth, **self._kwargs).requester

    def get(self, url: str) -> Answer:
        return _answer(lambda: self._requester.requestJsonAndCheck("GET", url))

    def installation_get(self, installation_id: int, url: str) -> Answer:
        """GET ``url`` with a token of installation ``installation_id`` (the token is minted
        with the permissions the bot asks for at work, so a missing grant shows up here)."""
        pygithub = _pygithub()
        integration = pygithub.GithubIntegration(auth=self._app_auth, **self._kwargs)
        minted = _answer(lambda: ({}, integration.get_access_token(
            installation_id, permissions=TOKEN_PERMISSIONS).token))
        if not minted.ok:
            return minted
        gh = pygithub.Github(auth=pygithub.Auth.Token(minted.data), **self._kwargs)
        return _answer(lambda: gh.requester.requestJsonAndCheck("GET", url, parameters={"per_page": 100}))


def convert_manifest(api_url: str, code: str) -> Answer:
    """Exchange the code GitHub gave the App-manifest flow's redirect for the new App's id, slug,
    webhook secret and private key (``POST /app-manifests/{code}/conversions``; no credentials:
    the one-hour, single-use code is the credential). Never retried: a second POST of a used
    code fails."""
    redact.install()
    pygithub = _pygithub()
    kwargs = _client_kwargs(api_url, make_retry())
    requester = pygithub.Github(**kwargs).requester
    return _answer(lambda: requester.requestJsonAndCheck("POST", f"/app-manifests/{quote(code, safe='')}/conversions"))
