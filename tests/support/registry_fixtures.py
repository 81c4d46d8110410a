"""Real OCI registries for tests: Debian's `docker-registry` on 127.0.0.1.

The fixtures are session-scoped and plain functions, so any conftest can import them:

    from tests.support.registry_fixtures import oci_registry, oci_registry_basic_auth  # noqa: F401

There are three: `oci_registry` (plain HTTP), `oci_registry_basic_auth` (HTTP with basic auth) and
`oci_registry_tls` (HTTPS with a self-signed certificate for 127.0.0.1, made with the `openssl`
command; `ca_file` is the certificate to trust). Each listens on an ephemeral port chosen by the
kernel (`addr: 127.0.0.1:0`; the port is read back from the registry's own "listening on" log
line, so there is no bind race), keeps its blobs in a temporary directory, and is stopped at the
end of the session. The basic-auth registry
reads a bcrypt htpasswd file written here, since docker-registry accepts only bcrypt entries.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import bcrypt
import pytest
import requests
import yaml

from bundler.apiserver.certificates import self_signed_certificate

REGISTRY_BINARY = "docker-registry"
START_TIMEOUT_S = 20.0
POLL_INTERVAL_S = 0.05
TEST_USERNAME = "bundler"
TEST_PASSWORD = "s3cret-for-tests"

_LISTENING = re.compile(r"listening on (127\.0\.0\.1:\d+)")


@dataclass(frozen=True)
class LocalRegistry:
    """A running registry: where it listens and, for the auth variant, who may use it."""

    host: str
    storage: Path
    username: str | None = None
    password: str | None = None
    ca_file: Path | None = None

    @property
    def base_url(self) -> str:
        scheme = "http" if self.ca_file is None else "https"
        return f"{scheme}://{self.host}"

    def oci(self, path: str) -> str:
        """The `oci://` URL of a repository path in this registry."""
        return f"oci://{self.host}/{path.strip('/')}"


def _config(
    storage: Path, htpasswd: Path | None, tls: tuple[Path, Path] | None
) -> dict[str, object]:
    http: dict[str, object] = {"addr": "127.0.0.1:0", "secret": "bundler-tests"}
    if tls is not None:
        http["tls"] = {"certificate": str(tls[0]), "key": str(tls[1])}
    config: dict[str, object] = {
        "version": 0.1,
        "log": {"level": "info", "formatter": "text", "accesslog": {"disabled": True}},
        "storage": {"filesystem": {"rootdirectory": str(storage)}, "delete": {"enabled": True}},
        "http": http,
    }
    if htpasswd is not None:
        config["auth"] = {"htpasswd": {"realm": "bundler-tests", "path": str(htpasswd)}}
    return config


def write_htpasswd(path: Path, username: str, password: str) -> Path:
    """Write a one-user htpasswd file with a bcrypt hash (cost 5 keeps the tests fast)."""
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=5)).decode()
    path.write_text(f"{username}:{hashed}\n")
    return path


def write_self_signed_certificate(workdir: Path) -> tuple[Path, Path]:
    """A certificate and key for 127.0.0.1 (EC keys: generated in milliseconds)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed for the TLS registry")
    return self_signed_certificate(workdir, "registry")


def _wait_for_address(log: Path, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        match = _LISTENING.search(log.read_text(errors="replace"))
        if match:
            return match.group(1)
        if process.poll() is not None:
            break
        time.sleep(POLL_INTERVAL_S)
    raise RuntimeError(f"docker-registry did not start; its log:\n{log.read_text()}")


def _wait_until_serving(base_url: str, ca_file: Path | None) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    verify: bool | str = True if ca_file is None else str(ca_file)
    while time.monotonic() < deadline:
        try:
            # 200 without auth, 401 with it: either way the API answers.
            if requests.get(f"{base_url}/v2/", timeout=1, verify=verify).status_code in (200, 401):
                return
        except requests.ConnectionError:
            pass
        time.sleep(POLL_INTERVAL_S)
    raise RuntimeError(f"docker-registry at {base_url} never answered /v2/")


@contextmanager
def run_registry(workdir: Path, *, basic_auth: bool, tls: bool = False) -> Iterator[LocalRegistry]:
    """Start docker-registry under `workdir`, yield it once /v2/ answers, stop it afterwards."""
    binary = shutil.which(REGISTRY_BINARY)
    if binary is None:
        pytest.skip(f"{REGISTRY_BINARY} is not installed (`make registry` installs it)")
    storage = workdir / "storage"
    storage.mkdir(parents=True)
    htpasswd = (
        write_htpasswd(workdir / "htpasswd", TEST_USERNAME, TEST_PASSWORD) if basic_auth else None
    )
    certificate = write_self_signed_certificate(workdir) if tls else None
    config = workdir / "config.yml"
    config.write_text(yaml.safe_dump(_config(storage, htpasswd, certificate)))
    log = workdir / "registry.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [binary, "serve", str(config)], stdout=log_file, stderr=subprocess.STDOUT
        )
    try:
        registry = LocalRegistry(
            host=_wait_for_address(log, process),
            storage=storage,
            username=TEST_USERNAME if basic_auth else None,
            password=TEST_PASSWORD if basic_auth else None,
            ca_file=None if certificate is None else certificate[0],
        )
        _wait_until_serving(registry.base_url, registry.ca_file)
        yield registry
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def oci_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    """An anonymous registry over plain HTTP."""
    with run_registry(tmp_path_factory.mktemp("registry-plain"), basic_auth=False) as registry:
        yield registry


@pytest.fixture(scope="session")
def oci_registry_basic_auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    """A registry over plain HTTP that requires HTTP basic auth (htpasswd)."""
    with run_registry(tmp_path_factory.mktemp("registry-auth"), basic_auth=True) as registry:
        yield registry


@pytest.fixture(scope="session")
def oci_registry_tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRegistry]:
    """An anonymous registry over HTTPS; trust `ca_file` (its self-signed certificate)."""
    with run_registry(
        tmp_path_factory.mktemp("registry-tls"), basic_auth=False, tls=True
    ) as registry:
        yield registry


def closed_port() -> int:
    """A loopback port nothing listens on (the kernel's pick, released): an unreachable registry."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.fixture
def docker_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Docker config directory for the test: the user's ~/.docker is never read."""
    directory = tmp_path / "docker-config"
    directory.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(directory))
    return directory / "config.json"
