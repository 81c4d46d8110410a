"""Fleet's two target lists as bundler's one, keeping Fleet's meaning.

In Fleet, the GitRepo's targets (or a fleet.yaml's `overrideTargets`) *select*: a cluster gets the
bundle when one of them matches it, the first that does deciding (`doNotDeploy` keeps it off).
The fleet.yaml's `targetCustomizations` only *customize*: the first that matches a selected
cluster (with `targetCustomizationMode: AllMatches`, every one, merged in order) gives its options,
and a customization matching a cluster no GitRepo target selects does nothing.

bundler has one list, tried in order. With FirstMatch, each GitRepo target G becomes a block:
every customization C as a target matching "C and G" with C's options, then G itself without
options. The first block whose G matches a cluster decides, as in Fleet, and within it the first
C that matches, or G: exactly Fleet's choice. A G with doNotDeploy is one target with doNotDeploy.
With AllMatches, the Gs come first without options, then every "C and G", so the options of every
matching C are merged in order (the same C matched through two Gs merges the same options twice,
which changes nothing).

"C and G" is one target holding both's criteria: names must agree, label selectors merge
(matchLabels that disagree can match no cluster: the pair is left out, as it would match none).
Where both name a cluster group differently, or one a group and the other a group selector,
bundler's one target needs one group to satisfy both while Fleet accepts two groups of the
cluster; when the definition of a named group is known (a ClusterGroup given with the GitRepo),
"in that group" is written as the group's own cluster selector, which says it exactly, else the
pair is reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CRITERIA = ("clusterName", "clusterGroup", "clusterSelector", "clusterGroupSelector")
_GROUP_CRITERIA = ("clusterGroup", "clusterGroupSelector")


@dataclass(frozen=True)
class FleetTarget:
    """One target of either list: its name, criteria (absent ones left out) and, for a
    customization, the bundler target fields it sets (`helm`, `namespace`, `doNotDeploy`)."""

    name: str
    criteria: Mapping[str, Any]
    overrides: Mapping[str, Any] = field(default_factory=dict)
    do_not_deploy: bool = False
    where: str = ""

    @property
    def matches_nothing(self) -> bool:
        return not self.criteria


@dataclass(frozen=True)
class Combined:
    """bundler's targets, and one line per pair of targets that could not be combined exactly."""

    targets: list[dict[str, Any]]
    problems: list[tuple[FleetTarget, FleetTarget, str]]


def criteria_of(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The criteria a Fleet target sets: null and "" count as unset (Fleet drops them), `{}` is
    a selector matching every cluster."""
    found: dict[str, Any] = {}
    for key in CRITERIA:
        value = raw.get(key)
        if value is None or value == "":
            continue
        found[key] = value
    return found


class _ImpossibleError(Exception):
    """The two targets' criteria can match no cluster together."""


class _InexactError(Exception):
    """bundler cannot say what the two targets' criteria say together."""


def _and_selectors(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    labels = dict(first.get("matchLabels") or {})
    for key, value in (second.get("matchLabels") or {}).items():
        if key in labels and labels[key] != value:
            raise _ImpossibleError
        labels[key] = value
    expressions: list[Any] = []
    for expression in [
        *(first.get("matchExpressions") or []),
        *(second.get("matchExpressions") or []),
    ]:
        if expression not in expressions:
            expressions.append(expression)
    merged: dict[str, Any] = {}
    if labels:
        merged["matchLabels"] = labels
    if expressions:
        merged["matchExpressions"] = expressions
    return merged


def and_criteria(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """Criteria matching what both match; _ImpossibleError or _InexactError when there are none."""
    groups_first = {k: first[k] for k in _GROUP_CRITERIA if k in first}
    groups_second = {k: second[k] for k in _GROUP_CRITERIA if k in second}
    if groups_first and groups_second and groups_first != groups_second:
        if "clusterGroup" in groups_first and "clusterGroup" in groups_second:
            why = (
                f"they name two cluster groups ({first['clusterGroup']} and "
                f"{second['clusterGroup']}), which a cluster may be in at once; a target of "
                "bundler names one"
            )
        else:
            why = (
                "both name or select cluster groups: bundler needs one group to satisfy both, "
                "Fleet accepts two groups of the cluster"
            )
        raise _InexactError(why)
    merged: dict[str, Any] = {**groups_first, **groups_second}
    names = {first.get("clusterName"), second.get("clusterName")} - {None}
    if len(names) > 1:
        raise _ImpossibleError
    if names:
        merged["clusterName"] = names.pop()
    selectors = [c["clusterSelector"] for c in (first, second) if "clusterSelector" in c]
    if len(selectors) == 2:
        merged["clusterSelector"] = _and_selectors(selectors[0], selectors[1])
    elif selectors:
        merged["clusterSelector"] = selectors[0]
    return {key: merged[key] for key in CRITERIA if key in merged}


def _inlined(
    criteria: Mapping[str, Any], groups: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any] | None:
    """`criteria` with a named cluster group written as that group's cluster selector, or None
    when it names no group whose definition is known (or also selects groups)."""
    name = criteria.get("clusterGroup")
    if not isinstance(name, str) or name not in groups or "clusterGroupSelector" in criteria:
        return None
    inlined = {k: v for k, v in criteria.items() if k != "clusterGroup"}
    selector = groups[name]
    if "clusterSelector" in inlined:
        inlined["clusterSelector"] = _and_selectors(inlined["clusterSelector"], selector)
    else:
        inlined["clusterSelector"] = dict(selector)
    return inlined


def pair_criteria(
    custom: Mapping[str, Any], select: Mapping[str, Any], groups: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """`and_criteria`, with known groups written as their selectors when the two name groups
    bundler cannot combine."""
    try:
        return and_criteria(custom, select)
    except _InexactError:
        for first, second in (
            (_inlined(custom, groups), select),
            (custom, _inlined(select, groups)),
            (_inlined(custom, groups), _inlined(select, groups)),
        ):
            if first is not None and second is not None:
                try:
                    return and_criteria(first, second)
                except _InexactError:
                    continue
        raise


def _target(
    name: str, criteria: Mapping[str, Any], customization: FleetTarget | None, dnd: bool
) -> dict[str, Any]:
    target: dict[str, Any] = {"name": name, **criteria}
    if customization is not None:
        target.update(customization.overrides)
        dnd = dnd or customization.do_not_deploy
    if dnd:
        target["doNotDeploy"] = True
    return target


class _Names:
    """Target names, unique within the Bundle."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, wanted: str) -> str:
        name, suffix = wanted, 2
        while name in self.used:
            name, suffix = f"{wanted}-{suffix}", suffix + 1
        self.used.add(name)
        return name


def combine(
    selecting: list[FleetTarget],
    customizing: list[FleetTarget],
    *,
    all_matches: bool,
    groups: Mapping[str, Mapping[str, Any]] | None = None,
) -> Combined:
    """bundler's targets (in order) for Fleet's selecting and customizing targets; `groups` are
    the cluster selectors of the ClusterGroups whose definition is known, by name."""
    known = groups or {}
    names = _Names()
    problems: list[tuple[FleetTarget, FleetTarget, str]] = []
    customizing = [c for c in customizing if not c.matches_nothing]

    def pair_name(custom: FleetTarget, select: FleetTarget) -> str:
        return custom.name if len(selecting) == 1 else f"{custom.name}-{select.name}"

    def pairs(select: FleetTarget) -> list[dict[str, Any]]:
        built = []
        for custom in customizing:
            try:
                criteria = pair_criteria(custom.criteria, select.criteria, known)
            except _ImpossibleError:
                continue
            except _InexactError as why:
                problems.append((custom, select, str(why)))
                continue
            built.append(_target(names.take(pair_name(custom, select)), criteria, custom, False))
        return built

    targets: list[dict[str, Any]] = []
    if all_matches:
        for select in selecting:
            targets.append(
                _target(names.take(select.name), select.criteria, None, select.do_not_deploy)
            )
        for custom in customizing:
            for select in selecting:
                if select.do_not_deploy:
                    continue
                try:
                    criteria = pair_criteria(custom.criteria, select.criteria, known)
                except _ImpossibleError:
                    continue
                except _InexactError as why:
                    problems.append((custom, select, str(why)))
                    continue
                name = names.take(pair_name(custom, select))
                targets.append(_target(name, criteria, custom, False))
        return Combined(targets, problems)
    for select in selecting:
        if select.do_not_deploy:
            targets.append(_target(names.take(select.name), select.criteria, None, True))
            continue
        targets.extend(pairs(select))
        targets.append(_target(names.take(select.name), select.criteria, None, False))
    return Combined(targets, problems)
