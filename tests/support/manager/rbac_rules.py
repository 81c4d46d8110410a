"""Rules of an RBAC role by a readable id, and the role without one rule."""

from __future__ import annotations

from bundler.core.rbac import MANAGER_RULES, PolicyRule


def rule_id(rule: PolicyRule) -> str:
    names = f"[{','.join(rule.resource_names)}]" if rule.resource_names else ""
    return f"{'+'.join(rule.resources)}{names}:{'+'.join(rule.verbs)}"


def without(rule: PolicyRule) -> list[PolicyRule]:
    return [r for r in MANAGER_RULES if r != rule]
