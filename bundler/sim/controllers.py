"""The simulated Flux controllers, one per delivery (bundler.core.delivery.registry): which one
serves a delivery's kinds on a simulated cluster, and the set of them one store gets.

A delivery added to the registry gets its simulated controller here; `simulated_flux` fails on a
delivery without one, so the sim never runs a fleet some BundleDeployments could not converge in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from bundler.core.delivery.helm import HELM
from bundler.core.delivery.kustomize import KUSTOMIZE
from bundler.core.delivery.registry import DELIVERIES
from bundler.runtime.host import Host
from bundler.sim.helm_controller import ClusterOf, FluxSettings, SimulatedHelmController
from bundler.sim.kustomize_controller import SimulatedKustomizeController
from bundler.store.protocol import Store


class SimulatedController(Protocol):
    """A simulated Flux controller on a shared runtime Host."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def busy(self) -> bool:
        """Whether an action is under way (its result not written yet)."""
        ...


# Builds a delivery's simulated controller: (host, store, cluster_of, settings, name).
ControllerFactory = Callable[[Host, Store, ClusterOf, FluxSettings, str], SimulatedController]


def _helm_controller(
    host: Host, store: Store, cluster_of: ClusterOf, settings: FluxSettings, name: str
) -> SimulatedController:
    return SimulatedHelmController(host, store, cluster_of, settings, name=name)


def _kustomize_controller(
    host: Host, store: Store, cluster_of: ClusterOf, settings: FluxSettings, name: str
) -> SimulatedController:
    return SimulatedKustomizeController(host, store, cluster_of, settings, name=name)


# By delivery name: the controller that serves that delivery's kinds.
SIMULATED_CONTROLLERS: Mapping[str, ControllerFactory] = {
    HELM.name: _helm_controller,
    KUSTOMIZE.name: _kustomize_controller,
}


def simulated_flux(
    host: Host, store: Store, cluster_of: ClusterOf, settings: FluxSettings, name: str
) -> list[SimulatedController]:
    """One simulated controller per delivery on `store`, named `<name>:<delivery>`."""
    return [
        SIMULATED_CONTROLLERS[delivery.name](
            host, store, cluster_of, settings, f"{name}:{delivery.name}"
        )
        for delivery in DELIVERIES
    ]
