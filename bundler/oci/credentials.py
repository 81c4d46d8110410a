"""Registry credentials: explicit ones, or read (never written) from the Docker config.

The Docker config is `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`. An entry of
`auths` applies to a host when its key, stripped of scheme and path the way Docker normalises it,
equals the host: `https://127.0.0.1:5000/v1/` matches `127.0.0.1:5000`, and nothing matches a
different host (a local registry is never confused with Docker Hub). An entry carries either
`auth` (base64 of `user:password`) or `username` and `password`. Credential helpers are not run.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler.errors import InvalidInputError

DOCKER_CONFIG_ENV = "DOCKER_CONFIG"
CONFIG_FILE = "config.json"


@dataclass(frozen=True)
class Credentials:
    """A username and password for a registry or repository; `repr` never shows the password."""

    username: str
    password: str = field(repr=False)

    def basic_header(self) -> str:
        """The value of an `Authorization: Basic ...` header."""
        token = base64.b64encode(f"{self.username}:{self.password}".encode()).decode()
        return f"Basic {token}"


def docker_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the Docker CLI keeps its config for this environment."""
    env = os.environ if environ is None else environ
    directory = env.get(DOCKER_CONFIG_ENV)
    base = Path(directory) if directory else Path.home() / ".docker"
    return base / CONFIG_FILE


def registry_host(key: str) -> str:
    """A Docker config `auths` key as the host it stands for: no scheme, no path."""
    for scheme in ("https://", "http://"):
        key = key.removeprefix(scheme)
    return key.split("/", 1)[0]


def entries_for(auths: Mapping[str, Any], host: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The `auths` entries that apply to `host`: an exact key first, then normalised matches."""
    for key in sorted(auths, key=lambda k: (k != host, k)):
        entry = auths[key]
        if registry_host(key) == host and isinstance(entry, dict):
            yield key, entry


def _decode_auth(encoded: str, source: str) -> Credentials:
    try:
        username, sep, password = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise InvalidInputError("`auth` is not base64 of user:password", obj=source) from None
    if not sep or not username:
        raise InvalidInputError("`auth` is not base64 of user:password", obj=source)
    return Credentials(username, password)


def entry_credentials(entry: Mapping[str, Any], source: str) -> Credentials | None:
    """An entry's `auth`, or `username` and `password`; None when it has neither."""
    encoded = entry.get("auth")
    if isinstance(encoded, str) and encoded:
        return _decode_auth(encoded, source)
    username, password = entry.get("username"), entry.get("password")
    if isinstance(username, str) and isinstance(password, str) and username:
        return Credentials(username, password)
    return None


def _read_config(path: Path) -> Mapping[str, Any]:
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InvalidInputError(f"cannot read Docker config: {err}", obj=str(path)) from err
    if not isinstance(document, dict):
        raise InvalidInputError("Docker config is not a JSON object", obj=str(path))
    return document


def from_docker_config(host: str, path: Path | None = None) -> Credentials | None:
    """The credentials the Docker config holds for `host`, if any."""
    config_path = docker_config_path() if path is None else path
    auths = _read_config(config_path).get("auths")
    if not isinstance(auths, dict):
        return None
    for key, entry in entries_for(auths, host):
        found = entry_credentials(entry, f"{config_path} auths[{key!r}]")
        if found is not None:
            return found
    return None


def resolve(host: str, username: str | None, password: str | None) -> Credentials | None:
    """Explicit credentials if given (both parts), else the Docker config's for `host`."""
    if (username is None) != (password is None):
        raise InvalidInputError("give both a username and a password, or neither")
    if username is not None and password is not None:
        return Credentials(username, password)
    return from_docker_config(host)
