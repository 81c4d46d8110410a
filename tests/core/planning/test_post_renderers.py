"""Post-renderer patches are templated per cluster like values: a patch holding `${` is read as
YAML, its strings rendered (native types kept), and written back as YAML, so what a cluster's
labels, annotations or values hold arrives as data, never as YAML structure."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from bundler.api.cluster import Cluster
from bundler.core.planning import plan_bundle
from tests.support.builders import WS, bundle

STRATEGIC = """apiVersion: v1
kind: ConfigMap
metadata:
  name: app-values
  labels:
    region: ${ cluster.labels.region }
data:
  cluster: ${ cluster.name }
  replicas: ${ cluster.values.replicas }
"""
JSON6902 = """- op: add
  path: /metadata/annotations
  value: ${ cluster.values.annotations }
"""
UNTEMPLATED = "# kept as written\nkind: ConfigMap\nmetadata: {name: app-values}\n"


def _cluster(name: str, region: str, **values: Any) -> Cluster:
    return Cluster.model_validate(
        {
            "metadata": {
                "name": name,
                "namespace": WS,
                "labels": {"region": region},
                "annotations": {"note": "x\nkind: Secret"},
            },
            "spec": {"values": {"replicas": 2, "annotations": {"a": "b"}, **values}},
        }
    )


FLEET = [_cluster("eu-1", "eu"), _cluster("eu-2", "eu"), _cluster("us-1", "us", replicas=5)]


def _patches(*patches: str, **kustomize: Any) -> list[dict[str, Any]]:
    return [{"kustomize": {"patches": [{"patch": p} for p in patches], **kustomize}}]


def _plan(helm: dict[str, Any], targets: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    plan = plan_bundle(bundle(targets or [{"clusterSelector": {}}], helm=helm), FLEET, [])
    assert not plan.errors, plan.errors
    return {d.cluster.split("/")[1]: d.options.helm for d in plan.deployments}


def _patch_of(helm: Any, index: int = 0) -> Any:
    return helm.postRenderers[0].kustomize.patches[index].patch


def test_each_cluster_gets_its_own_patch_with_native_types() -> None:
    planned = _plan({"postRenderers": _patches(STRATEGIC, JSON6902)})
    for name, replicas, region in (("eu-1", 2, "eu"), ("us-1", 5, "us")):
        strategic = yaml.safe_load(_patch_of(planned[name]))
        assert strategic["metadata"]["labels"] == {"region": region}
        assert strategic["data"] == {"cluster": name, "replicas": replicas}
        operations = yaml.safe_load(_patch_of(planned[name], 1))
        assert operations == [{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}}]


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        pytest.param(
            "data:\n  note: ${ cluster.annotations.note }\n",
            {"data": {"note": "x\nkind: Secret"}},
            id="a value with a newline stays one string",
        ),
        pytest.param(
            "data:\n  shell: $${HOME}/${ cluster.name }\n",
            {"data": {"shell": "${HOME}/eu-1"}},
            id="$${ is a literal ${",
        ),
        pytest.param(
            '"${ cluster.values.annotations }"\n',
            {"a": "b"},
            id="a whole patch from cluster values is data",
        ),
    ],
)
def test_templates_yield_data_not_yaml_structure(patch: str, expected: Any) -> None:
    planned = _plan({"postRenderers": _patches(patch)})
    assert yaml.safe_load(_patch_of(planned["eu-1"])) == expected


def test_a_patch_without_template_is_passed_as_written() -> None:
    planned = _plan({"postRenderers": _patches(UNTEMPLATED), "values": {"n": "${ cluster.name }"}})
    assert _patch_of(planned["eu-1"]) == UNTEMPLATED


def test_disable_templating_passes_patches_as_written() -> None:
    planned = _plan({"postRenderers": _patches(STRATEGIC), "disableTemplating": True})
    assert _patch_of(planned["us-1"]) == STRATEGIC


def test_image_overrides_and_targets_are_templated_too() -> None:
    images = [{"name": "web", "newTag": "${ cluster.labels.region }-1.0"}]
    planned = _plan({"postRenderers": _patches(UNTEMPLATED, images=images)})
    assert planned["us-1"].postRenderers[0].kustomize.images[0].newTag == "us-1.0"


def test_clusters_that_agree_share_one_render() -> None:
    helm = {"postRenderers": _patches("metadata:\n  labels:\n    r: ${ cluster.labels.region }\n")}
    plan = plan_bundle(bundle([{"clusterSelector": {}}], helm=helm), FLEET, [])
    by_cluster = {d.cluster.split("/")[1]: d for d in plan.deployments}
    assert by_cluster["eu-1"].options is by_cluster["eu-2"].options
    assert by_cluster["eu-1"].deployment_id != by_cluster["us-1"].deployment_id


def test_a_targets_post_renderers_replace_the_bundles() -> None:
    targets: list[dict[str, Any]] = [
        {
            "clusterName": "us-1",
            "helm": {"postRenderers": _patches("data:\n  t: ${ cluster.name }")},
        },
        {"clusterSelector": {}},
    ]
    planned = _plan({"postRenderers": _patches(STRATEGIC, JSON6902)}, targets)
    assert len(planned["us-1"].postRenderers[0].kustomize.patches) == 1
    assert yaml.safe_load(_patch_of(planned["us-1"])) == {"data": {"t": "us-1"}}
    assert len(planned["eu-1"].postRenderers[0].kustomize.patches) == 2


def test_a_template_error_names_the_patch_and_stays_with_its_cluster() -> None:
    patch = "metadata:\n  labels:\n    zone: ${ cluster.values.zone }\n"
    plan = plan_bundle(
        bundle([{"clusterSelector": {}}], helm={"postRenderers": _patches(patch)}),
        [*FLEET, _cluster("ap-1", "ap", zone="a")],
        [],
    )
    assert [d.cluster for d in plan.deployments] == [f"{WS}/ap-1"]
    assert len(plan.errors) == len(FLEET)
    for error in plan.errors:
        assert "postRenderers[0].kustomize.patches[0].patch.metadata.labels.zone" in error.message
        assert error.cluster.split("/")[1] in error.message


def test_common_metadata_is_templated_as_text() -> None:
    metadata = {
        "labels": {
            "region": "${ cluster.labels.region }",
            "replicas": "${ cluster.values.replicas }",
        },
        "annotations": {"${ cluster.name }/managed": "${ true }"},
    }
    planned = _plan({"commonMetadata": metadata})
    assert planned["us-1"].commonMetadata is not None
    assert planned["us-1"].commonMetadata.labels == {"region": "us", "replicas": "5"}
    assert planned["us-1"].commonMetadata.annotations == {"us-1/managed": "true"}


def test_common_metadata_rendering_a_map_is_that_clusters_error() -> None:
    helm = {"commonMetadata": {"labels": {"bad": "${ cluster.values.annotations }"}}}
    plan = plan_bundle(bundle([{"clusterSelector": {}}], helm=helm), FLEET, [])
    assert not plan.deployments and len(plan.errors) == len(FLEET)
    assert "commonMetadata.labels['bad']: renders to dict" in plan.errors[0].message
    assert "for Cluster" in plan.errors[0].message
