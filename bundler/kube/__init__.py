"""The only package that imports `kubernetes`: the store backend over a real API server."""

from bundler.kube.store import KubeOptions, KubeStore, load_store

__all__ = ["KubeOptions", "KubeStore", "load_store"]
