"""What a worker answers is checked before planning takes it; the object an error is about is
always the parent's own words."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.templating.images import ImageNotResolvedError
from bundler.errors import TemplateError
from bundler.templating_pool import wire
from tests.support.templating_pool.hostile import call

BAD_ANSWERS = [
    ("no-kind", {}),
    ("unknown-kind", {"result": {}}),
    ("two-kinds", {"values": {}, "error": {"message": "x", "field": None}}),
    ("values-not-a-map", {"values": [1, 2]}),
    ("error-without-message", {"error": {"field": "values.a"}}),
    ("error-message-not-text", {"error": {"message": 1, "field": None}}),
    ("error-with-its-own-object", {"error": {"message": "x", "field": None, "obj": "other"}}),
    ("held-without-image", {"held": {"reason": "r", "message": "m", "field": None}}),
    ("unknown-limit", {"limit": "disk", "field": None}),
]


@pytest.mark.parametrize("answer", [c[1] for c in BAD_ANSWERS], ids=[c[0] for c in BAD_ANSWERS])
def test_an_answer_the_worker_would_not_send_is_refused(answer: dict[str, Any]) -> None:
    with pytest.raises(wire.BadAnswerError):
        wire.checked_render(answer, call("${ 1 }"))


def test_an_error_names_the_parents_object_and_cuts_the_message() -> None:
    answer = {"error": {"message": "x" * 10_000, "field": "values.a"}}
    error = wire.checked_render(answer, call("${ 1 }", "mine"))
    assert isinstance(error, TemplateError)
    assert error.obj == "Bundle ws/app for Cluster ws/mine"
    assert len(error.message) == wire.MAX_MESSAGE_CHARS


def test_a_held_answer_is_an_image_not_resolved() -> None:
    answer = {"held": {"image": "web", "reason": "NoMatch", "message": "m", "field": "values.v"}}
    held = wire.checked_render(answer, call("${ images.web }"))
    assert isinstance(held, ImageNotResolvedError)
    assert (held.image, held.reason, held.field) == ("web", "NoMatch", "values.v")


BAD_READS = [
    ("no-templated", {"paths": []}),
    ("paths-not-a-list", {"templated": True, "paths": "cluster"}),
    ("a-path-of-maps", {"templated": True, "paths": [[{"a": 1}]]}),
    ("a-path-of-bools", {"templated": True, "paths": [[True]]}),
]


@pytest.mark.parametrize("answer", [c[1] for c in BAD_READS], ids=[c[0] for c in BAD_READS])
def test_read_paths_are_names_and_indexes(answer: dict[str, Any]) -> None:
    with pytest.raises(wire.BadAnswerError):
        wire.checked_reads(answer)
