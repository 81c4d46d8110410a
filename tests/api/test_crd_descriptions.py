"""Every field of every generated CRD is described, for `kubectl explain` (bundler.api.crdgen)."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import Any

import pytest
from pydantic import Field

from bundler.api.base import ApiModel
from bundler.api.crdgen import _structural, all_crds, openapi_schema
from bundler.api.meta import FreeForm, IntOrPercent

Schema = dict[str, Any]


def _versions() -> list[tuple[str, Schema]]:
    """(id, openAPIV3Schema) of every version of every generated CRD."""
    return [
        (
            f"{crd['spec']['names']['plural']}-{version['name']}",
            version["schema"]["openAPIV3Schema"],
        )
        for crd in all_crds().values()
        for version in crd["spec"]["versions"]
    ]


VERSIONS = _versions()


def _properties(node: Schema, path: str = "") -> Iterator[tuple[str, Schema]]:
    """(path, schema) of every property at every depth: through objects, list items (`[]`) and
    map values (`{}`)."""
    for name, prop in node.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        yield here, prop
        yield from _properties(prop, here)
    if isinstance(node.get("items"), dict):
        yield from _properties(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _properties(node["additionalProperties"], f"{path}{{}}")


# The root metadata may carry nothing but its type: the API server refuses a CRD whose root
# metadata says more ("metadata is implicitly specified"), a description included.
UNDESCRIBABLE = {"metadata"}


@pytest.mark.parametrize(("name", "schema"), VERSIONS, ids=[name for name, _ in VERSIONS])
def test_every_property_at_every_depth_has_a_description(name: str, schema: Schema) -> None:
    found = dict(_properties(schema))
    assert len(found) > len(UNDESCRIBABLE), f"{name}: the walk found no properties"
    missing = [
        path
        for path, prop in found.items()
        if path not in UNDESCRIBABLE and not str(prop.get("description", "")).strip()
    ]
    assert missing == [], f"{name}: properties without a description: {missing}"


@pytest.mark.parametrize(("name", "schema"), VERSIONS, ids=[name for name, _ in VERSIONS])
def test_the_kind_is_described_and_its_metadata_is_only_typed(name: str, schema: Schema) -> None:
    assert str(schema.get("description", "")).strip(), f"{name}: the kind has no description"
    assert schema["properties"]["metadata"] == {"type": "object"}


@pytest.mark.parametrize(("name", "schema"), VERSIONS, ids=[name for name, _ in VERSIONS])
def test_descriptions_are_one_paragraph_of_plain_text(name: str, schema: Schema) -> None:
    for path, prop in _properties(schema):
        text = prop.get("description", "")
        assert text == text.strip() and "\n" not in text and "  " not in text, f"{name}: {path}"


def _described(plural: str, path: str) -> str:
    """The description at `path` (dots between fields, list items crossed without saying so)."""
    schema = next(s for name, s in VERSIONS if name == f"{plural}-v1alpha1")
    node = schema
    for part in path.split("."):
        while "properties" not in node and "items" in node:
            node = node["items"]
        node = node["properties"][part]
    return str(node["description"])


# (kind's plural, field path, words its description must contain)
SPOT_CHECKS = [
    ("bundles", "spec.targets", ("tried in order", "no target matches")),
    ("bundles", "spec.targets.helm", ("Overrides of spec.helm", "valuesFrom", "appended")),
    ("bundles", "spec.targets.clusterSelector", ("{} matches every Cluster",)),
    ("bundles", "spec.helm.version", ("range", "resolved by the manager", "latest stable")),
    ("bundles", "spec.helm.install", ("spec.install",)),
    ("bundles", "spec.helm.timeout", ("spec.timeout", "5m0s")),
    ("bundles", "spec.helm.valuesFrom.name", ("pull mode", "remote mode")),
    ("bundles", "spec.helm.valuesFrom.source", ("Management", "bundler.dev/deliver", "1 MiB")),
    ("bundledeployments", "spec.options.managementValues.digest", ("deploymentID",)),
    ("bundles", "spec.rolloutStrategy.maxUnavailable", ("percentage", "Default 100%")),
    ("bundles", "spec.rolloutStrategy.offlineClusters", ("Ignore (default)", "Block")),
    ("bundles", "spec.rolloutStrategy.onFailure.action", ("Halt (default)", "Rollback")),
    ("bundles", "status.nonReady", ("Up to 10",)),
    ("clusters", "spec.agentMode", ("pull (default)", "remote", "kubeConfigSecret")),
    ("clusters", "spec.kubeConfigSecret", ("key `value`",)),
    ("clusters", "status.agent.lastSeen", ("--offline-after",)),
    ("clustergroups", "spec.selector", ("{} selects every",)),
    ("bundledeployments", "spec.deploymentID", ("sha256",)),
    ("bundledeployments", "status.conditions.reason", ("CamelCase",)),
    ("bootstrapconfigs", "spec.mode", ("pull (default)", "remote")),
]


@pytest.mark.parametrize(
    ("plural", "path", "words"), SPOT_CHECKS, ids=[f"{p}-{path}" for p, path, _ in SPOT_CHECKS]
)
def test_important_fields_say_what_they_mean(plural: str, path: str, words: tuple[str]) -> None:
    text = _described(plural, path)
    for word in words:
        assert word in text, f"{plural} {path}: {text!r} does not say {word!r}"


# -- the generator carries descriptions through every shape of schema --------------------------


class Colour(StrEnum):
    """An enum's own description."""

    RED = "red"


class Inner(ApiModel):
    """The inner model's own description."""

    leaf: str = ""
    """The leaf."""


class Outer(ApiModel):
    """The outer model."""

    required: Inner
    """A required nested model."""
    optional: Inner | None = None
    """An optional nested model
    written over two lines."""
    listed: list[Inner] = Field(default_factory=list)
    """A list of models."""
    mapped: dict[str, Inner] = Field(default_factory=dict)
    """A map of models."""
    labels: dict[str, str] | None = None
    """A map of strings."""
    free: FreeForm | None = None
    """Free-form values."""
    amount: IntOrPercent | None = None
    """A count or a percentage."""
    colour: Colour | None = None
    """A colour."""
    plain: Inner | None = None


OUTER = openapi_schema(Outer)["properties"]

# (property, the description it must have): a field's own wins over its type's
CARRIED = [
    ("required", "A required nested model."),
    ("optional", "An optional nested model written over two lines."),
    ("listed", "A list of models."),
    ("mapped", "A map of models."),
    ("labels", "A map of strings."),
    ("free", "Free-form values."),
    ("amount", "A count or a percentage."),
    ("colour", "A colour."),
    ("plain", "The inner model's own description."),
]


@pytest.mark.parametrize(("field", "description"), CARRIED, ids=[f for f, _ in CARRIED])
def test_a_fields_description_is_carried_through_its_schema(field: str, description: str) -> None:
    assert OUTER[field]["description"] == description


@pytest.mark.parametrize(
    ("field", "inner"),
    [("listed", "items"), ("mapped", "additionalProperties")],
    ids=["list-items", "map-values"],
)
def test_list_items_and_map_values_keep_their_models_descriptions(field: str, inner: str) -> None:
    element = OUTER[field][inner]
    assert element["description"] == "The inner model's own description."
    assert element["properties"]["leaf"]["description"] == "The leaf."


@pytest.mark.parametrize(
    ("field", "kept"),
    [
        ("free", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
        ("amount", {"x-kubernetes-int-or-string": True}),
        ("colour", {"type": "string", "enum": ["red"]}),
    ],
    ids=["preserve-unknown-fields", "int-or-string", "enum"],
)
def test_markers_stay_beside_the_description(field: str, kept: Schema) -> None:
    assert {k: v for k, v in OUTER[field].items() if k != "description"} == kept


def test_older_pydantics_all_of_wrapper_is_flattened_with_its_description() -> None:
    defs = {"Inner": {"type": "object", "description": "inner", "properties": {}}}
    node = {"allOf": [{"$ref": "#/$defs/Inner"}], "description": "the field"}
    flat = {"description": "the field", "type": "object", "properties": {}}
    assert _structural(node, defs) == flat
