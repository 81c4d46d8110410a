"""The token controller (kube-controller-manager's on the real server, emulated by the stand-in):
service-account token Secrets get a token when their ServiceAccount exists, whoever stores them,
with the server's CA, and one that came with a token is completed around it; other Secrets, and
servers without it, are left alone, and a token once given is never replaced."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.api.resources import NAMESPACE, SECRET, SERVICE_ACCOUNT
from bundler.apiserver import ApiServer
from bundler.apiserver.tokens import TokenController
from bundler.store.protocol import Obj
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import (
    ACCOUNTS,
    MERGE,
    SECRETS,
    TOKEN_SECRET_TYPE,
    Http,
    eventually,
    secret_token,
)

UID = "kubernetes.io/service-account.uid"


def token_secret(account: str = "robot", namespace: str | None = None, **fields: Any) -> Obj:
    meta: Obj = {
        "name": "robot-token",
        "annotations": {"kubernetes.io/service-account.name": account},
    }
    if namespace is not None:
        meta["namespace"] = namespace
    return {"metadata": meta, "type": TOKEN_SECRET_TYPE, **fields}


def decoded(secret: Obj, key: str) -> str:
    return base64.b64decode(secret["data"][key]).decode()


@pytest.fixture
def account(api: Http) -> Obj:
    code, created = api.call("POST", ACCOUNTS, {"metadata": {"name": "robot"}})
    assert code == 201
    return created


def filled(api: Http, name: str = "robot-token") -> Obj:
    """Secret `name` once a token controller has given it a token."""
    eventually(lambda: secret_token(api, name), f"a token in Secret {name}")
    return api.call("GET", f"{SECRETS}/{name}")[1]


def test_token_secret_of_an_existing_account_is_filled(
    backend: Backend, api: Http, account: Obj
) -> None:
    assert api.call("POST", SECRETS, token_secret())[0] == 201
    secret = filled(api)
    assert decoded(secret, "token")
    assert decoded(secret, "ca.crt") == backend.ca_file.read_text()
    assert decoded(secret, "namespace") == api.namespace
    annotations = secret["metadata"]["annotations"]
    assert annotations[UID] == account["metadata"]["uid"]
    assert annotations["kubernetes.io/service-account.name"] == "robot"


def test_every_secret_gets_its_own_token(api: Http, account: Obj) -> None:
    tokens = set()
    for name in ("one", "two"):
        body = token_secret()
        body["metadata"]["name"] = name
        api.call("POST", SECRETS, body)
        tokens.add(decoded(filled(api, name), "token"))
    assert len(tokens) == 2


def test_emptied_token_is_filled_again(api: Http, account: Obj) -> None:
    api.call("POST", SECRETS, token_secret())
    before = decoded(filled(api), "token")
    code, _ = api.call("PATCH", f"{SECRETS}/robot-token", {"data": {"token": None}}, headers=MERGE)
    assert code == 200
    assert decoded(filled(api), "token") != before


def test_an_opaque_secret_is_left_alone(api: Http, account: Obj) -> None:
    body = {**token_secret(), "type": "Opaque"}
    api.call("POST", SECRETS, body)
    secret = api.call("GET", f"{SECRETS}/robot-token")[1]
    assert "data" not in secret
    assert UID not in secret["metadata"]["annotations"]


@pytest.mark.deliberate_difference(
    "kube-controller-manager deletes a token Secret whose ServiceAccount does not exist, or has "
    "another uid than the Secret names; the stand-in leaves it as it is"
)
@pytest.mark.parametrize(
    "annotations",
    [
        {"kubernetes.io/service-account.name": "nobody"},
        {"kubernetes.io/service-account.name": "robot", UID: "an-account-gone-since"},
    ],
    ids=["missing-account", "another-uid"],
)
def test_a_token_secret_of_a_missing_account_is_left_alone(
    api: Http, account: Obj, annotations: dict[str, str]
) -> None:
    body = token_secret()
    body["metadata"]["annotations"] = annotations
    api.call("POST", SECRETS, body)
    secret = api.call("GET", f"{SECRETS}/robot-token")[1]
    assert "data" not in secret


def test_a_token_secret_that_comes_with_a_token_is_completed_and_keeps_it(
    backend: Backend, api: Http, account: Obj
) -> None:
    """As kube-controller-manager does; the token it keeps authenticates as nobody
    (test_authn.py::test_a_token_a_client_chose_never_authenticates)."""
    mine = base64.b64encode(b"mine").decode()
    api.call("POST", SECRETS, token_secret(data={"token": mine}))

    def completed() -> Obj | None:
        secret = api.call("GET", f"{SECRETS}/robot-token")[1]
        return secret if "ca.crt" in secret["data"] else None

    secret = eventually(completed, "the token controller")
    assert secret["data"]["token"] == mine
    assert decoded(secret, "ca.crt") == backend.ca_file.read_text()
    assert decoded(secret, "namespace") == api.namespace
    assert secret["metadata"]["annotations"][UID] == account["metadata"]["uid"]


@pytest.fixture
def without_tokens(stand_in_certificate: tuple[Path, Path]) -> Iterator[Http]:
    with ApiServer(token_controller=False, certificate=stand_in_certificate) as running:
        running.store.create(NAMESPACE, {"metadata": {"name": "ws"}})
        client = Http(
            running.url,
            namespace="ws",
            token=running.admin_token,
            verify=str(stand_in_certificate[0]),
        )
        yield client
        client.close()


@pytest.mark.stand_in_only("turns the stand-in's token controller off")
def test_token_controller_can_be_turned_off(without_tokens: Http) -> None:
    without_tokens.call("POST", ACCOUNTS, {"metadata": {"name": "robot"}})
    without_tokens.call("POST", SECRETS, token_secret())
    assert "data" not in without_tokens.call("GET", f"{SECRETS}/robot-token")[1]


@pytest.mark.stand_in_only("writes to the stand-in's store directly, as `bundler dev`'s manager")
def test_a_token_secret_stored_directly_is_filled(server: ApiServer, api: Http) -> None:
    ns = api.namespace
    server.store.create(SERVICE_ACCOUNT, {"metadata": {"name": "robot", "namespace": ns}})
    server.store.create(SECRET, token_secret(namespace=ns))
    assert decoded(server.store.get(SECRET, "robot-token", ns), "token")


@pytest.mark.stand_in_only("runs a second token controller on the stand-in's store")
def test_a_token_once_given_is_never_replaced(server: ApiServer, api: Http, account: Obj) -> None:
    api.call("POST", SECRETS, token_secret())
    before = decoded(filled(api), "token")
    TokenController(server.store).fill(token_secret(namespace=api.namespace))
    assert decoded(api.call("GET", f"{SECRETS}/robot-token")[1], "token") == before
