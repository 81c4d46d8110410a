"""Answering a registry's 401 challenge with bundler's credentials: HTTP basic or a bearer token.

This is the oras-py auth backend bundler installs on its registry client. oras's default token
backend fails against a plain basic-auth registry and looks for credentials in the user's Docker
config by itself; this one answers whichever scheme `WWW-Authenticate` names (Basic, or Bearer with
a token fetched from the challenge's realm, anonymously when there are no credentials), uses only
the credentials bundler resolved, and never reads or writes a config file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests
from oras.auth.base import AuthBackend

from bundler.errors import InvalidInputError, RegistryAuthError, TransientError
from bundler.oci.credentials import Credentials
from bundler.oci.deadline import Deadline
from bundler.oci.limits import MAX_METADATA_BYTES, Transfer, read_body, send

_SCHEME = re.compile(r"\s*([A-Za-z]+)\s*(.*)")
_PARAM = re.compile(r'([A-Za-z_]+)\s*=\s*(?:"([^"]*)"|([^\s,]+))')


@dataclass(frozen=True)
class Challenge:
    """A parsed `WWW-Authenticate` header: the scheme (lowercase) and its parameters."""

    scheme: str
    params: Mapping[str, str]


def parse_challenge(header: str) -> Challenge | None:
    """Parse one challenge; None when the header is empty or unreadable."""
    match = _SCHEME.match(header)
    if not header.strip() or match is None:
        return None
    params = {key.lower(): quoted or bare for key, quoted, bare in _PARAM.findall(match.group(2))}
    return Challenge(scheme=match.group(1).lower(), params=params)


class ChallengeAuth(AuthBackend):  # type: ignore[misc]  # oras ships no type hints
    """An oras auth backend holding the Authorization header that last satisfied the registry."""

    def __init__(
        self,
        credentials: Credentials | None,
        *,
        session: requests.Session,
        timeout: float,
        tls_verify: bool | str,
        reference: str,
        deadline: Deadline,
    ) -> None:
        super().__init__()
        self.session = session
        self._credentials = credentials
        self._timeout = timeout
        self._deadline = deadline
        self._tls_verify = tls_verify
        self._reference = reference
        self._authorization: str | None = None

    @property
    def has_credentials(self) -> bool:
        return self._credentials is not None

    @property
    def username(self) -> str | None:
        return None if self._credentials is None else self._credentials.username

    def load_configs(self, container: Any, configs: list[str] | None = None) -> None:
        """Credentials come from bundler, never from oras reading the Docker config itself."""

    def get_auth_header(self) -> dict[str, str]:
        return {} if self._authorization is None else {"Authorization": self._authorization}

    def authenticate_request(
        self, original: requests.Response, headers: dict[str, str], refresh: bool = False
    ) -> tuple[dict[str, str], bool]:
        """Answer the challenge of a 401 response; (headers, False) when it cannot be answered."""
        challenge = parse_challenge(original.headers.get("WWW-Authenticate", ""))
        if challenge is None:
            return headers, False
        if challenge.scheme == "basic":
            if self._credentials is None:
                return headers, False
            self._authorization = self._credentials.basic_header()
        elif challenge.scheme == "bearer":
            self._authorization = f"Bearer {self._fetch_token(challenge)}"
        else:
            return headers, False
        return {**headers, "Authorization": self._authorization}, True

    def _fetch_token(self, challenge: Challenge) -> str:
        realm = challenge.params.get("realm")
        if not realm:
            raise InvalidInputError("bearer challenge without a realm", obj=self._reference)
        params = {
            key: challenge.params[key] for key in ("service", "scope") if key in challenge.params
        }
        headers = (
            {} if self._credentials is None else {"Authorization": self._credentials.basic_header()}
        )
        transfer = Transfer("the token", f"token service {realm}", self._reference, self._deadline)
        try:
            response = send(
                self.session,
                "GET",
                realm,
                transfer,
                headers=headers,
                timeout=self._timeout,
                params=params,
                verify=self._tls_verify,
            )
        except requests.RequestException as err:
            if self._deadline.expired:
                raise transfer.deadline_passed() from err
            raise TransientError(
                f"cannot reach the token service {realm}: {type(err).__name__}", obj=self._reference
            ) from err
        body = read_body(response, MAX_METADATA_BYTES, transfer)
        if response.status_code in (401, 403):
            who = "anonymous access" if self._credentials is None else f"user {self.username!r}"
            raise RegistryAuthError(
                f"the token service {realm} refused {who} ({response.status_code})",
                obj=self._reference,
            )
        if response.status_code != 200:
            raise TransientError(
                f"the token service {realm} answered {response.status_code}", obj=self._reference
            )
        return _token_from(body, realm, self._reference)


def _token_from(body: bytes, realm: str, reference: str) -> str:
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        answer = None
    token = (
        (answer.get("token") or answer.get("access_token")) if isinstance(answer, dict) else None
    )
    if not isinstance(token, str) or not token:
        raise InvalidInputError(f"the token service {realm} returned no token", obj=reference)
    return token
