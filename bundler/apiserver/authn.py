"""Authentication, as kube-apiserver does it with bearer tokens: who is making this request.

Two kinds of token are accepted:
- the fixed admin token the server was started with (the fixtures' "cluster admin"): user
  `kubernetes-admin` in group `system:masters`, which Kubernetes lets do anything;
- the token of a service-account token Secret that this server's token controller filled
  (bundler.apiserver.tokens), while that Secret still holds it and its ServiceAccount still exists
  with the uid the Secret names: user `system:serviceaccount:NS:NAME` in groups
  `system:serviceaccounts`, `system:serviceaccounts:NS` and `system:authenticated`, as Kubernetes'
  legacy service-account token authenticator answers.

Anything else, no token included, is 401 with Kubernetes' Status body (reason and message
"Unauthorized"): this stand-in runs with anonymous authentication off.
"""

from __future__ import annotations

import base64
import binascii
import threading
from dataclasses import dataclass

from bundler.api.resources import SECRET, SERVICE_ACCOUNT
from bundler.apiserver.statuses import HttpError
from bundler.core.agent.identity import (
    ANNOTATION_SERVICE_ACCOUNT_NAME,
    ANNOTATION_SERVICE_ACCOUNT_UID,
    SERVICE_ACCOUNT_TOKEN_TYPE,
    TOKEN_KEY,
)
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

DEFAULT_ADMIN_TOKEN = "bundler-test-admin-token"
ADMIN_USER = "kubernetes-admin"
SYSTEM_MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
SERVICE_ACCOUNTS = "system:serviceaccounts"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class UserInfo:
    """An authenticated identity: the user name and the groups it belongs to."""

    name: str
    groups: tuple[str, ...]

    def is_master(self) -> bool:
        return SYSTEM_MASTERS in self.groups


def service_account_user(namespace: str, name: str) -> UserInfo:
    return UserInfo(
        f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}",
        (SERVICE_ACCOUNTS, f"{SERVICE_ACCOUNTS}:{namespace}", AUTHENTICATED),
    )


ADMIN = UserInfo(ADMIN_USER, (SYSTEM_MASTERS, AUTHENTICATED))


def unauthorized() -> HttpError:
    return HttpError(401, "Unauthorized", reason="Unauthorized")


@dataclass(frozen=True)
class _TokenSecret:
    namespace: str
    name: str


class Authenticator:
    """Maps an Authorization header to a UserInfo, or raises the 401 HttpError."""

    def __init__(self, store: MemoryStore, admin_token: str) -> None:
        self._store = store
        self.admin_token = admin_token
        self._lock = threading.Lock()
        # token -> the Secret that held it when last seen; checked again on every request.
        self._known: dict[str, _TokenSecret] = {}

    def authenticate(self, header: str | None) -> UserInfo:
        token = _bearer(header)
        if token is None:
            raise unauthorized()
        if token == self.admin_token:
            return ADMIN
        user = self._service_account(token)
        if user is None:
            raise unauthorized()
        return user

    def _service_account(self, token: str) -> UserInfo | None:
        with self._lock:
            known = self._known.get(token)
        user = self._validate(known, token) if known is not None else None
        if user is not None:
            return user
        found = self._scan(token)
        if found is None:
            return None
        with self._lock:
            self._known[token] = found
        return self._validate(found, token)

    def _scan(self, token: str) -> _TokenSecret | None:
        """The token Secret holding `token` (after a restart, or a token not seen yet)."""
        for secret in self._store.list(SECRET).items:
            if _holds(secret, token):
                meta = secret["metadata"]
                return _TokenSecret(meta["namespace"], meta["name"])
        return None

    def _validate(self, where: _TokenSecret, token: str) -> UserInfo | None:
        try:
            secret = self._store.get(SECRET, where.name, where.namespace)
        except NotFound:
            return None
        if not _holds(secret, token):
            return None
        notes = secret["metadata"].get("annotations") or {}
        account = notes.get(ANNOTATION_SERVICE_ACCOUNT_NAME) or ""
        try:
            live = self._store.get(SERVICE_ACCOUNT, account, where.namespace)
        except NotFound:
            return None
        if live["metadata"].get("uid") != notes.get(ANNOTATION_SERVICE_ACCOUNT_UID):
            return None
        return service_account_user(where.namespace, account)


def _bearer(header: str | None) -> str | None:
    parts = (header or "").strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def _holds(secret: Obj, token: str) -> bool:
    if secret.get("type") != SERVICE_ACCOUNT_TOKEN_TYPE:
        return False
    encoded = (secret.get("data") or {}).get(TOKEN_KEY)
    if not encoded:
        return False
    try:
        return base64.b64decode(encoded, validate=True).decode() == token
    except (binascii.Error, UnicodeDecodeError):
        return False
