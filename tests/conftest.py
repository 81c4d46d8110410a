"""Fixtures shared by every test directory: the real OCI registry (docker-registry on 127.0.0.1),
a Git server (smart HTTP on 127.0.0.1), and fleets over HTTP that are always stopped."""

from tests.support.agent.http_fleet import http_fleets  # noqa: F401
from tests.support.git_server import git_server  # noqa: F401
from tests.support.registry_fixtures import (  # noqa: F401
    docker_config,
    oci_registry,
    oci_registry_basic_auth,
    oci_registry_tls,
)
