"""Which Flux a cluster needs, and what to tell its owner when it has another one.

bundler writes HelmRelease `helm.toolkit.fluxcd.io/v2` (helm-controller v1.0.0, Flux v2.3.0),
HelmRepository `source.toolkit.fluxcd.io/v1` (source-controller v1.3.0, Flux v2.3.0) and
OCIRepository `source.toolkit.fluxcd.io/v1` (source-controller v1.6.0, Flux v2.6.0): the oldest Flux
that serves them all is v2.6.0. An agent that finds one of them not served looks for an older
version of the same kind, so `flux_problem` can tell "too old" (upgrade Flux) from "not installed"
(install it).

Within those versions, later controllers added fields (FIELD_REQUIREMENTS): a Bundle that sets one
needs a newer Flux on the clusters it targets. The agent writes Flux objects with strict field
validation, so a cluster whose CRD lacks the field refuses the write (rather than dropping the
field silently), and `unknown_field_hint` turns the API server's words into which Flux to run.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum

MINIMUM_FLUX = "v2.6.0"


class FluxProblem(StrEnum):
    NOT_INSTALLED = "FluxNotInstalled"
    TOO_OLD = "FluxTooOld"


@dataclass(frozen=True)
class FluxApi:
    kind: str
    group: str
    version: str
    plural: str
    # The controller release that first served this version.
    served_since: str
    # Versions older Flux releases served instead, newest first.
    older: tuple[str, ...]

    @property
    def name(self) -> str:
        """`plural.group`, as discovery and error messages name the kind."""
        return f"{self.plural}.{self.group}"


REQUIRED_APIS = (
    FluxApi("HelmRelease", "helm.toolkit.fluxcd.io", "v2", "helmreleases",
            "helm-controller v1.0.0", ("v2beta2", "v2beta1")),
    FluxApi("HelmRepository", "source.toolkit.fluxcd.io", "v1", "helmrepositories",
            "source-controller v1.3.0", ("v1beta2", "v1beta1")),
    FluxApi("OCIRepository", "source.toolkit.fluxcd.io", "v1", "ocirepositories",
            "source-controller v1.6.0", ("v1beta2",)),
)  # fmt: skip


@dataclass(frozen=True)
class FluxReport:
    problem: FluxProblem
    message: str


def flux_problem(missing: Collection[str], older_served: Mapping[str, str]) -> FluxReport | None:
    """What is wrong with the cluster's Flux, or None.

    `missing`: the required APIs (by `FluxApi.name`) the cluster does not serve at the version
    bundler writes; `older_served`: for those of them served at an older version, that version.
    """
    wanted = [api for api in REQUIRED_APIS if api.name in missing]
    if not wanted:
        return None
    old = [api for api in wanted if api.name in older_served]
    if old:
        found = ", ".join(
            f"{api.kind} {api.group}/{older_served[api.name]} (bundler writes {api.version}, "
            f"served since {api.served_since})"
            for api in old
        )
        return FluxReport(
            FluxProblem.TOO_OLD, f"Flux is too old: the cluster serves {found}; upgrade Flux to "
            f"{MINIMUM_FLUX} or later",
        )  # fmt: skip
    names = ", ".join(f"{api.name}/{api.version}" for api in wanted)
    return FluxReport(
        FluxProblem.NOT_INSTALLED,
        f"Flux is not installed: the cluster does not serve {names}; install Flux {MINIMUM_FLUX} "
        "or later (source-controller and helm-controller)",
    )


@dataclass(frozen=True)
class FieldRequirement:
    """A field bundler may write that an older controller's CRD does not have."""

    kind: str
    # The field's path as the API server names it, list items as `[]`: spec.valuesFrom[].literal.
    path: str
    controller: str
    flux: str


# Fields newer than MINIMUM_FLUX, from the controllers' API types (helm-controller v1.3.0 is Flux
# v2.6.0's, v1.4.0 v2.7.0's, v1.5.0 v2.8.0's, v1.6.0 v2.9.0's; source-controller v1.9.0 v2.9.0's).
_NEWER_FIELDS = (
    ("HelmRelease", "helm-controller v1.4.0", "v2.7.0",
     ("spec.install.strategy", "spec.upgrade.strategy", "spec.commonMetadata")),
    ("HelmRelease", "helm-controller v1.5.0", "v2.8.0",
     ("spec.install.serverSideApply", "spec.upgrade.serverSideApply",
      "spec.rollback.serverSideApply", "spec.waitStrategy", "spec.healthCheckExprs")),
    ("HelmRelease", "helm-controller v1.6.0", "v2.9.0",
     ("spec.postRenderStrategy", "spec.upgrade.chartNameChangeStrategy",
      "spec.valuesFrom[].literal")),
    ("OCIRepository", "source-controller v1.9.0", "v2.9.0", ("spec.verify.trustedRootSecretRef",)),
)  # fmt: skip
FIELD_REQUIREMENTS = tuple(
    FieldRequirement(kind, path, controller, flux)
    for kind, controller, flux, paths in _NEWER_FIELDS
    for path in paths
)

_UNKNOWN_FIELD = re.compile(r'unknown field "([^"]+)"')
_LIST_INDEX = re.compile(r"\[[0-9]+\]")


def unknown_field_hint(message: str) -> str | None:
    """For an API server's refusal of unknown fields (strict field validation): which of them a
    newer Flux serves, and from which release; None when the message names none of those."""
    named = {_LIST_INDEX.sub("[]", path) for path in _UNKNOWN_FIELD.findall(message)}
    found = [r for r in FIELD_REQUIREMENTS if r.path in named]
    if not found:
        return None
    fields = "; ".join(
        f"{r.kind} {r.path} is served from {r.controller} (Flux {r.flux})" for r in found
    )
    return f"this cluster's Flux is older than the Bundle needs: {fields}; upgrade Flux"
