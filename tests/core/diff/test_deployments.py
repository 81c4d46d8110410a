from __future__ import annotations

from typing import Any

from bundler.core.diff.deployments import DeploymentSide, diff_fleet
from bundler.core.diff.values import ChangeKind

BUNDLE = "ws/demo"


def side(version: str = "1.0.0", values: Any = None, **options: Any) -> DeploymentSide:
    helm = {"repo": "oci://r.example/charts", "chart": "demo", "version": version}
    if values is not None:
        helm["values"] = values
    return DeploymentSide({"helm": helm, "namespace": "apps", **options})


def test_deployments_are_created_removed_changed_or_unchanged_per_cluster() -> None:
    old = {
        (BUNDLE, "ws/a"): side(values={"x": 1}),
        (BUNDLE, "ws/b"): side(),
        (BUNDLE, "ws/gone"): side(),
    }
    new = {
        (BUNDLE, "ws/a"): side("1.1.0", values={"x": 2}, namespace="other"),
        (BUNDLE, "ws/b"): side(),
        (BUNDLE, "ws/made"): side("1.1.0"),
    }
    result = diff_fleet(old, new)
    assert [(c.cluster, c.kind) for c in result.changes] == [
        ("ws/a", ChangeKind.CHANGED),
        ("ws/gone", ChangeKind.REMOVED),
        ("ws/made", ChangeKind.ADDED),
    ]
    changed = result.changes[0]
    assert (changed.old_version, changed.new_version, changed.version_changed) == (
        "1.0.0",
        "1.1.0",
        True,
    )
    assert [v.describe() for v in changed.values] == ["x: 1 -> 2"]
    assert [o.describe() for o in changed.options] == ['namespace: "apps" -> "other"']
    assert result.unchanged == 1
    assert result.counts_by_bundle() == {BUNDLE: {"changed": 1, "removed": 1, "created": 1}}


def test_no_change_is_no_change() -> None:
    both = {(BUNDLE, "ws/a"): side(values={"x": [1]})}
    result = diff_fleet(both, dict(both))
    assert not result.changed and result.unchanged == 1
    assert result.to_data()["deployments"] == []


def test_rendered_objects_are_compared_when_both_sides_have_them() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "1"}}
    changed_cm = {**cm, "data": {"k": "2"}}
    old = {(BUNDLE, "ws/a"): DeploymentSide(side().options, [cm])}
    new = {
        (BUNDLE, "ws/a"): DeploymentSide(side().options, [changed_cm]),
        (BUNDLE, "ws/b"): DeploymentSide(side().options, [cm]),
    }
    changed, created = diff_fleet(old, new).changes
    assert [(str(o.key), o.kind) for o in changed.objects] == [("ConfigMap c", ChangeKind.CHANGED)]
    assert [(str(o.key), o.kind) for o in created.objects] == [("ConfigMap c", ChangeKind.ADDED)]


def test_a_side_without_rendered_objects_compares_options_only() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    old = {(BUNDLE, "ws/a"): DeploymentSide(side().options, None)}
    new = {(BUNDLE, "ws/a"): DeploymentSide(side().options, [cm])}
    assert not diff_fleet(old, new).changed


def test_json_data_has_counts_then_deployments_and_errors() -> None:
    result = diff_fleet({}, {(BUNDLE, "ws/a"): side()}, ["error: new: broken"])
    data = result.to_data()
    assert data["bundles"] == {BUNDLE: {"created": 1}}
    assert data["deployments"][0]["change"] == "created"
    assert data["deployments"][0]["newVersion"] == "1.0.0"
    assert data["errors"] == ["error: new: broken"]
