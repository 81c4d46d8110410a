"""Registry auth: basic auth on a real htpasswd registry, bearer tokens, the Docker config."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from bundler.errors import InvalidInputError
from bundler.oci.auth import Challenge, parse_challenge
from bundler.oci.credentials import Credentials
from bundler.oci.reference import parse_repository
from bundler.oci.registry import RegistryOptions, list_tags
from tests.support.oci.chart_fixtures import MakeChart, RunCli
from tests.support.oci.hostile_server import HostileServer, Out, hostile, whole
from tests.support.registry_fixtures import LocalRegistry

__all__ = ["hostile"]

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


OPTIONS = RegistryOptions(credentials=Credentials("u", "p"), plain_http=True, timeout=5)
SCOPE = "repository:charts/demo:pull"


def _token_service(server: HostileServer, token_status: int) -> None:
    """A registry answering 401 with a bearer challenge whose realm is its own /token."""
    challenge = f'Bearer realm="http://{server.host}/token",service="registry.test",scope="{SCOPE}"'

    def answer(path: str, out: Out) -> None:
        authorization = server.seen[-1][1].get("Authorization", "")
        if path.startswith("/token"):
            whole(out, json.dumps({"token": "t0k3n"}).encode(), token_status)
        elif authorization == "Bearer t0k3n":
            whole(out, json.dumps({"name": "charts/demo", "tags": ["1.0.0"]}).encode())
        else:
            whole(out, b"", 401, WWW_Authenticate=challenge)

    server.answer = answer


def test_bearer_challenge_fetches_a_token_with_the_credentials(hostile: HostileServer) -> None:
    _token_service(hostile, 200)
    repository = parse_repository(f"oci://{hostile.host}/charts/demo")
    assert list_tags(repository, OPTIONS) == ["1.0.0"]
    token_path, token_headers = hostile.seen[1]
    assert token_path == f"/token?service=registry.test&scope={quote(SCOPE, safe='')}"
    assert token_headers["Authorization"] == Credentials("u", "p").basic_header()
    assert hostile.seen[2][1]["Authorization"] == "Bearer t0k3n"


def test_refused_token_request_names_the_user(hostile: HostileServer) -> None:
    _token_service(hostile, 401)
    repository = parse_repository(f"oci://{hostile.host}/charts/demo")
    realm = f"http://{hostile.host}/token"
    with pytest.raises(
        InvalidInputError, match=re.escape(f"the token service {realm} refused user 'u' (401)")
    ):
        list_tags(repository, OPTIONS)
