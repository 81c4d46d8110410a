"""A Bundle's content: exactly one of spec.helm and spec.kustomize, and spec.kustomize's own
checks (its source, Git reference, artifact version, paths, names), naming the Bundle and field."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundle import Bundle
from bundler.core.validation import validate_bundle
from bundler.errors import InvalidInputError
from tests.support.builders import ARTIFACT, WS, kustomize_bundle

GIT = {"git": {"url": "https://git.example/app.git", "ref": {"branch": "main"}}}
TARGET = {"clusterName": "a"}


def _spec(spec: dict[str, Any]) -> Bundle:
    return Bundle.model_validate({"metadata": {"name": "app", "namespace": WS}, "spec": spec})


@pytest.mark.parametrize(
    ("spec", "field", "message"),
    [
        pytest.param({"targets": [TARGET]}, "spec.helm", "give exactly one of", id="neither"),
        pytest.param(
            {
                "helm": {"repo": "https://charts.example", "chart": "app"},
                "kustomize": {"source": {"oci": {"url": ARTIFACT}}},
            },
            "spec.kustomize",
            "not both",
            id="both",
        ),
        pytest.param(
            {
                "kustomize": {"source": {"oci": {"url": ARTIFACT}}},
                "targets": [{"clusterName": "a", "helm": {"version": "2.0.0"}}],
            },
            "spec.targets[0].helm",
            "override it with kustomize, not helm",
            id="helm-override-of-kustomize",
        ),
        pytest.param(
            {
                "helm": {"repo": "https://charts.example", "chart": "app"},
                "targets": [{"clusterName": "a", "kustomize": {"path": "x"}}],
            },
            "spec.targets[0].kustomize",
            "override it with helm, not kustomize",
            id="kustomize-override-of-helm",
        ),
    ],
)
def test_a_bundle_has_exactly_one_kind_of_content(
    spec: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(_spec(spec))
    assert err.value.obj == f"Bundle {WS}/app"
    assert err.value.field == field
    assert message in err.value.message


@pytest.mark.parametrize(
    ("kustomize", "targets", "field", "message"),
    [
        pytest.param(
            {"source": None},
            [TARGET],
            "spec.targets[0].kustomize.source",
            "is required",
            id="no-source",
        ),
        pytest.param(
            {"source": {**GIT, "oci": {"url": ARTIFACT}}},
            [],
            "spec.kustomize.source",
            "one of oci and git",
            id="two-sources",
        ),
        pytest.param(
            {"source": {"oci": {"url": "https://registry.example/app"}}},
            [],
            "spec.kustomize.source.oci.url",
            "does not start with oci://",
            id="oci-scheme",
        ),
        pytest.param(
            {"source": {"oci": {"url": f"{ARTIFACT}:1.0.0"}}},
            [],
            "spec.kustomize.source.oci.url",
            "names a tag or digest",
            id="oci-url-with-tag",
        ),
        pytest.param(
            {"source": {"oci": {"url": ARTIFACT, "tag": "1.0.0", "version": "1.*"}}},
            [],
            "spec.kustomize.source.oci.version",
            "not both",
            id="tag-and-version",
        ),
        pytest.param(
            {"source": {"oci": {"url": ARTIFACT, "version": ">= nope"}}},
            [],
            "spec.kustomize.source.oci.version",
            "",
            id="bad-range",
        ),
        pytest.param(
            {"source": {"git": {"url": "ftp://git.example/app.git"}}},
            [],
            "spec.kustomize.source.git.url",
            "does not start with https:// or http:// or ssh://",
            id="git-scheme",
        ),
        pytest.param(
            {
                "source": {
                    "git": {"url": "https://git.example/a", "ref": {"branch": "m", "tag": "v1"}}
                }
            },
            [],
            "spec.kustomize.source.git.ref",
            "give one of branch, tag, semver, commit (got branch, tag)",
            id="two-git-refs",
        ),
        pytest.param(
            {"source": {"oci": {"url": ARTIFACT, "secretRef": {"name": "bundler-agent-token"}}}},
            [],
            "spec.kustomize.source.oci.secretRef.name",
            "agent's token Secret",
            id="agent-token-secret",
        ),
        pytest.param(
            {"path": "../other"}, [], "spec.kustomize.path", "leaves the source", id="path-up"
        ),
        pytest.param(
            {"components": ["ok", "a/../../b"]},
            [],
            "spec.kustomize.components[1]",
            "leaves the source",
            id="component-up",
        ),
        pytest.param(
            {"targetNamespace": "Not_A_Namespace"},
            [],
            "spec.kustomize.targetNamespace",
            "not a valid namespace name",
            id="target-namespace",
        ),
        pytest.param(
            {"patches": [{"patch": "metadata: {name: ${ cluster.name }"}]},
            [],
            "spec.kustomize.patches[0].patch",
            "read as YAML before it is templated",
            id="templated-patch-not-yaml",
        ),
        pytest.param(
            {},
            [
                {
                    "clusterName": "a",
                    "kustomize": {
                        "source": {"git": {"url": "ssh://h/r", "ref": {"tag": "a", "commit": "b"}}}
                    },
                }
            ],
            "spec.targets[0].kustomize.source.git.ref",
            "give one of",
            id="target-override-checked",
        ),
    ],
)
def test_invalid_kustomize_options_name_their_field(
    kustomize: dict[str, Any], targets: list[dict[str, Any]], field: str, message: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        validate_bundle(kustomize_bundle(targets, kustomize=kustomize))
    assert err.value.obj == f"Bundle {WS}/app"
    assert err.value.field == field
    assert message in err.value.message


@pytest.mark.parametrize(
    ("kustomize", "targets"),
    [
        pytest.param({}, [TARGET], id="oci-tag"),
        pytest.param({"source": {"oci": {"url": ARTIFACT, "version": "1.*"}}}, [], id="oci-range"),
        pytest.param({"source": {"oci": {"url": ARTIFACT}}}, [], id="oci-latest"),
        pytest.param({"source": GIT, "components": ["shared"]}, [], id="git-branch"),
        pytest.param(
            {"source": None},
            [{"clusterName": "a", "kustomize": {"source": GIT}}],
            id="source-from-target",
        ),
        pytest.param(
            {},
            [{"clusterName": "a", "kustomize": {"source": GIT}}],
            id="target-switches-source-kind",
        ),
        pytest.param(
            {"patches": [{"patch": "metadata:\n  labels: {region: '${ cluster.name }'}\n"}]},
            [],
            id="templated-patch",
        ),
    ],
)
def test_valid_kustomize_options_pass(
    kustomize: dict[str, Any], targets: list[dict[str, Any]]
) -> None:
    validate_bundle(kustomize_bundle(targets, kustomize=kustomize))
