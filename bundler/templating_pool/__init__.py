"""Values rendered in worker processes the operating system bounds (design §8).

The step budget of bundler.core.templating refuses what it can foresee, quickly and with a
friendly message; whatever it misses is stopped here. Renders run in a small pool of worker
processes (:mod:`~bundler.templating_pool.pool`), started once per process and reused, each
render under a memory limit (RLIMIT_DATA), a CPU-time limit (RLIMIT_CPU) and a wall deadline
(:mod:`~bundler.templating_pool.limits`). A worker that hits one is replaced, and that render
becomes a :class:`~bundler.errors.TemplateLimitExceeded` of its cluster alone, naming the Bundle,
the values path and the limit. :mod:`~bundler.templating_pool.wire` is what parent and worker
say to each other, :mod:`~bundler.templating_pool.worker` the worker's side,
:mod:`~bundler.templating_pool.process` one worker as the parent sees it.
"""

from bundler.templating_pool.limits import TemplateLimits
from bundler.templating_pool.pool import TemplatePool, shared_pool

__all__ = ["TemplateLimits", "TemplatePool", "shared_pool"]
