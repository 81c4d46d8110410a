"""The manager over real HTTP for the rollout acceptance tests: the API server, an admin store,
and a manager on its own store, with the waits and reads those tests share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster
from bundler.api.resources import BUNDLE
from bundler.apiserver import ApiServer
from bundler.kube.store import KubeStore
from bundler.manager.app import Manager
from tests.support.builders import WS
from tests.support.manager.world import (
    StartManager,
    create_world,
    deployment_of,
    deployments,
    settle_remote,
    status_of,
    world,
)

ALL: list[dict[str, Any]] = [{"clusterSelector": {}}]


@dataclass
class Http:
    """The API server, the test's admin store, and a manager on its own store over HTTP."""

    server: ApiServer
    admin: KubeStore
    remote: KubeStore
    start_manager: StartManager
    manager: Manager | None = None

    def start(self, *objects: Bundle | Cluster, **options: Any) -> None:
        create_world(self.admin, world(*objects))
        self.manager = self.start_manager(self.remote, **options)
        self.settle()

    def settle(self) -> None:
        assert self.manager is not None
        settle_remote(self.manager, self.server.store)

    def patch_bundle(self, patch: dict[str, Any]) -> None:
        self.admin.patch(BUNDLE, "app", patch, WS)
        self.settle()

    def values(self, names: Sequence[str]) -> list[Any]:
        """The values each cluster's deployment runs now (not only staged)."""
        return [
            deployment_of(self.server.store, n)["spec"]["options"]["helm"].get("values")
            for n in names
        ]

    def ready(self) -> dict[str, Any]:
        conditions = status_of(self.server.store, BUNDLE, "app")["conditions"]
        found: dict[str, Any] = next(c for c in conditions if c["type"] == "Ready")
        return found

    def deployed(self) -> set[str]:
        return {name for name, _ in deployments(self.server.store)}

    def generation(self) -> int:
        found: int = self.server.store.get(BUNDLE, "app", WS)["metadata"]["generation"]
        return found


@pytest.fixture(name="http")
def http_fixture(
    server: ApiServer,
    admin: KubeStore,
    remote: KubeStore,
    start_manager: StartManager,
) -> Http:
    return Http(server, admin, remote, start_manager)
