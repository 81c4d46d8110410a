"""A checker of Kubernetes' restricted Pod Security Standard, as its documentation states the rules.

`violations(pod_spec)` lists every rule a pod spec breaks (empty: the pod is admitted by a namespace
enforcing `pod-security.kubernetes.io/enforce: restricted`). It covers the baseline controls (host
namespaces and ports, privileged, capabilities, hostPath, HostProcess, AppArmor, SELinux, /proc
mount, seccomp, sysctls) and the restricted ones (volume types, privilege escalation, running as
non-root, a non-zero runAsUser, seccomp RuntimeDefault or Localhost, capabilities drop ALL and add
only NET_BIND_SERVICE), over containers, init containers and ephemeral containers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Obj = dict[str, Any]

RESTRICTED_VOLUME_TYPES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
# Restricted allows adding only this one (baseline's wider list does not apply).
RESTRICTED_ADDED_CAPABILITIES = frozenset({"NET_BIND_SERVICE"})
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
SELINUX_TYPES = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
SECCOMP_ALLOWED = frozenset({"RuntimeDefault", "Localhost"})
APPARMOR_ALLOWED = frozenset({"RuntimeDefault", "Localhost"})
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def violations(pod_spec: Obj) -> list[str]:
    """Every restricted-profile rule `pod_spec` breaks, each naming the field."""
    return [*_pod_violations(pod_spec), *_container_violations(pod_spec)]


def pod_spec_of(obj: Obj) -> Obj | None:
    """The pod template's spec of a workload (Deployment, StatefulSet, ...), None for others."""
    template = (obj.get("spec") or {}).get("template")
    return dict(template["spec"]) if isinstance(template, dict) else None


def _pod_violations(spec: Obj) -> Iterator[str]:
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            yield f"spec.{field} must be unset or false"
    for volume in spec.get("volumes") or []:
        kinds = set(volume) - {"name"}
        if "hostPath" in kinds:
            yield f"spec.volumes[{volume.get('name')}]: hostPath volumes are forbidden"
        elif not kinds <= RESTRICTED_VOLUME_TYPES:
            yield f"spec.volumes[{volume.get('name')}]: volume type {sorted(kinds)} is forbidden"
    context = spec.get("securityContext") or {}
    yield from _context_violations(context, "spec.securityContext")
    for sysctl in context.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            yield f"spec.securityContext.sysctls: {sysctl.get('name')} is not a safe sysctl"


def _container_violations(spec: Obj) -> Iterator[str]:
    pod = spec.get("securityContext") or {}
    for list_name in _CONTAINER_LISTS:
        for container in spec.get(list_name) or []:
            where = f"spec.{list_name}[{container.get('name')}]"
            context = container.get("securityContext") or {}
            yield from _context_violations(context, f"{where}.securityContext")
            yield from _restricted_container(container, context, pod, where)


def _context_violations(context: Obj, where: str) -> Iterator[str]:
    """The rules a pod's and a container's security context share."""
    if (context.get("windowsOptions") or {}).get("hostProcess"):
        yield f"{where}.windowsOptions.hostProcess must be unset or false"
    se_linux = context.get("seLinuxOptions") or {}
    if se_linux.get("type", "") not in SELINUX_TYPES:
        yield f"{where}.seLinuxOptions.type {se_linux['type']!r} is forbidden"
    for field in ("user", "role"):
        if se_linux.get(field):
            yield f"{where}.seLinuxOptions.{field} must be unset"
    if context.get("runAsUser") == 0:
        yield f"{where}.runAsUser must not be 0"
    if context.get("runAsNonRoot") is False:
        yield f"{where}.runAsNonRoot must not be false"
    seccomp = (context.get("seccompProfile") or {}).get("type")
    if seccomp is not None and seccomp not in SECCOMP_ALLOWED:
        yield f"{where}.seccompProfile.type must be RuntimeDefault or Localhost, not {seccomp}"
    apparmor = (context.get("appArmorProfile") or {}).get("type")
    if apparmor is not None and apparmor not in APPARMOR_ALLOWED:
        yield f"{where}.appArmorProfile.type must be RuntimeDefault or Localhost, not {apparmor}"


def _restricted_container(container: Obj, context: Obj, pod: Obj, where: str) -> Iterator[str]:
    if context.get("privileged"):
        yield f"{where}.securityContext.privileged must be unset or false"
    if context.get("procMount", "Default") != "Default":
        yield f"{where}.securityContext.procMount must be Default"
    if context.get("allowPrivilegeEscalation") is not False:
        yield f"{where}.securityContext.allowPrivilegeEscalation must be false"
    if not context.get("runAsNonRoot", pod.get("runAsNonRoot")):
        yield f"{where}: runAsNonRoot must be true (container or pod)"
    if (context.get("seccompProfile") or pod.get("seccompProfile")) is None:
        yield f"{where}: seccompProfile must be RuntimeDefault or Localhost (container or pod)"
    capabilities = context.get("capabilities") or {}
    if "ALL" not in (capabilities.get("drop") or []):
        yield f"{where}.securityContext.capabilities.drop must include ALL"
    added = set(capabilities.get("add") or [])
    if not added <= RESTRICTED_ADDED_CAPABILITIES:
        yield f"{where}.securityContext.capabilities.add may hold only NET_BIND_SERVICE"
    for port in container.get("ports") or []:
        if port.get("hostPort"):
            yield f"{where}.ports: hostPort must be unset or 0"
