"""Fixtures of the API-server contract tests: one parametrized `backend`, the stand-in or the real
kube-apiserver (tests.support.apiserver.backends), a namespace of the test's own on it, an admin
client, Widgets (a custom resource whose CRD uses every schema feature the server checks) and
watches.

Every test that uses `backend` (directly or through `api`, `ns`, `widgets`, `open_watch`) runs
against both: `[stand-in]` in `make test`, `[real]` (marked `e2e`) in `make e2e`. Two marks
narrow that:
- `stand_in_only(reason)`: the test needs the stand-in's internals (its store, injected faults,
  served kinds, restarts); it is generated for the stand-in alone. A test using `server` (the
  stand-in's ApiServer) must say so.
- `deliberate_difference(reason)`: the real server answers otherwise and the stand-in means to
  differ (docs/apiserver-differences.md lists each); the `real` case skips with the reason.
`stand_in_history(size)` gives the stand-in's store a history of `size` changes, so an old
resourceVersion is as expired there as on a real server.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bundler.api.resources import CUSTOM_RESOURCE_DEFINITION
from bundler.apiserver import ApiServer
from bundler.apiserver.certificates import self_signed_certificate
from bundler.store.memory import MemoryStore
from tests.support.apiserver.backends import REAL, STAND_IN, Backend, Real, StandIn, real_cluster
from tests.support.apiserver.contract import CRDS, WIDGET, Http, WatchReader, widget_crd
from tests.support.e2e.controlplane import TestCluster

# Starting etcd and kube-apiserver on a busy machine counts against the first real test.
REAL_TIMEOUT_S = 300
_serials = itertools.count(1)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    only = metafunc.definition.get_closest_marker("stand_in_only")
    if "server" in metafunc.fixturenames and only is None:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} uses the stand-in's `server`: mark it "
            "@pytest.mark.stand_in_only(reason)"
        )
    real = pytest.param(REAL, marks=[pytest.mark.e2e, pytest.mark.timeout(REAL_TIMEOUT_S)])
    metafunc.parametrize("backend", [STAND_IN] if only else [STAND_IN, real], indirect=True)


@pytest.fixture(scope="session")
def stand_in_certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """HTTPS for every stand-in, as for the real server (kubectl sends tokens only over HTTPS)."""
    return self_signed_certificate(tmp_path_factory.mktemp("stand-in"))


@pytest.fixture(scope="session")
def real_apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestCluster]:
    with real_cluster(tmp_path_factory.mktemp("real-apiserver")) as cluster:
        yield cluster


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == REAL:
        marker = request.node.get_closest_marker("deliberate_difference")
        if marker is not None:
            pytest.skip(f"deliberately different on the real kube-apiserver: {marker.args[0]}")
        yield Real(request.getfixturevalue("real_apiserver"))
        return
    certificate: tuple[Path, Path] = request.getfixturevalue("stand_in_certificate")
    history = request.node.get_closest_marker("stand_in_history")
    store = MemoryStore(
        require_namespaces=True,
        **({"history_size": history.args[0]} if history is not None else {}),
    )
    with ApiServer(store, certificate=certificate) as running:
        yield StandIn(running, certificate[0])


@pytest.fixture
def ns(backend: Backend, request: pytest.FixtureRequest) -> str:
    """A namespace of the test's own: its name, shortened, and a serial number."""
    words = re.sub(r"[^a-z0-9]+", "-", request.node.originalname.lower().removeprefix("test_"))
    name = f"{words.strip('-')[:45].rstrip('-')}-{next(_serials)}"
    backend.create_namespace(name)
    return name


@pytest.fixture
def api(backend: Backend, ns: str) -> Iterator[Http]:
    """The admin, in the test's namespace."""
    client = backend.admin(ns)
    yield client
    client.close()


@pytest.fixture
def server(backend: Backend) -> ApiServer:
    """The stand-in's ApiServer itself, for tests marked stand_in_only."""
    assert isinstance(backend, StandIn), "`server` is the stand-in's: mark the test stand_in_only"
    return backend.server


@pytest.fixture
def widgets(backend: Backend, api: Http) -> Http:
    """`api` on a server that serves Widgets. The real one has their CRD from the start of the
    session; the stand-in serves the kinds it is told to, and gets the CRD through the API."""
    if isinstance(backend, StandIn):
        backend.server.add_resource(CUSTOM_RESOURCE_DEFINITION)
        backend.server.add_resource(WIDGET)
        code, answer = api.call("POST", CRDS, widget_crd())
        assert code == 201, answer
    return api


@pytest.fixture
def open_watch(backend: Backend, api: Http) -> Iterator[Callable[[str], WatchReader]]:
    """Opens watches as the admin by path (`{ns}` is the test's namespace); closes them all
    after the test."""
    opened: list[WatchReader] = []

    def start(path: str) -> WatchReader:
        reader = backend.watch(api.path(path))
        opened.append(reader)
        return reader

    yield start
    for reader in opened:
        reader.close()
