"""Which Flux a cluster needs, and what to tell its owner when it has another one.

bundler writes HelmRelease `helm.toolkit.fluxcd.io/v2` (helm-controller v1.0.0, Flux v2.3.0),
HelmRepository `source.toolkit.fluxcd.io/v1` (source-controller v1.3.0, Flux v2.3.0) and
OCIRepository `source.toolkit.fluxcd.io/v1` (source-controller v1.6.0, Flux v2.6.0): the oldest Flux
that serves them all is v2.6.0. An agent that finds one of them not served looks for an older
version of the same kind, so `flux_problem` can tell "too old" (upgrade Flux) from "not installed"
(install it).
"""

from __future__ import annotations

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
