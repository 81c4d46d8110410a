"""The pure core: selectors, targeting, templating, options, IDs, rollout, state, Flux objects. No
I/O.
"""
