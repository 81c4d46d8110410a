"""HTTPS registries: a private CA (--ca-file) or no verification; errors say which flag helps."""

from __future__ import annotations

from pathlib import Path

import certifi

from tests.support.oci.chart_fixtures import MakeChart, RunCli
from tests.support.registry_fixtures import LocalRegistry


def test_push_and_pull_trusting_the_ca_file(
    oci_registry_tls: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    ca = str(oci_registry_tls.ca_file)
    pushed = run_cli("push", str(make_chart()), oci_registry_tls.oci(repo_path), "--ca-file", ca)
    assert pushed.code == 0, pushed.stderr
    ref = oci_registry_tls.oci(f"{repo_path}/demo")
    pulled = run_cli("pull", ref, "--version", "1.0.0", "-d", str(tmp_path), "--ca-file", ca)
    assert pulled.code == 0, pulled.stderr


def test_a_certificate_the_ca_file_does_not_sign_is_refused_with_a_hint(
    oci_registry_tls: LocalRegistry, run_cli: RunCli, repo_path: str
) -> None:
    other_ca = certifi.where()
    result = run_cli("versions", oci_registry_tls.oci(f"{repo_path}/demo"), "--ca-file", other_ca)
    assert result.code == 2
    assert "TLS with" in result.stderr and "certificate verify failed" in result.stderr
    assert "--ca-file" in result.stderr


def test_skip_tls_verify_trusts_anything(
    oci_registry_tls: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    pushed = run_cli(
        "push", str(make_chart()), oci_registry_tls.oci(repo_path), "--insecure-skip-tls-verify"
    )
    assert pushed.code == 0, pushed.stderr
    listed = run_cli(
        "versions", oci_registry_tls.oci(f"{repo_path}/demo"), "--insecure-skip-tls-verify"
    )
    assert listed.stdout.splitlines() == ["1.0.0"]
