"""The child of bundler.manifests.sandbox: renders the releases it is sent with helm-python-sdk.

Run as `python -m bundler.manifests.sandbox_child MEMORY_MIB`. It limits its own data memory
(RLIMIT_DATA) before Helm's Go runtime loads, keeps its stdout for answers (anything else printing
to it would corrupt the frames, so fd 1 is pointed at stderr), says it is ready, then answers one
request at a time until its stdin closes. A parent that dies without killing it (SIGKILL) cannot
close its stdin while a render loops, so a thread exits the child when its parent is gone.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

from bundler.bounded.child import exit_when_orphaned
from bundler.bounded.frames import read_frame, write_frame
from bundler.errors import TemplateError


def main(argv: list[str]) -> int:
    limit = int(argv[0]) << 20
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    # ctypes releases the GIL while Go renders, so the watching thread runs even as a template
    # loops (the kernel's parent-death signal would follow the parent's thread, not its process)
    exit_when_orphaned(os.getppid())
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    import helm_python  # noqa: F401  (Helm's Go runtime starts here, before the child is ready)

    write_frame(answers, json.dumps({"ready": True}).encode())
    while (frame := read_frame(sys.stdin.buffer)) is not None:
        write_frame(answers, json.dumps(_rendered(frame)).encode())
    return 0


def _rendered(frame: bytes) -> dict[str, Any]:
    """The answer to one request: {"text": ...} cut after its "max_chars" + 1 characters,
    {"error": why it failed} or {"memory": true}."""
    from bundler.manifests.engine import ReleaseInput, sdk_render

    request: dict[str, Any] = json.loads(frame)
    max_chars = int(request.pop("max_chars"))
    release = ReleaseInput(**{**request, "chart": Path(request["chart"])})
    try:
        return {"text": sdk_render(release)[: max_chars + 1]}
    except TemplateError as err:
        return {"error": err.message}
    except MemoryError:
        return {"memory": True}
    except Exception as err:  # a child that dies would tell the user less than this line
        return {"error": f"Helm's engine failed: {type(err).__name__}: {err}"}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
