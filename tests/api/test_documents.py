from __future__ import annotations

import pytest

from bundler.api.bundle import Bundle
from bundler.api.documents import parse_object, split_documents
from bundler.errors import InvalidInputError

HEAD = "apiVersion: bundler.dev/v1alpha1\nkind: Bundle\nmetadata: {name: b}\n"

CASES = [
    ("bad-yaml", "a: [1", "f.yaml:1", None, "malformed YAML"),
    (
        "bad-yaml-second-doc",
        HEAD + "spec: {helm: {chart: c}}\n---\na: [",
        "f.yaml:6",
        None,
        "malformed YAML",
    ),
    ("not-a-mapping", "- 1\n- 2", "f.yaml:1", None, "expected a mapping"),
    (
        "unknown-field",
        HEAD + "spec: {helm: {chart: c, chrt: x}}",
        "f.yaml:4",
        "spec.helm.chrt",
        "unknown field",
    ),
    ("missing-spec", HEAD, "f.yaml:1", "spec", "required field is missing"),
    (
        "bad-operator",
        HEAD + "spec:\n  helm: {}\n  targets:\n  - clusterSelector:\n      matchExpressions:\n"
        "      - key: a\n        operator: Maybe\n",
        "f.yaml:10",
        "spec.targets[0].clusterSelector.matchExpressions[0].operator",
        '"Maybe" is not one of In, NotIn, Exists, DoesNotExist',
    ),
    (
        "wrong-kind",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}",
        "f.yaml:2",
        "kind",
        "unsupported kind 'Pod'",
    ),
    ("kind-a-list", HEAD.replace("Bundle", "[Bundle]"), "f.yaml:2", "kind", "a list"),
    ("kind-a-mapping", HEAD.replace("Bundle", "{a: 1}"), "f.yaml:2", "kind", "a mapping"),
    ("api-version-a-number", "apiVersion: 1\nkind: Bundle\n", "f.yaml:1", "apiVersion", "number"),
    (
        "wrong-api-version",
        "apiVersion: fleet.cattle.io/v1alpha1\nkind: Bundle\nmetadata: {name: p}",
        "f.yaml:1",
        "apiVersion",
        "unsupported apiVersion",
    ),
    (
        "bad-percent",
        HEAD + "spec: {helm: {}, rolloutStrategy: {maxUnavailable: 10x}}",
        "f.yaml:4",
        "spec.rolloutStrategy.maxUnavailable",
        "",
    ),
    (
        "bad-duration",
        HEAD + "spec: {helm: {timeout: 5 minutes}}",
        "f.yaml:4",
        "spec.helm.timeout",
        "pattern",
    ),
]


@pytest.mark.parametrize(
    ("text", "where", "field", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_errors_point_at_the_line_of_the_offending_field(
    text: str, where: str, field: str | None, message: str
) -> None:
    with pytest.raises(InvalidInputError) as err:
        for doc in split_documents(text, "f.yaml"):
            parse_object(doc)
    assert err.value.obj == where
    assert err.value.field == field
    assert message in err.value.message


def test_namespace_defaults_to_default_and_empty_documents_are_skipped() -> None:
    docs = split_documents("---\n---\n" + HEAD + "spec: {helm: {chart: c}}\n", "f.yaml")
    assert [d.index for d in docs] == [1]
    obj = parse_object(docs[0])
    assert isinstance(obj, Bundle) and obj.metadata.namespace == "default"
