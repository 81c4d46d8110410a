"""`python -m bundler.sim.bench_limits` (`make bench`): what the worst a tenant can send costs.

For each of the slowest template filters, renders a template that calls it on the largest input
the step budget allows, again and again until the budget stops the render: the time that render
takes is the most one cluster's values can cost the manager, and its peak memory (traced in a
second run) what they can hold. Then reads a generated values file of a few MB, as the offline
commands read `-f` files. Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from bundler import yamlload
from bundler.core.templating import TemplateContext, render_values
from bundler.errors import TemplateError

#: (what, template applying the filter to `s`): each is run with every size in SIZES
WORST_FILTERS = [
    ("wordwrap(1), one long word", "s | wordwrap(1)"),
    ("wordwrap(1), one-letter words", "(s | replace('aa', 'a ')) | wordwrap(1)"),
    ("title, one-letter words", "(s | replace('aa', 'a ')) | title"),
    ("striptags, `<a>` tags", "(s | replace('aaa', '<a>')) | striptags"),
    ("map('upper') over characters", "s | list | map('upper') | list"),
    ("sort of characters", "s | list | sort"),
    ("trim of 256 characters", "s | trim('b' * 255 ~ 'a')"),
    ("urlencode of a long text", "(s | replace('a', 'é')) | urlencode"),
]
#: Sizes of `s` in bytes: which one makes the slowest render depends on the filter's charge.
SIZES = (10_000, 45_000, 150_000, 300_000, 1_000_000)

CONTEXT = TemplateContext(
    cluster_name="bench",
    cluster_namespace="fleet-default",
    cluster_labels={},
    cluster_annotations={},
    cluster_values={},
    bundle_name="bench",
    bundle_namespace="fleet-default",
)


def worst_render(call: str, size: int) -> str:
    return (
        f"${{% set s = 'a' * {size} %}}"
        f"${{% for i in range(100000) %}}${{% set r = {call} %}}${{% endfor %}}"
    )


def _render_until_stopped(template: str) -> None:
    with contextlib.suppress(TemplateError):  # the budget stopped it: that is the point
        render_values({"v": template}, CONTEXT)


def measure(action: Callable[[], Any]) -> tuple[float, int]:
    """Seconds (untraced) and peak traced bytes of ``action``."""
    start = time.perf_counter()
    action()
    seconds = time.perf_counter() - start
    tracemalloc.start()
    try:
        action()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return seconds, peak


def values_file(megabytes: int) -> str:
    lines = ["apiVersion: bundler.dev/v1alpha1", "kind: Bundle", "metadata: {name: big}"]
    lines += ["spec:", "  helm:", "    values:"]
    for i in range(megabytes * 8_000):
        lines.append(f"      key{i}:\n        name: value-{i}\n        list: [1, two, {{a: b}}]")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values-mb", type=int, default=5, help="size of the values file read")
    args = parser.parse_args(argv)
    print("worst render per filter (stopped by the step budget):")
    for what, call in WORST_FILTERS:
        runs = [
            (*measure(functools.partial(_render_until_stopped, worst_render(call, size))), size)
            for size in SIZES
        ]
        seconds, peak, size = max(runs)
        print(
            f"  {what:31} {seconds:6.2f}s  peak {peak / 2**20:6.1f} MiB"
            f"  (slowest with {size // 1024} KiB input)"
        )
    text = values_file(args.values_mb)
    seconds, peak = measure(functools.partial(yamlload.load_all, text, "values.yaml"))
    size_mib = len(text) / 2**20
    print(f"reading a {size_mib:.1f} MiB values file: {seconds:.2f}s, peak {peak / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
