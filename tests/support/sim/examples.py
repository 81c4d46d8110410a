"""The examples `bundler sim` runs in its tests, and its flags for a Flux without delay."""

from __future__ import annotations

from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
FAST = ["--flux-delay", "0"]
