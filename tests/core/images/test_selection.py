"""A target's override of a Bundle image: set fields replace the Bundle's, the rest stay."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.images import BundleImage, TargetImage
from bundler.core.images import effective_image

BASE = BundleImage.model_validate(
    {
        "name": "web",
        "repository": "r.example/web",
        "policy": {"semver": {"range": "^1"}},
        "ignoreTags": ["*-dev"],
        "platform": "linux/amd64",
        "secretRef": {"name": "pull"},
    }
)

CASES: list[tuple[str, dict[str, Any] | None, dict[str, Any]]] = [
    ("no-override", None, {}),
    ("name-only", {"name": "web"}, {}),
    (
        "policy",
        {"name": "web", "policy": {"semver": {"range": ">=2.0.0-0"}}},
        {"policy": {"semver": {"range": ">=2.0.0-0"}}},
    ),
    ("ignore-tags-cleared", {"name": "web", "ignoreTags": []}, {"ignoreTags": []}),
    ("platform", {"name": "web", "platform": "linux/arm64"}, {"platform": "linux/arm64"}),
    (
        "filter-tags",
        {"name": "web", "filterTags": {"pattern": "^v"}},
        {"filterTags": {"pattern": "^v"}},
    ),
]


@pytest.mark.parametrize(("override", "changed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_effective_image(override: dict[str, Any] | None, changed: dict[str, Any]) -> None:
    target = None if override is None else TargetImage.model_validate(override)
    expected = BundleImage.model_validate({**BASE.to_wire(), **changed})
    assert effective_image(BASE, target) == expected
