"""Free loopback ports for components that cannot be told to pick one (kube-apiserver's
--secure-port, source-controller's --storage-addr): the kernel picks one, the harness hands it on.

A port handed out is never handed out again in this process, so two components started together
cannot be given the same one; another program could still take it in between, which the
component's start-up check then reports.
"""

from __future__ import annotations

import socket

_given: set[int] = set()


def free_port() -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port not in _given:
            _given.add(port)
            return port


def loopback(port: int) -> str:
    return f"127.0.0.1:{port}"
