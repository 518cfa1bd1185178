"""The review page's door: a logged-out cookie is worthless, login guesses are limited per address
and in all (measured before: ~970 guesses/s), repeated or malformed parameters are 400, and the
similar issues shown for a row are only those its repository may see now."""
from __future__ import annotations

import http.client
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from werkzeug.datastructures import MultiDict

from support.review import TOKEN, csrf_of, make_index, settings
from support.service import live_server
from triagebot.domain.models import Labels, Prediction, Similar, Triage
from triagebot.learning.live import LiveIndex
from triagebot.review import guard
from triagebot.service.app import create_app
from triagebot.store.records import Store

HTML = {"Accept": "text/html"}
COOKIE = "triagebot_review"


@pytest.fixture
def env(tmp_path):
    index_dir = make_index(tmp_path / "index")
    store = Store(tmp_path / "t.sqlite3")
    app = create_app(settings(tmp_path, index_dir), store=store)
    return {"app": app, "store": store, "index_dir": index_dir}


def _login(client, token: str = TOKEN, addr: str = "127.0.0.1"):  # type: ignore[no-untyped-def]
    page = client.get("/review/login", environ_base={"REMOTE_ADDR": addr}).get_data(as_text=True)
    return client.post("/review/login", data={"token": token, "csrf": csrf_of(page)},
                       environ_base={"REMOTE_ADDR": addr})


def test_a_cookie_copied_before_logout_does_not_work_after_it(env) -> None:
    client = env["app"].test_client()
    assert _login(client).status_code == 302
    stolen = client.get_cookie(COOKIE).value
    csrf = csrf_of(client.get("/review", headers=HTML).get_data(as_text=True))
    assert client.post("/review/logout", data={"csrf": csrf}).status_code == 302
    replay = env["app"].test_client()
    replay.set_cookie(COOKIE, stolen)
    assert replay.get("/review").status_code == 401
    assert replay.get("/review", headers=HTML).status_code == 302  # back to the login form
    other = env["app"].test_client()  # logging out ends that session only
    assert _login(other).status_code == 302 and other.get("/review").status_code == 200


def test_five_wrong_guesses_then_the_address_waits_even_with_the_right_token(env) -> None:
    client = env["app"].test_client()
    assert [_login(client, "wrong", "10.0.0.1").status_code for _ in range(5)] == [401] * 5
    locked = _login(client, TOKEN, "10.0.0.1")
    assert locked.status_code == 429 and 55 <= int(locked.headers["Retry-After"]) <= 60
    assert "Too many attempts" in locked.get_data(as_text=True)
    assert _login(env["app"].test_client(), TOKEN, "10.0.0.2").status_code == 302  # others go on


def test_guessing_rate_is_bounded(env) -> None:
    """~970 guesses/s were checked before; now one address gets 5, and all together 30 a minute."""
    client = env["app"].test_client()
    started = time.monotonic()
    statuses = [_login(client, f"guess-{i}", "10.0.0.9").status_code for i in range(200)]
    elapsed = time.monotonic() - started
    assert statuses.count(401) == 5 and statuses.count(429) == 195
    assert statuses.count(401) / max(elapsed, 1.0) <= 5
    spread = [_login(client, "wrong", f"10.1.{i // 250}.{i % 250}").status_code for i in range(60)]
    assert spread.count(401) == guard.GLOBAL_PER_MINUTE - 5 and spread.count(429) == 60 - 25


def test_parallel_guesses_over_http_cannot_outrun_the_limit(env) -> None:
    with live_server(env["app"]) as address:
        conn = http.client.HTTPConnection(address, timeout=10)
        conn.request("GET", "/review/login")
        response = conn.getresponse()
        cookie = response.headers["Set-Cookie"].split(";", 1)[0]
        csrf = csrf_of(response.read().decode())
        conn.close()

        def guess(i: int) -> int:
            c = http.client.HTTPConnection(address, timeout=10)
            c.request("POST", "/review/login", body=f"token=wrong{i}&csrf={csrf}",
                      headers={"Cookie": cookie,
                               "Content-Type": "application/x-www-form-urlencoded"})
            status = c.getresponse().status
            c.close()
            return status

        with ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(guess, range(40)))
    assert statuses.count(401) == 5 and statuses.count(429) == 35


def test_login_wait_backs_off_and_forgives() -> None:
    now = 10_000.0
    assert guard.login_wait(now, [now - 1] * 4, []) == 0
    assert guard.login_wait(now, [now - 1] * 5, []) == pytest.approx(59)
    assert guard.login_wait(now, [now - 1] * 6, []) == pytest.approx(119)
    assert guard.login_wait(now, [now - 1] * 20, []) == pytest.approx(899)  # capped at 15 min
    assert guard.login_wait(now, [now - 901] * 20, []) == 0  # old failures are forgiven
    assert guard.login_wait(now, [], [now - 10] * 30) == pytest.approx(50)


@pytest.mark.parametrize("data", [
    [("number", "77"), ("number", "78")],
    [("number", "²")],
    [("number", "9" * 40)],
    [("number", "-1")],
    [("number", "77"), ("dimension", "symptom")],
    [("number", "77"), ("repo", "not a repo")],
    [("number", "77"), ("action", "accept"), ("action", "correct")],
])
def test_repeated_or_malformed_parameters_are_400(env, data) -> None:
    client = env["app"].test_client()
    _login(client)
    csrf = csrf_of(client.get("/review", headers=HTML).get_data(as_text=True))
    form = MultiDict([("csrf", csrf), ("repo", "org/repo"), ("dimension", "stage"),
                      ("action", "accept")])
    for key, value in data:  # a bad repo replaces the good one; anything else is added
        form.setlist(key, [value]) if key == "repo" else form.add(key, value)
    assert client.post("/review/decide", data=form).status_code == 400
    assert client.get("/review?filter=low&filter=pending").status_code == 400
    assert client.get("/review/stats?dimension=stage&dimension=symptom").status_code == 400


def _similar(repo: str, number: int, title: str) -> Similar:
    return Similar(repo=repo, number=number, url="", title=title, score=0.9,
                   labels=Labels(stage="S4"), resolution="fixed", resolved=True)


def test_row_shows_only_similar_issues_its_repository_may_see_now(env) -> None:
    live = LiveIndex(env["index_dir"])
    with live.writing() as index:
        seed = index.items[0]
        secret = seed.model_copy(update={"repo": "acme/secret", "number": 5, "owner": "acme",
                                         "title": "SECRET quasar hang", "visibility": "private"})
        index.add([secret], index.vectors[:1], index.features[:1])
    p = Prediction(id="S4", name="x", confidence=0.9)
    triage = Triage(repo="other/proj", number=1, stage=p, symptom=p.model_copy(update={"id": "4.2"}),
                    root_cause=p.model_copy(update={"id": "unknown"}),
                    fix_pattern=p.model_copy(update={"id": "unknown"}),
                    distributed_specific=p.model_copy(update={"id": "yes"}),
                    is_bug=p.model_copy(update={"id": "yes"}),
                    similar=[_similar("acme/secret", 5, "SECRET quasar hang"),
                             _similar(seed.repo, seed.number, seed.title)])
    env["store"].save_triage(triage, None, None)
    env["store"].save_triage(triage.model_copy(update={"repo": "acme/secret", "number": 9}), None, None)
    client = env["app"].test_client()
    _login(client)
    page = client.get("/review", headers=HTML).get_data(as_text=True)
    row = page.split('id="other-proj-1"', 1)[1].split('<div class="issue"', 1)[0]
    assert f"{seed.repo}#{seed.number}" in row  # the public neighbour is listed
    assert "SECRET" not in row and "acme/secret" not in row
    home = page.split('id="acme-secret-9"', 1)[1].split('<div class="issue"', 1)[0]
    assert "acme/secret#5" in home
    with live.writing() as index:  # the seed's repository goes private: hidden from now on
        row_no = index.row_of(seed.key)
        index.items[row_no] = index.items[row_no].model_copy(update={"visibility": "private"})
    page = client.get("/review", headers=HTML).get_data(as_text=True)
    row = page.split('id="other-proj-1"', 1)[1].split('<div class="issue"', 1)[0]
    assert f"{seed.repo}#{seed.number}" not in row

