"""Fixtures of the e2e tests: the environment of real components (once per session), a tenancy
per test, and every component's log since the test started printed when it fails.

Every test under tests/e2e is marked `e2e`: `make test` leaves them out, `make e2e` runs them.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.support.e2e.deployment import ManagerInstall, install_manager_chart
from tests.support.e2e.environment import Environment, running_environment
from tests.support.e2e.tenancy import Tenancy, workspace_name
from tests.support.e2e.tools import find_tools

_serials = itertools.count(1)
_HERE = Path(__file__).resolve().parent


# The first test also starts the session's clusters and Flux (about a minute on a busy machine).
DEFAULT_TIMEOUT_S = 600


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(DEFAULT_TIMEOUT_S))


_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


@pytest.fixture(scope="session")
def e2e_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Environment]:
    tools = find_tools()
    with running_environment(tools, tmp_path_factory.mktemp("e2e")) as environment:
        yield environment


@pytest.fixture(scope="session")
def bundler_install(e2e_env: Environment) -> ManagerInstall:
    return install_manager_chart(e2e_env.management)


@pytest.fixture
def tenancy(
    e2e_env: Environment, bundler_install: ManagerInstall, request: pytest.FixtureRequest
) -> Iterator[Tenancy]:
    """A workspace of the test's own; its bundler processes stop with it. If the test failed,
    what every component logged while it ran is printed; if it passed, a 403 in any of its
    bundler processes' logs fails it (bundler must hold every permission it uses)."""
    marks = e2e_env.supervisor.marks()
    workspace = workspace_name(request.node.name, next(_serials))
    tenancy = Tenancy(e2e_env, bundler_install, workspace, e2e_env.workdir / workspace)
    try:
        yield tenancy
    finally:
        reports = request.node.stash.get(_REPORTS, {})
        failed = any(report.failed for report in reports.values())
        if failed:
            print(f"\n----- component logs during {request.node.name} -----")
            print(e2e_env.supervisor.logs_since(marks))
        tenancy.stop_all()
        refused = tenancy.forbidden()
        if refused and not failed:
            pytest.fail("bundler was refused by the API server:\n" + "\n".join(refused[:20]))
