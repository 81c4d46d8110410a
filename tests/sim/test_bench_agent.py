"""`make bench`'s agent rows on tiny clusters: every row measured, in its own process, no time
asserted."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from bundler.sim import bench_agent


def test_every_agent_row_is_measured_and_printed(tmp_path: Path) -> None:
    out = tmp_path / "agent.json"
    assert bench_agent.main(["--sizes", "2,4", "--repeat", "1", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(row["deployments"], row["what"]) for row in rows] == [
        (size, what)
        for size in (2, 4)
        for what in ("first sync", "unchanged resync", "one changed")
    ]
    first, resync, changed = rows[3:]
    assert (first["management_writes"], first["downstream_writes"]) == (5, 9)
    assert (resync["reconciles"], resync["management_requests"]) == (4, 0)
    assert (changed["management_writes"], changed["downstream_writes"]) == (1, 1)


def test_the_median_run_gives_each_row() -> None:
    runs = [
        [bench_agent.Row("first sync", 2, 2, 0.1, cpu, 2, 3, 5, 3, 9)] for cpu in (0.3, 0.1, 0.2)
    ]
    assert [asdict(row)["cpu"] for row in bench_agent.median_rows(runs)] == [0.2]
    assert bench_agent.table(runs[0])[2].startswith("| 2 | first sync | 150.000 ms per BD")
