"""Which delivery a BundleDeployment's options take: the registry of bundler.core.delivery. Pure."""

from __future__ import annotations

from bundler.api.bundledeployment import DeploymentOptions
from bundler.api.resources import Resource
from bundler.core.delivery import Delivery
from bundler.core.delivery.helm import HELM
from bundler.core.delivery.kustomize import KUSTOMIZE
from bundler.errors import InvalidInputError

# Every delivery, in the order they are tried; the agent watches the kinds of all of them.
DELIVERIES: tuple[Delivery, ...] = (HELM, KUSTOMIZE)
# The delivery every cluster is expected to serve: a cluster without its kinds has no usable
# Flux (the Cluster's FluxSupported condition). Another delivery's kinds missing concern only
# the BundleDeployments of that delivery, each saying so.
BASELINE: Delivery = HELM


def delivery_for(options: DeploymentOptions) -> Delivery:
    """The delivery of `options`: the first that serves them (the API admits one kind each);
    InvalidInputError when none does."""
    for delivery in DELIVERIES:
        if delivery.serves(options):
            return delivery
    served = ", ".join(f"options.{delivery.name}" for delivery in DELIVERIES)
    raise InvalidInputError(f"no delivery serves these options (this agent serves {served})")


def watched_kinds(deliveries: tuple[Delivery, ...] = DELIVERIES) -> tuple[Resource, ...]:
    """The kinds of `deliveries` in apply order: every source before any workload."""
    sources = [res for delivery in deliveries for res in delivery.sources]
    workloads = [delivery.workload for delivery in deliveries]
    return tuple(dict.fromkeys([*sources, *workloads]))
