"""Helm's OCI layout: the manifest bundler writes and the check that an artifact is a chart."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.errors import InvalidInputError
from bundler.oci import chart, layout

METADATA = chart.parse("apiVersion: v2\nname: demo\nversion: 1.0.0+b\ndescription: d\n", source="x")
CONFIG = layout.Descriptor.of(layout.CONFIG_MEDIA_TYPE, METADATA.config_json())
LAYER = layout.Descriptor.of(layout.CHART_LAYER_MEDIA_TYPE, b"tgz bytes")


def test_manifest_is_helms_layout_without_a_clock() -> None:
    assert layout.chart_manifest(METADATA, CONFIG, LAYER) == {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.cncf.helm.config.v1+json",
            "digest": CONFIG.digest,
            "size": CONFIG.size,
        },
        "layers": [
            {
                "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                "digest": LAYER.digest,
                "size": LAYER.size,
            }
        ],
        "annotations": {
            "org.opencontainers.image.title": "demo",
            "org.opencontainers.image.version": "1.0.0+b",
            "org.opencontainers.image.description": "d",
        },
    }


@pytest.mark.parametrize(
    "layer_type",
    [layout.CHART_LAYER_MEDIA_TYPE, layout.LEGACY_CHART_LAYER_MEDIA_TYPE],
    ids=["current", "legacy-helm-3.0"],
)
def test_chart_layer_is_selected_by_media_type(layer_type: str) -> None:
    chart_layer = layout.Descriptor(layer_type, LAYER.digest, LAYER.size)
    provenance = {
        "mediaType": "application/vnd.cncf.helm.chart.provenance.v1.prov",
        "digest": "sha256:0",
        "size": 1,
    }
    manifest = {"config": CONFIG.to_json(), "layers": [provenance, chart_layer.to_json()]}
    assert layout.chart_layer(manifest, reference="ref") == chart_layer


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.index.v1+json",
                "manifests": [],
            },
            "the manifest (application/vnd.oci.image.index.v1+json) has no config",
        ),
        (
            {
                "config": {
                    **CONFIG.to_json(),
                    "mediaType": "application/vnd.oci.image.config.v1+json",
                },
                "layers": [],
            },
            "ref: not a Helm chart: config media type is application/vnd.oci.image.config.v1+json",
        ),
        (
            {"config": CONFIG.to_json(), "layers": [LAYER.to_json(), LAYER.to_json()]},
            f"expected one layer of type {layout.CHART_LAYER_MEDIA_TYPE}, found 2",
        ),
    ],
    ids=["image-index", "image-config", "two-chart-layers"],
)
def test_not_a_chart(manifest: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        layout.chart_layer(manifest, reference="ref")
    assert message in str(caught.value)


def test_descriptor_matches_checks_size_and_digest() -> None:
    assert LAYER.matches(b"tgz bytes")
    assert not LAYER.matches(b"tgz bytez")


FULL = chart.parse(
    "apiVersion: v1\nname: demo\nversion: v1.0.0\ndescription: d\nhome: https://h.example\n"
    "sources: [https://s.example/1, https://s.example/2]\n"
    "maintainers: [{name: Ann, email: a@example.com}, {name: Bob}, {email: c@example.com}]\n"
    "annotations: {org.opencontainers.image.version: '9', org.opencontainers.image.source: o,"
    " example.com/team: platform}\n",
    source="x",
)


@pytest.mark.parametrize(
    ("created", "expected_created"),
    [(None, None), ("2023-11-14T22:13:20Z", "2023-11-14T22:13:20Z")],
    ids=["no-clock", "given-time"],
)
def test_annotations_are_helms(created: str | None, expected_created: str | None) -> None:
    annotations = layout.chart_annotations(FULL, created)
    assert annotations.pop(layout.ANNOTATION_CREATED, None) == expected_created
    assert annotations == {
        "example.com/team": "platform",
        "org.opencontainers.image.authors": "Ann (a@example.com), Bob,  (c@example.com)",
        "org.opencontainers.image.description": "d",
        "org.opencontainers.image.source": "o",  # a chart annotation replaces it
        "org.opencontainers.image.title": "demo",
        "org.opencontainers.image.url": "https://h.example",
        "org.opencontainers.image.version": "v1.0.0",  # but never the version
    }
