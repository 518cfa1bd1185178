"""Failure behaviour through PyGithub (RELIABILITY 18-28): no blind POST retries, GitHub's wait
rules on the fake clock, token lifetime, JWT claims, and no tokens in logs."""
from __future__ import annotations

import logging

import jwt
import pytest

from support.clock import FakeClock
from support.github import APP_ID, INSTALLATION, api_requests, settings
from support.github_fake import FakeGitHub
from triagebot.github.client import PyGithubPort, app_client, installation_port
from triagebot.github.errors import Forbidden, RateLimited, TooLong, TransientError

SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes "
                        "before you try again."}


def comment_posts(fake: FakeGitHub) -> int:
    return sum(1 for r in fake.requests if r.method == "POST" and r.path.endswith("/comments"))


def test_502_on_create_comment_is_not_retried(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.fail_next("POST", r"/issues/1/comments$", 502)
    with pytest.raises(TransientError):
        port.create_comment("o/r", 1, "hello")
    assert comment_posts(fake) == 1 and fake.comments("o/r", 1) == []
    port.create_comment("o/r", 1, "hello")  # the job-level retry
    assert comment_posts(fake) == 2 and len(fake.comments("o/r", 1)) == 1


def test_get_is_retried_with_backoff_on_5xx(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.fail_next("GET", r"/issues/1$", 502, times=2)
    assert port.get_issue("o/r", 1) is not None
    assert api_requests(fake).count(("GET", "/repos/o/r/issues/1")) == 3
    assert clock.sleeps and all(0 < s <= 8 for s in clock.sleeps)


def test_persistent_5xx_ends_after_three_retries(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.fail_next("GET", r"/issues/1$", 503, times=10)
    with pytest.raises(TransientError):
        port.get_issue("o/r", 1)
    assert api_requests(fake).count(("GET", "/repos/o/r/issues/1")) == 4


def test_secondary_limit_with_retry_after_on_post(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.fail_next("POST", r"/comments$", 403, {"Retry-After": "1"}, SECONDARY)
    with pytest.raises(RateLimited) as err:
        port.create_comment("o/r", 1, "x")
    assert err.value.retry_after == 1.0 and comment_posts(fake) == 1


def test_secondary_limit_on_get_waits_retry_after(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.fail_next("GET", r"/issues/1$", 403, {"Retry-After": "7"}, SECONDARY)
    assert port.get_issue("o/r", 1) is not None
    assert clock.sleeps == [7.0]


def test_long_retry_after_surfaces_instead_of_blocking(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock) -> None:
    fake.fail_next("GET", r"/labels$", 403, {"Retry-After": "3600"}, SECONDARY)
    with pytest.raises(RateLimited) as err:
        port.repo_labels("o/r")
    assert err.value.retry_after == 3600.0 and clock.sleeps == []


def test_secondary_limit_without_headers_waits_a_minute(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.fail_next("GET", r"/labels$", 403, body=SECONDARY)
    with pytest.raises(RateLimited) as err:
        port.repo_labels("o/r")
    assert err.value.retry_after == 60.0


def test_exhausted_quota_waits_until_reset_plus_one(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock) -> None:
    fake.add_issue("o/r", 1, "t")
    reset = {"x-ratelimit-remaining": "0", "x-ratelimit-limit": "5000"}
    fake.fail_next("POST", r"/comments$", 403, {**reset, "x-ratelimit-reset": str(int(clock.now) + 30)},
                   {"message": "API rate limit exceeded for installation ID 77."})
    with pytest.raises(RateLimited) as err:
        port.create_comment("o/r", 1, "x")
    assert err.value.retry_after == 31.0
    fake.fail_next("GET", r"/issues/1$", 403, {**reset, "x-ratelimit-reset": str(int(clock.now) + 10)},
                   {"message": "API rate limit exceeded for installation ID 77."})
    assert port.get_issue("o/r", 1) is not None
    assert clock.sleeps == [11.0]


def test_429_without_retry_after_means_60s(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.fail_next("POST", r"/labels$", 429)
    with pytest.raises(RateLimited) as err:
        port.add_labels("o/r", 1, ["bug"])
    assert err.value.retry_after == 60.0
    fake.fail_next("GET", r"/issues/1$", 429)
    with pytest.raises(RateLimited) as err:  # 60 s exceeds the 20 s a worker may block
        port.get_issue("o/r", 1)
    assert err.value.retry_after == 60.0 and clock.sleeps == []


def test_permission_403_is_forbidden_and_not_retried(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.fail_next("GET", r"/labels$", 403, body={"message": "Resource not accessible by integration"})
    with pytest.raises(Forbidden):
        port.repo_labels("o/r")
    assert api_requests(fake) == [("GET", "/repos/o/r/labels")]


def test_too_long_comment(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 1, "t")
    with pytest.raises(TooLong):
        port.create_comment("o/r", 1, "x" * 70000)


def test_quota_tracker_sees_rate_headers(fake: FakeGitHub, clock: FakeClock, rsa_pair: tuple[str, str]) -> None:
    from triagebot.github.ratelimit import QuotaTracker

    quota = QuotaTracker(clock=clock)
    p = installation_port(settings(fake, rsa_pair), INSTALLATION, clock=clock, sleep=clock.sleep, quota=quota)
    fake.add_issue("o/r", 1, "t")
    fake.rate_headers = {"x-ratelimit-remaining": "400", "x-ratelimit-limit": "5000",
                         "x-ratelimit-reset": str(int(clock.now) + 600)}
    p.get_issue("o/r", 1)
    assert quota.should_pause(INSTALLATION) and quota.resume_in(INSTALLATION) == 600
    p.close()


def test_jwt_claims(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock, rsa_pair: tuple[str, str]) -> None:
    fake.add_issue("o/r", 1, "t")
    port.get_issue("o/r", 1)
    mint = next(r for r in fake.requests if r.path.endswith("/access_tokens"))
    kind, token = mint.headers["authorization"].split(" ")
    assert kind == "Bearer" and jwt.get_unverified_header(token)["alg"] == "RS256"
    claims = jwt.decode(token, rsa_pair[1], algorithms=["RS256"], options={"verify_exp": False, "verify_iat": False})
    now = int(clock.now)
    assert claims["iat"] == now - 60 and now < claims["exp"] <= now + 600
    assert claims["exp"] - claims["iat"] <= 660 and claims["iss"] == APP_ID
    assert mint.path == f"/app/installations/{INSTALLATION}/access_tokens"
    assert mint.json == {"permissions": {"issues": "write", "metadata": "read", "contents": "read"}}


def test_token_refreshed_across_hours_without_401(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock) -> None:
    fake.add_issue("o/r", 1, "t")
    for _ in range(3 * 60 + 30):  # 3.5 h, one read a minute
        assert port.get_issue("o/r", 1) is not None
        clock.now += 60
    assert not [r for r in fake.requests if r.status == 401]
    assert 4 <= len(fake.token_requests) <= 5


def test_token_19s_from_expiry_is_refreshed_before_use(fake: FakeGitHub, port: PyGithubPort, clock: FakeClock) -> None:
    fake.add_issue("o/r", 1, "t")
    port.get_issue("o/r", 1)
    clock.now += fake.token_ttl - 19
    port.get_issue("o/r", 1)
    clock.now += 19  # the first token is now expired on GitHub's side
    port.get_issue("o/r", 1)
    assert len(fake.token_requests) == 2 and not [r for r in fake.requests if r.status == 401]


def test_rejected_token_is_dropped_and_reminted(fake: FakeGitHub, port: PyGithubPort) -> None:
    fake.add_issue("o/r", 1, "t")
    fake.fail_next("GET", r"/issues/1$", 401, body={"message": "Bad credentials"})
    with pytest.raises(TransientError):
        port.get_issue("o/r", 1)
    assert port.get_issue("o/r", 1) is not None and len(fake.token_requests) == 2


def test_tokens_never_logged(fake: FakeGitHub, port: PyGithubPort, caplog: pytest.LogCaptureFixture,
                             rsa_pair: tuple[str, str]) -> None:
    fake.add_issue("o/r", 1, "t")
    with caplog.at_level(logging.DEBUG), caplog.at_level(logging.DEBUG, logger="github"):
        port.get_issue("o/r", 1)
        port.create_comment("o/r", 1, "hi")
        logging.getLogger("triagebot.test").info("leak? %s", next(iter(fake.tokens)))
    text = caplog.text
    assert "github.Requester" in text  # PyGithub did log the exchange, including the token body
    assert fake.tokens and not any(token in text for token in fake.tokens)
    assert "ghs_" not in text and "BEGIN PRIVATE KEY" not in text and "[REDACTED]" in text


def test_reconcile_lists_failed_and_redelivers(fake: FakeGitHub, clock: FakeClock, rsa_pair: tuple[str, str]) -> None:
    day = 86400
    fake.add_delivery(1, "OK", guid="a", delivered_at=clock.now - 100)
    fake.add_delivery(2, "Invalid HTTP Response: 502", 502, guid="b", delivered_at=clock.now - 200)
    fake.add_delivery(3, "Invalid HTTP Response: 500", 500, guid="c", delivered_at=clock.now - 300)
    fake.add_delivery(4, "OK", guid="c", delivered_at=clock.now - 50, redelivery=True)
    fake.add_delivery(5, "timed out", 0, guid="d", delivered_at=clock.now - 4 * day)
    for i in range(6, 140):
        fake.add_delivery(i, "OK", delivered_at=clock.now - 10)
    app = app_client(settings(fake, rsa_pair), clock=clock, sleep=clock.sleep)
    failed = app.list_failed_deliveries()
    assert [(d.id, d.guid) for d in failed] == [(2, "b")]
    app.redeliver(2)
    assert fake.redelivered == [2]
    assert all(r.headers["authorization"].startswith("Bearer ") for r in fake.requests)
    assert len([r for r in fake.requests if r.method == "GET"]) == 2  # Link pagination
