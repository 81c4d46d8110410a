"""dependsOn: the Bundles that must be deployed on a cluster before a Bundle's new options are
applied there, as Fleet writes it (by name or by label selector, with accepted states)."""

from __future__ import annotations

from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.selector import LabelSelector
from bundler.api.summary import DeploymentState


class DependsOn(ApiModel):
    """Bundles of the same workspace that must be in an accepted state on a cluster first: the
    one named, or every one whose labels the selector picks (exactly one of the two)."""

    name: str | None = Field(default=None, min_length=1)
    """Name of a Bundle in the same workspace (not this Bundle's own name)."""
    selector: LabelSelector | None = None
    """Picks the Bundles of the same workspace whose labels it selects (this Bundle left out);
    the manager resolves it into names, as it resolves version ranges: a Bundle labelled later
    is waited for from then on."""
    acceptedStates: list[DeploymentState] | None = Field(default=None, min_length=1)
    """The states of the dependency's BundleDeployment on the cluster that let this Bundle
    proceed, e.g. [Ready, Modified] (Fleet's field). Default: Ready (its current deployment
    applied and its release Ready; a newer one staged or drift on the cluster do not hold it
    back). When only Ready, OutOfSync and Modified are accepted, the HelmRelease also depends on
    the dependency's HelmRelease in Flux."""
