"""A test API server standing in for a management cluster, for commands that talk to one: the
workspace exists, and `management` is an admin kubeconfig for it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.api.resources import NAMESPACE
from bundler.apiserver import ApiServer
from tests.support.builders import WS


@pytest.fixture(name="server")
def server_fixture() -> Iterator[ApiServer]:
    with ApiServer() as running:
        running.store.create(NAMESPACE, {"metadata": {"name": WS}})
        yield running


@pytest.fixture(name="management")
def management_fixture(server: ApiServer, tmp_path: Path) -> Path:
    return server.kubeconfig(tmp_path / "management.kubeconfig")
