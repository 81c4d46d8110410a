"""The charts the e2e tests deploy, written on the fly and published as users publish them.

There is no kubelet, so nothing in them waits for Pods: a ConfigMap carrying the values the release
was given (so a test reads what each cluster got) and a Service (an object the API server itself
completes, with a cluster IP). A `broken` version also holds a ConfigMap whose name the API server
refuses, so Helm's install or upgrade fails the way a bad chart fails in production: after Helm
recorded the release as pending, which Flux then remediates. A `stuck` version also holds a
Deployment, which never becomes available without a kubelet: Flux's wait for the release's objects
times out on it and names it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.helm_repository import write_chart

CHART = "e2e-app"

_VALUES_CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-values
  namespace: {{ .Release.Namespace }}
  labels:
    app.kubernetes.io/instance: {{ .Release.Name }}
data:
  values.json: {{ toJson .Values | quote }}
  chartVersion: {{ .Chart.Version | quote }}
"""
_SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  ports:
    - port: 80
      name: http
  selector:
    app.kubernetes.io/instance: {{ .Release.Name }}
"""
_REFUSED = """apiVersion: v1
kind: ConfigMap
metadata:
  # Upper case and an underscore: the API server refuses the name, so the release fails.
  name: Broken_{{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
"""


_NEVER_AVAILABLE = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  namespace: {{ .Release.Namespace }}
spec:
  replicas: 1
  selector: {matchLabels: {app: {{ .Release.Name }}-web}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}-web}}
    spec: {containers: [{name: web, image: registry.invalid/web:1}]}
"""


def write_app_chart(
    root: Path,
    version: str,
    *,
    broken: bool = False,
    stuck: bool = False,
    extra: dict[str, str] | None = None,
) -> Path:
    """The chart directory of `e2e-app` at `version` (with the `extra` files, path to text)."""
    files = {"templates/configmap.yaml": _VALUES_CONFIGMAP, "templates/service.yaml": _SERVICE}
    files.update(extra or {})
    if broken:
        files["templates/refused.yaml"] = _REFUSED
    if stuck:
        files["templates/deployment.yaml"] = _NEVER_AVAILABLE
    return write_chart(root, CHART, version, files)


def push_chart(chart: Path, oci_base: str) -> None:
    """`bundler chart push`, as a user publishes a chart."""
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "chart", "push", str(chart), oci_base],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if done.returncode != 0:
        raise AssertionError(f"bundler chart push {chart} failed: {done.stderr}")
