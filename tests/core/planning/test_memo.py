"""Planning renders once per distinct template input, and gives every cluster what a fresh render
of its own would give."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.api.bundle import Bundle
from bundler.core.planning import plan_bundle, template_context
from bundler.core.planning.memo import memo_of
from bundler.core.templating import render_values
from bundler.errors import TemplateError
from tests.support.builders import bundle, cluster, helm_of

REGIONS = ("eu", "us", "ap")
FLEET = [
    cluster(
        f"c-{i}",
        {"region": REGIONS[i % 3], "env": "prod" if i % 2 else "dev"}
        | ({"tier": "a"} if i % 5 else {}),
        values={"size": i % 2, "hosts": [f"h{i % 4}"]},
    )
    for i in range(30)
]


def _plan(values: dict[str, Any], **helm: Any) -> Any:
    return plan_bundle(
        bundle([{"clusterSelector": {}}], helm={"values": values, **helm}), FLEET, []
    )


def _distinct_options(plan: Any) -> int:
    return len({id(d.options) for d in plan.deployments})


@pytest.mark.parametrize(
    ("values", "distinct"),
    [
        pytest.param({"a": 1, "b": "plain"}, 1, id="no templates: one options for all"),
        pytest.param({"r": "${ cluster.labels.region }"}, 3, id="one label: one per region"),
        pytest.param({"r": "${ ClusterLabels['region'] | upper }"}, 3, id="Fleet spelling, item"),
        pytest.param({"${ cluster.labels.region }-key": 1}, 3, id="templated key"),
        pytest.param({"e": "${ cluster.labels.env }/${ cluster.labels.region }"}, 6, id="two"),
        pytest.param({"t": '${ cluster.labels.tier | default("none") }'}, 2, id="missing label"),
        pytest.param({"n": "${ cluster.name }"}, 30, id="the name: one per cluster"),
        pytest.param({"s": "${ cluster.values.size }"}, 2, id="cluster values"),
        pytest.param({"h": "${ cluster.values.hosts[0] }"}, 4, id="list item: the list"),
        # a map's method, a computed key: the whole map is the input (3 x 2 x 2 label sets)
        pytest.param({"l": "${ cluster.labels.items() | list | length }"}, 12, id="map method"),
        pytest.param({"k": "${ cluster.labels[cluster.labels.env] | default(0) }"}, 12, id="key"),
        pytest.param({"x": "${% set c = cluster %}${ c.labels.region }"}, 30, id="whole variable"),
        pytest.param({"v": "$${ cluster.name }"}, 1, id="escaped: no template"),
    ],
)
def test_renders_once_per_distinct_input_and_as_a_fresh_render(
    values: dict[str, Any], distinct: int
) -> None:
    b = bundle([{"clusterSelector": {}}], helm={"values": values})
    plan = plan_bundle(b, FLEET, [])
    by_name = {c.metadata.name: c for c in FLEET}
    for planned in plan.deployments:
        own = render_values(values, template_context(b, by_name[planned.cluster.split("/")[1]]))
        assert helm_of(planned.options).values == own
    assert _distinct_options(plan) == distinct


def test_disable_templating_renders_nothing_and_shares_options() -> None:
    plan = _plan({"n": "${ cluster.name }"}, disableTemplating=True)
    assert {d.options.helm.values["n"] for d in plan.deployments} == {"${ cluster.name }"}
    assert _distinct_options(plan) == 1


def test_template_errors_name_their_own_cluster() -> None:
    plan = _plan({"t": "${ cluster.labels.tier }"})
    failing = sorted(e.cluster.split("/")[1] for e in plan.errors)
    assert failing == sorted(c.metadata.name for c in FLEET if "tier" not in c.metadata.labels)
    for error in plan.errors:
        assert error.cluster.split("/")[1] in error.message


def test_a_step_limit_failure_repeats_for_every_cluster_it_concerns() -> None:
    heavy = "${% for i in range(10000) %}${% for j in range(20) %}${% endfor %}${% endfor %}"
    plan = _plan({"r": "${ cluster.labels.region }", "h": heavy})
    assert not plan.deployments
    assert len(plan.errors) == len(FLEET)


def test_deployment_ids_match_options_whatever_the_sharing() -> None:
    shared = _plan({"r": "${ cluster.labels.region }"})
    ids = {d.options.helm.values["r"]: d.deployment_id for d in shared.deployments}
    assert len(set(ids.values())) == len(REGIONS)
    for d in shared.deployments:
        assert d.deployment_id == ids[d.options.helm.values["r"]]


def test_a_model_without_uid_and_generation_has_its_own_memo() -> None:
    one = bundle([{"clusterSelector": {}}], helm={"values": {"a": 1}})
    two = bundle([{"clusterSelector": {}}], helm={"values": {"a": 2}})
    assert memo_of(one) is memo_of(one)
    assert memo_of(one) is not memo_of(two)
    assert helm_of(plan_bundle(two, FLEET, []).deployments[0].options).values == {"a": 2}


def _read(values: dict[str, Any], generation: int) -> Bundle:
    """The Bundle as read from the API: a new model on every read, with uid and generation."""
    body = bundle([{"clusterSelector": {}}], helm={"values": values}).to_wire()
    body["metadata"].update(uid="uid-memo", generation=generation)
    return Bundle.model_validate(body)


def test_models_of_one_generation_share_a_memo_and_a_new_generation_replaces_it() -> None:
    first, again = _read({"a": 1}, 1), _read({"a": 1}, 1)
    assert memo_of(first) is memo_of(again)
    assert plan_bundle(again, FLEET, []).deployments[0].options is (
        plan_bundle(first, FLEET, []).deployments[0].options
    )
    changed = _read({"a": 2}, 2)
    assert memo_of(changed) is not memo_of(first)
    assert helm_of(plan_bundle(changed, FLEET, []).deployments[0].options).values == {"a": 2}


def test_rendered_values_are_not_aliased_by_a_fresh_plan() -> None:
    values = {"r": "${ cluster.labels.region }", "m": {"k": [1, 2]}}
    first = _plan(values)
    with pytest.raises(TemplateError):
        render_values({"x": "${ nope }"}, template_context(bundle(), FLEET[0]))
    again = _plan(values)
    assert [d.options.helm.values for d in first.deployments] == [
        d.options.helm.values for d in again.deployments
    ]
