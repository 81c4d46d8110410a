"""The delivery seam: what a BundleDeployment becomes on a cluster, behind one interface. Pure.

A `Delivery` is one kind of content (Helm charts today, bundler.core.delivery.helm) and answers
everything the agent, the simulated controllers, `render --flux` and the agent's RBAC need to know
about it:
- the downstream kinds it writes and the agent watches: `sources` in apply order, then the
  `workload`, the object Flux reconciles and readiness is read from;
- how the objects for a BundleDeployment are built (`build`, in apply order) and named
  (`workload_name`);
- how readiness, drift and the non-ready objects are read back from the live workload (`read`), and
  held back until it is of the options' version (`current`);
- which Secret its source reads registry credentials from (`secret_ref`), and what to install when
  the cluster does not serve its kinds (`install_hint`).

bundler.core.delivery.registry picks the delivery for a BundleDeployment's options;
bundler.core.rbac grants the agent its kinds. A second kind of content is one more module beside
helm.py, registered there, and its field in the API model: the agent, the planner and the manager
do not change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bundler.api.bundledeployment import BundleDeployment, DeploymentOptions, ReleaseStatus
from bundler.api.resources import Resource
from bundler.api.summary import NonReadyStatus
from bundler.core.flux import FluxTarget

Obj = dict[str, Any]


class ReportReason(StrEnum):
    """Reasons a delivery's reading of its workload gives itself (Flux's own are copied)."""

    NOT_DEPLOYED = "NotDeployed"
    PROGRESSING = "Progressing"
    UNINSTALLING = "Uninstalling"
    SUSPENDED = "Suspended"


@dataclass(frozen=True)
class ReleaseReport:
    """The live workload object as the BundleDeployment's status sees it."""

    ready: bool
    reason: str
    message: str
    release: ReleaseStatus | None = None
    # Flux's message when its last drift check found the release's objects changed, else None.
    drift: str | None = None
    # While not ready: the release's objects that are not.
    objects: tuple[NonReadyStatus, ...] = ()


@dataclass(frozen=True)
class Delivery:
    """One kind of content: the Flux objects it is delivered by, and how they are read back."""

    name: str
    # The kinds the workload reads its content from, in apply order (after the Secrets they read).
    sources: tuple[Resource, ...]
    # The kind Flux reconciles into objects on the cluster: written last, read for readiness.
    workload: Resource
    # Whether a BundleDeployment's options are of this kind of content.
    serves: Callable[[DeploymentOptions], bool]
    # The objects for a BundleDeployment in a target, in apply order; InvalidInputError names the
    # field that cannot become one.
    build: Callable[[BundleDeployment, FluxTarget], list[tuple[Resource, Obj]]]
    workload_name: Callable[[BundleDeployment], str]
    # The live workload (None: not written yet) as the status sees it.
    read: Callable[[Mapping[str, Any] | None], ReleaseReport]
    # A report of the workload written for these options, held back while Flux's newest release
    # is not of the version they name.
    current: Callable[[ReleaseReport, DeploymentOptions], ReleaseReport]
    # The Secret (in the cluster namespace) holding the registry credentials the source reads.
    secret_ref: Callable[[DeploymentOptions], str | None]
    # What to install when the cluster does not serve the kinds.
    install_hint: str

    @property
    def kinds(self) -> tuple[Resource, ...]:
        """Every kind it writes, in apply order."""
        return (*self.sources, self.workload)
