"""A Bundle's rendered values are bounded across all its clusters: renders past its allowance are
that cluster's TemplateLimitExceeded, renders shared by several clusters are charged once."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.core.planning import render_many
from bundler.core.planning.held import HELD_LIMIT, HeldBytes, rendered_bytes
from bundler.core.targeting import match_targets
from bundler.errors import TemplateLimitExceeded
from tests.support.builders import bundle, cluster

CLUSTERS = [cluster(f"c-{i}", {"region": ("eu", "us")[i % 2]}) for i in range(6)]
#: 1,000 bytes of text and the cluster's name: about 1 KiB rendered for each cluster.
KIB_BY_NAME = {"blob": "x" * 1000 + "${ cluster.name }"}
KIB_BY_REGION = {"blob": "x" * 1000 + "${ cluster.labels.region }"}
ONE_RENDER = rendered_bytes({"values": {"blob": "x" * 1000 + "c-0"}})


def _render(values: dict[str, Any], held: HeldBytes) -> list[Any]:
    made = bundle([{"clusterSelector": {}}], helm={"values": values})
    targeted = [(c, match_targets(made, c, [])) for c in CLUSTERS]
    return render_many(made, targeted, {}, held=held)


@pytest.mark.parametrize(
    ("values", "limit", "already", "refused"),
    [
        pytest.param(KIB_BY_NAME, 64 << 20, 0, 0, id="far within the allowance"),
        pytest.param(KIB_BY_NAME, 4 * ONE_RENDER, 0, 2, id="each cluster its own: the last two"),
        pytest.param(KIB_BY_NAME, 4 * ONE_RENDER, 3 * ONE_RENDER, 5, id="others already hold"),
        pytest.param(KIB_BY_REGION, 2 * ONE_RENDER, 0, 0, id="two regions: charged twice only"),
        pytest.param(KIB_BY_REGION, ONE_RENDER, 0, 3, id="the second region refused"),
    ],
)
def test_renders_past_the_allowance_are_refused(
    values: dict[str, Any], limit: int, already: int, refused: int
) -> None:
    held = HeldBytes(limit, already)
    answers = _render(values, held)
    errors = [a for a in answers if isinstance(a, TemplateLimitExceeded)]
    assert len(errors) == refused
    assert held.held <= limit
    for error in errors:
        assert error.limit == HELD_LIMIT
        assert "--template-bundle-memory" in str(error)
        assert "for Cluster" in str(error)


def test_what_each_cluster_was_charged_adds_up() -> None:
    held = HeldBytes(64 << 20)
    _render(KIB_BY_REGION, held)
    assert sorted(held.charged) == [0, 1]
    assert sum(held.charged.values()) == held.held
