"""Credentials from the Docker config: host keys normalised as Docker does, never Docker Hub."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from bundler.errors import InvalidInputError
from bundler.oci.credentials import Credentials, docker_config_path, from_docker_config, resolve


def _auth(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def _write(path: Path, auths: dict[str, object]) -> None:
    path.write_text(json.dumps({"auths": auths}))


@pytest.mark.parametrize(
    ("auths", "host", "expected"),
    [
        (
            {"127.0.0.1:5000": {"auth": _auth("u", "p:w")}},
            "127.0.0.1:5000",
            Credentials("u", "p:w"),
        ),
        (
            {"localhost:5000": {"username": "u", "password": "p"}},
            "localhost:5000",
            Credentials("u", "p"),
        ),
        (
            {"https://reg.example:5000/v1/": {"auth": _auth("u", "p")}},
            "reg.example:5000",
            Credentials("u", "p"),
        ),
        ({"docker.io": {"auth": _auth("hub", "p")}}, "127.0.0.1:5000", None),
        ({"https://index.docker.io/v1/": {"auth": _auth("hub", "p")}}, "localhost:5000", None),
        ({"localhost:5000": {"auth": _auth("u", "p")}}, "localhost:5001", None),
        ({"localhost:5000": {}}, "localhost:5000", None),
        (
            {
                "https://localhost:5000": {"auth": _auth("a", "1")},
                "localhost:5000": {"auth": _auth("b", "2")},
            },
            "localhost:5000",
            Credentials("b", "2"),
        ),
    ],
    ids=[
        "auth-field",
        "username-password",
        "scheme-and-path-stripped",
        "docker-hub-is-not-local",
        "docker-hub-index-is-not-local",
        "other-port",
        "entry-without-credentials",
        "exact-key-wins",
    ],
)
def test_lookup_by_host(
    docker_config: Path, auths: dict[str, object], host: str, expected: Credentials | None
) -> None:
    _write(docker_config, auths)
    assert from_docker_config(host) == expected


def test_config_path_follows_docker_config_env(docker_config: Path) -> None:
    assert docker_config_path() == docker_config
    assert docker_config_path({}) == Path.home() / ".docker" / "config.json"


def test_missing_config_means_no_credentials(docker_config: Path) -> None:
    assert not docker_config.exists()
    assert from_docker_config("127.0.0.1:5000") is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read Docker config"),
        ("[]", "Docker config is not a JSON object"),
        (json.dumps({"auths": {"h:1": {"auth": "!!!"}}}), "`auth` is not base64 of user:password"),
        (
            json.dumps({"auths": {"h:1": {"auth": base64.b64encode(b"nocolon").decode()}}}),
            "not base64 of user:password",
        ),
    ],
    ids=["bad-json", "not-an-object", "bad-base64", "no-colon"],
)
def test_broken_config_names_the_file(docker_config: Path, content: str, message: str) -> None:
    docker_config.write_text(content)
    with pytest.raises(InvalidInputError, match=message) as caught:
        from_docker_config("h:1")
    assert str(docker_config) in str(caught.value)


def test_explicit_credentials_win_over_the_config(docker_config: Path) -> None:
    _write(docker_config, {"h:1": {"auth": _auth("config", "p")}})
    assert resolve("h:1", "cli", "secret") == Credentials("cli", "secret")
    assert resolve("h:1", None, None) == Credentials("config", "p")


def test_half_explicit_credentials_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="both a username and a password"):
        resolve("h:1", "user", None)


def test_password_never_shows_in_repr() -> None:
    assert "hunter2" not in repr(Credentials("user", "hunter2"))
