"""`make bench`'s scale run on a tiny fleet: every row of the table measured on every fleet shape,
no time asserted."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from bundler.commands.bench import requests_per_bd
from bundler.sim import bench_scale
from bundler.sim.bench_scale import Sizes
from bundler.sim.shapes import Shape

TINY = Sizes((8,), 2, 8, (2, 4), (4, 2), (4, 2), (4,), 1, 2)


# a fresh process per cold start and shape: slow to start on a loaded machine, not a timing
@pytest.mark.timeout(900)
def test_every_row_of_the_scale_table_is_measured_on_every_shape(tmp_path: Path) -> None:
    results = bench_scale.measure(TINY, lambda _: None, requests_per_bd)
    assert list(results["shapes"]) == [shape.value for shape in Shape]
    for shape, rows in results["shapes"].items():
        assert [s["deployments"] for s in rows["cold_start"]] == [16], shape
        assert [c["clusters"] for c in rows["label_change"]] == [8], shape
        assert rows["planning"]["us_per_bd"] > 0, shape
        assert rows["memory"]["bytes_per_bd"] > 0, shape
    # the bench shape's label is one every Bundle reads: one BundleDeployment per bundle
    assert results["shapes"]["bench"]["label_change"][0]["writes"] == 2
    assert results["http"]["deployments"] == 8
    assert results["sim"][0]["deployments"] == 4
    rows = bench_scale.table(results)
    assert len(rows) == 2 + len(Shape) * (1 + 1 + 1 + 1) + 1 + 1
    json.dumps(results)


def test_a_spawned_cold_start_reports_its_own_peak_memory_not_its_parents() -> None:
    """Linux keeps ru_maxrss across fork and exec: a row measured after the heavy shape's
    planning reported that parent's 14 GiB as its own peak."""
    held = bytearray(512 << 20)  # the parent's peak: at least 512 MiB, every page touched
    held[:: 1 << 12] = b"x" * len(held[:: 1 << 12])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        child = pool.apply(bench_scale.peak_rss_mib)
    assert bench_scale.peak_rss_mib() >= 512
    assert 0 < child < 512
