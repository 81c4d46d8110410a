"""What `bundler cluster register` writes, decided without a server."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml

from bundler.api.cluster import AgentMode
from bundler.core.cluster_registration import (
    MANAGED_BY_REGISTER,
    Registration,
    check_kubeconfig,
    desired_cluster,
    desired_secret,
    parse_labels,
)
from bundler.core.labels import LABEL_MANAGED_BY
from bundler.errors import InvalidInputError


def kubeconfig(user: dict[str, Any]) -> bytes:
    return yaml.safe_dump(
        {
            "clusters": [{"name": "c", "cluster": {"server": "https://c"}}],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
    ).encode()


# An exec plugin is left to Flux (helm-controller's --insecure-kubeconfig-exec).
KUBECONFIG = kubeconfig({"exec": {"command": "cloud-login"}})
REMOTE = Registration("ws", "edge", AgentMode.REMOTE, {"env": "prod"}, KUBECONFIG)


def test_new_remote_cluster_points_at_its_kubeconfig_secret() -> None:
    cluster = desired_cluster(REMOTE, None)
    assert cluster["metadata"] == {"name": "edge", "namespace": "ws", "labels": {"env": "prod"}}
    assert cluster["spec"]["agentMode"] == "remote"
    assert cluster["spec"]["kubeConfigSecret"] == "edge-kubeconfig"
    assert "status" not in cluster


def test_update_merges_labels_and_keeps_what_it_does_not_set() -> None:
    live: dict[str, Any] = {
        "metadata": {
            "name": "edge",
            "namespace": "ws",
            "labels": {"env": "dev", "team": "a"},
            "resourceVersion": "7",
        },
        "spec": {"values": {"x": 1}, "paused": True, "agentMode": "pull"},
        "status": {"namespace": "cluster-ws-edge-1"},
    }
    cluster = desired_cluster(REMOTE, live)
    assert cluster["metadata"]["labels"] == {"env": "prod", "team": "a"}
    assert cluster["metadata"]["resourceVersion"] == "7"
    assert cluster["spec"] == {
        "values": {"x": 1},
        "paused": True,
        "agentMode": "remote",
        "kubeConfigSecret": "edge-kubeconfig",
    }
    assert live["spec"]["agentMode"] == "pull", "the live object is not changed"


def test_secret_holds_the_kubeconfig_under_value_and_is_labelled() -> None:
    secret = desired_secret(REMOTE, None)
    assert secret["metadata"]["labels"] == {LABEL_MANAGED_BY: MANAGED_BY_REGISTER}
    assert base64.b64decode(secret["data"]["value"]) == KUBECONFIG
    assert secret["type"] == "Opaque"


@pytest.mark.parametrize(
    ("live", "message"),
    [
        ({"metadata": {"name": "edge-kubeconfig"}}, "was not written by"),
        ({"metadata": {"labels": {LABEL_MANAGED_BY: "someone"}}}, "was not written by"),
    ],
    ids=["unlabelled", "other-manager"],
)
def test_foreign_secret_is_refused(live: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        desired_secret(REMOTE, live)


@pytest.mark.parametrize(
    ("pairs", "labels"),
    [([], {}), (["a=b", "c="], {"a": "b", "c": ""}), (["k=v=w"], {"k": "v=w"})],
    ids=["none", "empty-value", "equals-in-value"],
)
def test_labels_parse_as_key_value(pairs: list[str], labels: dict[str, str]) -> None:
    assert parse_labels(pairs) == labels


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"a: [", "is not YAML"),
        (b"- 1", "is not a kubeconfig"),
        (KUBECONFIG.replace(b"current-context: x", b"current-context: ''"), "no current-context"),
        (kubeconfig({"tokenFile": "/var/token"}), "file tokenFile"),
        (b"x" * (1024 * 1024 + 1), "larger than a Secret"),
    ],
    ids=["not-yaml", "not-a-mapping", "no-context", "token-file", "too-large"],
)
def test_unusable_kubeconfig_is_refused(content: bytes, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as raised:
        check_kubeconfig(content)
    assert raised.value.field == "--kubeconfig"
