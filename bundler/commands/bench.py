"""`python -m bundler.commands.bench` (`make bench`): the scale run of bundler.sim.bench_scale with
its HTTP row, the requests per BundleDeployment of a manager's cold start through KubeStore against
the test API server on 127.0.0.1 (the simulator itself never reaches bundler.kube)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from bundler.api.resources import BUNDLE_DEPLOYMENT
from bundler.apiserver import ApiServer
from bundler.kube.store import KubeStore
from bundler.manager.app import Manager
from bundler.manager.options import ManagerOptions
from bundler.sim import bench_scale
from bundler.store.memory import MemoryStore


def requests_per_bd(clusters: int, bundles: int, workers: int) -> tuple[float, int]:
    """HTTP requests per BundleDeployment of a cold start, and the BundleDeployments written."""
    with ApiServer(MemoryStore(require_namespaces=True)) as server:
        bench_scale.fill(server.store, clusters, bundles)
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = server.kubeconfig(Path(tmp) / "kubeconfig")
            with KubeStore.from_kubeconfig(kubeconfig, None) as store:
                manager = Manager(store, ManagerOptions(workers=workers))
                try:
                    manager.start()
                    bench_scale.wait_idle(manager)
                finally:
                    manager.stop()
        deployments = len(server.store.list(BUNDLE_DEPLOYMENT).items)
        counts = server.request_counts()
    return sum(counts.values()) / max(deployments, 1), deployments


if __name__ == "__main__":
    sys.exit(bench_scale.main(sys.argv[1:], requests_per_bd))
