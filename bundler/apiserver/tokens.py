"""Kubernetes' token controller, as far as bundler needs it: service-account token Secrets get a
token.

When a Secret of type `kubernetes.io/service-account-token` is stored without a token and the
ServiceAccount its annotation names exists, the controller fills `data.token` (random),
`data.ca.crt` (the CA it was given: the API server's own certificate when it serves HTTPS, so a
kubeconfig built from the Secret verifies the server; else a fixed test PEM), `data.namespace`,
and the ServiceAccount's uid annotation, as the real one does. A Secret whose ServiceAccount does
not exist is left as it is (the real controller deletes it). bundler.apiserver.authn accepts these
tokens as their ServiceAccount.

Like kube-controller-manager's, it watches every Secret stored (`start()`), whoever wrote it:
a client through the API server, or a controller writing to the store directly, as the manager of
`bundler dev` does. `fill()` serves a caller with its own informer (the simulator's bootstrap).
A token is written with the Secret's resourceVersion and only into a Secret without one, so two
fillers never replace each other's token.
"""

from __future__ import annotations

import base64
import secrets

from bundler.api.resources import SECRET, SERVICE_ACCOUNT
from bundler.core.agent.identity import (
    ANNOTATION_SERVICE_ACCOUNT_NAME,
    ANNOTATION_SERVICE_ACCOUNT_UID,
    CA_KEY,
    SERVICE_ACCOUNT_TOKEN_TYPE,
    TOKEN_KEY,
)
from bundler.store.errors import Conflict, KindNotServed, NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import EventType, Obj, Watch, WatchEvent

# Not a usable certificate: tests only check that it travels from the Secret into kubeconfigs.
TEST_CA_PEM = (
    "-----BEGIN CERTIFICATE-----\n"
    "YnVuZGxlciB0ZXN0IEFQSSBzZXJ2ZXIgY2VydGlmaWNhdGUgYXV0aG9yaXR5\n"
    "-----END CERTIFICATE-----\n"
)
NAMESPACE_KEY = "namespace"
# A Secret rewritten this often while being filled is someone else's to fill.
_ATTEMPTS = 5


class TokenController:
    """Fills the token Secrets of `store` with tokens and `ca_pem`; start() watches, stop() ends."""

    def __init__(self, store: MemoryStore, ca_pem: str = TEST_CA_PEM) -> None:
        self._store = store
        self._ca = _encode(ca_pem)
        self._watch: Watch | None = None

    def start(self) -> None:
        """Fill the token Secrets stored now, then every one written until stop()."""
        try:
            listed = self._store.list(SECRET)
        except KindNotServed:
            return  # a store without Secrets has no token to give
        self._watch = self._store.watch(
            SECRET, self._changed, resource_version=listed.resource_version
        )
        for secret in listed.items:
            self.fill(secret)

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
            self._watch = None

    def fill(self, secret: Obj) -> None:
        """Give `secret` (as last seen) a token, if it is a token Secret that needs one."""
        if not _wants_token(secret):
            return
        meta = secret["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        account = meta["annotations"][ANNOTATION_SERVICE_ACCOUNT_NAME]
        try:
            uid = self._store.get(SERVICE_ACCOUNT, account, namespace)["metadata"]["uid"]
        except NotFound:
            return
        for _ in range(_ATTEMPTS):
            try:
                current = self._store.get(SECRET, name, namespace)
            except NotFound:
                return  # deleted meanwhile: nothing to fill
            if not _wants_token(current):
                return
            try:
                self._store.update(SECRET, self._filled(current, uid))
            except Conflict:
                continue
            except NotFound:
                return
            return

    def _changed(self, event: WatchEvent) -> None:
        if event.type is not EventType.DELETED:
            self.fill(event.object)

    def _filled(self, secret: Obj, uid: str) -> Obj:
        meta = secret["metadata"]
        annotations = {**(meta.get("annotations") or {}), ANNOTATION_SERVICE_ACCOUNT_UID: uid}
        data = {
            **(secret.get("data") or {}),
            TOKEN_KEY: _encode(secrets.token_urlsafe(32)),
            CA_KEY: self._ca,
            NAMESPACE_KEY: _encode(meta["namespace"]),
        }
        return {**secret, "metadata": {**meta, "annotations": annotations}, "data": data}


def _wants_token(secret: Obj) -> bool:
    if secret.get("type") != SERVICE_ACCOUNT_TOKEN_TYPE:
        return False
    if (secret.get("data") or {}).get(TOKEN_KEY):
        return False
    annotations = secret["metadata"].get("annotations") or {}
    return bool(annotations.get(ANNOTATION_SERVICE_ACCOUNT_NAME))


def _encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
