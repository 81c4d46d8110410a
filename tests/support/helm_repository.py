"""A Helm chart repository on 127.0.0.1 for tests: index.yaml and chart archives over HTTP.

`serve_helm_repository(directory)` starts a threaded HTTP server serving `directory` on a port the
kernel picks and stops it on exit. `HelmRepository.publish(chart_dir)` packages a chart with
bundler's own packager (`bundler chart package`) into the directory and rewrites index.yaml as
`helm repo index` would (name, version, relative URL, sha256 digest). Requests are counted by path,
so a test can tell whether a chart was downloaded again.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from bundler.oci.package import package

CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  namespace: {{ .Release.Namespace }}
data:
  greeting: {{ .Values.greeting | quote }}
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
"""
# Runaway templates a chart's author could write. Ten billion iterations of an empty body: it
# allocates little and never ends in a test's time.
ENDLESS_LOOP = "{{ range until 100000 }}{{ range until 100000 }}{{ end }}{{ end }}\n"
# Doubles a 48-byte string 26 times: a 3 GiB string, past any memory limit a test sets.
HUGE_STRING = (
    '{{ $s := "' + "x" * 48 + '" }}'
    '{{ range until 26 }}{{ $s = printf "%s%s" $s $s }}{{ end }}'
    "a: {{ len $s }}\n"
)


def write_chart(
    root: Path, name: str, version: str, files: Mapping[str, str] | None = None
) -> Path:
    """A chart directory `root/name-version` (a ConfigMap template unless `files` replace it)."""
    chart = root / f"{name}-{version}"
    contents = {
        "Chart.yaml": f"apiVersion: v2\nname: {name}\nversion: {version}\n",
        "values.yaml": "greeting: hello\n",
        "templates/configmap.yaml": CONFIGMAP,
        **(files or {}),
    }
    for relative, text in contents.items():
        path = chart / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return chart


@dataclass
class HelmRepository:
    directory: Path
    url: str
    requests: Counter[str] = field(default_factory=Counter)
    entries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def publish(self, chart_dir: Path) -> Path:
        """Package `chart_dir` into the repository and list it in index.yaml; the archive."""
        path, archive = package(chart_dir, self.directory)
        entry = {
            "apiVersion": "v2",
            "name": archive.metadata.name,
            "version": archive.metadata.version,
            "urls": [path.name],
            "digest": hashlib.sha256(archive.data).hexdigest(),
        }
        self.entries.setdefault(archive.metadata.name, []).append(entry)
        index = {"apiVersion": "v1", "entries": self.entries}
        (self.directory / "index.yaml").write_text(yaml.safe_dump(index))
        return path


class _CountingHandler(SimpleHTTPRequestHandler):
    counter: Counter[str]

    def do_GET(self) -> None:
        self.counter[self.path] += 1
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:  # quiet test output
        pass


@contextmanager
def serve_helm_repository(directory: Path) -> Iterator[HelmRepository]:
    directory.mkdir(parents=True, exist_ok=True)
    counter: Counter[str] = Counter()
    handler = type("Handler", (_CountingHandler,), {"counter": counter})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield HelmRepository(directory, f"http://{host!s}:{port}", counter)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
