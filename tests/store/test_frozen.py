from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from typing import Any

import pytest

from bundler.store.frozen import FrozenDict, FrozenList, freeze
from bundler.store.mergepatch import json_copy

VALUE = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"list": [1, {"k": "v"}]}}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda v: v.__setitem__("new", 1), id="set a key"),
        pytest.param(lambda v: v["metadata"].__delitem__("name"), id="delete a key"),
        pytest.param(lambda v: v["metadata"]["labels"].update(y="2"), id="update"),
        pytest.param(lambda v: v.setdefault("status", {}), id="setdefault"),
        pytest.param(lambda v: v.pop("spec"), id="pop"),
        pytest.param(lambda v: v["metadata"].clear(), id="clear"),
        pytest.param(lambda v: v["spec"]["list"].append(2), id="append"),
        pytest.param(lambda v: v["spec"]["list"].__setitem__(0, 2), id="set an item"),
        pytest.param(lambda v: v["spec"]["list"][1].__setitem__("k", "w"), id="nested map"),
        pytest.param(lambda v: v["spec"]["list"].sort(), id="sort"),
    ],
)
def test_frozen_values_refuse_every_change(change: Callable[[Any], object]) -> None:
    frozen = freeze(VALUE)
    with pytest.raises(TypeError, match="read-only"):
        change(frozen)
    assert frozen == VALUE


def test_frozen_values_read_write_and_copy_as_plain_json() -> None:
    frozen = freeze(VALUE)
    assert isinstance(frozen, dict) and isinstance(frozen["spec"]["list"], list)
    assert json.loads(json.dumps(frozen)) == VALUE
    for thawed in (json_copy(frozen), copy.deepcopy(frozen), pickle.loads(pickle.dumps(frozen))):
        assert thawed == VALUE
        assert type(thawed) is dict and type(thawed["spec"]["list"]) is list
        assert type(thawed["spec"]["list"][1]) is dict
        thawed["spec"]["list"].append(2)
    assert type(copy.copy(frozen)) is dict and type(copy.copy(frozen["spec"]["list"])) is list


def test_freezing_shares_frozen_parts() -> None:
    frozen = freeze(VALUE)
    assert freeze(frozen) is frozen
    again = freeze({**frozen, "status": {"ready": True}})
    assert type(again) is FrozenDict and again["spec"] is frozen["spec"]
    assert type(again["status"]) is FrozenDict
    assert type(freeze([(1, 2)])[0]) is FrozenList
