"""`python -m bundler.manifests.bench`: the cost of bounding Helm's engine, as figures."""

from __future__ import annotations

import pytest

from bundler.manifests import bench

pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's Go SDK) is not installed")


def test_the_bench_prints_both_ways_the_overhead_and_the_child_start(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench.main(["--renders", "2"]) == 0
    rows = [line.split("  ")[1].strip() for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [
        "in process (unbounded)",
        "in the child (bounded)",
        "overhead per render",
        "first render, child start",
    ]
