"""Management values copied into cluster namespaces: the copies of the workspace objects that
`valuesFrom` entries with `source: Management` name.

For each pass of a Bundle, the bundle controller reads those objects
(bundler.resolution.management_values.read_delivery) from the manager's caches of the workspace:
every Secret (bundler.manager.observed.scope), and the ConfigMaps labelled for delivery (one
labelled watch; a ConfigMap not in it is read once more, to tell a missing one from one not
labelled). The copies are made by bundler.manager.copies.secret_copies before a BundleDeployment
naming them is written: Secrets `<release>-mgmt-<kind>-<name>-<digest>` in the cluster namespace,
labelled `bundler.dev/secret-copy: management-values`, owned by the BundleDeployments that name them
in their options, staged options or last Ready options (what a rollback returns to), and deleted
once none does. An object that is refused has its copies deleted from every cluster namespace (the
label withdrawn: delivery revoked); the BundleDeployments stay as they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from bundler.api.bundledeployment import DeploymentOptions
from bundler.manager.copies.secret_copies import CopyKind, SecretCopies
from bundler.resolution.management_values import source_key
from bundler.runtime.host import Host
from bundler.store.protocol import Obj, Store

MANAGEMENT_VALUES = "management-values"


def _wanted(options: DeploymentOptions | None) -> dict[str, str]:
    delivered = (options.managementValues if options is not None else None) or ()
    return {d.secretName: source_key(d.kind.value, d.name) for d in delivered}


def _spec_names(spec: Obj) -> set[str]:
    """The copies a BundleDeployment spec (as written) names: in its options, staged options and
    last Ready options."""
    held = [spec.get("options"), spec.get("stagedOptions")]
    held.append((spec.get("lastReady") or {}).get("options"))
    return {
        str(delivered["secretName"])
        for options in held
        for delivered in (options or {}).get("managementValues") or ()
    }


def _copied_from(workspace: str, key: str) -> str:
    kind, _, name = key.partition("/")
    return f"{kind} {workspace}/{name}"


MANAGEMENT = CopyKind(
    mark=MANAGEMENT_VALUES,
    what="the management values",
    remedy="remove that Secret, or rename the Bundle",
    wanted=_wanted,
    named=_spec_names,
    copied_from=_copied_from,
)


class ValuesCopies(SecretCopies):
    """The management values copies of one manager."""

    def __init__(self, store: Store, host: Host, workspaces: Iterable[str | None]) -> None:
        super().__init__(store, host, workspaces, MANAGEMENT)
