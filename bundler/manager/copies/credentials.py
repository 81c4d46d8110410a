"""Repository credentials for the clusters: `helm.secretRef` Secrets copied into cluster namespaces.

The agent reads a BundleDeployment's `helm.secretRef` Secret from its cluster namespace, under the
same name: in pull mode it writes it next to the Flux source on its cluster, in remote mode the
source on the management cluster reads it there. So the bundle controller, before it writes a
BundleDeployment that names a Secret, copies that Secret from the workspace into the cluster
namespace (bundler.manager.copies.secret_copies: labelled `bundler.dev/secret-copy:
repository-credentials`, annotated with where it came from, owned by the BundleDeployments that name
it now or staged).

The sources are read from the manager's watch of the workspace's Secrets
(bundler.manager.observed.scope), which wakes the Bundles that name a Secret whenever it changes
(bundler.manager.observed.routing): a changed Secret reaches every copy at once, and a missing one
rejects the Bundle, naming it, until it exists again.

Only registry credentials are read and copied (bundler.core.credentials): a Bundle naming any
other Secret of its workspace - a Cluster's kubeconfig, a ServiceAccount or bootstrap token, an
unlabelled Opaque Secret - is refused (CredentialsRefusedError, naming the Secret and the rule)
before the Secret's data is used at all, and any copy of it made earlier (before the Secret's
type changed, say) is deleted from every cluster namespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bundler.api.bundle import Bundle
from bundler.api.bundledeployment import DeploymentOptions
from bundler.core.content import credentials_field, credentials_secret
from bundler.core.credentials import credentials_refusal, refusal_message
from bundler.core.validation import bundle_ref
from bundler.errors import InvalidInputError
from bundler.manager.copies.secret_copies import CopyKind, SecretCopies
from bundler.runtime.host import Host
from bundler.runtime.informer import Informer
from bundler.store.protocol import Obj, Store

REPOSITORY_CREDENTIALS = "repository-credentials"


class CredentialsRefusedError(InvalidInputError):
    """The Secret a Bundle names (`secret`, in the Bundle's workspace) is not one meant as
    registry credentials."""

    def __init__(self, message: str, *, secret: str, obj: str, field: str) -> None:
        super().__init__(message, obj=obj, field=field)
        self.secret = secret


def read_sources(
    secrets: Informer,
    bundle: Bundle,
    names: Iterable[str],
    kubeconfig_of: Mapping[str, str] | None = None,
) -> dict[str, Obj]:
    """The workspace Secrets `names`, from `secrets` (the informer of the Bundle's workspace);
    InvalidInputError naming the first one missing, CredentialsRefusedError the first one that
    is not registry credentials (`kubeconfig_of`: the workspace's kubeconfig Secrets, by name,
    with their Cluster)."""
    workspace = bundle.metadata.namespace or ""
    found = {}
    for name in sorted(set(names)):
        secret = secrets.get(workspace, name)
        if secret is None:
            raise InvalidInputError(
                f"Secret {workspace}/{name} with the repository credentials does not exist",
                obj=bundle_ref(bundle),
                field=credentials_field(bundle.spec),
            )
        why = credentials_refusal(secret, kubeconfig_of)
        if why is not None:
            raise CredentialsRefusedError(
                refusal_message(workspace, name, why),
                secret=name,
                obj=bundle_ref(bundle),
                field=credentials_field(bundle.spec),
            )
        found[name] = secret
    return found


def secret_names(options: DeploymentOptions | None) -> set[str]:
    """The credentials Secret a deployment's options name (none or one)."""
    name = credentials_secret(options) if options is not None else None
    return {name} if name is not None else set()


def _wanted(options: DeploymentOptions | None) -> dict[str, str]:
    """A credentials copy has the name of its source."""
    return {name: name for name in secret_names(options)}


def _spec_names(spec: Obj) -> set[str]:
    """The credentials Secrets a BundleDeployment spec (as written) names, now or staged."""
    names = set()
    for options in (spec.get("options"), spec.get("stagedOptions")):
        source = ((options or {}).get("kustomize") or {}).get("source") or {}
        for holder in ((options or {}).get("helm"), source.get("oci"), source.get("git")):
            ref = (holder or {}).get("secretRef") or {}
            if ref.get("name"):
                names.add(str(ref["name"]))
    return names


CREDENTIALS = CopyKind(
    mark=REPOSITORY_CREDENTIALS,
    what="the repository credentials",
    remedy=(
        "give the workspace's credentials Secret (spec.helm.secretRef, or the secretRef of "
        "spec.kustomize.source) another name, or remove "
        "that Secret"
    ),
    wanted=_wanted,
    named=_spec_names,
    copied_from=lambda workspace, name: f"{workspace}/{name}",
)


class CredentialCopies(SecretCopies):
    """The credentials copies of one manager."""

    def __init__(self, store: Store, host: Host, workspaces: Iterable[str | None]) -> None:
        super().__init__(store, host, workspaces, CREDENTIALS)
