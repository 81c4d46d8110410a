"""`python -m bundler.sim.bench_limits` (`make bench`): what the worst a tenant can send costs.

For each of the slowest template filters, renders a template that calls it on the largest input
the step budget allows, again and again until the budget stops the render: the time that render
takes is the most one cluster's values can cost, and its peak memory (traced in a second run) what
they can hold. Then the other worst cases found (`WORST_TEMPLATES`: slices, compiling, loops of
cheap operations, memory held, long integers, the largest output, a refused codec), in process and
through a template worker under the default limits (bundler.templating_pool: a fresh worker each,
its CPU time and peak RSS, the interpreter's ~20 MiB included). Then reads a generated values file
of a few MB, as the offline commands read `-f` files. Figures only: nothing here asserts a time.
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
from bundler.core.templating.templater import RenderCall
from bundler.errors import TemplateError
from bundler.templating_pool import TemplatePool

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


def _loop(body: str, times: int = 100_000) -> str:
    return f"${{% for i in range({times}) %}}{body}${{% endfor %}}"


def _cheap_body(item: str, count: int) -> str:
    return "${% set x = [" + ",".join([item] * count) + "] %}"


#: (what, template): the other worst cases, each as far as the step budget lets it go.
WORST_TEMPLATES = [
    ("slice of 1 MB in a loop", "${% set s = 'a' * 1000000 %}" + _loop("${% set r = s[1:] %}")),
    ("compiling 15,000 tokens", "x" + "${ 1 }" * 3000),
    ("loop of 1,000 comparisons", _loop(_cheap_body("i == 1", 1000))),
    ("loop of 100 lookups", _loop(_cheap_body("cluster.values.tier", 100))),
    ("loop of one comparison", _loop("${% set x = i == 1 %}")),
    ("95 strings of 1 MB held", "".join(f"${{% set a{i} = 'x' * 1000000 %}}" for i in range(95))),
    ("division of a 4,000-digit int", "${% set a = 10 ** 4000 %}" + _loop("${% set r = a // 7 %}")),
    ("1 MB of output", "${ 'x' * 1040000 }"),
    ("punycode (refused)", "${ ('é' * 20000).encode('punycode') }"),
]

CONTEXT = TemplateContext(
    cluster_name="bench",
    cluster_namespace="fleet-default",
    cluster_labels={},
    cluster_annotations={},
    cluster_values={"tier": "gold"},
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


def through_a_worker(template: str) -> tuple[float, float, float, str]:
    """(wall s, the worker's CPU s, its peak RSS MiB, how the render ended) in a fresh worker
    under the default limits."""
    pool = TemplatePool()
    try:
        pool.start()
        cpu = pool.cpu_seconds()
        start = time.perf_counter()
        (answer,) = pool.render([RenderCall({"v": template}, CONTEXT)])
        wall = time.perf_counter() - start
        cpu = pool.cpu_seconds() - cpu
        peak = pool.peak_rss_mib()
    finally:
        pool.close()
    ended = type(answer).__name__ if isinstance(answer, TemplateError) else "rendered"
    return wall, cpu, peak, ended


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
    worst: list[tuple[str, str]] = []
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
        worst.append((what, worst_render(call, size)))
    print("other worst cases, in process:")
    for what, template in WORST_TEMPLATES:
        seconds, peak = measure(functools.partial(_render_until_stopped, template))
        print(f"  {what:31} {seconds:6.2f}s  peak {peak / 2**20:6.1f} MiB")
        worst.append((what, template))
    print("each through a fresh template worker (default limits: 256 MiB, 10 s):")
    for what, template in worst:
        wall, cpu, rss, ended = through_a_worker(template)
        print(f"  {what:31} {wall:6.2f}s wall  {cpu:6.2f}s CPU  peak RSS {rss:6.1f} MiB  {ended}")
    text = values_file(args.values_mb)
    seconds, peak = measure(functools.partial(yamlload.load_all, text, "values.yaml"))
    size_mib = len(text) / 2**20
    print(f"reading a {size_mib:.1f} MiB values file: {seconds:.2f}s, peak {peak / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
