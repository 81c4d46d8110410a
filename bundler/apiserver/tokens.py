"""Kubernetes' token controller, as far as tests need it: service-account token Secrets get a token.

When a Secret of type `kubernetes.io/service-account-token` is written without a token and the
ServiceAccount its annotation names exists, the controller fills `data.token` (random),
`data.ca.crt` (a fixed test PEM), `data.namespace`, and the ServiceAccount's uid annotation, as the
real one does. A Secret whose ServiceAccount does not exist is left as it is (the real controller
deletes it). bundler.apiserver.authn accepts these tokens as their ServiceAccount.
"""

from __future__ import annotations

import base64
import contextlib
import secrets

from bundler.api.resources import SECRET, SERVICE_ACCOUNT, Resource
from bundler.core.agent.identity import (
    ANNOTATION_SERVICE_ACCOUNT_NAME,
    ANNOTATION_SERVICE_ACCOUNT_UID,
    CA_KEY,
    SERVICE_ACCOUNT_TOKEN_TYPE,
    TOKEN_KEY,
)
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

# Not a usable certificate: tests only check that it travels from the Secret into kubeconfigs.
TEST_CA_PEM = (
    "-----BEGIN CERTIFICATE-----\n"
    "YnVuZGxlciB0ZXN0IEFQSSBzZXJ2ZXIgY2VydGlmaWNhdGUgYXV0aG9yaXR5\n"
    "-----END CERTIFICATE-----\n"
)
NAMESPACE_KEY = "namespace"


class TokenController:
    """Fills the token Secrets written through the server."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def written(self, res: Resource, obj: Obj) -> None:
        """Called with every object a create, update or patch request stored."""
        if res != SECRET or obj.get("type") != SERVICE_ACCOUNT_TOKEN_TYPE:
            return
        if (obj.get("data") or {}).get(TOKEN_KEY):
            return
        meta = obj["metadata"]
        namespace = meta["namespace"]
        account = (meta.get("annotations") or {}).get(ANNOTATION_SERVICE_ACCOUNT_NAME)
        if not account:
            return
        try:
            uid = self._store.get(SERVICE_ACCOUNT, account, namespace)["metadata"]["uid"]
        except NotFound:
            return
        patch = {
            "metadata": {"annotations": {ANNOTATION_SERVICE_ACCOUNT_UID: uid}},
            "data": {
                TOKEN_KEY: _encode(secrets.token_urlsafe(32)),
                CA_KEY: _encode(TEST_CA_PEM),
                NAMESPACE_KEY: _encode(namespace),
            },
        }
        with contextlib.suppress(NotFound):  # deleted meanwhile: nothing to fill
            self._store.patch(SECRET, meta["name"], patch, namespace)


def _encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
