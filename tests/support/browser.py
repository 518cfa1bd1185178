"""Headless Chromium for the browser tests (Debian ``chromium`` + ``chromium-driver`` through
Selenium): one place for the binaries, the flags and the waits."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]
MISSING = not (CHROMIUM.exists() and DRIVER.exists())
WHY_MISSING = "needs Debian chromium and chromium-driver (apt-get install -y chromium chromium-driver)"


@contextmanager
def chrome(width: int, height: int) -> Iterator[Any]:
    """A fresh headless browser of the given window size, quit afterwards."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs pip selenium")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*FLAGS, f"--window-size={width},{height}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(DRIVER)))
    driver.set_page_load_timeout(20)
    driver.implicitly_wait(10)  # a click returns before the next page is parsed
    try:
        yield driver
    finally:
        driver.quit()
