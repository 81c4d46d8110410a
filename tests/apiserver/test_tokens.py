"""The emulated token controller: service-account token Secrets get a token when their
ServiceAccount exists, whoever stores them (a client of the server, or a controller writing to the
store directly), with the server's certificate as their CA when it serves HTTPS; other Secrets,
and servers without it, are left alone, and a token once given is never replaced."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import NAMESPACE, SECRET, SERVICE_ACCOUNT
from bundler.apiserver import ApiServer
from bundler.apiserver.certificates import self_signed_certificate
from bundler.apiserver.tokens import TEST_CA_PEM, TokenController
from bundler.store.protocol import Obj
from tests.apiserver.conftest import MERGE, Http

SECRETS = "/api/v1/namespaces/ws/secrets"
ACCOUNTS = "/api/v1/namespaces/ws/serviceaccounts"
TOKEN_TYPE = "kubernetes.io/service-account-token"


def token_secret(account: str = "robot", namespace: str | None = None, **fields: Any) -> Obj:
    meta: Obj = {
        "name": "robot-token",
        "annotations": {"kubernetes.io/service-account.name": account},
    }
    if namespace is not None:
        meta["namespace"] = namespace
    return {"metadata": meta, "type": TOKEN_TYPE, **fields}


def decoded(secret: Obj, key: str) -> str:
    return base64.b64decode(secret["data"][key]).decode()


@pytest.fixture
def account(api: Http) -> Obj:
    code, created = api.call("POST", ACCOUNTS, {"metadata": {"name": "robot"}})
    assert code == 201
    return created


def test_token_secret_of_an_existing_account_is_filled(api: Http, account: Obj) -> None:
    assert api.call("POST", SECRETS, token_secret())[0] == 201
    code, secret = api.call("GET", f"{SECRETS}/robot-token")
    assert code == 200
    assert decoded(secret, "token")
    assert decoded(secret, "ca.crt") == TEST_CA_PEM
    assert decoded(secret, "namespace") == "ws"
    annotations = secret["metadata"]["annotations"]
    assert annotations["kubernetes.io/service-account.uid"] == account["metadata"]["uid"]
    assert annotations["kubernetes.io/service-account.name"] == "robot"


def test_every_secret_gets_its_own_token(api: Http, account: Obj) -> None:
    tokens = set()
    for name in ("one", "two"):
        body = token_secret()
        body["metadata"]["name"] = name
        api.call("POST", SECRETS, body)
        tokens.add(decoded(api.call("GET", f"{SECRETS}/{name}")[1], "token"))
    assert len(tokens) == 2


def test_emptied_token_is_filled_again(api: Http, account: Obj) -> None:
    api.call("POST", SECRETS, token_secret())
    code, _ = api.call("PATCH", f"{SECRETS}/robot-token", {"data": {"token": None}}, headers=MERGE)
    assert code == 200
    assert decoded(api.call("GET", f"{SECRETS}/robot-token")[1], "token")


@pytest.mark.parametrize(
    "body",
    [
        token_secret(account="nobody"),
        {**token_secret(), "type": "Opaque"},
        token_secret(data={"token": base64.b64encode(b"mine").decode()}),
    ],
    ids=["account-missing", "opaque-secret", "token-already-there"],
)
def test_other_secrets_are_left_alone(api: Http, account: Obj, body: Obj) -> None:
    api.call("POST", SECRETS, body)
    secret = api.call("GET", f"{SECRETS}/robot-token")[1]
    assert secret.get("data") == body.get("data")
    assert "kubernetes.io/service-account.uid" not in secret["metadata"]["annotations"]


@pytest.fixture
def without_tokens() -> Iterator[Http]:
    with ApiServer(token_controller=False) as running:
        running.store.create(NAMESPACE, {"metadata": {"name": "ws"}})
        client = Http(running.url, running.admin_token)
        yield client
        client.close()


def test_token_controller_can_be_turned_off(without_tokens: Http) -> None:
    without_tokens.call("POST", ACCOUNTS, {"metadata": {"name": "robot"}})
    without_tokens.call("POST", SECRETS, token_secret())
    assert "data" not in without_tokens.call("GET", f"{SECRETS}/robot-token")[1]


def test_a_token_secret_stored_directly_is_filled(server: ApiServer) -> None:
    server.store.create(SERVICE_ACCOUNT, {"metadata": {"name": "robot", "namespace": "ws"}})
    server.store.create(
        SECRET, {**token_secret(), "metadata": {**token_secret()["metadata"], "namespace": "ws"}}
    )
    assert decoded(server.store.get(SECRET, "robot-token", "ws"), "token")


def test_an_https_server_gives_its_own_certificate_as_the_ca(tmp_path: Path) -> None:
    certificate = self_signed_certificate(tmp_path)
    with ApiServer(certificate=certificate) as running:
        running.store.create(NAMESPACE, {"metadata": {"name": "ws"}})
        running.store.create(SERVICE_ACCOUNT, {"metadata": {"name": "robot", "namespace": "ws"}})
        running.store.create(SECRET, token_secret(namespace="ws"))
        secret = running.store.get(SECRET, "robot-token", "ws")
    assert decoded(secret, "ca.crt") == certificate[0].read_text()


def test_a_token_once_given_is_never_replaced(server: ApiServer, api: Http, account: Obj) -> None:
    api.call("POST", SECRETS, token_secret())
    before = decoded(api.call("GET", f"{SECRETS}/robot-token")[1], "token")
    TokenController(server.store).fill(token_secret(namespace="ws"))
    assert decoded(api.call("GET", f"{SECRETS}/robot-token")[1], "token") == before
