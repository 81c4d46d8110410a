"""Debian's Chromium, headless, driven by Selenium through Debian's chromedriver (both installed
by `make test`), for the dashboard's tests; screenshots go to build/screenshots."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = ROOT / "build" / "screenshots"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if shutil.which(p) is None]
    return (
        f"{', '.join(missing)} missing: `make test` installs Debian's chromium" if missing else None
    )


@contextlib.contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in a container: Chromium's sandbox needs user namespaces
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        f"--window-size={width},{height}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def screenshot(driver: WebDriver, name: str) -> Path:
    """The page as it is now, in build/screenshots/NAME.png (kept after the run)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path


def console_errors(driver: WebDriver) -> list[str]:
    """What the page logged as errors (a refused request the page expects is filtered by the
    caller)."""
    logs = driver.get_log("browser")  # type: ignore[attr-defined]  # Chrome's, not W3C's
    return [entry["message"] for entry in logs if entry["level"] == "SEVERE"]
