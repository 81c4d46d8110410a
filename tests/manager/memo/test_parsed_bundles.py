"""A Bundle's parsed model is kept across status writes and parsed again when its spec or
metadata change; one that does not parse is refused at every pass."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from bundler.errors import InvalidInputError
from bundler.manager.memo.parsed_bundles import ParsedBundles
from tests.support.builders import bundle

Obj = dict[str, Any]
REF = "ws/app"


def served() -> Obj:
    body = bundle([{"clusterSelector": {}}]).to_wire()
    body["metadata"].update(uid="u1", generation=1, resourceVersion="7")
    return body


def _status_written(obj: Obj) -> None:
    obj["metadata"]["resourceVersion"] = "8"
    obj["status"] = {"summary": {"desiredReady": 1}}


def _spec_changed(obj: Obj) -> None:
    obj["metadata"]["generation"] = 2
    obj["spec"]["targets"] = [{"clusterName": "one"}]


def _relabelled(obj: Obj) -> None:
    obj["metadata"]["labels"] = {"team": "b"}


def _recreated(obj: Obj) -> None:
    obj["metadata"]["uid"] = "u2"


@pytest.mark.parametrize(
    ("change", "kept"),
    [
        pytest.param(_status_written, True, id="a status write"),
        pytest.param(_spec_changed, False, id="a spec change"),
        pytest.param(_relabelled, False, id="a label change"),
        pytest.param(_recreated, False, id="deleted and created again"),
    ],
)
def test_a_bundle_is_parsed_again_only_when_what_it_was_parsed_from_changes(
    change: Callable[[Obj], None], kept: bool
) -> None:
    parsed = ParsedBundles()
    before = served()
    first = parsed.of(REF, before)
    after = copy.deepcopy(before)
    change(after)
    second = parsed.of(REF, after)
    assert (second is first) is kept
    assert second.spec.targets == parsed.of(REF, after).spec.targets


def test_a_bundle_that_does_not_parse_is_refused_each_time() -> None:
    parsed = ParsedBundles()
    broken = served()
    broken["spec"]["targets"] = [{"clusterSelector": {"matchLabels": "nope"}}]
    for _ in range(2):
        with pytest.raises(InvalidInputError, match="targets"):
            parsed.of(REF, broken)
    parsed.forget(REF)
