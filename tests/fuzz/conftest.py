"""Hypothesis settings of the fuzzing harness: a bounded, reproducible run in `make test`, a long
random one under `make fuzz`.

`BUNDLER_FUZZ_EXAMPLES` (what `make fuzz` sets, default 20000 there) turns the long run on: that
many examples per target, fresh randomness, and Hypothesis's example database under
`.hypothesis/` (ignored by git), so a failure found is replayed first next time. Without it each
target runs FUZZ_BOUNDED_EXAMPLES examples, derandomized (the same ones on every machine) and with
no database: `make test` never depends on what an earlier run found. A failure either way is kept
for good by adding its input to `corpus/` (the corpus cases run on every `make test`).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

FUZZ_BOUNDED_EXAMPLES = 40
_LONG = os.environ.get("BUNDLER_FUZZ_EXAMPLES")

settings.register_profile(
    "bounded",
    max_examples=FUZZ_BOUNDED_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "fuzz",
    max_examples=int(_LONG) if _LONG else FUZZ_BOUNDED_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("fuzz" if _LONG else "bounded")
