"""The manager resolving chart versions against registries: the registry flags of `bundler
manager`, and a hostile registry's cap or deadline reported on the Bundle."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from bundler.api.resources import BUNDLE
from bundler.commands import manager as manager_command
from bundler.errors import BundlerError, InvalidInputError, TransientError
from bundler.resolution.chart_resolver import RegistryResolver, ResolverSettings
from bundler.runtime.clock import ManualClock
from bundler.store.memory import MemoryStore
from tests.support.builders import bundle, cluster
from tests.support.cli_helpers import parse_args
from tests.support.manager.registry_charts import CHART
from tests.support.manager.world import (
    StartManager,
    create_world,
    deployments,
    settle,
    status_of,
    world,
)
from tests.support.oci.hostile_server import HostileServer, Out, head, hostile

__all__ = ["hostile"]


# -- the manager's flags ----------------------------------------------------------------------


def test_the_manager_resolves_with_the_registry_flags() -> None:
    args = parse_args(
        "manager",
        "--plain-http-registry",
        "registry.lan:5000",
        "--plain-http-registry",
        "mirror",
        "--registry-timeout",
        "3",
        "--registry-deadline",
        "20",
    )
    resolve = manager_command.options_from(args).resolver
    assert isinstance(resolve, RegistryResolver)
    assert resolve.settings.plain_http_hosts == {"registry.lan:5000", "mirror"}
    assert (resolve.settings.timeout, resolve.settings.deadline) == (3.0, 20.0)


def test_the_registry_deadline_defaults_to_a_minute() -> None:
    resolve = manager_command.options_from(parse_args("manager")).resolver
    assert isinstance(resolve, RegistryResolver)
    assert (resolve.settings.timeout, resolve.settings.deadline) == (10.0, 60.0)


@pytest.mark.parametrize("flag", ["--registry-timeout", "--registry-deadline"], ids=str)
@pytest.mark.parametrize("value", ["0", "nan", "inf"], ids=str)
def test_registry_timeouts_must_be_positive_and_finite(flag: str, value: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        manager_command.options_from(parse_args("manager", flag, value))
    assert raised.value.field == flag


# -- a hostile registry: the Bundle says which cap or deadline it hit ---------------------------


def _endless_tags(server: HostileServer) -> None:
    def answer(path: str, out: Out) -> None:
        head(out, Content_Type="application/json")
        server.endless(out)

    server.answer = answer


def _dripping_tags(server: HostileServer) -> None:
    def answer(path: str, out: Out) -> None:
        head(out, Content_Length="1000")
        server.drip(out)

    server.answer = answer


@pytest.mark.parametrize(
    ("behaviour", "error", "message"),
    [
        (_endless_tags, InvalidInputError, "the tag list from registry {host} is over the 4 MiB"),
        (_dripping_tags, TransientError, "within the 1s deadline of this operation"),
    ],
    ids=["endless-tag-list", "dripping-tag-list"],
)
def test_a_hostile_registry_is_reported_on_the_bundle(
    hostile: HostileServer,
    store: MemoryStore,
    start_manager: StartManager,
    behaviour: Callable[[HostileServer], None],
    error: type[BundlerError],
    message: str,
) -> None:
    behaviour(hostile)
    repo = f"oci://{hostile.host}/charts"
    settings = ResolverSettings(timeout=5.0, deadline=1.0)
    with pytest.raises(error, match=re.escape(message.format(host=hostile.host))):
        RegistryResolver(settings, ManualClock())(repo, CHART, "1.*", None)
    helm = {"repo": repo, "chart": CHART, "version": "1.*"}
    create_world(store, world(cluster("a"), bundle([{"clusterSelector": {}}], helm=helm)))
    settle(start_manager(store, resolver=RegistryResolver(settings, ManualClock())))
    assert deployments(store) == {}
    ready = next(c for c in status_of(store, BUNDLE, "app")["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "VersionNotResolved")
    assert f"{repo}/{CHART}: " in ready["message"]
    assert message.format(host=hostile.host) in ready["message"]
