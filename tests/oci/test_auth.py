"""Registry auth: basic auth on a real htpasswd registry, bearer tokens, the Docker config."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import responses

from bundler.errors import InvalidInputError
from bundler.oci.auth import Challenge, parse_challenge
from bundler.oci.credentials import Credentials
from bundler.oci.reference import parse_repository
from bundler.oci.registry import RegistryOptions, list_tags
from tests.oci.conftest import MakeChart, RunCli
from tests.registry_fixtures import LocalRegistry

PLAIN = "--plain-http"


def _login_flags(reg: LocalRegistry) -> tuple[str, ...]:
    assert reg.username is not None
    return ("--username", reg.username, "--password-stdin")


def test_push_pull_and_list_with_username_and_password_stdin(
    oci_registry_basic_auth: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    reg = oci_registry_basic_auth
    password = f"{reg.password}\n"
    pushed = run_cli(
        "push", str(make_chart()), reg.oci(repo_path), PLAIN, *_login_flags(reg), stdin=password
    )
    assert pushed.code == 0, pushed.stderr
    ref = reg.oci(f"{repo_path}/demo")
    versions = run_cli("versions", ref, PLAIN, *_login_flags(reg), stdin=password)
    assert versions.stdout.splitlines() == ["1.0.0"]
    pulled = run_cli(
        "pull",
        ref,
        "--version",
        "1.0.0",
        "-d",
        str(tmp_path),
        PLAIN,
        *_login_flags(reg),
        stdin=password,
    )
    assert pulled.code == 0, pulled.stderr


def test_credentials_from_the_docker_config_are_used_and_the_file_is_not_written(
    oci_registry_basic_auth: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    docker_config: Path,
) -> None:
    reg = oci_registry_basic_auth
    token = base64.b64encode(f"{reg.username}:{reg.password}".encode()).decode()
    docker_config.write_text(json.dumps({"auths": {reg.host: {"auth": token}}}))
    before = docker_config.read_bytes()
    result = run_cli("push", str(make_chart()), reg.oci(repo_path), PLAIN)
    assert result.code == 0, result.stderr
    assert docker_config.read_bytes() == before
    assert sorted(p.name for p in docker_config.parent.iterdir()) == ["config.json"]


def test_wrong_password_is_a_clear_error_without_the_password(
    oci_registry_basic_auth: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    reg = oci_registry_basic_auth
    result = run_cli(
        "push", str(make_chart()), reg.oci(repo_path), PLAIN, *_login_flags(reg), stdin="wrong-pw\n"
    )
    assert result.code == 2
    assert (
        f"{reg.oci(repo_path)}/demo:1.0.0: authentication failed for user 'bundler'"
        in result.stderr
    )
    assert "wrong-pw" not in result.stderr


def test_missing_credentials_say_how_to_give_them(
    oci_registry_basic_auth: LocalRegistry, run_cli: RunCli, repo_path: str
) -> None:
    result = run_cli("versions", oci_registry_basic_auth.oci(f"{repo_path}/demo"), PLAIN)
    assert result.code == 2
    assert "authentication required" in result.stderr and "--password-stdin" in result.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--username", "u"), "--username needs --password-stdin"),
        (("--password-stdin",), "--password-stdin needs --username"),
        (("--ca-file", "/nonexistent/ca.pem"), "CA file /nonexistent/ca.pem does not exist"),
        (("--timeout", "0"), "--timeout: must be positive"),
    ],
    ids=["username-alone", "password-alone", "missing-ca-file", "zero-timeout"],
)
def test_connection_flags_are_checked(run_cli: RunCli, argv: tuple[str, ...], message: str) -> None:
    result = run_cli("versions", "oci://127.0.0.1:1/charts/demo", PLAIN, *argv)
    assert result.code == 2 and message in result.stderr


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ('Basic realm="registry"', Challenge("basic", {"realm": "registry"})),
        (
            'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"',
            Challenge(
                "bearer",
                {
                    "realm": "https://auth.example/token",
                    "service": "registry.example",
                    "scope": "repository:a/b:pull",
                },
            ),
        ),
        ("", None),
    ],
    ids=["basic", "bearer", "empty"],
)
def test_parse_challenge(header: str, expected: Challenge | None) -> None:
    assert parse_challenge(header) == expected


REGISTRY = "https://registry.example"
TOKEN_URL = "https://auth.example/token"
CHALLENGE = (
    f'Bearer realm="{TOKEN_URL}",service="registry.example",scope="repository:charts/demo:pull"'
)


@responses.activate
def test_bearer_challenge_fetches_a_token_with_the_credentials() -> None:
    tags_url = f"{REGISTRY}/v2/charts/demo/tags/list"
    responses.get(tags_url, status=401, headers={"WWW-Authenticate": CHALLENGE})
    responses.get(
        TOKEN_URL,
        json={"token": "t0k3n"},
        match=[
            responses.matchers.query_param_matcher(
                {"service": "registry.example", "scope": "repository:charts/demo:pull"}
            ),
            responses.matchers.header_matcher(
                {"Authorization": Credentials("u", "p").basic_header()}
            ),
        ],
    )
    responses.get(
        tags_url,
        json={"name": "charts/demo", "tags": ["1.0.0"]},
        match=[responses.matchers.header_matcher({"Authorization": "Bearer t0k3n"})],
    )
    repository = parse_repository("oci://registry.example/charts/demo")
    assert list_tags(repository, RegistryOptions(credentials=Credentials("u", "p"), timeout=5)) == [
        "1.0.0"
    ]


@responses.activate
def test_refused_token_request_names_the_user() -> None:
    responses.get(
        f"{REGISTRY}/v2/charts/demo/tags/list", status=401, headers={"WWW-Authenticate": CHALLENGE}
    )
    responses.get(TOKEN_URL, status=401)
    repository = parse_repository("oci://registry.example/charts/demo")
    with pytest.raises(
        InvalidInputError, match=f"the token service {TOKEN_URL} refused user 'u' \\(401\\)"
    ):
        list_tags(repository, RegistryOptions(credentials=Credentials("u", "p"), timeout=5))
