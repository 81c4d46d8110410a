"""The dashboard's view of the management API: one informer per kind (per workspace when told
which), started with the user's store, feeding the FleetModel.

However many browsers are open, the API server sees one list and one watch per kind (and
workspace): the browsers hear the model's changes (bundler.ui.events), never the API server.
A kind the user may not list (their RBAC) is no failure of the dashboard: the API server's
message is kept for the page to show, and the list is tried again every RETRY_SECONDS, so
rights granted later show up without a restart.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from functools import partial

from bundler.api.resources import BUNDLE, BUNDLE_DEPLOYMENT, CLUSTER, CLUSTER_GROUP, Resource
from bundler.errors import BundlerError
from bundler.runtime.clock import SystemClock
from bundler.runtime.informer import Informer
from bundler.runtime.timers import Timers
from bundler.store.protocol import EventType, Obj, Store
from bundler.ui.fleet_model import FleetModel

log = logging.getLogger(__name__)

RETRY_SECONDS = 30.0
# The kinds a workspace holds; BundleDeployments live in the cluster namespaces.
WORKSPACE_KINDS = (BUNDLE, CLUSTER, CLUSTER_GROUP)


class FleetWatches:
    def __init__(self, store: Store, model: FleetModel, namespaces: Sequence[str] = ()) -> None:
        self._model = model
        self._timers = Timers(SystemClock())
        self._lock = threading.Lock()
        self._errors: dict[str, str] = {}
        scopes: list[str | None] = list(namespaces) or [None]
        self._informers = [
            Informer(store, res, self._timers, namespace=namespace)
            for res in WORKSPACE_KINDS
            for namespace in scopes
        ]
        # Across every cluster namespace: bundler labels them, but a label cannot name a set.
        self._informers.append(Informer(store, BUNDLE_DEPLOYMENT, self._timers))
        for informer in self._informers:
            informer.add_handler(partial(self._on_event, informer.res))

    def start(self) -> None:
        """List and watch every kind; a refused list is recorded and retried, not raised."""
        self._timers.start()
        for informer in self._informers:
            self._start(informer)

    def stop(self) -> None:
        self._timers.stop()
        for informer in self._informers:
            informer.stop()

    def errors(self) -> dict[str, str]:
        """What the API server answered for each scope it refused: `kind (namespace)` -> message."""
        with self._lock:
            return dict(self._errors)

    def _start(self, informer: Informer) -> None:
        scope = _scope(informer)
        try:
            informer.start()
        except BundlerError as error:
            with self._lock:
                self._errors[scope] = error.message
            log.warning("%s: %s; trying again in %.0fs", scope, error.message, RETRY_SECONDS)
            self._timers.call_later(RETRY_SECONDS, partial(self._start, informer))
            return
        with self._lock:
            self._errors.pop(scope, None)

    def _on_event(self, res: Resource, event: EventType, obj: Obj) -> None:
        self._model.apply(res, event, obj)


def _scope(informer: Informer) -> str:
    where = f" in {informer.namespace}" if informer.namespace else ""
    return f"{informer.res.plural}{where}"
