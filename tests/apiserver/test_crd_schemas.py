"""Which schema governs a kind: a CRD stored in the server, else bundler's own generated CRDs for
bundler's kinds, else none; stored CRDs are followed as they change."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bundler.api.resources import BUNDLE, CUSTOM_RESOURCE_DEFINITION, HELM_RELEASE, SECRET
from bundler.apiserver.crd_schemas import CustomResourceSchemas
from bundler.store.memory import MemoryStore
from bundler.store.protocol import Obj
from tests.support.apiserver.contract import WIDGET, widget_crd


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def schemas(store: MemoryStore) -> Iterator[CustomResourceSchemas]:
    following = CustomResourceSchemas(store)
    following.start()
    yield following
    following.stop()


def bundle_crd(required: list[str]) -> Obj:
    """A Bundle CRD of its own, requiring `required` and nothing else."""
    crd = widget_crd({"type": "object", "required": required})
    crd["metadata"] = {"name": "bundles.bundler.dev"}
    crd["spec"]["group"] = "bundler.dev"
    crd["spec"]["versions"][0]["name"] = "v1alpha1"
    return crd


def test_bundler_kinds_have_the_generated_schemas_and_others_none(
    schemas: CustomResourceSchemas,
) -> None:
    bundle = schemas.of(BUNDLE)
    assert bundle is not None and bundle.required == ("spec",)
    assert [schemas.of(res) for res in (SECRET, HELM_RELEASE, WIDGET)] == [None, None, None]


def test_a_stored_crd_governs_its_kind_until_it_is_deleted(
    store: MemoryStore, schemas: CustomResourceSchemas
) -> None:
    store.create(CUSTOM_RESOURCE_DEFINITION, widget_crd())
    widget = schemas.of(WIDGET)
    assert widget is not None and "spec" in widget.properties
    store.create(CUSTOM_RESOURCE_DEFINITION, bundle_crd(["status"]))
    replaced = schemas.of(BUNDLE)
    assert replaced is not None and replaced.required == ("status",)
    store.delete(CUSTOM_RESOURCE_DEFINITION, "bundles.bundler.dev")
    restored = schemas.of(BUNDLE)
    assert restored is not None and restored.required == ("spec",)


def test_a_changed_crd_takes_effect(store: MemoryStore, schemas: CustomResourceSchemas) -> None:
    created = store.create(CUSTOM_RESOURCE_DEFINITION, bundle_crd(["status"]))
    store.update(
        CUSTOM_RESOURCE_DEFINITION, {**bundle_crd(["kind"]), "metadata": created["metadata"]}
    )
    changed = schemas.of(BUNDLE)
    assert changed is not None and changed.required == ("kind",)


def test_crds_stored_before_the_start_count(store: MemoryStore) -> None:
    store.create(CUSTOM_RESOURCE_DEFINITION, widget_crd())
    later = CustomResourceSchemas(store)
    later.start()
    try:
        assert later.of(WIDGET) is not None
    finally:
        later.stop()


def test_a_store_without_crds_has_only_the_generated_schemas() -> None:
    schemas = CustomResourceSchemas(MemoryStore(served=[BUNDLE]))
    schemas.start()
    assert schemas.of(BUNDLE) is not None
    schemas.stop()


@pytest.mark.parametrize(
    "versions",
    [
        [{"name": "v1", "schema": "not a schema"}],
        [{"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "required": "spec"}}}],
        "not a list",
    ],
    ids=["schema-not-an-object", "required-not-a-list", "versions-not-a-list"],
)
def test_a_malformed_crd_is_read_as_far_as_it_has_a_schema_shape(
    store: MemoryStore, schemas: CustomResourceSchemas, versions: object
) -> None:
    crd = widget_crd()
    crd["spec"]["versions"] = versions
    store.create(CUSTOM_RESOURCE_DEFINITION, crd)
    found = schemas.of(WIDGET)
    assert found is None or found.required == ()
