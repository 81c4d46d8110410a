"""Authentication as kube-apiserver does it with bearer tokens (anonymous access off): the admin
token is a member of system:masters, a service-account token Secret's token is its ServiceAccount
while the Secret holds it and the ServiceAccount is the one it was minted for; anything else is
401 with Kubernetes' Status body."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
import requests

from bundler.api.resources import SECRET, SERVICE_ACCOUNT
from bundler.apiserver import ApiServer
from bundler.store.memory import MemoryStore
from tests.apiserver.conftest import Http

SECRETS = "/api/v1/namespaces/ws/secrets"
ACCOUNTS = "/api/v1/namespaces/ws/serviceaccounts"
ROBOT = "system:serviceaccount:ws:robot"
# kube-apiserver's answer to a request it cannot authenticate, byte for byte as JSON.
UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def robot_token(api: Http, server: ApiServer) -> str:
    """Create ServiceAccount ws/robot and its token Secret as the admin; return the token."""
    assert api.call("POST", ACCOUNTS, {"metadata": {"name": "robot"}})[0] == 201
    secret = {
        "metadata": {
            "name": "robot-token",
            "annotations": {"kubernetes.io/service-account.name": "robot"},
        },
        "type": "kubernetes.io/service-account-token",
    }
    assert api.call("POST", SECRETS, secret)[0] == 201
    data = server.store.get(SECRET, "robot-token", "ws")["data"]
    return base64.b64decode(data["token"]).decode()


def get(server: ApiServer, path: str, authorization: str | None) -> requests.Response:
    headers = {} if authorization is None else {"Authorization": authorization}
    return requests.get(server.url + path, headers=headers, timeout=10)


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer not-a-token", "Token x"],
    ids=["no-header", "empty", "no-token", "empty-token", "basic", "unknown-token", "other-scheme"],
)
def test_requests_without_a_known_token_are_unauthorized(
    server: ApiServer, authorization: str | None
) -> None:
    for path in ("/api", "/version", SECRETS):
        response = get(server, path, authorization)
        assert (response.status_code, response.json()) == (401, UNAUTHORIZED)


@pytest.mark.parametrize(
    "scheme", ["Bearer", "bearer", "BEARER"], ids=["canonical", "lower", "upper"]
)
def test_the_admin_token_may_do_anything(server: ApiServer, scheme: str) -> None:
    assert get(server, SECRETS, f"{scheme} {server.admin_token}").status_code == 200


def test_a_service_account_token_is_its_service_account(server: ApiServer, api: Http) -> None:
    token = robot_token(api, server)
    allowed = get(server, "/api", f"Bearer {token}")
    assert allowed.status_code == 200
    refused = get(server, SECRETS, f"Bearer {token}")
    assert refused.status_code == 403
    assert f'User "{ROBOT}" cannot list resource "secrets"' in refused.json()["message"]


Revoke = Callable[[MemoryStore], Any]


def recreate_account(store: MemoryStore) -> None:
    """The same name, a new uid: tokens minted for the old one are void."""
    store.delete(SERVICE_ACCOUNT, "robot", "ws")
    store.create(SERVICE_ACCOUNT, {"metadata": {"name": "robot", "namespace": "ws"}})


REVOCATIONS: list[tuple[str, Revoke]] = [
    ("secret-deleted", lambda s: s.delete(SECRET, "robot-token", "ws")),
    ("account-deleted", lambda s: s.delete(SERVICE_ACCOUNT, "robot", "ws")),
    ("account-recreated", lambda s: recreate_account(s)),
    (
        "token-replaced",
        lambda s: s.patch(SECRET, "robot-token", {"data": {"token": "b3RoZXI="}}, "ws"),
    ),
]


@pytest.mark.parametrize("revoke", [r for _, r in REVOCATIONS], ids=[i for i, _ in REVOCATIONS])
def test_a_token_dies_with_its_secret_or_account(
    server: ApiServer, api: Http, revoke: Revoke
) -> None:
    token = robot_token(api, server)
    assert get(server, "/api", f"Bearer {token}").status_code == 200
    revoke(server.store)
    response = get(server, "/api", f"Bearer {token}")
    assert (response.status_code, response.json()) == (401, UNAUTHORIZED)


def test_tokens_outlive_a_restart_of_the_server(server: ApiServer, api: Http) -> None:
    token = robot_token(api, server)
    with ApiServer(server.store) as restarted:
        assert get(restarted, "/api", f"Bearer {token}").status_code == 200


def test_kubeconfigs_carry_the_admin_token_by_default(server: ApiServer, tmp_path: Any) -> None:
    text = server.kubeconfig(tmp_path / "kubeconfig").read_text()
    assert server.admin_token in text
