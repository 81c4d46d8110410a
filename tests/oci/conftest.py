"""OCI test fixtures: real registries, an isolated Docker config, charts on disk, the CLI."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.oci.artifact_fixtures import run_artifact_cli
from tests.support.oci.chart_fixtures import make_chart, run_cli
from tests.support.registry_fixtures import oci_registry, oci_registry_basic_auth, oci_registry_tls

__all__ = [
    "make_chart",
    "oci_registry",
    "oci_registry_basic_auth",
    "oci_registry_tls",
    "run_artifact_cli",
    "run_cli",
]


@pytest.fixture(autouse=True)
def _no_user_docker_config(docker_config: Path) -> None:
    """Every test of this folder runs with an empty Docker config
    (tests.support.registry_fixtures)."""


@pytest.fixture
def repo_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """A repository path unique to the test, so tests sharing a registry never collide."""
    yield "t/" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")
