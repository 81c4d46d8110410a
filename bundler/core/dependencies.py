"""dependsOn resolved into names, and whether a dependency lets a dependent proceed. Pure.

A Bundle's `dependsOn` names Bundles of its workspace, or picks them by label selector (Fleet's
two forms). The manager resolves selectors centrally, as it resolves version ranges: every Bundle
of the workspace whose labels the selector picks (the Bundle itself left out), sorted by name, each
with the entry's acceptedStates; a Bundle named twice keeps its first entry. The
BundleDeployment's `options.dependsOn` carries the resolved names, so the agent, which sees only its
cluster's BundleDeployments, checks each by name: the dependency's BundleDeployment on the cluster
must be in one of the accepted states (`accepts`). Without acceptedStates that is Ready as the agent
always read it: its current deployment applied and its release Ready.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import BundleDeployment
from bundler.api.dependencies import DependsOn
from bundler.api.summary import DeploymentState
from bundler.core.selectors import selector_matches, selector_to_string
from bundler.core.state import deployment_state

# States in which the dependency's HelmRelease is Ready in Flux: a dependent accepting only these
# may also depend on it in Flux (HelmRelease dependsOn), which waits for Ready.
FLUX_READY_STATES = frozenset(
    {DeploymentState.READY, DeploymentState.OUT_OF_SYNC, DeploymentState.MODIFIED}
)

# Bundles of a workspace by name, with their labels.
WorkspaceBundles = Mapping[str, Mapping[str, str]]


def has_selectors(bundle: Bundle) -> bool:
    return any(dep.selector is not None for dep in bundle.spec.dependsOn)


def resolve_dependencies(bundle: Bundle, bundles: WorkspaceBundles) -> tuple[DependsOn, ...]:
    """`bundle`'s dependsOn as names: selectors resolved against `bundles` (the workspace's)."""
    resolved: dict[str, DependsOn] = {}
    for dep in bundle.spec.dependsOn:
        if dep.name is not None:
            resolved.setdefault(dep.name, _named(dep.name, dep))
        elif dep.selector is not None:
            for name in sorted(bundles):
                if name != bundle.metadata.name and selector_matches(dep.selector, bundles[name]):
                    resolved.setdefault(name, _named(name, dep))
    return tuple(resolved.values())


def _named(name: str, dep: DependsOn) -> DependsOn:
    return DependsOn(name=name, acceptedStates=dep.acceptedStates)


def unmatched_selector(bundle: Bundle, index: int, bundles: WorkspaceBundles) -> str | None:
    """Why `bundle`'s dependsOn[index] selector picks no other Bundle of the workspace, if so."""
    selector = bundle.spec.dependsOn[index].selector
    if selector is None:
        return None
    others = (n for n in bundles if n != bundle.metadata.name)
    if any(selector_matches(selector, bundles[n]) for n in others):
        return None
    return (
        f"spec.dependsOn[{index}].selector: no other Bundle of {bundle.metadata.namespace} has "
        f"labels {selector_to_string(selector) or '(any)'!r}, so it waits for nothing"
    )


def accepts(dep: DependsOn, deployment: BundleDeployment | None) -> bool:
    """Whether the dependency's BundleDeployment on the cluster (None: there is none) lets the
    dependent proceed."""
    if deployment is None:
        return False
    if dep.acceptedStates is None:
        status = deployment.status
        return (
            status is not None
            and status.ready
            and status.appliedDeploymentID == deployment.spec.deploymentID
        )
    return deployment_state(deployment) in dep.acceptedStates


def waits_in_flux(dep: DependsOn) -> bool:
    """Whether the dependent's HelmRelease also depends on the dependency's in Flux (which waits
    for it Ready): only when every state accepted is one where it is."""
    return dep.acceptedStates is None or set(dep.acceptedStates) <= FLUX_READY_STATES


def workspace_bundles(
    bundles: Iterable[Bundle], workspace: str | None
) -> dict[str, dict[str, str]]:
    """The Bundles of `workspace` among `bundles`, by name, with their labels."""
    return {
        b.metadata.name: dict(b.metadata.labels)
        for b in bundles
        if b.metadata.namespace == workspace
    }
