"""Image policy markers in YAML text, and the one-value edit that updates a marked line.

The marker convention is Flux's image automation one, with bundler's address of an image: a
comment on the line of the value it sets,

    image: 127.0.0.1:5000/web:1.2.3 # {"$imagepolicy": "NAMESPACE/BUNDLE:IMAGE"}
    tag: 1.2.3                      # {"$imagepolicy": "NAMESPACE/BUNDLE:IMAGE:tag"}

where `NAMESPACE/BUNDLE` is a Bundle and `IMAGE` the `name` of one of its `spec.images`. Without
a suffix the value is the full reference `repository:tag`; `:tag`, `:name` (the repository) and
`:digest` set that part alone. The value is a mapping's (`key: value`) or a sequence item's
(`- value`), plain or quoted. Flux's own markers (`NAMESPACE:POLICY`, no `/`) are left alone.

`rewrite` changes only the value's characters: indentation, key, quoting style, the spacing
before the comment and the comment stay as written. A plain value that would read as another
type (`1.10` as a number) or is not a valid plain scalar is written double-quoted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum

from bundler.errors import InvalidInputError
from bundler.yamldump import reads_as_another_type

_MARKER = re.compile(r'#\s*\{\s*"\$imagepolicy"\s*:\s*"(?P<address>[^"]*)"\s*\}\s*$')
_ADDRESS = re.compile(
    r"(?P<namespace>[a-z0-9][a-z0-9.-]*)/(?P<bundle>[a-z0-9][a-z0-9.-]*)"
    r":(?P<image>[A-Za-z_][A-Za-z0-9_]*)(?::(?P<part>[a-z]+))?"
)
_DOUBLE = r'"(?:[^"\\]|\\.)*"'
_SINGLE = r"'(?:[^']|'')*'"
# A plain scalar holds no `: ` (that would make it a key) and no ` #` (a comment).
_PLAIN = r"[^\s#'\"\[\]{}|>!&*%@`](?:[^#:]|:(?![ \t]))*?"
_LINE = re.compile(
    rf"(?P<head>[ \t]*(?:-[ \t]+)*(?:(?:{_DOUBLE}|{_SINGLE}|[^\s#'\"-][^#]*?):[ \t]+)?)"
    rf"(?P<value>{_DOUBLE}|{_SINGLE}|{_PLAIN})(?P<tail>[ \t]+#.*)$"
)
# Characters a plain scalar may not start with, or hold as `: ` / ` #`.
_PLAIN_UNSAFE = re.compile(r"^[-?:,\[\]{}#&*!|>'\"%@`\s]|: |\s#|\s$")


class MarkerPart(StrEnum):
    """What a marked value holds: the full `repository:tag`, or one part of it."""

    FULL = "full"
    TAG = "tag"
    NAME = "name"
    DIGEST = "digest"


@dataclass(frozen=True)
class ImageAddress:
    """`NAMESPACE/BUNDLE:IMAGE`: one image of one Bundle."""

    namespace: str
    bundle: str
    image: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.bundle}:{self.image}"


@dataclass(frozen=True)
class Marker:
    """A marked line: where it is (1-based), the image, the part and the value as written."""

    line: int
    address: ImageAddress
    part: MarkerPart
    value: str


def find_markers(text: str, source: str) -> list[Marker]:
    """The marked lines of `text`; InvalidInputError `SOURCE:LINE` for a marker that is not
    `NAMESPACE/BUNDLE:IMAGE[:tag|:name|:digest]` or whose line holds no value it can set."""
    found: list[Marker] = []
    for number, line in enumerate(text.splitlines(), start=1):
        marker = _MARKER.search(line)
        if marker is None:
            continue
        if "/" not in marker["address"]:
            continue  # Flux's own `NAMESPACE:POLICY` marker: Flux's to update, not bundler's
        where = f"{source}:{number}"
        address, part = _parse_address(marker["address"], where)
        found.append(Marker(number, address, part, _value_of(_match_line(line, where))))
    return found


def marked_value(part: MarkerPart, repository: str, tag: str, digest: str) -> str:
    """The text a marked value gets for a resolved image."""
    return {
        MarkerPart.FULL: f"{repository}:{tag}",
        MarkerPart.TAG: tag,
        MarkerPart.NAME: repository,
        MarkerPart.DIGEST: digest,
    }[part]


def rewrite(line: str, value: str) -> str:
    """`line` (a marked line, without its newline) with its value replaced by `value`, in the
    same quoting style where that can hold it."""
    match = _LINE.match(line)
    assert match is not None, "rewrite takes a line find_markers accepted"
    written = match["value"]
    return f"{match['head']}{_quoted_like(written, value)}{match['tail']}"


def _parse_address(text: str, where: str) -> tuple[ImageAddress, MarkerPart]:
    match = _ADDRESS.fullmatch(text)
    parts = {p.value for p in MarkerPart if p is not MarkerPart.FULL}
    if match is None or (match["part"] is not None and match["part"] not in parts):
        raise InvalidInputError(
            f"image policy marker {text!r} is not NAMESPACE/BUNDLE:IMAGE[:tag|:name|:digest]",
            obj=where,
        )
    address = ImageAddress(match["namespace"], match["bundle"], match["image"])
    return address, MarkerPart(match["part"] or MarkerPart.FULL)


def _match_line(line: str, where: str) -> re.Match[str]:
    match = _LINE.match(line)
    if match is None:
        raise InvalidInputError(
            "the image policy marker is not after a value on its line (`key: value  # {...}` "
            "or `- value  # {...}`)",
            obj=where,
        )
    return match


def _value_of(match: re.Match[str]) -> str:
    written = match["value"]
    if written.startswith('"'):
        decoded: str = json.loads(written)
        return decoded
    if written.startswith("'"):
        return written[1:-1].replace("''", "'")
    return written


def _quoted_like(written: str, value: str) -> str:
    if written.startswith("'"):
        return "'" + value.replace("'", "''") + "'"
    if written.startswith('"') or _needs_quotes(value):
        return json.dumps(value)
    return value


def _needs_quotes(value: str) -> bool:
    return not value or bool(_PLAIN_UNSAFE.search(value)) or reads_as_another_type(value)
