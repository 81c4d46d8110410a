"""One module per `bundler` sub-command group; each exposes `register(subparsers)`."""

from __future__ import annotations

from types import ModuleType

from bundler.commands import (
    agent,
    agent_kubeconfig,
    artifact,
    chart,
    cluster_register,
    dev,
    images,
    import_fleet,
    manager,
    render,
    rollout,
    sim,
    ui,
)
from bundler.commands import diff as diff_command

COMMANDS: tuple[ModuleType, ...] = (
    render,
    chart,
    artifact,
    images,
    manager,
    agent,
    agent_kubeconfig,
    sim,
    cluster_register,
    diff_command,
    dev,
    import_fleet,
    rollout,
    ui,
)
