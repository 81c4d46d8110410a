"""Which workspace objects are delivered to clusters as values: the rule of
bundler.core.management_values, over the same table the manager's tests run end to end, and which
valuesFrom entries of a Bundle name them."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from bundler.api.helm import ValuesKind
from bundler.core.management_values import delivery_refusal, management_references, refusal_message
from tests.support.builders import WS, bundle
from tests.support.values_objects import DELIVERY_RULE_CASES, management


@pytest.mark.parametrize(
    ("obj", "is_a_kubeconfig", "refusal"),
    [c[1:] for c in DELIVERY_RULE_CASES],
    ids=[c[0] for c in DELIVERY_RULE_CASES],
)
def test_the_rule(obj: dict[str, Any], is_a_kubeconfig: bool, refusal: str | None) -> None:
    kind = ValuesKind(obj["kind"])
    kubeconfigs = {"vals": f"{WS}/victim"} if is_a_kubeconfig else {}
    why = delivery_refusal(obj, kind, kubeconfigs)
    if refusal is None:
        assert why is None
        return
    assert why is not None and why.startswith(refusal.format(ws=WS))
    message = refusal_message(kind, WS, "vals", why)
    assert message.startswith(f"{kind.value} {WS}/vals is not delivered to clusters: {why}; ")
    assert "labelled bundler.dev/deliver=true are delivered" in message
    values = list(obj["data"].values())
    if kind is ValuesKind.SECRET:
        values += [base64.b64decode(v).decode(errors="replace") for v in values]
    assert values
    for value in values:
        assert value not in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"helm": {"valuesFrom": [{"kind": "Secret", "name": "down"}]}}, []),
        (
            {"helm": {"valuesFrom": [{"kind": "Secret", "name": "d"}, management("Secret", "a")]}},
            [("spec.helm.valuesFrom[1]", None, ("Secret", "a"))],
        ),
        (
            {
                "helm": {"valuesFrom": [management("ConfigMap", "base")]},
                "targets": [
                    {"clusterSelector": {}},
                    {
                        "clusterName": "x",
                        "helm": {"valuesFrom": [{**management("Secret", "t"), "optional": True}]},
                    },
                ],
            },
            [
                ("spec.helm.valuesFrom[0]", None, ("ConfigMap", "base")),
                ("spec.targets[1].helm.valuesFrom[0]", 1, ("Secret", "t")),
            ],
        ),
        (
            {"helm": {"valuesFrom": [{**management("Secret", "s"), "source": "Downstream"}]}},
            [],
        ),
    ],
    ids=["downstream-only", "spec", "spec-and-target", "explicit-downstream"],
)
def test_the_entries_a_bundle_asks_to_be_delivered(
    spec: dict[str, Any], expected: list[tuple[str, int | None, tuple[str, str]]]
) -> None:
    helm = spec.pop("helm")
    found = management_references(bundle(helm=helm, **spec))
    assert [(r.field, r.target, r.key) for r in found] == expected
