"""Authentication as kube-apiserver does it with bearer tokens (anonymous access off): the admin is
a member of system:masters, a service-account token is its ServiceAccount (a token Secret's while
the Secret holds it and the ServiceAccount is the one it was minted for, and only a token the
token controller minted); anything else is 401 with Kubernetes' Status body."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from bundler.apiserver import ApiServer
from bundler.store.protocol import Obj
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import (
    ACCOUNTS,
    MERGE,
    SECRETS,
    TOKEN_SECRET_TYPE,
    Http,
    eventually,
    rule,
    secret_token,
)

UID = "kubernetes.io/service-account.uid"
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


def secret_robot_token(api: Http) -> str:
    """Create ServiceAccount robot and its token Secret as the admin; the token a token
    controller puts into the Secret."""
    assert api.call("POST", ACCOUNTS, {"metadata": {"name": "robot"}})[0] == 201
    secret = {
        "metadata": {
            "name": "robot-token",
            "annotations": {"kubernetes.io/service-account.name": "robot"},
        },
        "type": TOKEN_SECRET_TYPE,
    }
    assert api.call("POST", SECRETS, secret)[0] == 201
    return eventually(lambda: secret_token(api, "robot-token"), "the token controller")


def answer(backend: Backend, ns: str, path: str, authorization: str | None) -> tuple[int, object]:
    client = backend.client(None, ns)
    headers = {} if authorization is None else {"Authorization": authorization}
    try:
        response = client.send("GET", path, headers=headers)
        return response.status_code, response.json()
    finally:
        client.close()


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer not-a-token", "Token x"],
    ids=["no-header", "empty", "no-token", "empty-token", "basic", "unknown-token", "other-scheme"],
)
def test_requests_without_a_known_token_are_unauthorized(
    backend: Backend, ns: str, authorization: str | None
) -> None:
    for path in ("/api", "/version", SECRETS):
        assert answer(backend, ns, path, authorization) == (401, UNAUTHORIZED), path


@pytest.mark.parametrize(
    "scheme", ["Bearer", "bearer", "BEARER"], ids=["canonical", "lower", "upper"]
)
def test_the_scheme_of_a_bearer_token_is_case_insensitive(
    backend: Backend, ns: str, scheme: str
) -> None:
    token = backend.user(ns, "reader", [rule(["list"], [""], ["secrets"])])
    assert answer(backend, ns, SECRETS, f"{scheme} {token}")[0] == 200


def test_the_admin_may_do_anything(api: Http) -> None:
    assert api.call("GET", "/api/v1/secrets")[0] == 200


def test_a_service_account_token_is_its_service_account(backend: Backend, api: Http) -> None:
    token = secret_robot_token(api)
    robot = f"system:serviceaccount:{api.namespace}:robot"
    assert answer(backend, api.namespace, "/api", f"Bearer {token}")[0] == 200
    code, refused = answer(backend, api.namespace, SECRETS, f"Bearer {token}")
    assert code == 403
    assert isinstance(refused, dict)
    assert f'User "{robot}" cannot list resource "secrets"' in refused["message"]


Revoke = Callable[[Http], object]


def recreate_account(api: Http) -> None:
    """The same name, a new uid: tokens minted for the old one are void."""
    api.call("DELETE", f"{ACCOUNTS}/robot")
    eventually(lambda: api.call("GET", f"{ACCOUNTS}/robot")[0] == 404 or None, "the deletion")
    api.call("POST", ACCOUNTS, {"metadata": {"name": "robot"}})


REVOCATIONS: list[tuple[str, Revoke]] = [
    ("secret-deleted", lambda api: api.call("DELETE", f"{SECRETS}/robot-token")),
    ("account-deleted", lambda api: api.call("DELETE", f"{ACCOUNTS}/robot")),
    ("account-recreated", recreate_account),
    (
        "token-replaced",
        lambda api: api.call(
            "PATCH", f"{SECRETS}/robot-token", {"data": {"token": "b3RoZXI="}}, headers=MERGE
        ),
    ),
]


@pytest.mark.parametrize("revoke", [r for _, r in REVOCATIONS], ids=[i for i, _ in REVOCATIONS])
def test_a_token_dies_with_its_secret_or_account(
    backend: Backend, api: Http, revoke: Revoke
) -> None:
    token = secret_robot_token(api)
    assert answer(backend, api.namespace, "/api", f"Bearer {token}")[0] == 200
    revoke(api)

    def refused() -> bool | None:
        # A real server reads Secrets and ServiceAccounts through its caches: soon, not at once.
        found = answer(backend, api.namespace, "/api", f"Bearer {token}")
        return found == (401, UNAUTHORIZED) or None

    eventually(refused, "the token to be refused")


def unsigned_jwt(namespace: str, account: str, uid: str, secret: str) -> str:
    """A token that says all the right things, signed by nobody (`alg: none`)."""

    def part(obj: dict[str, str]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    prefix = "kubernetes.io/serviceaccount/"
    claims = {
        "iss": "kubernetes/serviceaccount",
        prefix + "namespace": namespace,
        prefix + "secret.name": secret,
        prefix + "service-account.name": account,
        prefix + "service-account.uid": uid,
        "sub": f"system:serviceaccount:{namespace}:{account}",
    }
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


CHOSEN_TOKENS: dict[str, Callable[[str, str], str]] = {
    "opaque": lambda ns, uid: "a-token-of-my-choosing",
    "unsigned-jwt": lambda ns, uid: unsigned_jwt(ns, "boss", uid, "boss-chosen"),
}
CHOOSING = ["written-with-the-secret", "replacing-a-given-token"]


@pytest.mark.parametrize("choosing", CHOOSING)
@pytest.mark.parametrize("chosen", list(CHOSEN_TOKENS.values()), ids=list(CHOSEN_TOKENS))
def test_a_token_a_client_chose_never_authenticates(
    backend: Backend, api: Http, choosing: str, chosen: Callable[[str, str], str]
) -> None:
    """A ServiceAccount that may write Secrets does not become another one by writing a token of
    its choosing into that one's token Secret: tokens are the token controller's (a JWT signed
    with the cluster's key on a real cluster), the uid annotation is no secret."""
    ns = api.namespace
    boss = backend.user(ns, "boss", [rule(["list"], [""], ["secrets"])])
    writes = rule(["create", "get", "patch"], [""], ["secrets"])
    writer = backend.client(backend.user(ns, "writer", [writes]), ns)
    uid = api.call("GET", f"{ACCOUNTS}/boss")[1]["metadata"]["uid"]
    token = chosen(ns, uid)
    encoded = base64.b64encode(token.encode()).decode()
    annotations = {"kubernetes.io/service-account.name": "boss", UID: uid}
    secret: Obj = {"metadata": {"name": "boss-chosen", "annotations": annotations}}
    secret["type"] = TOKEN_SECRET_TYPE
    if choosing == "written-with-the-secret":
        secret["data"] = {"token": encoded}
        assert writer.call("POST", SECRETS, secret)[0] == 201
    else:
        assert api.call("POST", SECRETS, secret)[0] == 201
        eventually(lambda: secret_token(api, "boss-chosen"), "the token controller")
        patch = {"data": {"token": encoded}}
        assert writer.call("PATCH", f"{SECRETS}/boss-chosen", patch, headers=MERGE)[0] == 200
    writer.close()
    assert answer(backend, ns, SECRETS, f"Bearer {token}") == (401, UNAUTHORIZED)

    def completed() -> bool | None:
        data = api.call("GET", f"{SECRETS}/boss-chosen")[1].get("data") or {}
        return "ca.crt" in data or None

    # Nor once the token controller has done all it will with the Secret: it keeps the token.
    eventually(completed, "the token controller")
    assert secret_token(api, "boss-chosen") == token
    assert answer(backend, ns, SECRETS, f"Bearer {token}") == (401, UNAUTHORIZED)
    assert answer(backend, ns, SECRETS, f"Bearer {boss}")[0] == 200


@pytest.mark.stand_in_only("restarts the stand-in on the same store")
def test_tokens_outlive_a_restart_of_the_server(
    server: ApiServer, api: Http, stand_in_certificate: tuple[Path, Path]
) -> None:
    token = secret_robot_token(api)
    server.stop()
    with ApiServer(server.store, certificate=stand_in_certificate) as restarted:
        client = Http(restarted.url, token=token, verify=str(stand_in_certificate[0]))
        assert client.call("GET", "/api")[0] == 200
        client.close()


@pytest.mark.stand_in_only("the stand-in's own kubeconfig writer")
def test_kubeconfigs_carry_the_admin_token_by_default(server: ApiServer, tmp_path: Path) -> None:
    text = server.kubeconfig(tmp_path / "kubeconfig").read_text()
    assert server.admin_token in text
