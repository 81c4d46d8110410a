"""`bundler ui` in a real browser (Debian's Chromium, headless) against `bundler dev`'s
playground: the matrix shows the fleet, a label change turns cells as the rollout proceeds,
pause works, an action RBAC refuses shows the API server's message, tenant text stays text,
the keyboard reaches every cell, a narrow window works. Screenshots of each page are left in
build/screenshots."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, NAMESPACE
from bundler.apiserver import ApiServer
from bundler.commands.dev import Playground
from bundler.inputs import World
from bundler.kube.store import KubeStore
from bundler.sim.fleet import FleetOptions
from bundler.ui.app import Dashboard
from tests.support.browser import browser_missing, chromium, console_errors, screenshot
from tests.support.builders import WS, bundle, cluster, placed_deployment
from tests.support.dashboards import VIEWER_USER, running_dashboard, viewer_kubeconfig, wait_until
from tests.support.identities import admin_store

pytestmark = pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing()))

PROD = {"env": "prod"}
DEV = {"env": "dev"}
CLUSTERS = [("c01", PROD), ("c02", PROD), ("c03", PROD), ("c04", DEV), ("c05", DEV)]
# A Bundle's status message as a tenant could make an agent write it.
HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
# The cells a page shows: [bundle key, cluster key, state] of every drawn cell with a state.
DRAWN_CELLS = """
return [...document.querySelectorAll('td.cell[data-state]:not([data-state=""])')]
  .map((td) => [td.dataset.bundle, td.dataset.cluster, td.dataset.state]);
"""


def world() -> World:
    return World(
        clusters=[cluster(name, labels) for name, labels in CLUSTERS],
        bundles=[
            bundle([{"clusterSelector": {"matchLabels": PROD}}], name="web"),
            bundle([{"clusterSelector": {}}], name="base"),
        ],
    )


@pytest.fixture
def playground(tmp_path: Path) -> Iterator[Playground]:
    # Helm actions of 0.5 s to 1.5 s: a rollout lasts long enough to be seen.
    running = Playground(world(), FleetOptions(flux_delay=1.0), tmp_path)
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def admin(playground: Playground, tmp_path: Path) -> Iterator[KubeStore]:
    with KubeStore.from_kubeconfig(playground.server.kubeconfig(tmp_path / "admin")) as store:
        yield store


@pytest.fixture
def dashboard(playground: Playground, tmp_path: Path) -> Iterator[Dashboard]:
    with running_dashboard(playground.server.kubeconfig(tmp_path / "user")) as running:
        yield running


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


def cells(driver: WebDriver) -> dict[tuple[str, str], str]:
    return {(b, c): state for b, c, state in driver.execute_script(DRAWN_CELLS)}


def open_fleet(driver: WebDriver, dashboard: Dashboard, ready: int) -> None:
    """The Fleet page, once `ready` cells are Ready."""
    driver.get(f"{dashboard.url}/#/")
    wait_until(
        lambda: list(cells(driver).values()).count("Ready") == ready,
        f"{ready} Ready cells on the Fleet page",
    )


def text_of(driver: WebDriver, selector: str) -> str:
    """The text of the first element `selector` finds now ("" if none): read in the page, since
    a live page redraws its elements under Selenium's references."""
    text: str = driver.execute_script(
        "const found = document.querySelector(arguments[0]);return found ? found.innerText : '';",
        selector,
    )
    return text


def press(driver: WebDriver, button_id: str) -> None:
    """Click the button as it is now (the page may have redrawn it since it was looked at)."""
    driver.execute_script("document.getElementById(arguments[0]).click()", button_id)


def test_the_matrix_shows_the_fleet(dashboard: Dashboard, browser: WebDriver) -> None:
    open_fleet(browser, dashboard, ready=len(CLUSTERS) + 3)
    shown = cells(browser)
    assert shown, "no cells drawn"
    assert {c for _, c in shown} == {f"{WS}/{name}" for name, _ in CLUSTERS}
    assert {c for b, c in shown if b == f"{WS}/web"} == {f"{WS}/c01", f"{WS}/c02", f"{WS}/c03"}
    ready = browser.find_element(By.CSS_SELECTOR, '.counts button[data-state="Ready"] .count')
    assert ready.text == str(len(CLUSTERS) + 3)
    assert "5 of 5 clusters, 2 bundles" in text_of(browser, "#fleet-summary")
    screenshot(browser, "fleet")
    assert console_errors(browser) == []


def test_a_label_change_turns_cells_as_the_rollout_proceeds(
    dashboard: Dashboard, admin: KubeStore, browser: WebDriver
) -> None:
    open_fleet(browser, dashboard, ready=len(CLUSTERS) + 3)
    # Every state the cell of web on c04 shows, recorded in the page as it redraws.
    browser.execute_script(
        """window.__seen = [];
        const cell = 'td[data-bundle="fleet-default/web"][data-cluster="fleet-default/c04"]';
        setInterval(() => {
          const td = document.querySelector(cell);
          const state = td ? td.dataset.state : "";
          if (window.__seen[window.__seen.length - 1] !== state) window.__seen.push(state);
        }, 10);"""
    )
    admin.patch(CLUSTER, "c04", {"metadata": {"labels": {"env": "prod"}}}, WS)
    seen = wait_until(
        lambda: (s := browser.execute_script("return window.__seen"))[-1:] == ["Ready"] and s,
        "web Ready on c04",
    )
    assert seen[0] == "", seen
    assert set(seen[1:-1]) & {"Pending", "WaitApplied", "NotReady"}, seen


def test_pause_holds_the_rollout_and_resume_releases_it(
    dashboard: Dashboard, admin: KubeStore, browser: WebDriver
) -> None:
    open_fleet(browser, dashboard, ready=len(CLUSTERS) + 3)
    browser.get(f"{dashboard.url}/#/bundle/{WS}/web")
    wait_until(lambda: text_of(browser, "#action-pause") == "Pause bundle", "the pause button")
    press(browser, "action-pause")
    wait_until(lambda: text_of(browser, "#action-pause") == "Resume bundle", "the bundle paused")
    assert admin.get(BUNDLE, "web", WS)["spec"]["paused"] is True
    screenshot(browser, "bundle-paused")

    admin.patch(BUNDLE, "web", {"spec": {"helm": {"values": {"replicas": 2}}}}, WS)
    browser.get(f"{dashboard.url}/#/")
    web = {(f"{WS}/web", f"{WS}/{name}") for name in ("c01", "c02", "c03")}
    wait_until(
        lambda: {cells(browser).get(pair) for pair in web} == {"OutOfSync"},
        "the change staged, not promoted, on web's clusters",
    )
    browser.get(f"{dashboard.url}/#/bundle/{WS}/web")
    wait_until(lambda: text_of(browser, "#action-pause") == "Resume bundle", "the resume button")
    press(browser, "action-pause")
    browser.get(f"{dashboard.url}/#/")
    wait_until(
        lambda: {cells(browser).get(pair) for pair in web} == {"Ready"}, "web rolled out again"
    )


def test_an_action_rbac_refuses_shows_the_api_servers_message(
    playground: Playground, tmp_path: Path, admin: KubeStore, browser: WebDriver
) -> None:
    with running_dashboard(viewer_kubeconfig(playground.server, tmp_path)) as viewer:
        browser.get(f"{viewer.url}/#/cluster/{WS}/c01")
        wait_until(lambda: text_of(browser, "#action-pause") == "Pause cluster", "the button")
        press(browser, "action-pause")
        refused = wait_until(lambda: text_of(browser, ".result.refused"), "the refusal")
        screenshot(browser, "refused")
    assert refused.startswith("Refused (403): ")
    assert VIEWER_USER in refused and 'cannot patch resource "clusters"' in refused, refused
    assert admin.get(CLUSTER, "c01", WS)["spec"].get("paused") is not True


def test_every_page_renders_and_is_screenshotted(dashboard: Dashboard, browser: WebDriver) -> None:
    open_fleet(browser, dashboard, ready=len(CLUSTERS) + 3)
    browser.get(f"{dashboard.url}/#/bundle/{WS}/web?cluster={WS}/c01")
    wait_until(lambda: "deployed by targets[0]" in browser.page_source, "explain's verdict")
    values = text_of(browser, 'pre[aria-label="rendered values"]')
    assert values.strip() == "{}"
    assert "all" in text_of(browser, "section[aria-label=Rollout]")
    screenshot(browser, "bundle")
    browser.get(f"{dashboard.url}/#/cluster/{WS}/c01")
    wait_until(lambda: "last seen (heartbeat)" in browser.page_source, "the agent's heartbeat")
    bootstrap = text_of(browser, "section[aria-label=Bootstrap]")
    assert all(phase in bootstrap for phase in ("FluxInstalled", "AgentConnected", "Bootstrapped"))
    labels = text_of(browser, "section[aria-label=Labels]")
    assert "env" in labels and "prod" in labels
    screenshot(browser, "cluster")
    assert console_errors(browser) == []


def test_the_keyboard_moves_through_the_matrix_and_opens_a_cell(
    dashboard: Dashboard, browser: WebDriver
) -> None:
    open_fleet(browser, dashboard, ready=len(CLUSTERS) + 3)
    browser.execute_script("document.querySelector('#matrix [tabindex=\"0\"]').focus()")
    # Keys go to whatever has the focus, as a user's do: the matrix re-renders on every event
    # and puts the focus back on the same cell, so no element is held across a re-render.
    keys = ActionChains(browser)
    for key in (Keys.ARROW_DOWN, Keys.ARROW_RIGHT, Keys.ARROW_RIGHT):
        keys.send_keys(key)
    keys.perform()
    focused = browser.execute_script(
        "const a = document.activeElement; return [a.dataset.cluster, a.dataset.bundle]"
    )
    assert focused == [f"{WS}/c02", f"{WS}/web"]
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    wait_until(
        lambda: "cluster=fleet-default%2Fc02" in browser.execute_script("return location.hash"),
        "the bundle page on c02",
    )
    assert browser.execute_script("return location.hash").startswith(f"#/bundle/{WS}/web")


def test_a_narrow_window_scrolls_the_matrix_not_the_page(dashboard: Dashboard) -> None:
    with chromium(width=400, height=800) as narrow:
        open_fleet(narrow, dashboard, ready=len(CLUSTERS) + 3)
        for page in ("#/", f"#/bundle/{WS}/web", f"#/cluster/{WS}/c01"):
            narrow.get(f"{dashboard.url}/{page}")
            wait_until(lambda: narrow.find_elements(By.CSS_SELECTOR, "h1"), "the page")
            overflow = narrow.execute_script(
                "return document.documentElement.scrollWidth - window.innerWidth"
            )
            assert overflow <= 0, f"{page} overflows a 400px window by {overflow}px"
        narrow.get(f"{dashboard.url}/#/")
        open_fleet(narrow, dashboard, ready=len(CLUSTERS) + 3)
        screenshot(narrow, "fleet-narrow")


def test_tenant_text_renders_as_text(tmp_path: Path, browser: WebDriver) -> None:
    """A message and values a tenant controls, holding markup, show as written and run
    nothing (no manager here: the status is written as an agent's roll-up could carry it)."""
    with ApiServer() as server, admin_store(server, tmp_path) as admin:
        for namespace in (WS, "cluster-p1"):
            admin.create(NAMESPACE, {"metadata": {"name": namespace}})
        admin.create(BUNDLE, bundle([{"clusterSelector": {}}], name="app").to_wire())
        condition = {"type": "Ready", "status": "False", "reason": "NotReady", "message": HOSTILE}
        status = {"conditions": [condition], "display": {"state": "NotReady"}}
        admin.patch_status(BUNDLE, "app", {"status": status}, WS)
        admin.create(CLUSTER, cluster("p1").to_wire())
        bd = placed_deployment("app", "p1")
        bd["spec"]["options"]["helm"]["values"] = {"banner": HOSTILE}
        admin.create(BUNDLE_DEPLOYMENT, bd)
        with running_dashboard(server.kubeconfig(tmp_path / "user")) as dashboard:
            browser.get(f"{dashboard.url}/#/bundle/{WS}/app?cluster={WS}/p1")
            wait_until(lambda: "rendered values" in browser.page_source, "the deployment panel")
            wait_until(lambda: HOSTILE in text_of(browser, "section[aria-label=Conditions]"), "msg")
            assert HOSTILE in text_of(browser, 'pre[aria-label="rendered values"]')
            assert browser.execute_script("return window.__pwned") is None
            assert browser.find_elements(By.CSS_SELECTOR, 'img[src="x"]') == []
            assert len(browser.find_elements(By.TAG_NAME, "script")) == 1
