"""The agent's look at the Flux its cluster runs (bundler.core.flux.requirements says which).

The agent's caches already tell which Flux kinds are not served at the versions bundler writes;
for those, one list request per older version finds whether an older Flux serves them, so the
Cluster can say "upgrade Flux" rather than "install Flux". Nothing is asked while every kind is
served. The finding goes into the heartbeat (`status.agent.flux`), from which the manager writes
the Cluster's FluxSupported condition.
"""

from __future__ import annotations

from bundler.agent.caches import FluxNotInstalledError
from bundler.api.resources import Resource
from bundler.core.flux.requirements import REQUIRED_APIS, FluxReport
from bundler.store.errors import Forbidden, KindNotServed
from bundler.store.protocol import Store


def older_flux_versions(
    store: Store, namespace: str, missing: FluxNotInstalledError
) -> dict[str, str]:
    """For each missing kind an older Flux serves, the newest such version (asked in the
    agent's own namespace, where it may list Flux objects)."""
    found: dict[str, str] = {}
    for api in REQUIRED_APIS:
        if api.name not in missing.kinds:
            continue
        for version in api.older:
            older = Resource(api.group, version, api.kind, api.plural)
            try:
                # Labels nothing carries: the answer is the kind's being served, not objects.
                store.list(older, namespace, labels={"bundler.dev/flux-version-probe": "true"})
            except (KindNotServed, Forbidden):
                continue
            found[api.name] = version
            break
    return found


def flux_status(report: FluxReport | None) -> dict[str, object]:
    """`status.agent.flux` as the heartbeat writes it."""
    if report is None:
        return {"supported": True, "reason": None, "message": None}
    return {"supported": False, "reason": report.problem.value, "message": report.message}
