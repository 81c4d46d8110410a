from __future__ import annotations

import pytest

from bundler.core.templating.environment import ENVIRONMENT
from bundler.core.templating.reads import ReadPath, read_key, reads_of

VARIABLES = {"cluster": {"name": "c1", "labels": {"region": "eu"}}, "ClusterName": "c1"}


@pytest.mark.parametrize(
    ("source", "reads"),
    [
        pytest.param("plain", set(), id="no expression"),
        pytest.param("${ cluster.labels.region }", {("cluster", "labels", "region")}, id="chain"),
        pytest.param("${ cluster['labels'][0] }", {("cluster", "labels", 0)}, id="const items"),
        pytest.param(
            "${ cluster.labels[ClusterName].x }",
            {("cluster", "labels"), ("ClusterName",)},
            id="computed item: the map whole",
        ),
        pytest.param(
            "${% for k in cluster.labels %}${ k }${% endfor %}",
            {("cluster", "labels"), ("k",)},
            id="loop",
        ),
        pytest.param("${ range(3) | list }", {("range",)}, id="a global"),
    ],
)
def test_reads_of(source: str, reads: set[ReadPath]) -> None:
    assert reads_of(ENVIRONMENT.parse(source)) == reads


@pytest.mark.parametrize(
    ("path", "part"),
    [
        pytest.param(("cluster", "labels", "region"), "eu", id="a label"),
        pytest.param(("cluster", "labels", "zone"), ("missing",), id="missing"),
        pytest.param(("cluster", "labels", "items"), ("json", '{"region":"eu"}'), id="map method"),
        pytest.param(("cluster", "name", "upper"), "c1", id="past plain data"),
        pytest.param(("cluster", "labels"), ("json", '{"region":"eu"}'), id="a map"),
    ],
)
def test_read_key(path: ReadPath, part: object) -> None:
    assert read_key((path,), VARIABLES) == (part,)


def test_read_key_of_a_value_neither_data_nor_hashable_is_none() -> None:
    assert read_key((("x",),), {"x": {1, 2}}) is None


def test_a_value_object_is_its_own_key_part() -> None:
    answer = (1, "frozen")  # hashable, not JSON text
    assert read_key((("x",),), {"x": {"a": answer}}) == (("json", '{"a":[1,"frozen"]}'),)
    assert read_key((("x",),), {"x": frozenset({1})}) == (("value", frozenset({1})),)
