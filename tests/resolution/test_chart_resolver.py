"""The registry version resolver: ranges against a real registry's tags (docker-registry on
127.0.0.1, anonymous and with basic auth) and against index.yaml (served on 127.0.0.1), credentials
from a Bundle's Secret, errors, and the short answer cache."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
import yaml

from bundler.core.planning.version_query import ARTIFACT
from bundler.errors import BundlerError, InvalidInputError, TransientError
from bundler.oci.credentials import Credentials
from bundler.oci.reference import uses_plain_http
from bundler.oci.secret_credentials import credentials_from_secret
from bundler.resolution.answer_cache import AnswerCache
from bundler.resolution.chart_resolver import (
    RegistryResolver,
    ResolverSettings,
    with_docker_config,
)
from bundler.runtime.clock import ManualClock
from tests.support.manager.registry_charts import (
    CHART,
    docker_config_json,
    push,
    push_not_a_chart,
    unique_path,
)
from tests.support.oci.hostile_server import HostileServer, hostile, whole
from tests.support.registry_fixtures import LocalRegistry
from tests.support.registry_images import push_artifact

__all__ = ["hostile"]

PUSHED = (
    "1.0.0",
    "1.2.3",
    "1.2.10",
    "1.3.0-rc.1",
    "2.0.0",
    "2.1.0+build.5",
    "6.0.0",
    "6.1.0-beta.1",
)


def resolver(clock: ManualClock | None = None, cache_seconds: float = 5.0) -> RegistryResolver:
    settings = ResolverSettings(cache_seconds=cache_seconds)
    return RegistryResolver(settings, clock or ManualClock())


@pytest.fixture(scope="module")
def ranged(oci_registry: LocalRegistry, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`oci://.../demo` with every version of PUSHED (so `2.1.0_build.5` as a tag)."""
    path = "t/ranges"
    workdir = tmp_path_factory.mktemp("ranged-charts")
    for version in PUSHED:
        push(oci_registry, path, version, workdir)
    yield oci_registry.oci(path)


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [
        ("1.2.3", "1.2.3"),
        ("~1.2", "1.2.10"),
        ("^1", "1.2.10"),
        ("1.x", "1.2.10"),
        ("6.*", "6.0.0"),
        (">=1.0 <2.0", "1.2.10"),
        (">=1.3.0-0 <2.0.0", "1.3.0-rc.1"),
        ("^2", "2.1.0+build.5"),
        ("2.1.0+build.5", "2.1.0+build.5"),
        (">=6.1.0-0", "6.1.0-beta.1"),
        ("*", "6.0.0"),
    ],
    ids=[
        "exact",
        "tilde-minor",
        "caret-major",
        "x-wildcard",
        "star-skips-prerelease",
        "and-range",
        "range-asking-for-prereleases",
        "build-metadata-from-underscore-tag",
        "exact-with-plus",
        "prerelease-floor",
        "any-release",
    ],
)
def test_ranges_resolve_against_pushed_tags(ranged: str, constraint: str, expected: str) -> None:
    assert resolver()(ranged, CHART, constraint, None) == expected


def test_no_matching_version_names_the_newest_there_are(ranged: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        resolver()(ranged, CHART, "~3.1", None)
    message = str(raised.value)
    assert message.startswith(f"{ranged}: no version of chart 'demo' matches '~3.1'")
    assert "newest available: 6.1.0-beta.1, 6.0.0, 2.1.0+build.5, 2.0.0, 1.3.0-rc.1" in message
    assert "prereleases match only a range that names one" in message


def test_missing_chart_is_an_input_error(ranged: str) -> None:
    with pytest.raises(InvalidInputError, match="nothing: not found in the registry"):
        resolver()(ranged, "nothing", "1.*", None)


def test_an_artifact_that_is_not_a_chart_is_refused(
    oci_registry: LocalRegistry, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    path = unique_path(request.node.name)
    push(oci_registry, path, "7.0.0", tmp_path)
    push_not_a_chart(oci_registry, path, "7.1.0")
    with pytest.raises(InvalidInputError, match=r"7\.1\.0: not a Helm chart: config media type"):
        resolver()(oci_registry.oci(path), CHART, "7.*", None)


def test_a_dead_port_fails_at_once_as_transient() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(TransientError, match=f"cannot reach registry 127.0.0.1:{port}"):
        resolver()(f"oci://127.0.0.1:{port}/charts", CHART, "1.*", None)


def test_tag_lists_are_reused_for_a_few_seconds(
    oci_registry: LocalRegistry, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    path = unique_path(request.node.name)
    repo = oci_registry.oci(path)
    clock = ManualClock()
    resolve = resolver(clock, cache_seconds=5.0)
    push(oci_registry, path, "1.0.0", tmp_path)
    assert resolve(repo, CHART, "1.*", None) == "1.0.0"
    push(oci_registry, path, "1.1.0", tmp_path)
    assert resolve(repo, CHART, "1.*", None) == "1.0.0"
    clock.advance(5.0)
    assert resolve(repo, CHART, "1.*", None) == "1.1.0"


# -- credentials ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def private(
    oci_registry_basic_auth: LocalRegistry, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalRegistry]:
    push(oci_registry_basic_auth, "t/private", "1.0.0", tmp_path_factory.mktemp("private"))
    yield oci_registry_basic_auth


def _secret_data(kind: str, registry: LocalRegistry, password: str) -> dict[str, str]:
    assert registry.username is not None
    if kind == "dockerconfigjson":
        return {".dockerconfigjson": docker_config_json(registry.host, registry.username, password)}
    return {"username": registry.username, "password": password}


@pytest.mark.parametrize("kind", ["dockerconfigjson", "basic-auth"], ids=str)
def test_credentials_come_from_the_secret(private: LocalRegistry, kind: str) -> None:
    assert private.password is not None
    secret = _secret_data(kind, private, private.password)
    assert resolver()(private.oci("t/private"), CHART, "^1", secret) == "1.0.0"


def test_a_wrong_password_is_named_but_never_shown(private: LocalRegistry) -> None:
    secret = _secret_data("basic-auth", private, "not-the-password")
    with pytest.raises(InvalidInputError) as raised:
        resolver()(private.oci("t/private"), CHART, "^1", secret)
    assert "authentication failed for user 'bundler'" in str(raised.value)
    assert "not-the-password" not in str(raised.value)


def test_no_credentials_point_at_the_secret_ref(private: LocalRegistry) -> None:
    with pytest.raises(InvalidInputError) as raised:
        resolver()(private.oci("t/private"), CHART, "^1", None)
    message = str(raised.value)
    assert "authentication required" in message and "spec.helm.secretRef" in message
    assert "--username" not in message


def test_the_docker_config_serves_commands_run_by_a_person(
    private: LocalRegistry, tmp_path: Path
) -> None:
    assert private.username is not None and private.password is not None
    config = tmp_path / "config.json"
    config.write_text(docker_config_json(private.host, private.username, private.password))
    resolve = RegistryResolver(with_docker_config(ResolverSettings(), config), ManualClock())
    assert resolve(private.oci("t/private"), CHART, "^1", None) == "1.0.0"


def _auth(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(
    ("data", "host", "expected"),
    [
        ({"username": "u", "password": "p"}, "any:5000", Credentials("u", "p")),
        (
            {".dockerconfigjson": json.dumps({"auths": {"r:5000": {"auth": _auth("u", "p:q")}}})},
            "r:5000",
            Credentials("u", "p:q"),
        ),
        (
            {
                ".dockerconfigjson": json.dumps(
                    {"auths": {"https://r:5000/v1/": {"username": "u", "password": "p"}}}
                )
            },
            "r:5000",
            Credentials("u", "p"),
        ),
        (
            {
                ".dockerconfigjson": json.dumps(
                    {
                        "auths": {
                            "https://r:5000": {"auth": _auth("other", "x")},
                            "r:5000": {"auth": _auth("exact", "y")},
                        }
                    }
                )
            },
            "r:5000",
            Credentials("exact", "y"),
        ),
    ],
    ids=["basic-auth", "dockerconfig-auth", "dockerconfig-url-key", "exact-key-wins"],
)
def test_secret_layouts(data: Mapping[str, str], host: str, expected: Credentials) -> None:
    assert credentials_from_secret(data, host) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"token": "t"}, "neither a .dockerconfigjson key"),
        ({".dockerconfigjson": "{"}, ".dockerconfigjson is not JSON"),
        (
            {".dockerconfigjson": json.dumps({"auths": {"other:1": {"auth": _auth("u", "p")}}})},
            "no entry for r:5000 (entries for: other:1)",
        ),
        (
            {".dockerconfigjson": json.dumps({"auths": {"r:5000": {"auth": "%%%"}}})},
            "`auth` is not base64 of user:password",
        ),
    ],
    ids=["unknown-keys", "not-json", "other-host", "bad-auth"],
)
def test_unusable_secrets_say_why(data: Mapping[str, str], message: str) -> None:
    with pytest.raises(InvalidInputError, match=r"spec\.helm\.secretRef") as raised:
        credentials_from_secret(data, "r:5000")
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("host", "configured", "plain"),
    [
        ("127.0.0.1:5000", frozenset(), True),
        ("localhost:5000", frozenset(), True),
        ("[::1]:5000", frozenset(), True),
        ("127.0.0.2", frozenset(), True),
        ("registry.example.com", frozenset(), False),
        ("registry.lan:5000", frozenset({"registry.lan"}), True),
        ("registry.lan:5000", frozenset({"registry.lan:5000"}), True),
        ("registry.lan:5001", frozenset({"registry.lan:5000"}), False),
    ],
    ids=[
        "ipv4-loopback",
        "localhost",
        "ipv6-loopback",
        "loopback-range",
        "remote-https",
        "configured-host",
        "configured-host-port",
        "other-port",
    ],
)
def test_plain_http_only_for_loopback_or_configured_hosts(
    host: str, configured: frozenset[str], plain: bool
) -> None:
    assert uses_plain_http(host, configured) is plain


# -- index.yaml -------------------------------------------------------------------------------

INDEX = {
    "apiVersion": "v1",
    "entries": {
        CHART: [
            {"name": CHART, "version": v}
            for v in ("1.0.0", "1.2.0", "1.3.0+meta.1", "2.0.0-rc.1", "not-a-version")
        ]
    },
}


def _index_repository(server: HostileServer, body: str, status: int = 200) -> str:
    """Serve `body` as the repository's index.yaml; the repository's URL."""
    server.answer = lambda path, out: whole(out, body.encode(), status)
    return f"http://{server.host}/charts"


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [("^1", "1.3.0+meta.1"), ("~1.2", "1.2.0"), (">=2.0.0-0", "2.0.0-rc.1"), ("1.0.0", "1.0.0")],
    ids=["caret-with-build-metadata", "tilde", "prerelease-asked-for", "exact"],
)
def test_index_yaml_ranges(hostile: HostileServer, constraint: str, expected: str) -> None:
    repo = _index_repository(hostile, yaml.safe_dump(INDEX))
    assert resolver()(repo, CHART, constraint, None) == expected


def test_index_yaml_is_read_with_the_secrets_credentials(hostile: HostileServer) -> None:
    repo = _index_repository(hostile, yaml.safe_dump(INDEX))
    config = docker_config_json(hostile.host, "reader", "pw")
    assert resolver()(repo, CHART, "1.2.*", {".dockerconfigjson": config}) == "1.2.0"
    [(path, headers)] = hostile.seen
    assert (path, headers["Authorization"]) == (
        "/charts/index.yaml",
        f"Basic {_auth('reader', 'pw')}",
    )


@pytest.mark.parametrize(
    ("status", "body", "error", "message"),
    [
        (401, "", InvalidInputError, "refused anonymous access (401); set spec.helm.secretRef"),
        (404, "", InvalidInputError, "not found: is this a Helm repository?"),
        (503, "", TransientError, "the repository answered 503"),
        (200, yaml.safe_dump({"entries": {}}), InvalidInputError, "'demo' is not in this"),
    ],
    ids=["unauthorized", "not-a-repository", "unavailable", "chart-not-listed"],
)
def test_index_yaml_errors(
    hostile: HostileServer,
    status: int,
    body: str,
    error: type[BundlerError],
    message: str,
) -> None:
    repo = _index_repository(hostile, body, status)
    with pytest.raises(error) as raised:
        resolver()(repo, CHART, "^1", None)
    assert message in str(raised.value)


# -- the answer cache -------------------------------------------------------------------------


def test_answers_and_failures_are_kept_until_they_expire() -> None:
    clock = ManualClock()
    cache: AnswerCache[str, int] = AnswerCache(clock, 10.0, error_seconds=2.0)
    asked: list[str] = []

    def ask() -> int:
        asked.append("ask")
        if len(asked) == 2:
            raise TransientError("down")
        return len(asked)

    assert [cache.get("k", ask), cache.get("k", ask)] == [1, 1]
    clock.advance(10.0)
    for _ in range(2):
        with pytest.raises(TransientError, match="down"):
            cache.get("k", ask)
    clock.advance(2.0)
    assert cache.get("k", ask) == 3
    assert len(asked) == 3


def test_concurrent_askers_share_one_question() -> None:
    cache: AnswerCache[str, str] = AnswerCache(ManualClock(), 10.0)
    release = threading.Event()
    asked: list[str] = []
    answers: list[str] = []

    def ask() -> str:
        asked.append("ask")
        release.wait(10)
        return "answer"

    threads = [threading.Thread(target=lambda: answers.append(cache.get("k", ask))) for _ in "ab"]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert (asked, answers) == (["ask"], ["answer", "answer"])


FLUX_CONFIG = "application/vnd.cncf.flux.config.v1+json"
FLUX_CONTENT = "application/vnd.cncf.flux.content.v1.tar+gzip"


@pytest.mark.parametrize(
    ("constraint", "expected"),
    [("1.*", "1.1.0"), ("*", "2.0.0"), ("~1.0", "1.0.0")],
    ids=["minor-range", "latest-stable", "tilde"],
)
def test_a_kustomize_artifacts_range_resolves_against_its_own_tags(
    oci_registry: LocalRegistry, constraint: str, expected: str
) -> None:
    path = "t/artifacts/web"
    for tag in ("1.0.0", "1.1.0", "2.0.0", "2.1.0-rc.1"):
        push_artifact(oci_registry, path, tag, config_type=FLUX_CONFIG, layer_type=FLUX_CONTENT)
    assert resolver()(oci_registry.oci(path), ARTIFACT, constraint, None) == expected


def test_no_artifact_version_matching_says_so(oci_registry: LocalRegistry) -> None:
    path = "t/artifacts/old"
    push_artifact(oci_registry, path, "0.1.0", config_type=FLUX_CONFIG, layer_type=FLUX_CONTENT)
    with pytest.raises(InvalidInputError) as err:
        resolver()(oci_registry.oci(path), ARTIFACT, "1.*", None)
    assert "no version of the artifact matches '1.*'; newest available: 0.1.0" in str(err.value)
