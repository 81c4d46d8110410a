"""Authorization, as Kubernetes' RBAC authorizer decides it, over the Roles and bindings stored.

A request is allowed when a rule of the user's roles matches it: ClusterRoleBindings give their
ClusterRole everywhere; RoleBindings give their Role, or their ClusterRole, in their namespace only.
Subjects are Users, Groups and ServiceAccounts (a ServiceAccount subject without a namespace means
the binding's). A rule matches on verb, API group, resource (`res/sub` for a subresource, `*`,
`*/sub`), and, when it has resourceNames, on the request's object name - which list, watch and
create requests do not have, unless a list or watch selects one object with the field selector
`metadata.name=NAME`, as Kubernetes' request info reads it. Non-resource paths match
nonResourceURLs (exact, `*`, or a `prefix*`).

Group `system:masters` is allowed everything, as Kubernetes' privileged-group authorizer does; and
every authenticated user holds Kubernetes' default discovery roles (`system:discovery`,
`system:basic-user`, `system:public-info-viewer`), built in rather than stored. A denial is 403 with
Kubernetes' message (bundler.apiserver.attributes); aggregated ClusterRoles are not emulated.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from bundler.api.resources import CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE, ROLE_BINDING
from bundler.apiserver.attributes import Attributes, forbidden
from bundler.apiserver.authn import AUTHENTICATED, SERVICE_ACCOUNT_PREFIX, UserInfo
from bundler.core.rbac import PolicyRule
from bundler.store.errors import NotFound
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj

ALL = "*"
_DISCOVERY_URLS = (
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/openapi",
    "/openapi/*",
    "/readyz",
    "/version",
    "/version/",
)
# Kubernetes' bootstrap ClusterRoles bound to system:authenticated.
DEFAULT_AUTHENTICATED_RULES = (
    PolicyRule(("get",), non_resource_urls=_DISCOVERY_URLS),
    PolicyRule(
        ("create",),
        ("authorization.k8s.io",),
        ("selfsubjectaccessreviews", "selfsubjectrulesreviews"),
    ),
    PolicyRule(("create",), ("authentication.k8s.io",), ("selfsubjectreviews",)),
)


@dataclass(frozen=True)
class Resolved:
    """The rules a user holds somewhere, and the errors met while collecting them."""

    rules: tuple[PolicyRule, ...]
    errors: tuple[str, ...]


class Authorizer:
    """RBAC over the Roles, ClusterRoles and bindings in `store`, read fresh on every request."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def authorize(self, attributes: Attributes) -> None:
        """Return when allowed; raise the 403 HttpError Kubernetes answers with otherwise."""
        allowed, reason = self.decide(attributes)
        if not allowed:
            raise forbidden(attributes, reason)

    def allows(self, attributes: Attributes) -> bool:
        return self.decide(attributes)[0]

    def decide(self, attributes: Attributes) -> tuple[bool, str]:
        if attributes.user.is_master():
            return True, ""
        resolved = self.rules_for(attributes.user, attributes.namespace)
        if any(rule_allows(attributes, rule) for rule in resolved.rules):
            return True, ""
        return False, _rbac_reason(resolved.errors)

    def rules_for(self, user: UserInfo, namespace: str) -> Resolved:
        """Every rule `user` holds in `namespace` ("" : only what holds cluster-wide)."""
        rules: list[PolicyRule] = []
        errors: list[str] = []
        if AUTHENTICATED in user.groups:
            rules.extend(DEFAULT_AUTHENTICATED_RULES)
        for binding in self._store.list(CLUSTER_ROLE_BINDING).items:
            if _binds(binding, user, ""):
                self._collect(binding, "", rules, errors)
        if namespace:
            for binding in self._store.list(ROLE_BINDING, namespace).items:
                if _binds(binding, user, namespace):
                    self._collect(binding, namespace, rules, errors)
        return Resolved(tuple(rules), tuple(errors))

    def role_reference_rules(self, role_ref: Obj, namespace: str) -> tuple[PolicyRule, ...]:
        """The rules of the Role or ClusterRole a binding refers to; NotFound when it is absent."""
        kind = role_ref.get("kind")
        name = role_ref.get("name") or ""
        if kind == ROLE.kind and namespace:
            role = self._store.get(ROLE, name, namespace)
        elif kind == CLUSTER_ROLE.kind:
            role = self._store.get(CLUSTER_ROLE, name)
        else:
            raise NotFound(f"unsupported role reference kind: {kind!r}")
        return tuple(parse_rules(role))

    def _collect(
        self, binding: Obj, namespace: str, rules: list[PolicyRule], errors: list[str]
    ) -> None:
        role_ref = binding.get("roleRef") or {}
        try:
            rules.extend(self.role_reference_rules(role_ref, namespace))
        except NotFound:
            kind = CLUSTER_ROLE if role_ref.get("kind") == CLUSTER_ROLE.kind else ROLE
            errors.append(f'{kind.kind.lower()}.{kind.group} "{role_ref.get("name")}" not found')


def parse_rules(role: Obj) -> Iterator[PolicyRule]:
    for body in role.get("rules") or []:
        if isinstance(body, dict):
            yield PolicyRule.from_dict(body)


def _binds(binding: Obj, user: UserInfo, namespace: str) -> bool:
    return any(_applies(subject, user, namespace) for subject in binding.get("subjects") or [])


def _applies(subject: Obj, user: UserInfo, namespace: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return bool(name == user.name)
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        account_namespace = subject.get("namespace") or namespace
        return bool(account_namespace) and (
            user.name == f"{SERVICE_ACCOUNT_PREFIX}{account_namespace}:{name}"
        )
    return False


def rule_allows(attributes: Attributes, rule: PolicyRule) -> bool:
    if not _has(rule.verbs, attributes.verb):
        return False
    if not attributes.is_resource_request:
        return any(url_matches(url, attributes.path) for url in rule.non_resource_urls)
    return (
        _has(rule.api_groups, attributes.api_group)
        and any(
            resource_matches(r, attributes.combined_resource, attributes.subresource)
            for r in rule.resources
        )
        and (not rule.resource_names or attributes.name in rule.resource_names)
    )


def resource_matches(ruled: str, combined: str, subresource: str) -> bool:
    if ruled in (ALL, combined):
        return True
    return bool(subresource) and ruled == f"*/{subresource}"


def url_matches(ruled: str, path: str) -> bool:
    if ruled in (ALL, path):
        return True
    return ruled.endswith(ALL) and path.startswith(ruled.rstrip(ALL))


def _has(values: Iterable[str], wanted: str) -> bool:
    return any(v in (ALL, wanted) for v in values)


def _rbac_reason(errors: Iterable[str]) -> str:
    found = list(errors)
    if not found:
        return ""
    return "RBAC: " + (found[0] if len(found) == 1 else "[" + ", ".join(found) + "]")
