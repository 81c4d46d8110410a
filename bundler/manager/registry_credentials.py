"""Repository credentials from a Bundle's `helm.secretRef` Secret, as the manager hands it over.

The manager passes the Secret's `data` already base64-decoded. Two layouts are read, the ones Flux
reads for its sources:
- `kubernetes.io/dockerconfigjson`: key `.dockerconfigjson`, a Docker config whose `auths` entry for
  the repository's host carries `auth` (base64 of `user:password`) or `username` and `password`;
  entry keys are compared the way Docker does (`https://host:5000/v1/` is `host:5000`);
- `kubernetes.io/basic-auth` (or Opaque): keys `username` and `password`.
Anything else is an InvalidInputError that says which keys were expected, never what the values are.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from bundler.errors import InvalidInputError
from bundler.oci.credentials import Credentials

DOCKER_CONFIG_KEY = ".dockerconfigjson"
USERNAME_KEY = "username"
PASSWORD_KEY = "password"
_WHAT = "the repository credentials Secret (spec.helm.secretRef)"


def credentials_from_secret(data: Mapping[str, str], host: str) -> Credentials:
    """The credentials `data` (decoded Secret data) holds for `host`."""
    if DOCKER_CONFIG_KEY in data:
        return _from_docker_config(data[DOCKER_CONFIG_KEY], host)
    username, password = data.get(USERNAME_KEY), data.get(PASSWORD_KEY)
    if username and password is not None:
        return Credentials(username, password)
    raise InvalidInputError(
        f"{_WHAT} has neither a {DOCKER_CONFIG_KEY} key (type kubernetes.io/dockerconfigjson) "
        f"nor {USERNAME_KEY} and {PASSWORD_KEY} keys (type kubernetes.io/basic-auth); "
        f"its keys: {', '.join(sorted(data)) or 'none'}"
    )


def registry_host(key: str) -> str:
    """A Docker config `auths` key as the host it stands for: no scheme, no path."""
    for scheme in ("https://", "http://"):
        key = key.removeprefix(scheme)
    return key.split("/", 1)[0]


def _from_docker_config(text: str, host: str) -> Credentials:
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        raise InvalidInputError(f"{_WHAT}: {DOCKER_CONFIG_KEY} is not JSON") from None
    auths = document.get("auths") if isinstance(document, dict) else None
    if not isinstance(auths, dict):
        raise InvalidInputError(f"{_WHAT}: {DOCKER_CONFIG_KEY} has no `auths` object")
    # An exact key wins over one that only normalises to the host.
    for key in sorted(auths, key=lambda k: (k != host, k)):
        entry = auths[key]
        if registry_host(key) == host and isinstance(entry, dict):
            return _entry_credentials(entry, key)
    listed = ", ".join(sorted(registry_host(k) for k in auths)) or "none"
    raise InvalidInputError(
        f"{_WHAT}: {DOCKER_CONFIG_KEY} has no entry for {host} (entries for: {listed})"
    )


def _entry_credentials(entry: Mapping[str, Any], key: str) -> Credentials:
    where = f"{_WHAT}: {DOCKER_CONFIG_KEY} auths[{key!r}]"
    encoded = entry.get("auth")
    if isinstance(encoded, str) and encoded:
        try:
            decoded = base64.b64decode(encoded, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            raise InvalidInputError(f"{where}: `auth` is not base64 of user:password") from None
        username, sep, password = decoded.partition(":")
        if not sep or not username:
            raise InvalidInputError(f"{where}: `auth` is not base64 of user:password")
        return Credentials(username, password)
    user, secret = entry.get("username"), entry.get("password")
    if isinstance(user, str) and user and isinstance(secret, str):
        return Credentials(user, secret)
    raise InvalidInputError(f"{where}: has neither `auth` nor `username` and `password`")
