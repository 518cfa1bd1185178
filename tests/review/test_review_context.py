"""What a maintainer needs on the review page to judge a suggestion without opening GitHub: the
issue's title, links to the issue and to the bot's comment (or that it stayed silent), which
labels the comment stated and which it kept back, one-click accept; a client sending the token
as a Bearer header is told how login works; the charts stay legible empty and full."""
from __future__ import annotations

import re

import pytest

from support.review import TOKEN, live_engine, log_in, make_index, settings
from triagebot.domain import taxonomy
from triagebot.domain.models import Issue
from triagebot.review import charts
from triagebot.service.app import create_app
from triagebot.store.records import Store

HTML = {"Accept": "text/html"}


@pytest.fixture
def page(tmp_path):
    index_dir = make_index(tmp_path / "index")
    engine = live_engine(index_dir)
    store = Store(tmp_path / "t.sqlite3")
    posted = engine.triage(Issue(repo="org/repo", number=5, title="CUDA out of memory with ZeRO-3 offload",
                                 body="cuda out of memory zero3 offload optimizer cpu memory grows"))
    silent = engine.triage(Issue(repo="org/repo", number=6, title="question about <b>docs</b>", body="hello"))
    store.save_triage(posted, "alice", 987654)
    store.save_triage(silent, "bob", None)
    client = create_app(settings(tmp_path, index_dir), store=store).test_client()
    log_in(client)
    return client, posted, silent


def _block(html: str, number: int) -> str:
    return html.split(f'id="org-repo-{number}"', 1)[1].split('<div class="issue"', 1)[0]


def test_each_triage_shows_title_links_and_what_was_stated(page) -> None:
    client, posted, _ = page
    html = client.get("/review", headers=HTML).get_data(as_text=True)
    block = _block(html, 5)
    assert '<span class="title">CUDA out of memory with ZeRO-3 offload</span>' in block
    assert 'href="https://github.com/org/repo/issues/5"' in block
    assert 'class="comment-link" href="https://github.com/org/repo/issues/5#issuecomment-987654"' in block
    cells = re.findall(r'id="org-repo-5-(\w+)".*?<td class="(stated|kept-back)">', block, re.S)
    assert dict(cells) == {dim: "stated" if posted.stated(dim) is not None else "kept-back"
                           for dim in taxonomy.ALL_DIMENSIONS}
    assert block.count('value="accept"') == len(taxonomy.ALL_DIMENSIONS)  # one click each


def test_a_silent_triage_says_no_comment_was_posted_and_titles_are_escaped(page) -> None:
    client, _, _ = page
    block = _block(client.get("/review", headers=HTML).get_data(as_text=True), 6)
    assert '<span class="silent">no comment posted</span>' in block and "comment-link" not in block
    assert "question about &lt;b&gt;docs&lt;/b&gt;" in block


def test_a_bearer_header_is_told_how_login_works(page, tmp_path) -> None:
    client, _, _ = page
    fresh = client.application.test_client()
    answer = fresh.get("/review", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 401
    text = answer.get_data(as_text=True)
    assert "open /review/login in a browser" in text and "Bearer header is not accepted" in text


def test_charts_are_legible_when_empty() -> None:
    svg = charts.confusion_svg([], [], "stage")
    width = int(re.search(r'width="(\d+)"', svg).group(1))
    sentence = re.search(r"<text[^>]*>(no decisions yet[^<]*)</text>", svg).group(1)
    assert width >= charts.MARGIN + len(sentence) * 5  # the sentence fits (about 5 px a character)
    assert "no decisions yet" in charts.acceptance_svg({})


def test_charts_are_legible_when_full() -> None:
    labels = [*taxonomy.ids("root_cause")[:12], "unknown"]
    matrix = [[(r * 7 + c) % 5 for c in range(len(labels))] for r in range(len(labels))]
    svg = charts.confusion_svg(labels, matrix, "root_cause")
    # row ids end left of the cells with room for the longest; column ids are slanted
    rows = re.findall(r'<text x="(\d+)" y="\d+" text-anchor="end">([^<]+)</text>', svg)
    assert all(int(x) >= charts.CHAR_PX * len(label) for x, label in rows)
    assert svg.count("rotate(-45") == len(labels)
    weeks = {f"2026-W{w:02d}": (w % 3, 3) for w in range(1, 41)}
    svg = charts.acceptance_svg({"stage": weeks, "symptom": weeks})
    xs = [float(x) for x in re.findall(r'<text x="([\d.]+)" y="\d+" text-anchor="middle">2026-W', svg)]
    assert len(xs) >= 4 and min(b - a for a, b in zip(xs, xs[1:])) >= 8 * charts.CHAR_PX
