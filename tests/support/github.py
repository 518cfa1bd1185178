"""Fixtures for tests that talk to GitHub over HTTP: the App's RSA key pair, the fake clock, the
fake GitHub server (``support.github_fake``) and a PyGithub port to it. The root conftest registers
this module, so test modules take these fixtures by name without importing them."""
from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from support.clock import FakeClock
from support.github_fake import FakeGitHub, app_key_pair
from triagebot.github.client import PyGithubPort, installation_port

APP_ID = "424242"
INSTALLATION = 77


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
