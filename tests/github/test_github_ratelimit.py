"""Write pacing (RELIABILITY 24), GitHub's wait rules (26) and quota tracking (27), on a fake clock."""
from __future__ import annotations

import pytest

from support.clock import FakeClock
from support.github import INSTALLATION, settings
from support.github_fake import FakeGitHub
from triagebot.github.client import installation_port
from triagebot.github.ratelimit import (
    MemoryLedger,
    QuotaTracker,
    WriteBudget,
    WritePacer,
    next_slot,
    rate_limit_wait,
)
from triagebot.text.secrets import redact


def test_min_gap_between_writes() -> None:
    assert next_slot([100.0], 100.2) == 101.0
    assert next_slot([100.0], 105.0) == 105.0
    assert next_slot([], 5.0) == 5.0


def test_per_minute_and_per_hour_caps() -> None:
    minute = [float(i) for i in range(60)]  # 60 writes in the last minute, 1 s apart
    assert next_slot(minute, 30.0) == 60.0  # 60 in the window: wait for the first to leave
    assert next_slot(minute, 59.5) == 60.0  # first of them leaves the window at t=60
    hour = [i * 7.0 for i in range(450)]  # 450 writes spread over 3143 s
    slot = next_slot(hour, 3150.0)
    assert slot == 3600.0  # waits until the first falls out of the hour


def test_pacer_keeps_every_window_within_budget(clock: FakeClock) -> None:
    pacer = WritePacer(clock=clock, sleep=clock.sleep)
    for _ in range(500):
        pacer.acquire(1)
    times = pacer.ledger.recent(1, 0.0)
    assert all(b - a >= 1.0 for a, b in zip(times, times[1:]))
    assert max(sum(1 for t in times if s <= t < s + 60) for s in times) <= 60
    assert max(sum(1 for t in times if s <= t < s + 3600) for s in times) <= 450
    assert times[-1] - times[0] >= 3600  # the 451st write had to wait for the hour


def test_pacer_is_per_installation_and_ledger_is_pluggable(clock: FakeClock) -> None:
    ledger = MemoryLedger()
    a = WritePacer(ledger, WriteBudget(), clock=clock, sleep=clock.sleep)
    b = WritePacer(ledger, WriteBudget(), clock=clock, sleep=clock.sleep)  # a second process
    assert a.acquire(1) == 0 and a.acquire(2) == 0
    assert b.delay(1) == 1.0 and b.acquire(1) == 1.0


def test_port_writes_go_through_the_pacer(fake: FakeGitHub, clock: FakeClock, rsa_pair: tuple[str, str]) -> None:
    pacer = WritePacer(clock=clock, sleep=clock.sleep)
    port = installation_port(settings(fake, rsa_pair), INSTALLATION, clock=clock, sleep=clock.sleep,
                             pacer=pacer)
    fake.add_issue("o/r", 1, "t")
    port.create_comment("o/r", 1, "a")
    port.add_labels("o/r", 1, ["bug"])
    port.get_issue("o/r", 1)
    port.close()
    assert len(pacer.ledger.recent(INSTALLATION, 0.0)) == 2 and clock.sleeps == [1.0]


@pytest.mark.parametrize(("status", "headers", "message", "expected"), [
    (403, {"Retry-After": "5"}, "You have exceeded a secondary rate limit", 5.0),
    (429, {"retry-after": "2"}, "", 2.0),
    (429, {}, "", 60.0),
    (403, {}, "You have exceeded a secondary rate limit.", 60.0),
    (403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1030"}, "API rate limit exceeded", 31.0),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "900"}, "", 1.0),
    (403, {}, "Resource not accessible by integration", None),
    (404, {"Retry-After": "5"}, "", None),
    (502, {}, "", None),
])
def test_rate_limit_wait(status: int, headers: dict[str, str], message: str, expected: float | None) -> None:
    assert rate_limit_wait(status, headers, message, now=1000.0) == expected


def test_quota_pause_below_ten_percent(clock: FakeClock) -> None:
    quota = QuotaTracker(clock=clock)
    assert not quota.should_pause(1)
    quota.observe(1, 600, 5000, clock.now + 100)
    assert not quota.should_pause(1)
    quota.observe(1, 499, 5000, clock.now + 100)
    assert quota.should_pause(1) and quota.resume_in(1) == 100
    clock.now += 100
    assert not quota.should_pause(1)  # the reset has passed
    quota.observe(1, -1, -1, 0)  # PyGithub's "unknown" is ignored
    assert quota.resume_in(2) == 0


def test_redact_tokens_of_any_length() -> None:
    text = ("ghs_16C7e42F292c6912E7710c838347Ae178B4a and ghs_123_eyJhbGciOi.x-y ghp_abc "
            "github_pat_11AB_cd Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJpYXQiOjF9.sig_value")
    clean = redact(text)
    assert "ghs_" not in clean and "ghp_" not in clean and "github_pat_" not in clean
    assert "eyJ" not in clean and clean.count("[REDACTED]") == 5


@pytest.mark.parametrize(("status", "data", "kind"), [
    (404, {"message": "Not Found"}, "NotFound"),
    (410, {"message": "This issue was deleted"}, "NotFound"),
    (422, {"message": "Validation Failed",
           "errors": [{"message": "body is too long (maximum is 65536 characters)"}]}, "TooLong"),
    (422, {"message": "Validation Failed"}, "GitHubError"),
    (502, None, "TransientError"),
    (401, {"message": "Bad credentials"}, "TransientError"),
    (403, {"message": "Resource not accessible by integration"}, "Forbidden"),
    (403, {"message": "You have exceeded a secondary rate limit"}, "RateLimited"),
])
def test_error_for(status: int, data: object, kind: str) -> None:
    from triagebot.github.restjson import error_for

    assert type(error_for(status, {}, data, now=0.0)).__name__ == kind


def test_issue_state_from_webhook_payload_shape() -> None:
    from triagebot.github.restjson import issue_state

    payload_issue = {"number": 5, "title": "OOM", "body": None, "state": "closed",
                     "state_reason": "not_planned", "labels": [{"name": "bug"}],
                     "user": {"login": "dependabot[bot]", "type": "Bot"},
                     "html_url": "https://github.com/o/r/issues/5", "closed_at": "2024-01-02T03:04:05Z"}
    issue = issue_state("o/r", payload_issue)
    assert issue.body == "" and issue.author_type == "Bot" and issue.closed_at.year == 2024
