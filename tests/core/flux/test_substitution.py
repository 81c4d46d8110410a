"""Flux's postBuild substitution as previews evaluate it: the default (not strict) mode, where a
variable not given is set to the empty string."""

from __future__ import annotations

import pytest

from bundler.core.flux.substitution import check_names, substitute
from bundler.errors import InvalidInputError

VARIABLES = {"cluster": "edge-1", "region": "eu", "empty": ""}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("name: ${cluster}", "name: edge-1", id="variable"),
        pytest.param("${cluster}-${region}", "edge-1-eu", id="two-in-a-row"),
        pytest.param("x: ${missing}", "x: ", id="not-given-is-empty"),
        pytest.param("${missing:=d}/${empty:-d}", "d/d", id="colon-default-when-empty"),
        pytest.param("${missing=d}/${missing-d}", "/", id="plain-default-never-when-not-strict"),
        pytest.param("${region:=x}", "eu", id="set-value-wins"),
        pytest.param("${missing:=${cluster}-x}", "edge-1-x", id="nested-default"),
        pytest.param("$${cluster} costs $$5", "${cluster} costs $5", id="escapes"),
        pytest.param("price: $5 {x}", "price: $5 {x}", id="lone-dollar-and-braces"),
    ],
)
def test_substitute(text: str, expected: str) -> None:
    assert substitute(text, VARIABLES, obj="ConfigMap app") == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param("${cluster^^}", "on the cluster only", id="string-function"),
        pytest.param("${#cluster}", "not an expression", id="length"),
        pytest.param("${missing:=open", "no closing", id="unclosed-default"),
    ],
)
def test_refused_expressions_name_the_object(text: str, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says) as raised:
        substitute(text, VARIABLES, obj="ConfigMap app")
    assert str(raised.value).startswith("ConfigMap app: postBuild.substitute:")


@pytest.mark.parametrize("name", ["1st", "with-dash", "dot.ted"])
def test_names_flux_refuses(name: str) -> None:
    with pytest.raises(InvalidInputError, match=repr(name)):
        check_names({name: "x"}, obj="Bundle ws/app")
