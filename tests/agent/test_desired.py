"""The copies of management values the pull agent writes next to its HelmRelease
(bundler.agent.desired.management_copies): read from the manager's copies in the cluster namespace,
written under the same name in the agent's namespace, refused when missing or not what the
options' digest says."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.agent.config import AgentConfig
from bundler.agent.desired import ValuesUnavailableError, desired_objects, management_copies
from bundler.core.flux.values_copies import data_digest, management_copy_name
from bundler.store.protocol import Obj
from tests.support.agent.objects import CLUSTER_NAME, bd_model
from tests.support.builders import WS
from tests.support.values_objects import encoded, management

DATA = {"values.yaml": encoded("greeting: from-management\n")}
DIGEST = data_digest(DATA)
COPY = management_copy_name("app", "ConfigMap", "settings", DIGEST)
DELIVERED = {"kind": "ConfigMap", "name": "settings", "digest": DIGEST, "secretName": COPY}
CONFIG = AgentConfig(workspace=WS, cluster=CLUSTER_NAME)


def _model() -> Any:
    values_from = [management("ConfigMap", "settings", valuesKey="values.yaml")]
    return bd_model(values_from=values_from, management=[DELIVERED])


@pytest.mark.parametrize(
    ("in_namespace", "refusal"),
    [
        ({COPY: {"data": DATA}}, None),
        ({}, "does not exist in the cluster namespace"),
        ({COPY: {"data": {"values.yaml": encoded("changed: 1\n")}}}, "does not hold the data"),
    ],
    ids=["copied", "missing", "other-data"],
)
def test_the_copy_next_to_the_helm_release(
    in_namespace: dict[str, Obj], refusal: str | None
) -> None:
    bd = _model()
    if refusal is not None:
        with pytest.raises(ValuesUnavailableError, match=refusal) as raised:
            management_copies(bd, CONFIG, in_namespace.get)
        assert f"Secret {CONFIG.cluster_namespace}/{COPY}" in str(raised.value)
        assert f"ConfigMap {WS}/settings" in str(raised.value)
        return
    (copy,) = management_copies(bd, CONFIG, in_namespace.get)
    assert copy["metadata"]["name"] == COPY
    assert copy["metadata"]["namespace"] == CONFIG.flux_namespace
    assert (copy["type"], copy["data"]) == ("Opaque", DATA)
    assert copy["metadata"]["labels"]["bundler.dev/bundledeployment"] == "app"
    desired = desired_objects(bd, CONFIG, None, [copy])
    assert desired.release["spec"]["valuesFrom"] == [
        {"kind": "Secret", "name": COPY, "valuesKey": "values.yaml"}
    ]
    assert desired.objects[0][1] is copy  # written before the HelmRelease that reads it
