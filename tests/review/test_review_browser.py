"""The review page in a real headless Chromium (Debian ``chromium`` + ``chromium-driver``, driven by
Selenium) against a real HTTP server on 127.0.0.1: log in, accept one suggestion, correct
another, see the stats change; a request without the token is refused. Screenshots go to
tmp_path (and $TRIAGEBOT_ARTIFACTS when set; docs/review.png when $TRIAGEBOT_DOCS_SCREENSHOT=1)."""
from __future__ import annotations

import http.client
import os
import shutil
from pathlib import Path

import pytest

from support.browser import MISSING, WHY_MISSING, chrome
from support.review import ROOT, TOKEN, closed_issue, live_engine, make_index, settings
from support.service import live_server
from triagebot.domain.models import Issue
from triagebot.learning import live as learning
from triagebot.service.app import create_app
from triagebot.store.records import Store

pytestmark = [pytest.mark.integration, pytest.mark.skipif(MISSING, reason=WHY_MISSING)]


@pytest.fixture
def browser():
    with chrome(1200, 1400) as driver:
        yield driver


def _seed(tmp_path: Path) -> tuple[Store, Path]:
    index_dir = make_index(tmp_path / "index")
    engine, store = live_engine(index_dir), Store(tmp_path / "t.sqlite3")
    for number, title in ((77, "cuda out of memory with zero3 offload optimizer"),
                          (78, "training hangs at allreduce step on all ranks")):
        issue = closed_issue(number, title)
        triage = engine.triage(Issue(repo="org/repo", number=number, title=title, body=issue.body))
        store.save_triage(triage, None, 4321 if number == 77 else None)  # 78: the bot stayed silent
        with engine.live.writing() as index:
            learning.add_closed_issue(index, engine.embedder, issue, learning.labels_of(triage)[0],
                                      status="predicted")
    return store, index_dir


def _shot(driver, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    driver.save_screenshot(str(path))
    if os.environ.get("TRIAGEBOT_ARTIFACTS"):
        Path(os.environ["TRIAGEBOT_ARTIFACTS"]).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(os.environ["TRIAGEBOT_ARTIFACTS"]) / name)
    return path


def test_review_page_in_a_real_browser(tmp_path, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    store, index_dir = _seed(tmp_path)
    app = create_app(settings(tmp_path, index_dir), store=store)
    with live_server(app) as address:
        base = f"http://{address}"
        status, _ = _get(address, "/review/stats")
        assert status == 401  # no session, no token: refused

        browser.get(base + "/review")
        assert "/review/login" in browser.current_url
        browser.find_element(By.ID, "token").send_keys("not the token")
        browser.find_element(By.ID, "login").click()
        assert browser.find_element(By.ID, "login-error").is_displayed()
        browser.find_element(By.ID, "token").send_keys(TOKEN)
        browser.find_element(By.ID, "login").click()
        _wait(browser, lambda d: d.current_url.rstrip("/").endswith("/review"))
        first = browser.find_element(By.ID, "org-repo-77")
        assert "cuda out of memory with zero3 offload optimizer" in first.find_element(By.CLASS_NAME, "title").text
        assert first.find_element(By.CLASS_NAME, "comment-link").get_attribute("href").endswith(
            "/org/repo/issues/77#issuecomment-4321")
        assert browser.find_element(By.ID, "org-repo-78").find_element(By.CLASS_NAME, "silent")

        browser.get(base + "/review/stats")  # before any decision: the charts say so, legibly
        assert "no decisions yet" in browser.find_element(By.ID, "confusion").text
        empty_stats = _shot(browser, tmp_path, "review-stats-empty.png")
        browser.get(base + "/review")

        row = browser.find_element(By.ID, "org-repo-77-stage")
        row.find_element(By.CLASS_NAME, "accept").click()
        _wait(browser, lambda d: "accepted" in d.find_element(By.ID, "org-repo-77-stage")
              .get_attribute("class"))

        row = browser.find_element(By.ID, "org-repo-78-fix_pattern")
        current = row.find_element(By.CLASS_NAME, "current").text
        choice = "F3" if current != "F3" else "F1"
        Select(row.find_element(By.CLASS_NAME, "choice")).select_by_value(choice)
        row.find_element(By.CLASS_NAME, "correct").click()
        _wait(browser, lambda d: "corrected" in d.find_element(By.ID, "org-repo-78-fix_pattern")
              .get_attribute("class"))
        row = browser.find_element(By.ID, "org-repo-78-fix_pattern")
        assert row.find_element(By.CLASS_NAME, "current").text == choice
        shot = _shot(browser, tmp_path, "review.png")
        if os.environ.get("TRIAGEBOT_DOCS_SCREENSHOT") == "1":
            (ROOT / "docs").mkdir(exist_ok=True)
            shutil.copy(shot, ROOT / "docs" / "review.png")

        browser.get(base + "/review/stats?dimension=fix_pattern")
        assert browser.find_element(By.ID, "decisions").text.startswith("2 decisions")
        rates = browser.find_element(By.ID, "acceptance").text
        assert "stage 100%" in rates and "fix_pattern 0%" in rates
        assert browser.find_element(By.CSS_SELECTOR, "#confusion svg rect")
        stats = _shot(browser, tmp_path, "review-stats.png")
        if os.environ.get("TRIAGEBOT_DOCS_SCREENSHOT") == "1":
            shutil.copy(stats, ROOT / "docs" / "review-stats.png")
            shutil.copy(empty_stats, ROOT / "docs" / "review-stats-empty.png")

    index = live_engine(index_dir).index
    assert index.items[index.row_of(("org/repo", 78))].labels.fix_pattern == choice
    assert [f.source for f in store.feedback("org/repo", 78)] == ["page"]


def _wait(driver, condition) -> None:  # type: ignore[no-untyped-def]
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 10, ignored_exceptions=(StaleElementReferenceException,)).until(condition)


def _get(address: str, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(address, timeout=10)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()
