"""Shared fixtures for the test_github_* modules: fake clock, RSA key, fake GitHub, ports."""
from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from support.github_fake import FakeGitHub, app_key_pair
from triagebot.github.client import PyGithubPort, installation_port

START = 1_800_000_000.0
APP_ID = "424242"
INSTALLATION = 77


class FakeClock:
    """Time that only moves when a test (or a sleep) moves it."""

    def __init__(self, now: float = START) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture(scope="session")
def rsa_pair() -> tuple[str, str]:
    return app_key_pair()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fake(clock: FakeClock, rsa_pair: tuple[str, str]) -> Iterator[FakeGitHub]:
    server = FakeGitHub(clock=clock, app_public_key=rsa_pair[1])
    server.start()
    server.add_label("o/r", "bug", "question", "stage/S1", "area: nccl")
    yield server
    server.stop()


def settings(fake: FakeGitHub, rsa_pair: tuple[str, str]) -> SimpleNamespace:
    return SimpleNamespace(app_id=APP_ID, private_key=rsa_pair[0], github_api_url=fake.base_url)


@pytest.fixture
def port(fake: FakeGitHub, clock: FakeClock, rsa_pair: tuple[str, str]) -> Iterator[PyGithubPort]:
    p = installation_port(settings(fake, rsa_pair), INSTALLATION, clock=clock, sleep=clock.sleep)
    yield p
    p.close()


def api_requests(fake: FakeGitHub) -> list[tuple[str, str]]:
    """Requests other than minting tokens, as (method, path)."""
    return [(r.method, r.path) for r in fake.requests if not r.path.startswith("/app/")]
