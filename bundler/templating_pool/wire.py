"""What the parent and a template worker say to each other, in frames of JSON (bundler.bounded).

A request is one JSON object:

- ``{"kind": "reads", "bundle": "ns/name", "values": {...}}``: what the templates of a values
  tree read; one answer ``{"templated": bool, "paths": [[...], ...] | null}``.
- ``{"kind": "render", "trees": [{...}, ...], "renders": [{"tree": i, "context": {...}}, ...]}``:
  a batch (each distinct values tree sent once); one answer per render, in order:
  ``{"values": {...}}``, ``{"error": {"message", "field"}}``, ``{"held": {"image", "reason",
  "message", "field"}}`` (an image without a resolution), or ``{"limit": "memory", "field"}``.

The parent checks every answer before it uses it (bundler.bounded.frames checks the JSON
itself): a field of the wrong type, or an answer of no known kind, is not the worker speaking
(:class:`BadAnswerError`). The object an error is about is always the parent's own words, never
the worker's, and messages are cut to :data:`MAX_MESSAGE_CHARS`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from bundler.core.templating.images import ImageNotResolvedError, ImageView, UnresolvedImage
from bundler.core.templating.reads import ReadPath, ValuesReads
from bundler.core.templating.render import TemplateContext
from bundler.core.templating.templater import RenderAnswer, RenderCall
from bundler.errors import TemplateError

MAX_MESSAGE_CHARS = 4096
#: What a worker answers when its render ran out of memory.
MEMORY = "memory"


class BadAnswerError(Exception):
    """An answer that is not one the worker would send."""


# -- requests (the parent writes, the worker reads) ----------------------------------------------


def reads_request(bundle: str, values: Mapping[str, Any]) -> bytes:
    return dumps({"kind": "reads", "bundle": bundle, "values": values})


def render_request(calls: Sequence[RenderCall]) -> bytes:
    """One batch; a values tree shared by several calls (the same object) is sent once."""
    trees: list[Mapping[str, Any]] = []
    index_of: dict[int, int] = {}
    renders = []
    for call in calls:
        tree = index_of.get(id(call.tree))
        if tree is None:
            tree = index_of[id(call.tree)] = len(trees)
            trees.append(call.tree)
        renders.append({"tree": tree, "context": _context_wire(call.context)})
    return dumps({"kind": "render", "trees": trees, "renders": renders})


def _context_wire(context: TemplateContext) -> dict[str, Any]:
    return {
        "cluster": [context.cluster_namespace, context.cluster_name],
        "bundle": [context.bundle_namespace, context.bundle_name],
        "labels": context.cluster_labels,
        "annotations": context.cluster_annotations,
        "values": context.cluster_values,
        "images": {name: _image_wire(view) for name, view in context.images.items()},
    }


def _image_wire(view: ImageView) -> dict[str, Any]:
    if isinstance(view, UnresolvedImage):
        return {"unresolved": [view.reason, view.message]}
    return {"fields": dict(view)}


def context_from_wire(wire: Mapping[str, Any]) -> TemplateContext:
    """The worker's side of `_context_wire`: the parent's request, trusted as such."""
    images: dict[str, ImageView] = {}
    for name, image in wire["images"].items():
        unresolved = image.get("unresolved")
        images[name] = UnresolvedImage(*unresolved) if unresolved else dict(image["fields"])
    return TemplateContext(
        cluster_namespace=wire["cluster"][0],
        cluster_name=wire["cluster"][1],
        cluster_labels=wire["labels"],
        cluster_annotations=wire["annotations"],
        cluster_values=wire["values"],
        bundle_namespace=wire["bundle"][0],
        bundle_name=wire["bundle"][1],
        images=images,
    )


# -- answers (the worker writes, the parent checks) ---------------------------------------------


def answer_of(rendered: RenderAnswer) -> dict[str, Any]:
    """The worker's answer for one render."""
    if isinstance(rendered, ImageNotResolvedError):
        held = {"image": rendered.image, "reason": rendered.reason, "message": rendered.detail}
        return {"held": {**held, "field": rendered.field}}
    if isinstance(rendered, TemplateError):
        return {"error": {"message": rendered.message, "field": rendered.field}}
    return {"values": rendered}


def memory_answer(field: str | None) -> dict[str, Any]:
    return {"limit": MEMORY, "field": field}


def reads_answer(reads: ValuesReads) -> dict[str, Any]:
    paths = None if reads.paths is None else [list(path) for path in reads.paths]
    return {"templated": reads.templated, "paths": paths}


def checked_render(answer: Mapping[str, Any], call: RenderCall) -> RenderAnswer | str:
    """One render's answer as planning takes it; a str is the limit the worker said it hit
    (with the path in the values, if any: see `checked_field`). Raises BadAnswerError."""
    obj = call.context.describe()
    if set(answer) == {"values"}:
        values = answer["values"]
        if not isinstance(values, dict):
            raise BadAnswerError("rendered values that are not a map")
        return values
    if set(answer) == {"error"}:
        error = _fields(answer["error"], {"message": True, "field": False})
        return TemplateError(error["message"], obj=obj, field=error["field"])
    if set(answer) == {"held"}:
        held = _fields(
            answer["held"], {"image": True, "reason": True, "message": True, "field": False}
        )
        return ImageNotResolvedError(
            held["image"], held["reason"], held["message"], obj=obj, field=held["field"]
        )
    if set(answer) == {"limit", "field"} and answer["limit"] == MEMORY:
        return MEMORY
    raise BadAnswerError("an answer of no known kind")


def checked_field(answer: Mapping[str, Any]) -> str | None:
    """The values path a limit answer names."""
    field = answer.get("field")
    if field is not None and not isinstance(field, str):
        raise BadAnswerError("a path that is not text")
    return None if field is None else field[:MAX_MESSAGE_CHARS]


def checked_reads(answer: Mapping[str, Any]) -> ValuesReads:
    """What a values tree's templates read, as the worker answered. Raises BadAnswerError."""
    templated, paths = answer.get("templated"), answer.get("paths")
    if set(answer) != {"templated", "paths"} or not isinstance(templated, bool):
        raise BadAnswerError("an answer of no known kind")
    if paths is None:
        return ValuesReads(templated, None)
    if not isinstance(paths, list):
        raise BadAnswerError("read paths that are not a list")
    checked: list[ReadPath] = []
    for path in paths:
        if not isinstance(path, list) or not all(
            isinstance(step, str | int) and not isinstance(step, bool) for step in path
        ):
            raise BadAnswerError("a read path that is not names and indexes")
        checked.append(tuple(path))
    return ValuesReads(templated, tuple(checked))


def _fields(value: Any, wanted: Mapping[str, bool]) -> dict[str, Any]:
    """`value` as a map of exactly the `wanted` text fields (True: required, False: or null)."""
    if not isinstance(value, dict) or set(value) != set(wanted):
        raise BadAnswerError("an answer of no known kind")
    for name, required in wanted.items():
        if not isinstance(value[name], str) and (required or value[name] is not None):
            raise BadAnswerError(f"{name} is not text")
    return {
        name: None if text is None else text[:MAX_MESSAGE_CHARS] for name, text in value.items()
    }


def dumps(value: Any) -> bytes:
    """An answer or request as a frame's bytes (ASCII: a lone surrogate in some input travels
    as its escape, and the render reports it)."""
    return json.dumps(value, separators=(",", ":")).encode("ascii")
