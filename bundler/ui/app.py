"""The dashboard assembled: the model, its watches over the user's store, the event hub and the
HTTP server; start(), then stop()."""

from __future__ import annotations

from collections.abc import Sequence

from bundler.store.protocol import Store
from bundler.ui.events import EventHub
from bundler.ui.fleet_model import FleetModel
from bundler.ui.security import Address
from bundler.ui.server import SessionInfo, UiServer
from bundler.ui.watches import FleetWatches


class Dashboard:
    def __init__(
        self,
        store: Store,
        address: Address,
        *,
        context: str = "",
        namespaces: Sequence[str] = (),
        read_only: bool = False,
    ) -> None:
        self.model = FleetModel()
        self.watches = FleetWatches(store, self.model, namespaces)
        self.hub = EventHub(self.model, self.watches.errors)
        info = SessionInfo(context, read_only, tuple(namespaces))
        self.server = UiServer(store, self.model, self.hub, address, info)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> None:
        """Bind first (a busy port fails before any list is sent), then list and watch."""
        self.server.start()
        self.hub.start()
        self.watches.start()

    def stop(self) -> None:
        self.watches.stop()
        self.hub.stop()
        self.server.stop()
