"""Registry credentials from a Secret a Bundle names (`helm.secretRef`, `images[].secretRef`), as
the manager hands it over.

The manager passes the Secret's `data` already base64-decoded. Two layouts are read, the ones Flux
reads for its sources:
- `kubernetes.io/dockerconfigjson`: key `.dockerconfigjson`, a Docker config whose `auths` entry for
  the repository's host carries `auth` (base64 of `user:password`) or `username` and `password`;
  entry keys are compared the way Docker does (`https://host:5000/v1/` is `host:5000`);
- `kubernetes.io/basic-auth` (or Opaque): keys `username` and `password`.
Anything else is an InvalidInputError that says which keys were expected, never what the values are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from bundler.errors import InvalidInputError
from bundler.oci.credentials import Credentials, entries_for, entry_credentials, registry_host

DOCKER_CONFIG_KEY = ".dockerconfigjson"
USERNAME_KEY = "username"
PASSWORD_KEY = "password"
HELM_SECRET_FIELD = "spec.helm.secretRef"


def credentials_from_secret(
    data: Mapping[str, str], host: str, *, field: str = HELM_SECRET_FIELD
) -> Credentials:
    """The credentials `data` (decoded Secret data) holds for `host`; `field` names the reference
    to the Secret in messages."""
    what = f"the repository credentials Secret ({field})"
    if DOCKER_CONFIG_KEY in data:
        return _from_docker_config(data[DOCKER_CONFIG_KEY], host, what)
    username, password = data.get(USERNAME_KEY), data.get(PASSWORD_KEY)
    if username and password is not None:
        return Credentials(username, password)
    raise InvalidInputError(
        f"{what} has neither a {DOCKER_CONFIG_KEY} key (type kubernetes.io/dockerconfigjson) "
        f"nor {USERNAME_KEY} and {PASSWORD_KEY} keys (type kubernetes.io/basic-auth); "
        f"its keys: {', '.join(sorted(data)) or 'none'}"
    )


def _from_docker_config(text: str, host: str, what: str) -> Credentials:
    try:
        document = json.loads(text)
    except json.JSONDecodeError:
        raise InvalidInputError(f"{what}: {DOCKER_CONFIG_KEY} is not JSON") from None
    auths = document.get("auths") if isinstance(document, dict) else None
    if not isinstance(auths, dict):
        raise InvalidInputError(f"{what}: {DOCKER_CONFIG_KEY} has no `auths` object")
    for key, entry in entries_for(auths, host):
        where = f"{what}: {DOCKER_CONFIG_KEY} auths[{key!r}]"
        found = entry_credentials(entry, where)
        if found is None:
            raise InvalidInputError(f"{where}: has neither `auth` nor `username` and `password`")
        return found
    listed = ", ".join(sorted(registry_host(k) for k in auths)) or "none"
    raise InvalidInputError(
        f"{what}: {DOCKER_CONFIG_KEY} has no entry for {host} (entries for: {listed})"
    )
