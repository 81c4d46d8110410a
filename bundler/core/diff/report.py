"""A FleetDiff for people: text for a terminal (optionally coloured) and Markdown for a pull
request comment.

Text lists every bundle that changes, then each cluster of it: `+` created, `-` removed, `~`
changed, with the version change, the values and options by path, and the objects (with the
unified diff of each changed one). Markdown stays short enough for a comment: a table of counts per
bundle first, then one line per cluster, each with its details folded in `<details>`; beyond
`limit` clusters the rest are only named, in one folded list, and each cluster's details are cut
at a size a comment can hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from bundler.core.diff.deployments import DeploymentDiff, FleetDiff
from bundler.core.diff.manifests import ObjectChange
from bundler.core.diff.values import ChangeKind

MARKDOWN_CLUSTER_LIMIT = 20
MARKDOWN_DETAIL_CHARS = 4000
_SIGNS = {ChangeKind.ADDED: "+", ChangeKind.REMOVED: "-", ChangeKind.CHANGED: "~"}
_COLOURS = {"+": "\033[32m", "-": "\033[31m", "~": "\033[33m", "@": "\033[36m"}
_RESET = "\033[0m"


@dataclass(frozen=True)
class _Painter:
    enabled: bool

    def line(self, text: str, sign: str) -> str:
        colour = _COLOURS.get(sign)
        return f"{colour}{text}{_RESET}" if self.enabled and colour else text


def text_report(diff: FleetDiff, *, colour: bool = False) -> str:
    """The whole diff for a terminal; ANSI colours when `colour`."""
    paint = _Painter(colour)
    out: list[str] = []
    bundle = None
    for change in diff.changes:
        if change.bundle != bundle:
            bundle = change.bundle
            out.append(f"Bundle {bundle}: {_counts(diff.counts_by_bundle()[bundle])}")
        sign = _SIGNS[change.kind]
        out.append(paint.line(f"  {sign} {change.cluster}: {headline(change)}", sign))
        out.extend(f"      {line}" for line in _detail_lines(change, paint))
    out.append(_summary(diff))
    return "\n".join(out) + "\n"


def markdown_report(diff: FleetDiff, *, limit: int = MARKDOWN_CLUSTER_LIMIT) -> str:
    """The diff as a pull request comment: counts, then clusters, folded beyond `limit`."""
    out = [f"### bundler diff: {_summary(diff)}", ""]
    counts = diff.counts_by_bundle()
    if counts:
        out += ["| bundle | created | removed | changed |", "|---|---:|---:|---:|"]
        for bundle, count in counts.items():
            row = [bundle, *(str(count[w]) for w in ("created", "removed", "changed"))]
            out.append(f"| {' | '.join(row)} |")
        out.append("")
    shown, rest = diff.changes[:limit], diff.changes[limit:]
    for change in shown:
        out.extend(_markdown_cluster(change))
    if rest:
        out.append(f"<details><summary>{len(rest)} more deployments change</summary>\n")
        out.extend(f"- {_markdown_title(change)}" for change in rest)
        out.append("\n</details>")
    if diff.errors:
        out += ["", "**Errors** (these clusters are not compared):", ""]
        out.extend(f"- `{line}`" for line in diff.errors)
    return "\n".join(out) + "\n"


def headline(change: DeploymentDiff) -> str:
    """`created (chart 1.2.0)`, `removed`, `chart 1.1.0 -> 1.2.0, 2 values, 1 object`."""
    if change.kind is ChangeKind.ADDED:
        return f"created ({change.what} {change.new_version})"
    if change.kind is ChangeKind.REMOVED:
        return f"removed (was {change.what} {change.old_version})"
    parts = []
    if change.version_changed:
        parts.append(f"{change.what} {change.old_version} -> {change.new_version}")
    for count, what in (
        (len(change.values), "value"),
        (len(change.options), "option"),
        (len(change.objects), "object"),
    ):
        if count:
            parts.append(f"{count} {what}{'' if count == 1 else 's'}")
    return ", ".join(parts)


def _detail_lines(change: DeploymentDiff, paint: _Painter) -> Iterator[str]:
    for value in change.values:
        yield paint.line(f"values.{value.describe()}", _SIGNS[value.kind])
    for option in change.options:
        yield paint.line(f"options.{option.describe()}", _SIGNS[option.kind])
    for obj in change.objects:
        yield paint.line(f"{_SIGNS[obj.kind]} {obj.key}", _SIGNS[obj.kind])
        yield from (f"    {paint.line(line, line[:1])}" for line in _diff_body(obj))


def _diff_body(obj: ObjectChange) -> list[str]:
    """The unified diff without its two file header lines."""
    lines = obj.diff.splitlines()
    return lines[2:] if len(lines) > 2 else lines


def _markdown_title(change: DeploymentDiff) -> str:
    # HTML, not Markdown: GitHub renders no Markdown inside <summary>.
    sign = _SIGNS[change.kind]
    return f"<code>{sign}</code> <b>{change.bundle}</b> on <code>{change.cluster}</code>: " + (
        headline(change)
    )


def _markdown_cluster(change: DeploymentDiff) -> list[str]:
    details = list(_detail_lines(change, _Painter(False)))
    if not details:
        return [f"- {_markdown_title(change)}"]
    body = "\n".join(details)
    if len(body) > MARKDOWN_DETAIL_CHARS:
        body = body[:MARKDOWN_DETAIL_CHARS].rsplit("\n", 1)[0] + "\n... (cut; run bundler diff)"
    return [
        f"<details><summary>{_markdown_title(change)}</summary>",
        "",
        "```diff",
        body.replace("```", "'''"),
        "```",
        "</details>",
        "",
    ]


def _counts(count: dict[str, int]) -> str:
    return ", ".join(f"{count[w]} {w}" for w in ("created", "removed", "changed") if count.get(w))


def _summary(diff: FleetDiff) -> str:
    if not diff.changed:
        return f"no change ({diff.unchanged} deployments unchanged)"
    bundles = len(diff.counts_by_bundle())
    return (
        f"{len(diff.changes)} deployments change in {bundles} "
        f"bundle{'' if bundles == 1 else 's'} ({diff.unchanged} unchanged)"
    )
