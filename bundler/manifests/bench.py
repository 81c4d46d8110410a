"""`python -m bundler.manifests.bench` (`make bench`): what bounding helm-python-sdk costs.

Renders a small chart (a ConfigMap and a Deployment) with the SDK in this process, unbounded, and
through the child of bundler.manifests.sandbox: the first render through the child includes
starting it (the interpreter and Helm's Go runtime, once per command), the others are what each
further chart of a command pays over an in-process render. Figures only: nothing here asserts a
time. Needs helm-python-sdk (`pip install helm-python-sdk`, the `helm` extra).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bundler.manifests.engine import ReleaseInput, SdkEngine, sdk_render
from bundler.oci.package import package

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: bench\nversion: 1.0.0\n",
    "values.yaml": "replicas: 2\nimage: nginx:1.27\n",
    "templates/configmap.yaml": (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\n"
        "data:\n{{- range until 50 }}\n"
        '  key{{ . }}: {{ printf "value-%d" . | quote }}\n{{- end }}\n'
    ),
    "templates/deployment.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .Release.Name }}}\n"
        "spec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      containers:\n"
        "      - {name: app, image: {{ .Values.image | quote }}}\n"
    ),
}


def timed(render: Callable[[], str], times: int) -> list[float]:
    """Seconds each of `times` calls of `render` took."""
    seconds = []
    for _ in range(times):
        start = time.perf_counter()
        render()
        seconds.append(time.perf_counter() - start)
    return seconds


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bundler.manifests.bench")
    parser.add_argument("--renders", type=int, default=50, help="renders measured each way")
    args = parser.parse_args(argv)
    try:
        import helm_python  # noqa: F401
    except ImportError:
        print("helm-python-sdk is not installed: nothing to measure")
        return 0
    with tempfile.TemporaryDirectory(prefix="bundler-bench-") as scratch:
        chart_dir = Path(scratch, "bench")
        for relative, text in CHART.items():
            Path(chart_dir, relative).parent.mkdir(parents=True, exist_ok=True)
            Path(chart_dir, relative).write_text(text, encoding="utf-8")
        archive, _ = package(chart_dir, Path(scratch, "out"))
        release = ReleaseInput(archive, "bench", "apps", kube_version="v1.30.0")
        in_process = statistics.median(timed(lambda: sdk_render(release), args.renders))
        engine = SdkEngine()
        (first,) = timed(lambda: engine.render(release), 1)
        bounded = statistics.median(timed(lambda: engine.render(release), args.renders))
        engine.worker.stop()
    print(f"render of a small chart, median of {args.renders}:")
    print(f"  in process (unbounded)      {in_process * 1000:8.2f} ms")
    print(f"  in the child (bounded)      {bounded * 1000:8.2f} ms")
    print(f"  overhead per render         {(bounded - in_process) * 1000:8.2f} ms")
    print(f"  first render, child start   {first * 1000:8.2f} ms (once per command)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
