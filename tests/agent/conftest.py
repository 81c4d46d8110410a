"""An agent world in memory: the management store, one downstream cluster with the simulated Flux,
one agent, all on a runtime Host with a ManualClock, so every test is deterministic. The fixtures
live in tests.support.agent.world beside the AgentWorld they give."""

from __future__ import annotations

from tests.support.agent.world import clock, make_world, world  # noqa: F401
