"""One module per `bundler` sub-command group; each exposes `register(subparsers)`."""

from __future__ import annotations

from types import ModuleType

from bundler.commands import chart, render

COMMANDS: tuple[ModuleType, ...] = (render, chart)
