"""RBAC's privilege-escalation prevention: a user grants only what it holds, unless it may
`escalate` (Roles, ClusterRoles) or `bind` (RoleBindings, ClusterRoleBindings).

As Kubernetes' RBAC storage checks writes:
- creating or updating a Role or ClusterRole is allowed to `system:masters`, to a user allowed the
  `escalate` verb on it, or when every permission of its rules is one the user holds in the Role's
  namespace (cluster-wide for a ClusterRole);
- creating or updating a binding is allowed to `system:masters`, to a user allowed `bind` on the
  role it refers to, or when the user holds every permission of that role (which must exist: 404
  otherwise, naming the binding's resource as kube-apiserver does, `rolebindings.rbac...
  "missing-role" not found`) in the binding's namespace;
- an update that changes only what the garbage collector writes (ownerReferences, finalizers) is
  never checked.
A refusal is 403 with Kubernetes' message listing the missing permissions in compact form, e.g.
`user "u" (groups=["g"]) is attempting to grant RBAC permissions not currently held:
{APIGroups:["bundler.dev"], Resources:["bundledeployments/status"], Verbs:["patch"]}`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence

from bundler.api.resources import CLUSTER_ROLE, CLUSTER_ROLE_BINDING, ROLE, ROLE_BINDING, Resource
from bundler.apiserver.attributes import Attributes, forbidden_error
from bundler.apiserver.authn import UserInfo
from bundler.apiserver.rbac import ALL, Authorizer, parse_rules, url_matches
from bundler.apiserver.statuses import HttpError
from bundler.core.rbac import RBAC_GROUP, PolicyRule
from bundler.store.errors import NotFound
from bundler.store.protocol import Obj

ROLE_KINDS = (ROLE, CLUSTER_ROLE)
BINDING_KINDS = (ROLE_BINDING, CLUSTER_ROLE_BINDING)
_GC_FIELDS = ("ownerReferences", "finalizers")


def check_grant(
    authorizer: Authorizer, user: UserInfo, res: Resource, new: Obj, old: Obj | None
) -> None:
    """Raise the HttpError Kubernetes answers when writing `new` (over `old`) would escalate."""
    if res not in ROLE_KINDS and res not in BINDING_KINDS:
        return
    if user.is_master() or (old is not None and _only_gc_fields(new, old)):
        return
    meta = new.get("metadata") or {}
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
    if res in ROLE_KINDS:
        if authorizer.allows(_rbac_attributes(user, "escalate", res, name, namespace)):
            return
        granted: Sequence[PolicyRule] = tuple(parse_rules(new))
    else:
        role_ref = new.get("roleRef") or {}
        role_res = CLUSTER_ROLE if role_ref.get("kind") == CLUSTER_ROLE.kind else ROLE
        role_name = str(role_ref.get("name") or "")
        if authorizer.allows(_rbac_attributes(user, "bind", role_res, role_name, namespace)):
            return
        granted = _referenced_rules(authorizer, role_ref, res, role_name, namespace)
    held = authorizer.rules_for(user, namespace)
    missing = [atom for rule in granted for atom in breakdown(rule) if not _held(held.rules, atom)]
    if missing:
        message = (
            f'user "{user.name}" (groups={_go_quoted(user.groups)}) is attempting to grant RBAC '
            "permissions not currently held:\n" + "\n".join(sorted(compact(missing)))
        )
        raise forbidden_error(res.group, res.plural, name, message)


def _referenced_rules(
    authorizer: Authorizer, role_ref: Obj, binding_res: Resource, role_name: str, namespace: str
) -> tuple[PolicyRule, ...]:
    try:
        return authorizer.role_reference_rules(role_ref, namespace)
    except NotFound:
        # kube-apiserver names the binding's resource with the missing role's name.
        raise HttpError(
            404,
            f'{binding_res.plural}.{binding_res.group} "{role_name}" not found',
            reason="NotFound",
            details={"name": role_name, "group": binding_res.group, "kind": binding_res.plural},
        ) from None


def _rbac_attributes(
    user: UserInfo, verb: str, res: Resource, name: str, namespace: str
) -> Attributes:
    scope = namespace if res.namespaced else ""
    return Attributes(user, verb, scope, RBAC_GROUP, res.plural, name=name)


def _only_gc_fields(new: Obj, old: Obj) -> bool:
    def without_gc(obj: Obj) -> str:
        meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _GC_FIELDS}
        rest = {k: v for k, v in obj.items() if k not in ("metadata", "status")}
        meta.pop("resourceVersion", None)
        meta.pop("managedFields", None)
        return json.dumps({**rest, "metadata": meta}, sort_keys=True)

    return without_gc(new) == without_gc(old)


def breakdown(rule: PolicyRule) -> Iterator[PolicyRule]:
    """One rule per group, resource, verb and name (and per URL and verb), as Kubernetes does."""
    names: Sequence[str] = rule.resource_names or ("",)
    for group in rule.api_groups:
        for resource in rule.resources:
            for verb in rule.verbs:
                for name in names:
                    yield PolicyRule((verb,), (group,), (resource,), (name,) if name else ())
    for url in rule.non_resource_urls:
        for verb in rule.verbs:
            yield PolicyRule((verb,), non_resource_urls=(url,))


def _held(rules: Iterable[PolicyRule], atom: PolicyRule) -> bool:
    return any(_covers(owner, atom) for owner in rules)


def _covers(owner: PolicyRule, atom: PolicyRule) -> bool:
    """Kubernetes' ruleCovers for one broken-down rule."""
    if not _has_all(owner.verbs, atom.verbs) or not _has_all(owner.api_groups, atom.api_groups):
        return False
    if not all(_resource_covered(owner.resources, r) for r in atom.resources):
        return False
    if not all(_url_covered(owner.non_resource_urls, u) for u in atom.non_resource_urls):
        return False
    if not atom.resource_names:
        return not owner.resource_names
    return not owner.resource_names or set(atom.resource_names) <= set(owner.resource_names)


def _has_all(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    return ALL in owned or set(wanted) <= set(owned)


def _resource_covered(owned: Sequence[str], resource: str) -> bool:
    if ALL in owned or resource in owned:
        return True
    return "/" in resource and f"*/{resource.split('/', 1)[1]}" in owned


def _url_covered(owned: Sequence[str], url: str) -> bool:
    return any(url_matches(o, url) for o in owned)


def compact(atoms: Iterable[PolicyRule]) -> list[str]:
    """Kubernetes' CompactRules + CompactString: verbs merged per group, resource and names."""
    merged: dict[tuple[tuple[str, ...], ...], list[str]] = {}
    for atom in atoms:
        # Non-resource rules are never merged.
        alone = atom.verbs if atom.non_resource_urls else ()
        key = (atom.api_groups, atom.resources, atom.resource_names, atom.non_resource_urls, alone)
        verbs = merged.setdefault(key, [])
        verbs.extend(v for v in atom.verbs if v not in verbs)
    return [_compact_string(*key[:4], verbs=tuple(verbs)) for key, verbs in merged.items()]


def _compact_string(*lists: tuple[str, ...], verbs: tuple[str, ...]) -> str:
    groups, resources, names, urls = lists
    parts = [
        f"{label}:{_go_quoted(values)}"
        for label, values in (
            ("APIGroups", groups),
            ("Resources", resources),
            ("NonResourceURLs", urls),
            ("ResourceNames", names),
            ("Verbs", verbs),
        )
        if values
    ]
    return "{" + ", ".join(parts) + "}"


def _go_quoted(values: Iterable[str]) -> str:
    """Go's `%q` of a []string: `["a" "b"]`."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"
