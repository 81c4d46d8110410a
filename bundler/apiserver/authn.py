"""Authentication, as kube-apiserver does it with bearer tokens: who is making this request.

Two kinds of token are accepted:
- the fixed admin token the server was started with (the fixtures' "cluster admin"): user
  `kubernetes-admin` in group `system:masters`, which Kubernetes lets do anything;
- the token of a service-account token Secret, as Kubernetes' legacy service-account token
  authenticator accepts one: signed with the store's key (bundler.apiserver.service_account_tokens:
  only the token controller, bundler.apiserver.tokens, signs; a token a client wrote into a Secret
  is refused, whatever it says), while the Secret its claims name still holds it and the
  ServiceAccount they name still exists with the uid they name, neither being deleted: user
  `system:serviceaccount:NS:NAME` in groups `system:serviceaccounts`, `system:serviceaccounts:NS`
  and `system:authenticated`.

Anything else, no token included, is 401 with Kubernetes' Status body (reason and message
"Unauthorized"): this stand-in runs with anonymous authentication off.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from dataclasses import dataclass

from bundler.api.resources import SECRET, SERVICE_ACCOUNT, Resource
from bundler.apiserver.service_account_tokens import LegacyClaims, signing_key, verify
from bundler.apiserver.statuses import HttpError
from bundler.core.agent.identity import TOKEN_KEY
from bundler.store.errors import KindNotServed, NotFound
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


class Authenticator:
    """Maps an Authorization header to a UserInfo, or raises the 401 HttpError."""

    def __init__(self, store: MemoryStore, admin_token: str) -> None:
        self._store = store
        self.admin_token = admin_token
        self._key = signing_key(store)

    def authenticate(self, header: str | None) -> UserInfo:
        token = _bearer(header)
        if token is None:
            raise unauthorized()
        if hmac.compare_digest(token.encode(), self.admin_token.encode()):
            return ADMIN
        user = self._service_account(token)
        if user is None:
            raise unauthorized()
        return user

    def _service_account(self, token: str) -> UserInfo | None:
        """Whose `token` is, as kube-apiserver's legacy validator decides (pkg/serviceaccount/
        legacy.go): the signature first, so a forged token costs no lookup."""
        claims = verify(self._key, token)
        if claims is None:
            return None
        secret = self._live(SECRET, claims.secret_name, claims)
        if secret is None or not _holds(secret, token):
            return None
        account = self._live(SERVICE_ACCOUNT, claims.account, claims)
        if account is None or account["metadata"].get("uid") != claims.account_uid:
            return None
        return service_account_user(claims.namespace, claims.account)

    def _live(self, res: Resource, name: str, claims: LegacyClaims) -> Obj | None:
        """The object, unless it is gone or being deleted."""
        try:
            obj = self._store.get(res, name, claims.namespace)
        except (NotFound, KindNotServed):
            return None
        return None if obj["metadata"].get("deletionTimestamp") else obj


def _bearer(header: str | None) -> str | None:
    parts = (header or "").strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def _holds(secret: Obj, token: str) -> bool:
    encoded = (secret.get("data") or {}).get(TOKEN_KEY)
    if not isinstance(encoded, str) or not encoded:
        return False
    try:
        held = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        return False
    return hmac.compare_digest(held, token.encode())
