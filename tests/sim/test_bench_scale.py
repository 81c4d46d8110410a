"""`make bench`'s scale run on a tiny fleet: every row of the table measured, no time asserted."""

from __future__ import annotations

import json
from pathlib import Path

from bundler.commands.bench import requests_per_bd
from bundler.sim import bench_scale
from bundler.sim.bench_scale import Sizes

TINY = Sizes((4, 8), 2, 8, (2, 4), (4, 2), (4, 2), (4,), 1, 2)


def test_every_row_of_the_scale_table_is_measured(tmp_path: Path) -> None:
    results = bench_scale.measure(TINY, lambda _: None, requests_per_bd)
    assert [s["deployments"] for s in results["cold_start"]] == [8, 16]
    assert [c["clusters"] for c in results["label_change"]] == [8]
    assert results["label_change"][0]["writes"] == 2  # one BundleDeployment per bundle
    assert results["http"]["deployments"] == 8
    assert results["sim"][0]["deployments"] == 4
    rows = bench_scale.table(results)
    assert len(rows) == 2 + 2 + 1 + 3 + 1
    json.dumps(results)
