"""Issue #13: the receiver needs no model, so ``triagebot serve`` answers webhooks while its
engine is still loading (the port used to stay closed for the 1-31 s the model took at every
restart, and GitHub does not retry a refused delivery). ``wiring.serve`` itself runs here, on a
real port, with the engine load held on an Event; GitHub is the in-memory fake port."""
from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.service import SECRET, FakeEngine, RecordingPort, encode, issue_payload, post
from triagebot.service import wiring
from triagebot.settings import Settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _health(address: str) -> dict | None:
    try:
        conn = http.client.HTTPConnection(address, timeout=2)
        conn.request("GET", "/healthz")
        return json.loads(conn.getresponse().read())
    except OSError:
        return None


class Served:
    """One ``serve`` process lifetime: a thread running ``wiring.serve``, stopped by its Event."""

    def __init__(self, settings: Settings, gh: RecordingPort, port: int) -> None:
        self.stop, self.address, self.error = threading.Event(), f"127.0.0.1:{port}", None
        self.thread = threading.Thread(target=self._run, args=(settings, gh, port), daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while _health(self.address) is None:
            assert time.monotonic() < deadline and self.thread.is_alive(), "no listener"
            time.sleep(0.02)

    def _run(self, settings: Settings, gh: RecordingPort, port: int) -> None:
        try:
            wiring.serve(settings, "127.0.0.1", port, workers=1, stop=self.stop,
                         port_for=lambda _i: gh, author_limit=100)
        except Exception as exc:  # noqa: BLE001 - the test reads it
            self.error = exc

    def close(self) -> None:
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive()


@pytest.fixture
def slow_engine(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """``load_engine`` blocks until the test sets the returned Event (a slow model load)."""
    release = threading.Event()

    def load(_settings: Any) -> FakeEngine:
        release.wait(60)
        return FakeEngine()

    monkeypatch.setattr(wiring, "load_engine", load)
    root = logging.getLogger("triagebot")
    saved = (root.handlers[:], root.propagate, root.level)
    yield release
    release.set()
    root.handlers[:], root.propagate = saved[0], saved[1]  # serve() set up production logging
    root.setLevel(saved[2])


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(webhook_secret=SECRET, db=str(tmp_path / "r.sqlite3"), reconcile_interval=0,
                    data_dir=tmp_path / "data", stop_grace=1)


def test_deliveries_are_accepted_while_the_engine_loads(settings: Settings,
                                                        slow_engine: threading.Event) -> None:
    gh = RecordingPort()
    gh.add_issue("org/repo", 7)
    served = Served(settings, gh, _free_port())
    try:
        assert _health(served.address) == {"db": True, "queue_depth": 0, "dead_letters": 0,
                                           "index_loaded": False}
        assert post(served.address, encode(issue_payload("opened")))[0] == 202
        time.sleep(0.5)
        assert gh.bot_comments("org/repo", 7) == []  # no worker runs without the engine
        slow_engine.set()
        deadline = time.monotonic() + 20
        while not gh.bot_comments("org/repo", 7) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(gh.bot_comments("org/repo", 7)) == 1
        assert (_health(served.address) or {}).get("index_loaded") is True
    finally:
        served.close()
    assert served.error is None


def test_a_restart_accepts_every_delivery_sent_while_the_new_engine_loads(
        settings: Settings, slow_engine: threading.Event) -> None:
    """Stop one ``serve`` and start the next on the same port: deliveries sent from the moment
    the new listener is up (its engine still loading) are all accepted, then all triaged."""
    gh = RecordingPort()
    for number in range(1, 21):
        gh.add_issue("org/repo", number)
    port = _free_port()
    slow_engine.set()
    first = Served(settings, gh, port)
    assert post(first.address, encode(issue_payload("opened", number=1)))[0] == 202
    first.close()
    slow_engine.clear()
    second = Served(settings, gh, port)
    try:
        answers = [post(second.address, encode(issue_payload("opened", number=n)))[0]
                   for n in range(2, 21)]
        assert answers == [202] * 19
        assert (_health(second.address) or {}).get("index_loaded") is False
        slow_engine.set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(
                gh.bot_comments("org/repo", n) for n in range(1, 21)):
            time.sleep(0.05)
        assert [len(gh.bot_comments("org/repo", n)) for n in range(1, 21)] == [1] * 20
    finally:
        second.close()


def test_an_engine_that_cannot_load_stops_serve_with_its_error(
        settings: Settings, monkeypatch: pytest.MonkeyPatch, slow_engine: threading.Event) -> None:
    def broken(_settings: Any) -> Any:
        raise FileNotFoundError("no index at /nowhere")

    monkeypatch.setattr(wiring, "load_engine", broken)
    with pytest.raises(FileNotFoundError):
        wiring.serve(settings, "127.0.0.1", _free_port(), workers=1, port_for=lambda _i: None)
