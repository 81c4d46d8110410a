"""Reading the objects a CAPI Cluster refers to: its ControlPlane and its InfraCluster.

A reference names a kind of a provider's group (`controlplane.cluster.x-k8s.io`,
`infrastructure.cluster.x-k8s.io`), in v1beta2 by group only. The reader reads only the kinds
of bundler.core.capi_import.CAPI_REFERENCE_KINDS (what the manager's RBAC grants), asking for
the kind's plural as Cluster API's contract has it (the kind in lower case, plus `s`:
KubeadmControlPlane is `kubeadmcontrolplanes`), at the reference's version, else the first of
CANDIDATE_VERSIONS the server serves (remembered per group and kind; a kind no candidate serves is
not asked again for UNSERVED_RETRY_S). An object that does not exist, a kind not served, or a read
refused is no object: the Cluster is imported without it (logged), and templates reading it fail
for that cluster only.
"""

from __future__ import annotations

import logging
import threading
import time

from bundler.api.resources import Resource
from bundler.core.capi_import import CapiReference, is_readable_reference, reference_plural
from bundler.errors import BundlerError
from bundler.store.errors import KindNotServed, NotFound
from bundler.store.protocol import Obj, Store

log = logging.getLogger(__name__)

# Versions tried, newest first, for a reference that names the group only.
CANDIDATE_VERSIONS = ("v1beta2", "v1beta1", "v1alpha4", "v1alpha3")
UNSERVED_RETRY_S = 300.0


def reference_resource(ref: CapiReference, version: str) -> Resource:
    return Resource(ref.group, version, ref.kind, reference_plural(ref.kind))


class ReferenceReader:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._versions: dict[tuple[str, str], str] = {}
        self._unserved: dict[tuple[str, str], float] = {}

    def read(self, ref: CapiReference) -> Obj | None:
        """The object `ref` names, or None (see the module docstring)."""
        if not is_readable_reference(ref.group, ref.kind):
            log.debug("capi import: %s of %s is not a kind the import reads", ref.kind, ref.group)
            return None
        kind = (ref.group, ref.kind)
        with self._lock:
            known = self._versions.get(kind)
            unserved_since = self._unserved.get(kind)
        if unserved_since is not None and time.monotonic() - unserved_since < UNSERVED_RETRY_S:
            return None
        versions = [ref.version] if ref.version else ([known] if known else CANDIDATE_VERSIONS)
        for version in versions:
            try:
                found = self._store.get(reference_resource(ref, version), ref.name, ref.namespace)
            except KindNotServed:
                continue
            except NotFound:
                return None
            except BundlerError as err:
                log.warning(
                    "capi import: cannot read %s %s/%s: %s", ref.kind, ref.namespace, ref.name, err
                )
                return None
            with self._lock:
                self._versions[kind] = version
            return found
        with self._lock:
            self._versions.pop(kind, None)  # upgraded away, or never served: look again later
            self._unserved[kind] = time.monotonic()
        return None
