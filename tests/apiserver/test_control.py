"""What tests steer on the test API server: injected faults, request counts, the bearer token."""

from __future__ import annotations

import pytest
import requests

from bundler.api.resources import BUNDLE, NAMESPACE, SECRET
from bundler.apiserver import ApiServer, Verb
from tests.support.apiserver.contract import BUNDLES, MERGE, Http, bundle_body

# Faults, request counts, tokens and restarts are the stand-in's own controls.
pytestmark = pytest.mark.stand_in_only("steers the stand-in itself")


def test_injected_429_carries_retry_after(server: ApiServer, api: Http) -> None:
    server.inject_failure(429, verb=Verb.LIST, retry_after=3, count=2)
    for _ in range(2):
        response = api.send("GET", BUNDLES)
        assert response.status_code == 429
        assert response.headers["Retry-After"] == "3"
        status = response.json()
        assert (status["reason"], status["details"]["retryAfterSeconds"]) == ("TooManyRequests", 3)
    assert api.call("GET", BUNDLES)[0] == 200


@pytest.mark.parametrize(
    ("code", "reason"),
    [(409, "Conflict"), (410, "Expired"), (500, "InternalError"), (503, "ServiceUnavailable")],
    ids=["409", "410", "500", "503"],
)
def test_injected_codes_have_kubernetes_reasons(
    server: ApiServer, api: Http, code: int, reason: str
) -> None:
    server.inject_failure(code)
    answer_code, status = api.call("GET", BUNDLES)
    assert (answer_code, status["code"], status["reason"]) == (code, code, reason)


def test_faults_match_verb_and_resource(server: ApiServer, api: Http) -> None:
    server.inject_failure(503, verb=Verb.PATCH, resource=BUNDLE)
    api.call("POST", BUNDLES, bundle_body("a"))
    assert api.call("PATCH", f"/api/v1/namespaces/{api.namespace}", {}, headers=MERGE)[0] == 200
    assert api.call("GET", f"{BUNDLES}/a")[0] == 200
    assert api.call("PATCH", f"{BUNDLES}/a", {}, headers=MERGE)[0] == 503
    assert api.call("PATCH", f"{BUNDLES}/a", {}, headers=MERGE)[0] == 200


def test_clear_failures(server: ApiServer, api: Http) -> None:
    server.inject_failure(500, count=5)
    server.clear_failures()
    assert api.call("GET", BUNDLES)[0] == 200


def test_request_counts_by_verb(server: ApiServer, api: Http) -> None:
    server.reset_counts()
    api.call("POST", BUNDLES, bundle_body("a"))
    api.call("GET", f"{BUNDLES}/a")
    api.call("GET", BUNDLES)
    current = api.call("GET", f"{BUNDLES}/a")[1]
    api.call("PUT", f"{BUNDLES}/a", current)
    api.call("PUT", f"{BUNDLES}/a/status", current)
    api.call("PATCH", f"{BUNDLES}/a/status", {"status": {}}, headers=MERGE)
    api.call("DELETE", f"{BUNDLES}/a")
    with api.send("GET", f"{BUNDLES}?watch=true", stream=True) as watch:
        assert watch.status_code == 200
    api.call("GET", "/apis")
    assert server.request_counts() == {
        "create": 1,
        "get": 2,
        "list": 1,
        "update": 2,
        "patch": 1,
        "delete": 1,
        "watch": 1,
        "discovery": 1,
    }
    server.reset_counts()
    assert server.request_counts() == {}


def test_bearer_token_is_required_when_set() -> None:
    with ApiServer(token="s3cret") as server:
        server.store.create(NAMESPACE, {"metadata": {"name": "ws"}})
        server.store.create(SECRET, {"metadata": {"name": "x", "namespace": "ws"}})
        path = server.url + "/api/v1/namespaces/ws/secrets/x"
        anonymous = requests.get(path, timeout=10)
        assert (anonymous.status_code, anonymous.json()["reason"]) == (401, "Unauthorized")
        wrong = requests.get(path, headers={"Authorization": "Bearer nope"}, timeout=10)
        assert wrong.status_code == 401
        right = requests.get(path, headers={"Authorization": "Bearer s3cret"}, timeout=10)
        assert right.status_code == 200


def test_start_stop_and_restart_refusal() -> None:
    server = ApiServer()
    server.start()
    with pytest.raises(RuntimeError, match="already running"):
        server.start()
    server.stop()
    server.stop()
