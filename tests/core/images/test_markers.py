"""Image policy markers in YAML text: which lines they mark, and the one-value rewrite."""

from __future__ import annotations

import pytest
import yaml

from bundler.core.images.markers import (
    ImageAddress,
    MarkerPart,
    find_markers,
    marked_value,
    rewrite,
)
from bundler.errors import InvalidInputError

WEB = ImageAddress("ws", "app", "web")

FIND_CASES: list[tuple[str, str, MarkerPart, str]] = [
    (
        "full",
        'image: r:5000/web:1.0 # {"$imagepolicy": "ws/app:web"}',
        MarkerPart.FULL,
        "r:5000/web:1.0",
    ),
    (
        "tag-double-quoted",
        'tag: "1.0"  # {"$imagepolicy": "ws/app:web:tag"}',
        MarkerPart.TAG,
        "1.0",
    ),
    (
        "name-single-quoted",
        'repo: \'r/web\' # {"$imagepolicy": "ws/app:web:name"}',
        MarkerPart.NAME,
        "r/web",
    ),
    (
        "digest",
        '  digest: sha256:ab # {"$imagepolicy": "ws/app:web:digest"}',
        MarkerPart.DIGEST,
        "sha256:ab",
    ),
    ("sequence-item", '    - r/web:1 # {"$imagepolicy": "ws/app:web"}', MarkerPart.FULL, "r/web:1"),
    (
        "item-of-mapping",
        '  - image: r/web:1 # {"$imagepolicy": "ws/app:web"}',
        MarkerPart.FULL,
        "r/web:1",
    ),
    ("spaces-in-marker", 'tag: 1 #{ "$imagepolicy" : "ws/app:web:tag" }', MarkerPart.TAG, "1"),
    ("quoted-key", '"tag": x # {"$imagepolicy": "ws/app:web:tag"}', MarkerPart.TAG, "x"),
    (
        "escaped-double-quote",
        r'tag: "a\"b" # {"$imagepolicy": "ws/app:web:tag"}',
        MarkerPart.TAG,
        'a"b',
    ),
]


@pytest.mark.parametrize(
    ("line", "part", "value"), [c[1:] for c in FIND_CASES], ids=[c[0] for c in FIND_CASES]
)
def test_find_markers(line: str, part: MarkerPart, value: str) -> None:
    text = f"# header\n{line}\nother: 1\n"
    [marker] = find_markers(text, "f.yaml")
    assert (marker.line, marker.address, marker.part, marker.value) == (2, WEB, part, value)


def test_lines_without_markers_and_flux_markers_are_left_alone() -> None:
    text = (
        "image: r/web:1 # a comment\n"
        'image: r/web:1 # {"$imagepolicy": "flux-system:podinfo"}\n'
        'tag: 1 # {"$imagepolicy": "flux-system:podinfo:tag"}\n'
    )
    assert find_markers(text, "f.yaml") == []


BAD_CASES = [
    ("comment-only-line", '# {"$imagepolicy": "ws/app:web"}', "not after a value"),
    ("block-scalar", 'tag: | # {"$imagepolicy": "ws/app:web:tag"}', "not after a value"),
    ("unknown-part", 'tag: 1 # {"$imagepolicy": "ws/app:web:version"}', "is not NAMESPACE/BUNDLE"),
    ("no-image", 'tag: 1 # {"$imagepolicy": "ws/app"}', "is not NAMESPACE/BUNDLE"),
]


@pytest.mark.parametrize(
    ("line", "message"), [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES]
)
def test_bad_markers_name_file_and_line(line: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message) as caught:
        find_markers(f"a: 1\n{line}\n", "f.yaml")
    assert str(caught.value).startswith("f.yaml:2: ")


REWRITE_CASES = [
    ("plain", 'image: r/web:1.0 # {"m"}', "r/web:2.0", 'image: r/web:2.0 # {"m"}'),
    ("plain-number-quoted", "tag: 1.2.3   # {}", "1.10", 'tag: "1.10"   # {}'),
    ("plain-word-quoted", "tag: a # {}", "yes", 'tag: "yes" # {}'),
    ("plain-digest-stays-plain", "d: sha256:0 # {}", "sha256:1f", "d: sha256:1f # {}"),
    ("double-stays-double", 'tag: "1.0" # {}', "2", 'tag: "2" # {}'),
    ("single-stays-single", "tag: '1.0'  # {}", "it's", "tag: 'it''s'  # {}"),
    ("sequence", "  - r/web:1 # {}", "r/web:2", "  - r/web:2 # {}"),
    (
        "indent-and-key-kept",
        "      image:   r/web:1  # {}",
        "r/web:22",
        "      image:   r/web:22  # {}",
    ),
]


@pytest.mark.parametrize(
    ("line", "value", "expected"), [c[1:] for c in REWRITE_CASES], ids=[c[0] for c in REWRITE_CASES]
)
def test_rewrite_changes_only_the_value(line: str, value: str, expected: str) -> None:
    rewritten = rewrite(line, value)
    assert rewritten == expected
    parsed = yaml.safe_load(rewritten.lstrip().removeprefix("- "))
    assert value in (parsed, *(parsed.values() if isinstance(parsed, dict) else ()))


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        (MarkerPart.FULL, "r:5000/web:1.2"),
        (MarkerPart.TAG, "1.2"),
        (MarkerPart.NAME, "r:5000/web"),
        (MarkerPart.DIGEST, "sha256:ff"),
    ],
    ids=lambda p: str(p),
)
def test_marked_value(part: MarkerPart, expected: str) -> None:
    assert marked_value(part, "r:5000/web", "1.2", "sha256:ff") == expected
