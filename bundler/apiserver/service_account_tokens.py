"""The tokens of service-account token Secrets, as Kubernetes makes them: signed JWTs of the legacy
claims, so a token a client wrote itself never authenticates.

kube-controller-manager's token controller signs the legacy claims (issuer
`kubernetes/serviceaccount`, subject `system:serviceaccount:NS:NAME`, the namespace, the Secret's
name, the ServiceAccount's name and uid) with the cluster's service-account key; kube-apiserver
accepts a token only if that signature verifies, then checks that the Secret the claims name still
holds the token and the ServiceAccount they name still exists with that uid. Here the signature is
HMAC-SHA256 (`HS256`, where Kubernetes uses RS256 or ES256: only the issuer ever verifies these
tokens, and the standard library has no RSA), keyed by `signing_key(store)`: one key per store,
made on first use, shared by whatever issues and authenticates tokens for that store (the API
server's token controller and authenticator, a restarted server, the simulator's bootstrap
controller), as one cluster's controller-manager and API servers share its key file.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import threading
import weakref
from dataclasses import dataclass

from bundler.store.memory import MemoryStore

LEGACY_ISSUER = "kubernetes/serviceaccount"
_PREFIX = "kubernetes.io/serviceaccount/"
_NAMESPACE = _PREFIX + "namespace"
_SECRET = _PREFIX + "secret.name"
_ACCOUNT = _PREFIX + "service-account.name"
_ACCOUNT_UID = _PREFIX + "service-account.uid"
_HEADER = {"alg": "HS256", "typ": "JWT"}

_keys: weakref.WeakKeyDictionary[MemoryStore, bytes] = weakref.WeakKeyDictionary()
_keys_lock = threading.Lock()


@dataclass(frozen=True)
class LegacyClaims:
    """What a legacy service-account token says: whose it is and which Secret holds it."""

    namespace: str
    secret_name: str
    account: str
    account_uid: str

    def subject(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.account}"


def signing_key(store: MemoryStore) -> bytes:
    """The key the service-account tokens of `store` are signed with."""
    with _keys_lock:
        key = _keys.get(store)
        if key is None:
            key = _keys[store] = secrets.token_bytes(32)
        return key


def issue(key: bytes, claims: LegacyClaims) -> str:
    payload = {
        "iss": LEGACY_ISSUER,
        _NAMESPACE: claims.namespace,
        _SECRET: claims.secret_name,
        _ACCOUNT: claims.account,
        _ACCOUNT_UID: claims.account_uid,
        "sub": claims.subject(),
        # Every token differs, as ES256's randomized signatures make Kubernetes' differ: a token
        # emptied and given again is a new one, and the old one stays dead.
        "jti": secrets.token_urlsafe(16),
    }
    signed = f"{_encode(_HEADER)}.{_encode(payload)}"
    return f"{signed}.{_b64(_signature(key, signed))}"


def verify(key: bytes, token: str) -> LegacyClaims | None:
    """The claims of `token` if `key` signed it, else None (whatever the token says)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    signed = f"{parts[0]}.{parts[1]}"
    try:
        signature = _unb64(parts[2])
        payload = json.loads(_unb64(parts[1]))
    except (binascii.Error, ValueError):
        return None
    if not hmac.compare_digest(signature, _signature(key, signed)):
        return None
    return _claims(payload)


def _claims(payload: object) -> LegacyClaims | None:
    """The claims a token this module issued carries (any other is refused, as kube-apiserver's
    legacy validator refuses a token with a claim missing or a subject not its account)."""
    if not isinstance(payload, dict) or payload.get("iss") != LEGACY_ISSUER:
        return None
    fields = [payload.get(name) for name in (_NAMESPACE, _SECRET, _ACCOUNT, _ACCOUNT_UID)]
    if not all(isinstance(value, str) and value for value in fields):
        return None
    claims = LegacyClaims(*(str(value) for value in fields))
    return claims if payload.get("sub") == claims.subject() else None


def _signature(key: bytes, signed: str) -> bytes:
    return hmac.new(key, signed.encode(), hashlib.sha256).digest()


def _encode(obj: dict[str, str]) -> str:
    return _b64(json.dumps(obj, separators=(",", ":")).encode())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
