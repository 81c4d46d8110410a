"""What `bundler sim` prints: progress lines while it runs, then a table per bundle (or JSON).

Everything is read from the statuses the manager wrote, so the report shows exactly what a user of
a real management cluster would see on the Bundles and Clusters. On request it also shows the values
each cluster received for a bundle (from its BundleDeployments), to see templating at work.

A run *succeeded* (so `bundler sim` can gate CI) when the fleet came to rest and every Bundle is
Ready: every targeted deployment Ready (none ErrApplied, NotReady, ...), none held back as a whole
(invalid spec, unresolved version, missing credentials). A Bundle that targets no cluster is a
warning, as in `render`. Clusters count as ready only when some bundle targets them and all of
those are Ready; a Cluster that is not Ready itself but runs nothing (a Cluster API cluster still
gated on its control plane, an untargeted offline agent) is listed, not a failure: nothing was
asked of it.

Each Bundle also shows the images the manager resolved for it (`status.resolvedImages`) and, when
its ImagesResolved condition is False, why.

Rollout gates: the report lists, in time order, what each Bundle's rollout waited at (its GATE
column: a bake, an approval, a maintenance window) and the approvals the run gave. A Bundle whose
only clusters not Ready wait for their maintenance window is reported, not a failure: its
schedule says they wait.

JSON keys are camelCase, as in the API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from bundler import yamldump
from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER
from bundler.api.summary import NON_READY_MAX, DeploymentState
from bundler.core.bootstrap import BootstrapCondition
from bundler.core.labels import LABEL_BUNDLE_NAME, LABEL_BUNDLE_NAMESPACE, LABEL_CLUSTER_NAME
from bundler.core.rollout_gates import GateReason
from bundler.core.state import ConditionType
from bundler.core.summary import REASON_NO_TARGETS
from bundler.manager.controllers.bundle_controller import REASON_DELETION_HELD
from bundler.manager.controllers.rollout_memory import REASON_HALTED, REASON_ROLLED_BACK
from bundler.sim.gates import GateEvent
from bundler.store.protocol import Obj, Store

_READY = DeploymentState.READY.value
_OUTSIDE_WINDOW = GateReason.OUTSIDE_WINDOW.value
# Reasons that hold a Bundle's rollout as a whole while its clusters show the consequences.
_ROLLOUT_HOLDS = frozenset({REASON_HALTED, REASON_ROLLED_BACK, REASON_DELETION_HELD})
_COUNT_FIELDS = (
    "ready",
    "notReady",
    "errApplied",
    "waitApplied",
    "pending",
    "outOfSync",
    "modified",
    "offline",
)


@dataclass(frozen=True)
class NonReadyCluster:
    cluster: str
    state: str
    message: str


@dataclass(frozen=True)
class BundleReport:
    bundle: str
    version: str  # status.resolvedVersion, else the VERSION column, else spec.helm.version
    ready: int
    desired: int
    state: str
    counts: dict[str, int]
    non_ready: list[NonReadyCluster] = field(default_factory=list)
    # Not-ready clusters beyond those the Bundle status lists (it keeps at most 10).
    unlisted: int = 0
    # The Bundle's own Ready condition when it is not True: why it is held back as a whole
    # (an invalid spec, an unresolved version, missing credentials, no targets).
    reason: str = ""
    message: str = ""
    # status.resolvedImages as the Bundle shows it, and why ImagesResolved is False, if it is.
    images: list[dict[str, str]] = field(default_factory=list)
    images_problem: str = ""
    # The GATE column: what the rollout waits at now.
    gate: str = ""

    @property
    def succeeded(self) -> bool:
        """Every targeted deployment Ready and nothing held back, or the clusters not Ready
        all waiting for their maintenance windows; no targets is only a warning."""
        if self.ready == self.desired and self.reason in ("", REASON_NO_TARGETS):
            return True
        return (
            self.reason == _OUTSIDE_WINDOW
            and self.unlisted == 0
            and all(n.message.startswith(f"{_OUTSIDE_WINDOW}:") for n in self.non_ready)
        )


@dataclass(frozen=True)
class NonReadyClusterReport:
    """A Cluster whose own Ready condition is not True (an import gate, an offline agent, ...)."""

    cluster: str
    reason: str
    message: str


@dataclass(frozen=True)
class BootstrapReport:
    """A bootstrapped Cluster's phase: its agent mode and each bootstrap condition's reason."""

    cluster: str
    mode: str
    flux: str
    agent: str
    bootstrapped: str


@dataclass(frozen=True)
class FleetReport:
    converged: bool
    elapsed: float
    clusters: int
    clusters_targeted: int
    clusters_ready: int
    bundles: list[BundleReport]
    non_ready_clusters: list[NonReadyClusterReport] = field(default_factory=list)
    # Not-ready clusters beyond the NON_READY_MAX shown (as many as a Bundle's status.nonReady).
    unlisted_clusters: int = 0
    # bundle "ns/name" -> cluster name -> the values its BundleDeployment carries
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    bootstrap: list[BootstrapReport] = field(default_factory=list)
    gates: list[GateEvent] = field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        return self.converged and all(b.succeeded for b in self.bundles)

    def to_json(self) -> dict[str, Any]:
        report: dict[str, Any] = _camel_fields(self)
        report["succeeded"] = self.succeeded
        return report


def _camel_fields(value: Any) -> Any:
    """Dataclasses as JSON with camelCase field names; other data (values, counts) as it is."""
    if is_dataclass(value) and not isinstance(value, type):
        return {_camel(f.name): _camel_fields(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list):
        return [_camel_fields(item) for item in value]
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def collect(
    store: Store,
    *,
    converged: bool,
    elapsed: float,
    values_of: Sequence[str] = (),
    gates: Sequence[GateEvent] = (),
) -> FleetReport:
    bundles = sorted(store.list(BUNDLE).items, key=_ref)
    clusters = sorted(store.list(CLUSTER).items, key=_ref)
    targeted = [c for c in clusters if _is_targeted(c)]
    not_ready = [_cluster_report(c) for c in clusters if not _is_ready(c)]
    return FleetReport(
        converged=converged,
        elapsed=round(elapsed, 3),
        clusters=len(clusters),
        clusters_targeted=len(targeted),
        clusters_ready=sum(1 for c in targeted if _is_ready(c)),
        bundles=[_bundle_report(b) for b in bundles],
        non_ready_clusters=not_ready[:NON_READY_MAX],
        unlisted_clusters=max(0, len(not_ready) - NON_READY_MAX),
        values={ref: _values_of(store, ref) for ref in values_of},
        bootstrap=[b for c in clusters if (b := _bootstrap_report(c)) is not None],
        gates=list(gates),
    )


def _bootstrap_report(cluster: Obj) -> BootstrapReport | None:
    conditions = {c.get("type"): c for c in (cluster.get("status") or {}).get("conditions") or []}
    if BootstrapCondition.BOOTSTRAPPED.value not in conditions:
        return None

    def phase(kind: BootstrapCondition) -> str:
        found = conditions.get(kind.value) or {}
        return f"{found.get('status', '-')}/{found.get('reason', '-')}"

    return BootstrapReport(
        _ref(cluster),
        str((cluster.get("spec") or {}).get("agentMode", "")),
        phase(BootstrapCondition.FLUX_INSTALLED),
        phase(BootstrapCondition.AGENT_CONNECTED),
        phase(BootstrapCondition.BOOTSTRAPPED),
    )


def _is_targeted(cluster: Obj) -> bool:
    summary = (cluster.get("status") or {}).get("summary") or {}
    return int(summary.get("desiredReady", 0)) > 0


def _ready_condition(obj: Obj) -> dict[str, Any]:
    conditions = (obj.get("status") or {}).get("conditions") or []
    found: dict[str, Any] = next((c for c in conditions if c.get("type") == _READY), {})
    return found


def _cluster_report(cluster: Obj) -> NonReadyClusterReport:
    ready = _ready_condition(cluster)
    return NonReadyClusterReport(
        _ref(cluster), str(ready.get("reason", "Unknown")), str(ready.get("message", ""))
    )


def _values_of(store: Store, bundle_ref: str) -> dict[str, Any]:
    namespace, _, name = bundle_ref.partition("/")
    labels = {LABEL_BUNDLE_NAMESPACE: namespace, LABEL_BUNDLE_NAME: name}
    deployments = store.list(BUNDLE_DEPLOYMENT, labels=labels).items
    return {
        bd["metadata"]["labels"][LABEL_CLUSTER_NAME]: (bd["spec"]["options"].get("helm") or {}).get(
            "values"
        )
        or {}
        for bd in sorted(deployments, key=lambda bd: bd["metadata"]["labels"][LABEL_CLUSTER_NAME])
    }


def progress_line(store: Store, elapsed: float) -> str:
    """`t=3.0s bundles ready 2/3, targeted clusters 10/12`."""
    bundles = store.list(BUNDLE).items
    targeted = [c for c in store.list(CLUSTER).items if _is_targeted(c)]
    bundles_ready = sum(1 for b in bundles if _is_ready(b))
    clusters_ready = sum(1 for c in targeted if _is_ready(c))
    line = (
        f"t={elapsed:.1f}s bundles ready {bundles_ready}/{len(bundles)}, "
        f"targeted clusters {clusters_ready}/{len(targeted)}"
    )
    gated = [f"{_ref(b)} {g}" for b in bundles if (g := _gate_of(b))]
    if gated:
        line += ", waiting: " + ", ".join(gated)
    phases = [b for c in store.list(CLUSTER).items if (b := _bootstrap_report(c)) is not None]
    if phases:
        line += ", bootstrap: " + ", ".join(
            f"{b.cluster.partition('/')[2]} {b.bootstrapped.partition('/')[2]} ({b.mode})"
            for b in phases
        )
    return line


def _verdict(report: FleetReport) -> str:
    if not report.converged:
        return "did NOT converge"
    return "converged" if report.succeeded else "converged, NOT all ready"


def format_table(report: FleetReport) -> str:
    untargeted = report.clusters - report.clusters_targeted
    lines = [
        f"{_verdict(report)} in {report.elapsed:.1f}s: "
        f"{report.clusters_ready}/{report.clusters_targeted} targeted clusters ready"
        + (f" ({untargeted} untargeted)" if untargeted else "")
        + f", {len(report.bundles)} bundles",
        "",
    ]
    rows = [("BUNDLE", "VERSION", "READY", "STATE", "COUNTS")]
    rows += [
        (
            b.bundle,
            b.version or "-",
            f"{b.ready}/{b.desired}",
            b.state or "-",
            _counts_text(b.counts),
        )
        for b in report.bundles
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for index, row in enumerate(rows):
        lines.append(
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4]
        )
        if index == 0:
            continue
        lines.extend(_image_lines(report.bundles[index - 1]))
        lines.extend(_non_ready_lines(report.bundles[index - 1]))
    if report.non_ready_clusters:
        lines += ["", "CLUSTERS NOT READY"]
        lines += [f"    {c.cluster}  {c.reason}  {c.message}" for c in report.non_ready_clusters]
        if report.unlisted_clusters:
            lines.append(f"    ... and {report.unlisted_clusters} more not ready")
    if report.gates:
        lines += ["", "ROLLOUT GATES (T  BUNDLE  WAITING AT)"]
        lines += [
            f"    t={g.at:.1f}s  {g.bundle}  {g.gate or 'no gate: moving on'}" for g in report.gates
        ]
    if report.bootstrap:
        lines += ["", "BOOTSTRAP (CLUSTER  MODE  FLUX-INSTALLED  AGENT-CONNECTED  BOOTSTRAPPED)"]
        lines += [
            f"    {b.cluster}  {b.mode}  {b.flux}  {b.agent}  {b.bootstrapped}"
            for b in report.bootstrap
        ]
    for bundle, per_cluster in report.values.items():
        lines += ["", f"VALUES OF {bundle}"]
        for cluster, values in per_cluster.items():
            lines.append(f"  {cluster}:")
            dumped = yamldump.dump(values)
            lines += [f"    {line}" for line in dumped.rstrip().splitlines()]
    return "\n".join(lines).rstrip() + "\n"


def _image_lines(bundle: BundleReport) -> list[str]:
    lines = []
    for image in bundle.images:
        target = f" (target {image['target']})" if image.get("target") else ""
        ref = f"{image.get('repository')}:{image.get('tag')}"
        lines.append(f"    image {image.get('name')}{target}: {ref}")
    if bundle.images_problem:
        lines.append(f"    ImagesResolved=False {bundle.images_problem}")
    return lines


def _non_ready_lines(bundle: BundleReport) -> list[str]:
    lines = [f"    {n.cluster}  {n.state}  {n.message}".rstrip() for n in bundle.non_ready]
    # A halted rollout or a held deletion comes first: the clusters' states follow from it.
    if bundle.reason and (not lines or bundle.reason in _ROLLOUT_HOLDS):
        lines.insert(0, f"    {bundle.reason}: {bundle.message}".rstrip(": "))
    if bundle.unlisted:
        lines.append(f"    ... and {bundle.unlisted} more not ready")
    return lines


def _counts_text(counts: dict[str, int]) -> str:
    shown = [f"{name}={counts[name]}" for name in _COUNT_FIELDS if counts.get(name)]
    return " ".join(shown) or "-"


def _bundle_report(bundle: Obj) -> BundleReport:
    status = bundle.get("status") or {}
    summary = status.get("summary") or {}
    listed = [
        NonReadyCluster(
            str(entry.get("cluster", "")),
            str(entry.get("state", "")),
            str(entry.get("message", "")),
        )
        for entry in status.get("nonReady") or []
    ]
    desired = int(summary.get("desiredReady", 0))
    ready = int(summary.get("ready", 0))
    condition = _ready_condition(bundle)
    held = condition.get("status") != "True"
    helm = (bundle.get("spec") or {}).get("helm") or {}
    # The VERSION column's (a Kustomize artifact's tag too), else the chart version as written.
    shown = (status.get("display") or {}).get("version")
    return BundleReport(
        bundle=_ref(bundle),
        version=str(status.get("resolvedVersion") or shown or helm.get("version") or ""),
        ready=ready,
        desired=desired,
        state=_display_state(bundle) or "",
        counts={name: int(summary.get(name, 0)) for name in _COUNT_FIELDS},
        non_ready=listed,
        unlisted=max(0, desired - ready - len(listed)),
        reason=str(condition.get("reason", "")) if held else "",
        message=str(condition.get("message", "")) if held else "",
        images=[dict(image) for image in status.get("resolvedImages") or []],
        images_problem=_images_problem(bundle),
        gate=_gate_of(bundle),
    )


def _gate_of(bundle: Obj) -> str:
    return str(((bundle.get("status") or {}).get("display") or {}).get("gate") or "")


def _images_problem(bundle: Obj) -> str:
    """`REASON: message` of the Bundle's ImagesResolved condition when it is False."""
    for found in (bundle.get("status") or {}).get("conditions") or []:
        if (
            found.get("type") == ConditionType.IMAGES_RESOLVED.value
            and found.get("status") == "False"
        ):
            return f"{found.get('reason', '')}: {found.get('message', '')}"
    return ""


def _is_ready(obj: Obj) -> bool:
    """The Ready condition: a Cluster without bundles is Ready though it shows no state."""
    return _ready_condition(obj).get("status") == "True"


def _display_state(obj: Obj) -> str | None:
    state: str | None = ((obj.get("status") or {}).get("display") or {}).get("state")
    return state


def _ref(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}"
