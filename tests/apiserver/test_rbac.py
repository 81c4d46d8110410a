"""Authorization as Kubernetes RBAC decides it: rules, bindings and subjects, the defaults every
authenticated user holds, the 403 bodies kube-apiserver answers with, and escalation prevention on
Roles and bindings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bundler.api.resources import (
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    ROLE,
    ROLE_BINDING,
    Resource,
)
from bundler.apiserver.attributes import Attributes, path_attributes
from bundler.apiserver.authn import ADMIN, UserInfo, service_account_user
from bundler.apiserver.rbac import Authorizer
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.apiserver.backends import Backend
from tests.support.apiserver.contract import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    ROLE_BINDINGS,
    ROLES,
    Http,
    rule,
)

AUTH = "system:authenticated"
ALICE = UserInfo("alice", (AUTH,))
BOB = UserInfo("bob", (AUTH,))
CAROL = UserInfo("carol", (AUTH,))
DAVE = UserInfo("dave", (AUTH,))
ERIN = UserInfo("erin", (AUTH,))
TEAM = UserInfo("tess", ("team", AUTH))
ROBOT = service_account_user("a", "robot")
STRANGER = service_account_user("b", "robot")
BD = "bundledeployments"


def subject(kind: str, name: str, namespace: str | None = None) -> Obj:
    found = {"kind": kind, "name": name}
    return found if namespace is None else {**found, "namespace": namespace}


def binding(name: str, role_kind: str, role: str, subjects: list[Obj]) -> Obj:
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}
    return {"metadata": {"name": name}, "roleRef": ref, "subjects": subjects}


def namespaced(obj: Obj, namespace: str) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


WORLD: list[tuple[Resource, Obj]] = [
    (
        ROLE,
        {
            "metadata": {"name": "secret-reader", "namespace": "a"},
            "rules": [rule(["get", "list", "watch"], [""], ["secrets"])],
        },
    ),
    (
        ROLE,
        {
            "metadata": {"name": "one-cluster", "namespace": "a"},
            "rules": [
                rule(["patch"], ["bundler.dev"], ["clusters/status"], resourceNames=["c1"]),
                rule(["get", "list", "watch"], ["bundler.dev"], ["clusters"], resourceNames=["c1"]),
            ],
        },
    ),
    (
        ROLE,
        {
            "metadata": {"name": "any-status", "namespace": "a"},
            "rules": [rule(["update"], ["bundler.dev"], ["*/status"])],
        },
    ),
    (
        CLUSTER_ROLE,
        {"metadata": {"name": "ns-lister"}, "rules": [rule(["list"], [""], ["namespaces"])]},
    ),
    (CLUSTER_ROLE, {"metadata": {"name": "bd-all"}, "rules": [rule(["*"], ["bundler.dev"], [BD])]}),
    (CLUSTER_ROLE, {"metadata": {"name": "get-all"}, "rules": [rule(["get"], ["*"], ["*"])]}),
    (
        CLUSTER_ROLE,
        {
            "metadata": {"name": "logs"},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/logs/*", "/metrics"]}],
        },
    ),
    (
        ROLE_BINDING,
        namespaced(binding("b1", "Role", "secret-reader", [subject("User", "alice")]), "a"),
    ),
    (
        ROLE_BINDING,
        namespaced(binding("b2", "ClusterRole", "bd-all", [subject("Group", "team")]), "a"),
    ),
    (
        ROLE_BINDING,
        namespaced(binding("b3", "Role", "one-cluster", [subject("ServiceAccount", "robot")]), "a"),
    ),
    (ROLE_BINDING, namespaced(binding("b4", "Role", "any-status", [subject("User", "bob")]), "a")),
    (ROLE_BINDING, namespaced(binding("b5", "Role", "gone", [subject("User", "erin")]), "b")),
    (
        CLUSTER_ROLE_BINDING,
        binding("c1", "ClusterRole", "ns-lister", [subject("ServiceAccount", "robot", "a")]),
    ),
    (CLUSTER_ROLE_BINDING, binding("c2", "ClusterRole", "get-all", [subject("User", "carol")])),
    (CLUSTER_ROLE_BINDING, binding("c3", "ClusterRole", "logs", [subject("User", "dave")])),
]


@pytest.fixture(scope="module")
def authorizer() -> Authorizer:
    store = MemoryStore()
    for res, obj in WORLD:
        store.create(res, obj)
    return Authorizer(store)


def ask(
    user: UserInfo,
    verb: str,
    resource: str,
    namespace: str = "a",
    name: str = "",
    group: str = "",
) -> Attributes:
    plural, _, sub = resource.partition("/")
    return Attributes(user, verb, namespace, group, plural, sub, name)


def bundler(
    user: UserInfo, verb: str, resource: str, name: str = "", namespace: str = "a"
) -> Attributes:
    return ask(user, verb, resource, namespace, name, "bundler.dev")


def path(user: UserInfo, verb: str, url: str) -> Attributes:
    return Attributes(user, verb, path=url)


DECISIONS: list[tuple[str, Attributes, bool]] = [
    ("role-grants-its-verb", ask(ALICE, "get", "secrets", name="s"), True),
    ("role-grants-list", ask(ALICE, "list", "secrets"), True),
    ("role-not-in-other-namespace", ask(ALICE, "get", "secrets", "b", "s"), False),
    ("role-not-cluster-wide", ask(ALICE, "list", "secrets", ""), False),
    ("role-not-other-verbs", ask(ALICE, "create", "secrets"), False),
    ("clusterrole-in-rolebinding", bundler(TEAM, "delete", BD, "x"), True),
    ("clusterrole-in-rolebinding-scoped", bundler(TEAM, "get", BD, "x", "b"), False),
    ("resource-not-its-subresource", bundler(TEAM, "update", f"{BD}/status", "x"), False),
    ("group-subject", bundler(TEAM, "list", BD), True),
    ("service-account-clusterrolebinding", ask(ROBOT, "list", "namespaces", ""), True),
    ("service-account-other-namespace", ask(STRANGER, "list", "namespaces", ""), False),
    ("sa-subject-defaults-to-binding-ns", bundler(ROBOT, "patch", "clusters/status", "c1"), True),
    ("resource-names-other-name", bundler(ROBOT, "patch", "clusters/status", "c2"), False),
    ("resource-names-get", bundler(ROBOT, "get", "clusters", "c1"), True),
    ("resource-names-never-list", bundler(ROBOT, "list", "clusters"), False),
    ("resource-names-never-watch", bundler(ROBOT, "watch", "clusters"), False),
    ("resource-names-list-one-by-field", bundler(ROBOT, "list", "clusters", "c1"), True),
    ("subresource-not-its-resource", bundler(ROBOT, "patch", "clusters", "c1"), False),
    ("star-subresource", bundler(BOB, "update", "bundles/status", "x"), True),
    ("star-subresource-not-resource", bundler(BOB, "update", "bundles", "x"), False),
    ("star-groups-and-resources", ask(CAROL, "get", "secrets", "b", "s"), True),
    ("star-resources-cover-subresources", bundler(CAROL, "get", "clusters/status", "c"), True),
    ("star-resources-only-their-verbs", ask(CAROL, "list", "secrets", "b"), False),
    ("url-prefix", path(DAVE, "get", "/logs/kube"), True),
    ("url-exact", path(DAVE, "get", "/metrics"), True),
    ("url-exact-not-prefix", path(DAVE, "get", "/metricsx"), False),
    ("url-verb", path(DAVE, "post", "/logs/kube"), False),
    ("discovery-api", path(ALICE, "get", "/api"), True),
    ("discovery-group-version", path(ALICE, "get", "/apis/bundler.dev/v1alpha1"), True),
    ("discovery-version", path(ALICE, "get", "/version"), True),
    ("discovery-openapi", path(ALICE, "get", "/openapi/v3"), True),
    ("no-default-metrics", path(ALICE, "get", "/metrics"), False),
    ("masters-anything", ask(ADMIN, "deletecollection", "secrets", ""), True),
    ("binding-to-missing-role", ask(ERIN, "get", "roles", "b", "x"), False),
]


@pytest.mark.parametrize(
    ("attributes", "allowed"),
    [(a, ok) for _, a, ok in DECISIONS],
    ids=[i for i, _, _ in DECISIONS],
)
def test_rbac_decides_as_kubernetes(
    authorizer: Authorizer, attributes: Attributes, allowed: bool
) -> None:
    assert authorizer.allows(attributes) is allowed


def test_a_binding_to_a_missing_role_says_so(authorizer: Authorizer) -> None:
    assert authorizer.decide(ask(ERIN, "get", "roles", "b", "x")) == (
        False,
        'RBAC: role.rbac.authorization.k8s.io "gone" not found',
    )


@pytest.mark.parametrize(
    ("method", "url", "query", "expected"),
    [
        ("GET", "/apis/g.io/v1/things", {}, ("list", "", "g.io", "things", "", "")),
        ("GET", "/apis/g.io/v1/things", {"watch": "true"}, ("watch", "", "g.io", "things", "", "")),
        (
            "GET",
            "/apis/g.io/v1/namespaces/n/things",
            {"fieldSelector": "metadata.name=t"},
            ("list", "n", "g.io", "things", "", "t"),
        ),
        (
            "PUT",
            "/api/v1/namespaces/n/pods/p/status",
            {},
            ("update", "n", "", "pods", "status", "p"),
        ),
        ("DELETE", "/api/v1/namespaces/n/pods", {}, ("deletecollection", "n", "", "pods", "", "")),
        ("GET", "/api/v1/namespaces/n", {}, ("get", "n", "", "namespaces", "", "n")),
    ],
    ids=["list", "watch", "list-one-by-field", "subresource", "deletecollection", "namespace"],
)
def test_unserved_paths_are_read_as_kubernetes_reads_them(
    method: str, url: str, query: dict[str, str], expected: tuple[str, ...]
) -> None:
    found = path_attributes(ALICE, method, url, query)
    assert (
        found.verb,
        found.namespace,
        found.api_group,
        found.resource,
        found.subresource,
        found.name,
    ) == expected


# -- over HTTP ------------------------------------------------------------------------------------

ROBOT_RULES = [
    rule(["get", "create", "update"], ["rbac.authorization.k8s.io"], ["roles", "rolebindings"]),
    rule(["get"], [""], ["secrets"]),
]


def robot_user(namespace: str) -> str:
    return f"system:serviceaccount:{namespace}:robot"


def robot_groups(namespace: str) -> str:
    return f'["system:serviceaccounts" "system:serviceaccounts:{namespace}" "system:authenticated"]'


@pytest.fixture
def robot(backend: Backend, ns: str) -> Iterator[Http]:
    """A client as ServiceAccount robot of the test namespace, which may write Roles and
    RoleBindings there and get Secrets there (nothing else)."""
    client = backend.client(backend.user(ns, "robot", ROBOT_RULES), ns)
    yield client
    client.close()


def forbidden_status(message: str, **details: str) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    }


# Messages and paths name the test namespace as {ns}.
REFUSALS: list[tuple[str, str, str, str, dict[str, str]]] = [
    (
        "list-in-namespace",
        "GET",
        "/api/v1/namespaces/{ns}/secrets",
        'secrets is forbidden: User "{user}" cannot list resource "secrets" in API group "" in '
        'the namespace "{ns}"',
        {"kind": "secrets"},
    ),
    (
        "named-in-group",
        "GET",
        "/apis/bundler.dev/v1alpha1/namespaces/{ns}/bundles/app",
        'bundles.bundler.dev "app" is forbidden: User "{user}" cannot get resource "bundles" in '
        'API group "bundler.dev" in the namespace "{ns}"',
        {"name": "app", "group": "bundler.dev", "kind": "bundles"},
    ),
    (
        "subresource",
        "PATCH",
        "/apis/bundler.dev/v1alpha1/namespaces/{ns}/clusters/c1/status",
        'clusters.bundler.dev "c1" is forbidden: User "{user}" cannot patch resource '
        '"clusters/status" in API group "bundler.dev" in the namespace "{ns}"',
        {"name": "c1", "group": "bundler.dev", "kind": "clusters"},
    ),
    (
        "cluster-scope",
        "GET",
        "/api/v1/namespaces",
        'namespaces is forbidden: User "{user}" cannot list resource "namespaces" in API group '
        '"" at the cluster scope',
        {"kind": "namespaces"},
    ),
]


@pytest.mark.parametrize(
    ("method", "url", "message", "details"),
    [case[1:] for case in REFUSALS],
    ids=[case[0] for case in REFUSALS],
)
def test_refusals_carry_kubernetes_status(
    robot: Http, ns: str, method: str, url: str, message: str, details: dict[str, str]
) -> None:
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    expected = forbidden_status(message.format(user=robot_user(ns), ns=ns), **details)
    body: Obj | None = {} if method == "PATCH" else None
    assert robot.call(method, url.format(ns=ns), body, headers=headers) == (403, expected)


def test_a_forbidden_path_is_refused_before_it_is_looked_up(robot: Http, ns: str) -> None:
    message = f'forbidden: User "{robot_user(ns)}" cannot get path "/metrics"'
    assert robot.call("GET", "/metrics") == (403, forbidden_status(message))


def role(name: str, *rules: Obj) -> Obj:
    return {"metadata": {"name": name}, "rules": list(rules)}


def created(api: Http, path: str, body: Obj) -> Obj:
    code, answer = api.call("POST", path, body)
    assert code == 201, answer
    return answer


def test_a_role_granting_only_held_permissions_is_created(robot: Http) -> None:
    assert robot.call("POST", ROLES, role("ok", rule(["get"], [""], ["secrets"])))[0] == 201


def test_a_role_granting_more_is_refused_with_the_missing_rules(robot: Http, ns: str) -> None:
    wanted = role(
        "more",
        rule(["get", "list", "watch"], [""], ["secrets"]),
        rule(["patch"], ["bundler.dev"], ["clusters/status"], resourceNames=["c1"]),
    )
    code, status = robot.call("POST", ROLES, wanted)
    assert code == 403
    assert status["message"] == (
        f'roles.rbac.authorization.k8s.io "more" is forbidden: user "{robot_user(ns)}" '
        f"(groups={robot_groups(ns)}) is attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["list" "watch"]}\n'
        '{APIGroups:["bundler.dev"], Resources:["clusters/status"], ResourceNames:["c1"], '
        'Verbs:["patch"]}'
    )
    assert status["details"] == {
        "name": "more",
        "group": "rbac.authorization.k8s.io",
        "kind": "roles",
    }


def test_escalate_lets_a_role_grant_more(api: Http, robot: Http, ns: str) -> None:
    escalate = rule(["escalate"], ["rbac.authorization.k8s.io"], ["roles"])
    created(api, ROLES, role("escalator", escalate))
    created(
        api,
        ROLE_BINDINGS,
        binding("escalator", "Role", "escalator", [subject("User", robot_user(ns))]),
    )
    assert robot.call("POST", ROLES, role("more", rule(["*"], ["*"], ["*"])))[0] == 201


def test_an_update_of_garbage_collector_fields_only_is_never_checked(
    api: Http, robot: Http, ns: str
) -> None:
    big = created(api, ROLES, role("big", rule(["*"], ["*"], ["*"])))
    # The owner exists, so the garbage collector of a real cluster leaves the Role alone.
    namespace = api.call("GET", f"/api/v1/namespaces/{ns}")[1]
    owner = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "name": ns,
        "uid": namespace["metadata"]["uid"],
    }
    owned = {**big, "metadata": {**big["metadata"], "ownerReferences": [owner]}}
    assert robot.call("PUT", f"{ROLES}/big", owned)[0] == 200
    current = api.call("GET", f"{ROLES}/big")[1]
    widened = {**current, "rules": [*current["rules"], rule(["get"], [""], ["pods"])]}
    assert robot.call("PUT", f"{ROLES}/big", widened)[0] == 403


@pytest.mark.parametrize(
    ("role_kind", "role_name", "setup", "expected"),
    [
        ("Role", "small", "small", 201),
        ("Role", "big", "big", 403),
        ("Role", "big", "big+bind", 201),
        ("Role", "nope", "", 404),
        ("ClusterRole", "cluster-big", "cluster-big", 403),
    ],
    ids=["held", "more-than-held", "bind-verb", "missing-role", "clusterrole-more-than-held"],
)
def test_a_binding_grants_only_held_permissions_unless_bind(
    api: Http, robot: Http, ns: str, role_kind: str, role_name: str, setup: str, expected: int
) -> None:
    # ClusterRoles are cluster-wide: named after the test namespace, as tests share a server.
    cluster_role = f"{ns}-{role_name}"
    roles = {
        "small": (ROLES, role("small", rule(["get"], [""], ["secrets"]))),
        "big": (ROLES, role("big", rule(["delete"], [""], ["secrets"]))),
        "cluster-big": (CLUSTER_ROLES, role(cluster_role, rule(["list"], [""], ["secrets"]))),
    }
    name = setup.split("+")[0]
    if name:
        created(api, *roles[name])
    if setup.endswith("+bind"):
        binder = rule(["bind"], ["rbac.authorization.k8s.io"], ["roles"], resourceNames=[name])
        created(api, ROLES, role("binder", binder))
        created(
            api,
            ROLE_BINDINGS,
            binding("binder", "Role", "binder", [subject("User", robot_user(ns))]),
        )
    referred = cluster_role if role_kind == "ClusterRole" else role_name
    wanted = binding("b", role_kind, referred, [subject("User", "someone")])
    code, status = robot.call("POST", ROLE_BINDINGS, wanted)
    assert code == expected, status
    if expected == 404:
        assert status["message"] == 'rolebindings.rbac.authorization.k8s.io "nope" not found'


def test_the_admin_is_never_checked_for_escalation(api: Http, ns: str) -> None:
    everything = [rule(["*"], ["*"], ["*"])]
    assert api.call("POST", ROLES, role("all", *everything))[0] == 201
    name = f"{ns}-all"
    created(api, CLUSTER_ROLES, role(name, *everything))
    cluster_binding = binding(name, "ClusterRole", name, [subject("User", "x")])
    assert api.call("POST", CLUSTER_ROLE_BINDINGS, cluster_binding)[0] == 201
