"""Helm's own template engine, through helm-python-sdk (Helm's Go SDK) or a `helm` binary.

`find_engine()` picks helm-python-sdk when it is installed (`pip install helm-python-sdk`, the
`helm` extra), else a `helm` binary on PATH (`helm template`), else raises an error saying how to
get one. Both render offline, as `helm template` does: no cluster is contacted (`lookup` finds
nothing). The Kube version, when the caller knows it, is passed as Helm's `--kube-version`;
otherwise Helm's default applies. CRDs (a chart's `crds/`) come first unless the release skips
them, as helm-controller installs them before the templates.

A chart's templates are its author's: the binary runs with `--render-timeout`; the SDK, which
cannot be cancelled, renders in a child process killed at `--render-timeout` and limited to
`--render-memory` of data memory (bundler.manifests.sandbox). What either renders is read within
a cap (MAX_RENDERED_BYTES, checked by bundler.manifests.release).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bundler.errors import BundlerError, TemplateError
from bundler.manifests.sandbox import RenderLimits, RenderWorker, timeout_message

HELM_BINARY = "helm"
# What one release may render to: ten times Kubernetes' 3 MiB limit on one stored release.
MAX_RENDERED_BYTES = 32 << 20
INSTALL_HINT = (
    "rendering charts needs Helm's engine: install helm-python-sdk beside bundler "
    "(pip install helm-python-sdk; from a checkout, pip install '.[helm]') or put a helm binary "
    "on PATH (https://helm.sh/docs/intro/install/)"
)


@dataclass(frozen=True)
class ReleaseInput:
    """What helm-controller installs: a chart archive as release `name` in `namespace`."""

    chart: Path
    name: str
    namespace: str
    values: dict[str, Any] = field(default_factory=dict)
    kube_version: str | None = None
    include_crds: bool = True
    # helm-controller runs the chart's tests (test.enable): its test hooks are shown too.
    tests: bool = False


class HelmEngine(Protocol):
    name: str

    def render(self, release: ReleaseInput) -> str:
        """The release's manifests as one YAML stream; TemplateError when the chart fails."""


class SdkEngine:
    """helm-python-sdk: Helm's Go SDK, in a child process within `limits`."""

    name = "helm-python-sdk"

    def __init__(self, limits: RenderLimits | None = None) -> None:
        self.worker = RenderWorker(limits or RenderLimits(), MAX_RENDERED_BYTES)

    def render(self, release: ReleaseInput) -> str:
        return self.worker.render(release)


def sdk_render(release: ReleaseInput) -> str:
    """helm-python-sdk's render of `release` in this process, unbounded: the sandbox's child
    calls it."""
    import helm_python as helm
    from helm_python import _native

    # Chart.render does not forward kube_version, which the C ABI's helm_render takes.
    options: dict[str, Any] = {"name": release.name, "namespace": release.namespace}
    if release.kube_version is not None:
        options["kube_version"] = release.kube_version
    try:
        with helm.Chart.load(release.chart) as chart:
            raw = _native.call_string(
                "helm_render", chart._raw(), json.dumps(release.values), json.dumps(options)
            )
            crds = [crd["data"] for crd in chart.crds] if release.include_crds else []
    except helm.HelmError as err:
        raise TemplateError(_first_lines(str(err))) from None
    manifests: dict[str, str] = json.loads(raw)
    return _stream(crds, manifests)


class BinaryEngine:
    """`helm template` of a helm binary, run with `--render-timeout`."""

    name = "helm"

    def __init__(self, binary: str, limits: RenderLimits | None = None) -> None:
        self.binary = binary
        self.limits = limits or RenderLimits()

    def render(self, release: ReleaseInput) -> str:
        with tempfile.TemporaryDirectory(prefix="bundler-values-") as scratch:
            values = Path(scratch, "values.json")
            values.write_text(json.dumps(release.values), encoding="utf-8")
            command = [
                self.binary,
                "template",
                release.name,
                str(release.chart),
                "--namespace",
                release.namespace,
                "--values",
                str(values),
            ]
            if release.include_crds:
                command.append("--include-crds")
            if release.kube_version is not None:
                command.extend(["--kube-version", release.kube_version])
            try:
                done = subprocess.run(
                    command, capture_output=True, timeout=self.limits.timeout_s, check=False
                )
            except subprocess.TimeoutExpired:
                raise TemplateError(timeout_message(self.limits)) from None
        if done.returncode != 0:
            raise TemplateError(_first_lines(done.stderr.decode("utf-8", "replace")))
        return done.stdout.decode("utf-8", "replace")


def find_engine(limits: RenderLimits | None = None) -> HelmEngine:
    """helm-python-sdk when installed, else a helm binary on PATH; BundlerError naming both.
    Renders are bounded by `limits` (the binary's by its timeout only)."""
    try:
        import helm_python  # noqa: F401
    except ImportError:
        binary = shutil.which(HELM_BINARY)
        if binary is None:
            raise BundlerError(INSTALL_HINT) from None
        return BinaryEngine(binary, limits)
    return SdkEngine(limits)


def _stream(crds: list[str], manifests: dict[str, str]) -> str:
    """One YAML stream: the CRDs, then the templates in path order, as `helm template` prints;
    partials and NOTES.txt are not manifests."""
    texts = list(crds)
    for path in sorted(manifests):
        base = path.rsplit("/", 1)[-1]
        if base.startswith("_") or base == "NOTES.txt" or not manifests[path].strip():
            continue
        texts.append(f"# Source: {path}\n{manifests[path]}")
    return "".join(f"---\n{text.rstrip()}\n" for text in texts)


def _first_lines(message: str, limit: int = 5) -> str:
    lines = [line for line in message.strip().splitlines() if line.strip()]
    return "; ".join(lines[:limit]) or "helm failed without a message"
