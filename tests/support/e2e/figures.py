"""Measuring a bundler process from outside: CPU from /proc, requests from its /metrics, the API
server's own request counter, and a file the figures are written to.

Figures are reported, never asserted: tests assert only what the run did (objects created,
statuses written). `make e2e` writes them to build/e2e-figures.json for the README and the closing
notes of the issues that ask for them.
"""

from __future__ import annotations

import contextlib
import json
import os
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[3]
FIGURES_FILE = ROOT / "build" / "e2e-figures.json"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User and system CPU the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command: state is field 3, utime 14 and stime 15 (1-based, man proc).
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def process_tree(pid: int) -> list[int]:
    """`pid` and its descendants alive now (the manager's template workers, say)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                todo.extend(int(child) for child in (task / "children").read_text().split())
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU of the process and its live descendants (one that ends meanwhile counts nothing)."""
    total = 0.0
    for member in process_tree(pid):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += cpu_seconds(member)
    return total


def tree_peak_rss_mib(pid: int) -> float:
    """The sum of each member's peak resident set (VmHWM), in MiB."""
    total_kib = 0
    for member in process_tree(pid):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total_kib += int(line.split()[1])
    return total_kib / 1024


def counter_total(text: str, name: str, **labels: str) -> float:
    """The sum of a counter's samples in Prometheus text whose labels include `labels`."""
    total = 0.0
    for family in text_string_to_metric_families(text):
        if family.name != name:
            continue
        for sample in family.samples:
            if sample.name.endswith("_total") and all(
                sample.labels.get(k) == v for k, v in labels.items()
            ):
                total += sample.value
    return total


def gauge_value(text: str, name: str) -> float:
    for family in text_string_to_metric_families(text):
        if family.name == name:
            return sum(sample.value for sample in family.samples)
    raise AssertionError(f"no metric {name}")


def scrape(address: str) -> str:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as response:
        return str(response.read().decode())


def record(section: str, figures: Mapping[str, Any]) -> None:
    """Merge `figures` under `section` into the figures file."""
    FIGURES_FILE.parent.mkdir(exist_ok=True)
    known: dict[str, Any] = {}
    if FIGURES_FILE.exists():
        known = json.loads(FIGURES_FILE.read_text())
    known[section] = dict(figures)
    FIGURES_FILE.write_text(json.dumps(known, indent=2, sort_keys=True) + "\n")
