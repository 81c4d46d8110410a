"""Kubernetes' token controller, as far as bundler needs it: service-account token Secrets get a
token.

When a Secret of type `kubernetes.io/service-account-token` is stored and the ServiceAccount its
annotation names exists, the controller completes what it lacks, as kube-controller-manager's
does: `data.token` (a JWT of the legacy claims signed with the store's key:
bundler.apiserver.service_account_tokens), `data.ca.crt` (the CA it was given: the API server's own
certificate when it serves HTTPS, so a kubeconfig built from the Secret verifies the server; else
a fixed test PEM), `data.namespace`, and the ServiceAccount's name and uid annotations. A token
the client wrote is kept, as there, and authenticates as nobody: bundler.apiserver.authn accepts
only tokens signed with the store's key. A Secret whose ServiceAccount does not exist, or exists
with another uid than the Secret's annotation names, is left as it is (the real controller
deletes it).

Like kube-controller-manager's, it watches every Secret stored (`start()`), whoever wrote it:
a client through the API server, or a controller writing to the store directly, as the manager of
`bundler dev` does. `fill()` serves a caller with its own informer (the simulator's bootstrap).
A token is written with the Secret's resourceVersion and only into a Secret without one, so two
fillers never replace each other's token.
"""

from __future__ import annotations

import base64

from bundler.api.resources import SECRET, SERVICE_ACCOUNT
from bundler.apiserver.service_account_tokens import LegacyClaims, issue, signing_key
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
        self._key = signing_key(store)
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
        """Complete `secret` (as last seen), if it is a token Secret that lacks something."""
        if not _incomplete(secret):
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
            if not _incomplete(current) or _annotated_uid(current) not in ("", uid):
                return  # a token of an account gone since: never completed for its successor
            try:
                self._store.update(SECRET, self._filled(current, account, uid))
            except Conflict:
                continue
            except NotFound:
                return
            return

    def _changed(self, event: WatchEvent) -> None:
        if event.type is not EventType.DELETED:
            self.fill(event.object)

    def _filled(self, secret: Obj, account: str, uid: str) -> Obj:
        """`secret` with what it lacks; a token it has, whoever wrote it, is kept."""
        meta = secret["metadata"]
        namespace = meta["namespace"]
        annotations = {
            **(meta.get("annotations") or {}),
            ANNOTATION_SERVICE_ACCOUNT_NAME: account,
            ANNOTATION_SERVICE_ACCOUNT_UID: uid,
        }
        data = dict(secret.get("data") or {})
        if not data.get(TOKEN_KEY):
            claims = LegacyClaims(namespace, meta["name"], account, uid)
            data[TOKEN_KEY] = _encode(issue(self._key, claims))
        if not data.get(CA_KEY):
            data[CA_KEY] = self._ca
        if not data.get(NAMESPACE_KEY):
            data[NAMESPACE_KEY] = _encode(namespace)
        return {**secret, "metadata": {**meta, "annotations": annotations}, "data": data}


def _incomplete(secret: Obj) -> bool:
    """Whether `secret` is a token Secret of an account that lacks its token, CA or namespace."""
    if secret.get("type") != SERVICE_ACCOUNT_TOKEN_TYPE:
        return False
    annotations = secret["metadata"].get("annotations") or {}
    if not annotations.get(ANNOTATION_SERVICE_ACCOUNT_NAME):
        return False
    data = secret.get("data") or {}
    return not all(data.get(key) for key in (TOKEN_KEY, CA_KEY, NAMESPACE_KEY))


def _annotated_uid(secret: Obj) -> str:
    annotations = secret["metadata"].get("annotations") or {}
    return str(annotations.get(ANNOTATION_SERVICE_ACCOUNT_UID) or "")


def _encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()
