"""The restricted-profile checker catches each rule's violation: a clean chart means something."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.charts.pod_security import violations

RESTRICTED: dict[str, Any] = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [
        {
            "name": "main",
            "securityContext": {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
            },
            "ports": [{"containerPort": 8080}],
        }
    ],
    "volumes": [{"name": "tmp", "emptyDir": {}}],
}


def _with(path: str, value: Any) -> dict[str, Any]:
    spec = copy.deepcopy(RESTRICTED)
    *parents, last = path.split(".")
    node: Any = spec
    for part in parents:
        node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
    node[last] = value
    return spec


def test_a_restricted_pod_passes() -> None:
    assert violations(RESTRICTED) == []


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("hostNetwork", True, "hostNetwork"),
        ("hostPID", True, "hostPID"),
        ("volumes", [{"name": "h", "hostPath": {"path": "/"}}], "hostPath"),
        ("volumes", [{"name": "n", "nfs": {"server": "x", "path": "/"}}], "volume type"),
        ("securityContext.runAsNonRoot", False, "runAsNonRoot"),
        ("securityContext.runAsUser", 0, "runAsUser must not be 0"),
        ("securityContext.seccompProfile", {"type": "Unconfined"}, "seccompProfile"),
        ("securityContext.sysctls", [{"name": "kernel.msgmax", "value": "1"}], "safe sysctl"),
        ("containers.0.securityContext.privileged", True, "privileged"),
        ("containers.0.securityContext.allowPrivilegeEscalation", True, "allowPrivilegeEscalation"),
        ("containers.0.securityContext.capabilities", {"drop": ["NET_RAW"]}, "drop must include"),
        (
            "containers.0.securityContext.capabilities",
            {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
            "add may hold only",
        ),
        ("containers.0.securityContext.procMount", "Unmasked", "procMount"),
        ("containers.0.securityContext.seLinuxOptions", {"type": "spc_t"}, "seLinuxOptions"),
        ("containers.0.ports", [{"containerPort": 80, "hostPort": 80}], "hostPort"),
        ("securityContext", {}, "runAsNonRoot must be true"),
    ],
    ids=[
        "host-network",
        "host-pid",
        "host-path",
        "nfs-volume",
        "run-as-root-allowed",
        "uid-0",
        "unconfined-seccomp",
        "unsafe-sysctl",
        "privileged",
        "privilege-escalation",
        "capabilities-kept",
        "capability-added",
        "proc-mount",
        "selinux-type",
        "host-port",
        "no-pod-context",
    ],
)
def test_each_violation_is_named(path: str, value: Any, message: str) -> None:
    found = violations(_with(path, value))
    assert any(message in v for v in found), found
