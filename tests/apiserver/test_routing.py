"""Kubernetes REST paths to routes and verbs, and equality selectors: pure functions."""

from __future__ import annotations

import pytest

from bundler.api.resources import ALL_KINDS, BUNDLE, LEASE, NAMESPACE, SECRET, Resource, Verb
from bundler.apiserver.routing import ResourceRoute, resolve, verb_of
from bundler.apiserver.selectors import parse_equality_selector
from bundler.apiserver.statuses import HttpError


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/v1/namespaces", ResourceRoute(NAMESPACE, None, None)),
        ("/api/v1/namespaces/ws", ResourceRoute(NAMESPACE, None, "ws")),
        ("/api/v1/namespaces/ws/secrets", ResourceRoute(SECRET, "ws", None)),
        ("/api/v1/namespaces/ws/secrets/s", ResourceRoute(SECRET, "ws", "s")),
        ("/api/v1/secrets", ResourceRoute(SECRET, None, None)),
        (
            "/apis/bundler.dev/v1alpha1/namespaces/ws/bundles/b/status",
            ResourceRoute(BUNDLE, "ws", "b", True),
        ),
        ("/apis/bundler.dev/v1alpha1/bundles", ResourceRoute(BUNDLE, None, None)),
        ("/apis/coordination.k8s.io/v1/namespaces/ws/leases/l", ResourceRoute(LEASE, "ws", "l")),
        ("/api/v1/namespaces/secrets", ResourceRoute(NAMESPACE, None, "secrets")),
        ("/api/v1/namespaces/ws/status", None),
        ("/api/v1/namespaces/ws/secrets/s/status", None),
        ("/apis/bundler.dev/v1alpha1/bundles/b", None),
        ("/apis/bundler.dev/v1alpha1/namespaces/ws/bundles/b/scale", None),
        ("/apis/bundler.dev/v1alpha1/namespaces/ws/bundles/b/status/x", None),
        ("/apis/bundler.dev/v1/namespaces/ws/bundles", None),
        ("/api/v2/namespaces", None),
        ("/apis", None),
    ],
    ids=[
        "namespaces",
        "one-namespace",
        "secrets-in-namespace",
        "one-secret",
        "secrets-everywhere",
        "status-subresource",
        "bundles-everywhere",
        "lease",
        "namespace-named-like-a-plural",
        "namespace-status-not-served",
        "secret-has-no-status",
        "named-object-without-namespace",
        "unknown-subresource",
        "too-deep",
        "unknown-version",
        "unknown-core-version",
        "discovery-is-not-a-resource",
    ],
)
def test_resolve(path: str, expected: ResourceRoute | None) -> None:
    assert resolve(path, ALL_KINDS) == expected


WIDGET = Resource("example.com", "v1", "Widget", "widgets", status_subresource=True)


@pytest.mark.parametrize(
    ("method", "route", "watch", "expected"),
    [
        ("GET", ResourceRoute(BUNDLE, "ws", None), False, Verb.LIST),
        ("GET", ResourceRoute(BUNDLE, None, None), True, Verb.WATCH),
        ("POST", ResourceRoute(BUNDLE, "ws", None), False, Verb.CREATE),
        ("POST", ResourceRoute(BUNDLE, None, None), False, 404),
        ("POST", ResourceRoute(NAMESPACE, None, None), False, Verb.CREATE),
        ("DELETE", ResourceRoute(BUNDLE, "ws", None), False, Verb.DELETE_COLLECTION),
        ("DELETE", ResourceRoute(SECRET, "ws", None), False, Verb.DELETE_COLLECTION),
        ("PUT", ResourceRoute(BUNDLE, "ws", None), False, 400),
        ("PUT", ResourceRoute(SECRET, "ws", None), False, 405),
        ("GET", ResourceRoute(BUNDLE, "ws", "b"), True, Verb.GET),
        ("PUT", ResourceRoute(BUNDLE, "ws", "b", True), False, Verb.UPDATE),
        ("PATCH", ResourceRoute(BUNDLE, "ws", "b", True), False, Verb.PATCH),
        ("DELETE", ResourceRoute(BUNDLE, "ws", "b", True), False, 405),
        ("DELETE", ResourceRoute(BUNDLE, "ws", "b"), False, Verb.DELETE),
        ("POST", ResourceRoute(WIDGET, "ws", "w"), False, Verb.CREATE),
        ("POST", ResourceRoute(SECRET, "ws", "s"), False, 405),
    ],
    ids=[
        "list",
        "watch",
        "create",
        "create-needs-namespace",
        "create-cluster-scoped",
        "delete-collection",
        "delete-collection-of-a-built-in-kind",
        "put-to-a-custom-collection-needs-a-name",
        "put-to-a-built-in-collection",
        "get-ignores-watch-on-objects",
        "update-status",
        "patch-status",
        "no-delete-on-status",
        "delete",
        "post-to-a-custom-object-creates",
        "no-post-to-a-built-in-object",
    ],
)
def test_verb_of(method: str, route: ResourceRoute, watch: bool, expected: Verb | int) -> None:
    if isinstance(expected, Verb):
        assert verb_of(method, route, watch) == expected
        return
    with pytest.raises(HttpError) as refused:
        verb_of(method, route, watch)
    assert refused.value.code == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("a=b", {"a": "b"}),
        ("a==b, c=d", {"a": "b", "c": "d"}),
        ("example.com/role=agent", {"example.com/role": "agent"}),
        ("a=", {"a": ""}),
    ],
    ids=["empty", "one", "two-with-double-equals", "prefixed-key", "empty-value"],
)
def test_equality_selectors(text: str, expected: dict[str, str]) -> None:
    assert parse_equality_selector(text, "labelSelector") == expected


@pytest.mark.parametrize(
    "text",
    ["a!=b", "a in (b)", "!a", "a", "a=b=c", "=b"],
    ids=["inequality", "set-based", "absence", "existence", "double-assignment", "no-key"],
)
def test_unsupported_selectors(text: str) -> None:
    with pytest.raises(HttpError) as raised:
        parse_equality_selector(text, "labelSelector")
    assert raised.value.code == 400
