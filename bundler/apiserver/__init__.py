"""A test Kubernetes API server over HTTP on loopback, backed by the in-memory store."""

from bundler.api.resources import Verb
from bundler.apiserver.server import ApiServer

__all__ = ["ApiServer", "Verb"]
