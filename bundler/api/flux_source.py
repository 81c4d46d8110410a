"""`spec.helm.source`: settings of the Flux source object a chart is fetched through
(OCIRepository for oci://, HelmRepository for https:// and http://, source.toolkit.fluxcd.io/v1).

bundler writes the source's url, ref, layerSelector and secretRef (from repo, chart, version and
secretRef); these are the other fields, under Flux's names. Some exist for one kind only; the core
refuses them for the other, naming the field. Secrets named here are read by source-controller in
the source's own namespace: the agent's namespace on the downstream cluster (pull mode), the
cluster namespace on the management cluster (remote mode).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints

from bundler.api.base import ApiModel
from bundler.api.meta import Duration, LocalObjectReference

# A source's timeout: Flux's duration without hours.
SourceTimeout = Annotated[str, StringConstraints(pattern=r"^([0-9]+(\.[0-9]+)?(ms|s|m))+$")]


class SourceProvider(StrEnum):
    GENERIC = "generic"
    AWS = "aws"
    AZURE = "azure"
    GCP = "gcp"


class VerificationProvider(StrEnum):
    COSIGN = "cosign"
    NOTATION = "notation"


class OIDCIdentityMatch(ApiModel):
    """A keyless (Fulcio) signer accepted: both regular expressions must match its certificate."""

    issuer: str = Field(min_length=1)
    """Go regular expression for the OIDC issuer, e.g.
    ^https://token.actions.githubusercontent.com$."""
    subject: str = Field(min_length=1)
    """Go regular expression for the identity, e.g. ^https://github.com/org/repo/.*$."""


class Verification(ApiModel):
    """Signature verification of the chart artifact before Flux uses it (OCIRepository
    spec.verify): an artifact whose signature does not verify is not deployed."""

    provider: VerificationProvider | None = None
    """cosign (Flux's default) or notation."""
    secretRef: LocalObjectReference | None = None
    """A Secret of trusted public keys (cosign: keys ending in .pub; notation: the trust policy and
    certificates), in the source's namespace. Unset with cosign: keyless verification against
    Sigstore, constrained by matchOIDCIdentity."""
    matchOIDCIdentity: list[OIDCIdentityMatch] | None = None
    """Keyless cosign: the signers accepted (any one matching suffices)."""
    trustedRootSecretRef: LocalObjectReference | None = None
    """Keyless cosign against a self-hosted Sigstore: a Secret with trusted_root.json
    (source-controller v1.9.0, Flux v2.9.0)."""


class SourceOptions(ApiModel):
    """The chart source's own settings, passed through under Flux's names."""

    interval: Duration | None = None
    """How often Flux checks the source for changes (default: helm.interval)."""
    timeout: SourceTimeout | None = None
    """Timeout of each request to the registry or repository (Flux's default 60s; no hours)."""
    provider: SourceProvider | None = None
    """oci:// only: how source-controller authenticates to the registry: generic (Flux's
    default: helm.secretRef, or none), aws, azure or gcp (the cloud's workload identity)."""
    verify: Verification | None = None
    """oci:// only: verify the chart artifact's signature (cosign or notation) before it is
    deployed."""
    certSecretRef: LocalObjectReference | None = None
    """A Secret with ca.crt (a private CA) and/or tls.crt and tls.key (a client certificate)
    for the registry or repository, in the source's namespace."""
    proxySecretRef: LocalObjectReference | None = None
    """oci:// only: a Secret with the proxy's address (and username and password), in the
    source's namespace."""
    serviceAccountName: str | None = Field(default=None, min_length=1, max_length=253)
    """oci:// only: a ServiceAccount, in the source's namespace, whose imagePullSecrets (or
    workload identity, with a cloud provider) authenticate to the registry."""
    passCredentials: bool | None = None
    """https:// and http:// only: send helm.secretRef's credentials also to a chart download
    host other than the repository's."""
