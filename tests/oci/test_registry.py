"""Push, pull and list charts against a real registry (docker-registry on 127.0.0.1)."""

from __future__ import annotations

import hashlib
import io
import json
import socket
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from bundler.errors import RegistryAnswerError, TransientError
from bundler.oci import layout, package, registry
from bundler.oci.reference import parse_repository
from bundler.oci.repository import list_chart_versions
from tests.support.cli_helpers import output_field
from tests.support.oci.chart_fixtures import MakeChart, RunCli
from tests.support.oci.hostile_server import Answer, HostileServer, Out, head, hostile, whole
from tests.support.oci.hostile_server import chart_manifest as hostile_chart_manifest
from tests.support.registry_fixtures import LocalRegistry
from tests.support.registry_images import get_blob, get_manifest, push_artifact

__all__ = ["hostile"]

PLAIN = "--plain-http"


def test_push_writes_helms_layout_and_tag(
    oci_registry: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    result = run_cli(
        "push", str(make_chart("demo", "1.2.3+build.5")), oci_registry.oci(repo_path), PLAIN
    )
    assert result.code == 0, result.stderr
    assert output_field(result.stdout, "Pushed") == oci_registry.oci(
        f"{repo_path}/demo:1.2.3_build.5"
    )

    response = get_manifest(oci_registry, f"{repo_path}/demo", "1.2.3_build.5")
    manifest = response.json()
    assert (
        output_field(result.stdout, "Digest")
        == f"sha256:{hashlib.sha256(response.content).hexdigest()}"
    )
    assert manifest["mediaType"] == "application/vnd.oci.image.manifest.v1+json"
    assert manifest["config"]["mediaType"] == "application/vnd.cncf.helm.config.v1+json"
    assert [layer["mediaType"] for layer in manifest["layers"]] == [
        "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
    ]
    assert "annotations" not in manifest["layers"][0]
    assert "org.opencontainers.image.created" not in manifest["annotations"]
    config = json.loads(get_blob(oci_registry, f"{repo_path}/demo", manifest["config"]["digest"]))
    assert config == {
        "apiVersion": "v2",
        "name": "demo",
        "version": "1.2.3+build.5",
        "description": "a test chart",
    }


def test_pushing_the_same_chart_twice_gives_the_same_digest(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    chart_dir = make_chart()
    target = oci_registry.oci(repo_path)
    first = run_cli("push", str(chart_dir), target, PLAIN)
    second = run_cli("push", str(chart_dir), target, PLAIN)
    packaged = run_cli("package", str(chart_dir), "-d", str(tmp_path / "out"))
    from_tgz = run_cli("push", output_field(packaged.stdout, "Packaged"), target, PLAIN)
    digests = {output_field(r.stdout, "Digest") for r in (first, second, from_tgz)}
    assert len(digests) == 1


def test_pull_returns_identical_bytes(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    chart_dir = make_chart("demo", "0.3.0")
    assert run_cli("push", str(chart_dir), oci_registry.oci(repo_path), PLAIN).code == 0

    result = run_cli(
        "pull",
        oci_registry.oci(f"{repo_path}/demo"),
        "--version",
        "0.3.0",
        "-d",
        str(tmp_path / "dl"),
        PLAIN,
    )
    assert result.code == 0, result.stderr
    saved = tmp_path / "dl" / "demo-0.3.0.tgz"
    assert output_field(result.stdout, "Saved") == str(saved)
    assert saved.read_bytes() == package.build_archive(chart_dir).data


def test_pull_untar_unpacks_the_chart(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    assert run_cli("push", str(make_chart()), oci_registry.oci(repo_path), PLAIN).code == 0
    ref = oci_registry.oci(f"{repo_path}/demo")
    result = run_cli("pull", ref, "--version", "1.0.0", "--untar", "-d", str(tmp_path), PLAIN)
    assert result.code == 0, result.stderr
    assert (tmp_path / "demo" / "values.yaml").read_text() == "greeting: hello\n"
    again = run_cli("pull", ref, "--version", "1.0.0", "--untar", "-d", str(tmp_path), PLAIN)
    assert again.code == 2 and "already exists" in again.stderr


def test_pull_resolves_a_version_range(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    for version in ("1.0.0", "1.4.2", "2.0.0"):
        chart_dir = make_chart("demo", version, parent=tmp_path / version)
        assert run_cli("push", str(chart_dir), oci_registry.oci(repo_path), PLAIN).code == 0
    result = run_cli(
        "pull", oci_registry.oci(f"{repo_path}/demo"), "--version", "^1", "-d", str(tmp_path), PLAIN
    )
    assert result.code == 0, result.stderr
    assert output_field(result.stdout, "Pulled").endswith("/demo:1.4.2")
    none = run_cli("pull", oci_registry.oci(f"{repo_path}/demo"), "--version", "~3.1", PLAIN)
    assert none.code == 1 and "no version matches '~3.1'" in none.stderr


def test_versions_lists_semver_tags_newest_first(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
) -> None:
    for version in ("1.0.0", "1.10.0", "1.2.0+build.7", "2.0.0-rc.1", "1.9.9"):
        chart_dir = make_chart("demo", version, parent=tmp_path / version)
        assert run_cli("push", str(chart_dir), oci_registry.oci(repo_path), PLAIN).code == 0
    # A tag that is not a version (as an image tool might add) is not listed.
    manifest = get_manifest(oci_registry, f"{repo_path}/demo", "1.0.0")
    requests.put(
        f"{oci_registry.base_url}/v2/{repo_path}/demo/manifests/latest",
        data=manifest.content,
        headers={"Content-Type": layout.MANIFEST_MEDIA_TYPE},
        timeout=10,
    ).raise_for_status()

    result = run_cli("versions", oci_registry.oci(f"{repo_path}/demo"), PLAIN)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines() == ["2.0.0-rc.1", "1.10.0", "1.9.9", "1.2.0+build.7", "1.0.0"]
    assert (
        list_chart_versions(
            oci_registry.oci(repo_path), "demo", registry.RegistryOptions(plain_http=True)
        )
        == result.stdout.splitlines()
    )


def test_a_missing_version_or_chart_is_a_failure_naming_the_reference(
    oci_registry: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    assert run_cli("push", str(make_chart()), oci_registry.oci(repo_path), PLAIN).code == 0
    missing_tag = run_cli(
        "pull", oci_registry.oci(f"{repo_path}/demo"), "--version", "9.9.9", PLAIN
    )
    assert missing_tag.code == 1
    assert (
        f"{oci_registry.oci(repo_path)}/demo:9.9.9: not found in the registry" in missing_tag.stderr
    )
    missing_repo = run_cli("versions", oci_registry.oci(f"{repo_path}/nothing"), PLAIN)
    assert missing_repo.code == 1
    assert (
        f"{oci_registry.oci(repo_path)}/nothing: not found in the registry" in missing_repo.stderr
    )


@pytest.mark.parametrize(
    ("config_type", "layer_type", "message"),
    [
        (
            "application/vnd.oci.image.config.v1+json",
            "application/vnd.oci.image.layer.v1.tar",
            "config media type is application/vnd.oci.image.config.v1+json",
        ),
        (
            layout.CONFIG_MEDIA_TYPE,
            "application/vnd.oci.image.layer.v1.tar",
            f"expected one layer of type {layout.CHART_LAYER_MEDIA_TYPE}, found 0",
        ),
    ],
    ids=["image-config", "helm-config-without-chart-layer"],
)
def test_pulling_something_that_is_not_a_chart_says_so(
    oci_registry: LocalRegistry,
    run_cli: RunCli,
    repo_path: str,
    config_type: str,
    layer_type: str,
    message: str,
) -> None:
    push_artifact(
        oci_registry, f"{repo_path}/thing", "1.0.0", config_type=config_type, layer_type=layer_type
    )
    result = run_cli("pull", oci_registry.oci(f"{repo_path}/thing"), "--version", "1.0.0", PLAIN)
    assert result.code == 1
    assert f"{oci_registry.oci(repo_path)}/thing:1.0.0: not a Helm chart" in result.stderr
    assert message in result.stderr


def test_tls_asked_of_a_plain_http_registry_gives_a_hint(
    oci_registry: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    target = oci_registry.oci(repo_path)
    result = run_cli("push", str(make_chart()), target, "--insecure-skip-tls-verify")
    assert result.code == 2
    assert "TLS with" in result.stderr and "--plain-http" in result.stderr


def test_dead_port_is_a_transient_error_naming_the_reference(run_cli: RunCli) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The port is closed again: nothing listens there.
    result = run_cli("versions", f"oci://127.0.0.1:{port}/charts/demo", PLAIN)
    assert result.code == 1
    assert (
        f"oci://127.0.0.1:{port}/charts/demo: cannot reach registry 127.0.0.1:{port}"
        in result.stderr
    )


@pytest.fixture
def hanging_up_server() -> Iterator[tuple[int, list[int]]]:
    """A TCP server that accepts connections and closes them at once, counting them."""
    accepted: list[int] = []
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join()
        server.close()


def test_a_failing_registry_is_tried_once_not_retried(
    hanging_up_server: tuple[int, list[int]],
) -> None:
    port, accepted = hanging_up_server
    repository = parse_repository(f"oci://127.0.0.1:{port}/charts/demo")
    with pytest.raises(TransientError, match=f"cannot reach registry 127.0.0.1:{port}"):
        registry.list_tags(repository, registry.RegistryOptions(plain_http=True, timeout=5))
    assert accepted == [1]


def test_package_command_prints_path_and_digest(
    make_chart: MakeChart, run_cli: RunCli, tmp_path: Path
) -> None:
    result = run_cli("package", str(make_chart("demo", "3.1.4")), "-d", str(tmp_path / "out"))
    assert result.code == 0, result.stderr
    target = tmp_path / "out" / "demo-3.1.4.tgz"
    assert output_field(result.stdout, "Packaged") == str(target)
    assert (
        output_field(result.stdout, "Digest")
        == f"sha256:{hashlib.sha256(target.read_bytes()).hexdigest()}"
    )


def test_package_command_reports_invalid_chart(
    make_chart: MakeChart, run_cli: RunCli, tmp_path: Path
) -> None:
    chart_dir = make_chart(files={"Chart.yaml": "apiVersion: v2\nname: demo\n"})
    result = run_cli("package", str(chart_dir), "-d", str(tmp_path))
    assert result.code == 2
    assert f"error: {chart_dir}/Chart.yaml: version: is required" in result.stderr


def test_push_of_a_missing_path_is_invalid_input(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli("push", str(tmp_path / "nope"), "oci://127.0.0.1:1/charts", PLAIN)
    assert result.code == 2 and "no such chart directory or archive" in result.stderr


def test_invalid_registry_reference_is_invalid_input(
    run_cli: RunCli, make_chart: MakeChart
) -> None:
    result = run_cli("push", str(make_chart()), "127.0.0.1:5000/charts", PLAIN)
    assert result.code == 2 and "expected an oci://HOST/PATH reference" in result.stderr


def test_localhost_and_dotted_paths_stay_on_the_local_registry(
    oci_registry: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    port = oci_registry.host.rsplit(":", 1)[1]
    # A dotted first path component must not be read as a registry host, nor localhost as Hub.
    target = f"oci://localhost:{port}/{repo_path}/my.org"
    pushed = run_cli("push", str(make_chart()), target, PLAIN)
    assert pushed.code == 0, pushed.stderr
    assert output_field(pushed.stdout, "Pushed") == f"{target}/demo:1.0.0"
    manifest = get_manifest(oci_registry, f"{repo_path}/my.org/demo", "1.0.0")
    assert manifest.json()["config"]["mediaType"] == layout.CONFIG_MEDIA_TYPE


# -- a hostile registry ---------------------------------------------------------------------------

HOSTILE = registry.RegistryOptions(plain_http=True, timeout=5.0, deadline=30.0)


def _serve(server: HostileServer, routes: dict[str, Answer]) -> None:
    """Answer each path by the first route it starts with; anything else is 404."""

    def answer(path: str, out: Out) -> None:
        for prefix, route in routes.items():
            if path.startswith(prefix):
                return route(path, out)
        return head(out, 404, Content_Length="0")

    server.answer = answer


def _serve_chart(server: HostileServer, manifest: bytes, blob: Answer) -> None:
    _serve(
        server,
        {
            "/v2/charts/demo/manifests/": lambda p, out: whole(out, manifest),
            "/v2/charts/demo/blobs/": blob,
        },
    )


def _endless(server: HostileServer) -> Answer:
    def answer(path: str, out: Out) -> None:
        head(out)
        server.endless(out)

    return answer


@pytest.mark.parametrize(
    ("layer_size", "message", "blob_asked"),
    [
        (3 << 30, "the chart layer is over the 100 MiB cap: its descriptor declares 3072 MiB", 0),
        (1000, "the chart layer from registry {host} is over the 1000 bytes cap", 1),
    ],
    ids=["declared-over-the-cap-never-downloaded", "longer-than-its-descriptor-cut-there"],
)
def test_a_chart_layer_is_read_within_the_cap_and_its_descriptor(
    hostile: HostileServer, layer_size: int, message: str, blob_asked: int
) -> None:
    asked: list[str] = []

    def blob(path: str, out: Out) -> None:
        asked.append(path)
        _endless(hostile)(path, out)

    _serve_chart(hostile, hostile_chart_manifest(layer_size), blob)
    tag = parse_repository(f"oci://{hostile.host}/charts/demo").tagged("1.0.0")
    with pytest.raises(RegistryAnswerError) as raised:
        registry.pull_chart(tag, HOSTILE)
    assert str(raised.value) == f"{tag.url}: {message.format(host=hostile.host)}"
    assert len(asked) == blob_asked


@pytest.mark.parametrize(
    ("path", "what", "call"),
    [
        ("/v2/charts/demo/manifests/", "the manifest", "pull"),
        ("/v2/charts/demo/tags/list", "the tag list", "versions"),
    ],
    ids=["manifest", "tag-list"],
)
def test_an_endless_answer_stops_at_its_cap(
    hostile: HostileServer, path: str, what: str, call: str
) -> None:
    _serve(hostile, {path: _endless(hostile)})
    repository = parse_repository(f"oci://{hostile.host}/charts/demo")
    with pytest.raises(RegistryAnswerError) as raised:
        if call == "pull":
            registry.pull_chart(repository.tagged("1.0.0"), HOSTILE)
        else:
            registry.list_tags(repository, HOSTILE)
    assert f"{what} from registry {hostile.host} is over the 4 MiB cap" in str(raised.value)
    assert str(raised.value).startswith(f"oci://{hostile.host}/charts/demo")


def test_tag_list_pages_share_one_cap(hostile: HostileServer) -> None:
    # about 3 MiB of valid tags a page: each page is within the cap, two are not
    page = json.dumps({"tags": [f"1.0.{i}-{'x' * 100}" for i in range(30_000)]}).encode()
    following = '</v2/charts/demo/tags/list?last=x>; rel="next"'
    _serve(hostile, {"/v2/charts/demo/tags/list": lambda p, out: whole(out, page, Link=following)})
    repository = parse_repository(f"oci://{hostile.host}/charts/demo")
    with pytest.raises(RegistryAnswerError, match=r"the tag list .* is over the 4 MiB cap"):
        registry.list_tags(repository, HOSTILE)


def test_the_cli_reports_a_cap_as_a_failure_not_invalid_input(
    hostile: HostileServer, run_cli: RunCli
) -> None:
    _serve(hostile, {"/v2/charts/demo/tags/list": _endless(hostile)})
    result = run_cli("versions", f"oci://{hostile.host}/charts/demo")
    assert result.code == 1
    assert "the tag list from registry" in result.stderr and "4 MiB cap" in result.stderr


# -- loopback registries and the latest version ---------------------------------------------------


@pytest.mark.parametrize("host_name", ["127.0.0.1", "localhost"], ids=str)
def test_loopback_registries_are_plain_http_without_a_flag(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
    host_name: str,
) -> None:
    port = oci_registry.host.rsplit(":", 1)[1]
    location = f"oci://{host_name}:{port}/{repo_path}"
    pushed = run_cli("push", str(make_chart()), location)
    assert pushed.code == 0, pushed.stderr
    listed = run_cli("versions", f"{location}/demo")
    assert (listed.code, listed.stdout.splitlines()) == (0, ["1.0.0"])
    pulled = run_cli("pull", f"{location}/demo", "--version", "1.0.0", "-d", str(tmp_path / "d"))
    assert pulled.code == 0, pulled.stderr


@pytest.mark.parametrize(
    ("pushed", "latest"),
    [
        (("1.0.0", "1.10.0", "1.9.0", "2.0.0-rc.1"), "1.10.0"),
        (("0.1.0-alpha", "0.1.0-beta"), "0.1.0-beta"),
    ],
    ids=["highest-stable-over-newer-prerelease", "prerelease-when-nothing-is-stable"],
)
def test_pull_without_a_version_takes_the_latest(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    tmp_path: Path,
    pushed: tuple[str, ...],
    latest: str,
) -> None:
    for version in pushed:
        chart_dir = make_chart("demo", version, parent=tmp_path / version)
        assert run_cli("push", str(chart_dir), oci_registry.oci(repo_path)).code == 0
    result = run_cli("pull", oci_registry.oci(f"{repo_path}/demo"), "-d", str(tmp_path / "d"))
    assert result.code == 0, result.stderr
    assert output_field(result.stdout, "Pulled").endswith(f"/demo:{latest}")
    assert (tmp_path / "d" / f"demo-{latest}.tgz").is_file()


def test_pull_without_a_version_of_a_chart_without_versions_is_a_failure(
    oci_registry: LocalRegistry, run_cli: RunCli, repo_path: str
) -> None:
    push_artifact(
        oci_registry,
        f"{repo_path}/demo",
        "latest",
        config_type=layout.CONFIG_MEDIA_TYPE,
        layer_type="x/y",
    )
    result = run_cli("pull", oci_registry.oci(f"{repo_path}/demo"))
    assert result.code == 1
    assert "no version among the 0 SemVer tags of the chart" in result.stderr


def test_a_failed_untar_leaves_nothing_half_extracted(
    hostile: HostileServer, run_cli: RunCli, tmp_path: Path
) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data in (("demo/Chart.yaml", b"name: demo\nversion: 1.0.0\n"), ("x", b"")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        escape = tarfile.TarInfo("demo/escape")
        escape.type, escape.linkname = tarfile.SYMTYPE, "../../outside"
        tar.addfile(escape)
    layer = raw.getvalue()
    digest = f"sha256:{hashlib.sha256(layer).hexdigest()}"
    manifest = hostile_chart_manifest(len(layer), digest)
    _serve_chart(hostile, manifest, lambda p, out: whole(out, layer))
    out = tmp_path / "out"
    ref = f"oci://{hostile.host}/charts/demo"
    result = run_cli("pull", ref, "--version", "1.0.0", "--untar", "-d", str(out))
    assert result.code == 1
    assert "entry 'x' is outside demo/" in result.stderr
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("value", ["0", "nan", "-1"], ids=str)
def test_a_deadline_must_be_a_positive_number_of_seconds(run_cli: RunCli, value: str) -> None:
    result = run_cli("versions", "oci://127.0.0.1:1/charts/demo", "--deadline", value)
    assert result.code == 2 and "--deadline: must be" in result.stderr


def _layer_digest(reg: LocalRegistry, repository: str, tag: str) -> str:
    digest: str = get_manifest(reg, repository, tag).json()["layers"][0]["digest"]
    return digest


def test_a_different_chart_over_a_taken_tag_is_refused_unless_forced(
    oci_registry: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    chart_dir = make_chart("demo", "1.0.0")
    target = oci_registry.oci(repo_path)
    assert run_cli("push", str(chart_dir), target, PLAIN).code == 0
    before = _layer_digest(oci_registry, f"{repo_path}/demo", "1.0.0")
    assert run_cli("push", str(chart_dir), target, PLAIN).code == 0  # the same chart: fine

    (chart_dir / "values.yaml").write_text("greeting: changed\n")
    refused = run_cli("push", str(chart_dir), target, PLAIN)
    assert refused.code == 1
    assert f"{target}/demo:1.0.0: the tag already holds a different chart" in refused.stderr
    assert "pass --force to replace it" in refused.stderr
    assert _layer_digest(oci_registry, f"{repo_path}/demo", "1.0.0") == before

    forced = run_cli("push", str(chart_dir), target, PLAIN, "--force")
    assert forced.code == 0, forced.stderr
    assert f"warning: {target}/demo:1.0.0: replaced a different chart ({before})" in forced.stderr
    assert _layer_digest(oci_registry, f"{repo_path}/demo", "1.0.0") != before


def test_a_tag_holding_something_else_is_not_overwritten(
    oci_registry: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    push_artifact(
        oci_registry,
        f"{repo_path}/demo",
        "1.0.0",
        config_type="application/x-thing",
        layer_type="text/plain",
    )
    refused = run_cli("push", str(make_chart()), oci_registry.oci(repo_path), PLAIN)
    assert refused.code == 1
    assert "already holds a different chart (an artifact that is not this kind" in refused.stderr


@pytest.mark.parametrize(
    ("epoch", "code", "created"),
    [
        (None, 0, None),
        ("1700000000", 0, "2023-11-14T22:13:20Z"),
        ("yesterday", 2, None),
    ],
    ids=["unset", "source-date-epoch", "not-a-number"],
)
def test_created_annotation_only_from_source_date_epoch(
    oci_registry: LocalRegistry,
    make_chart: MakeChart,
    run_cli: RunCli,
    repo_path: str,
    monkeypatch: pytest.MonkeyPatch,
    epoch: str | None,
    code: int,
    created: str | None,
) -> None:
    if epoch is not None:
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
    else:
        monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    result = run_cli("push", str(make_chart()), oci_registry.oci(repo_path), PLAIN)
    assert result.code == code, result.stderr
    if code == 0:
        annotations = get_manifest(oci_registry, f"{repo_path}/demo", "1.0.0").json()["annotations"]
        assert annotations.get("org.opencontainers.image.created") == created
    else:
        assert "SOURCE_DATE_EPOCH: must be a number of seconds" in result.stderr


def test_push_takes_version_overrides(
    oci_registry: LocalRegistry, make_chart: MakeChart, run_cli: RunCli, repo_path: str
) -> None:
    result = run_cli(
        "push",
        str(make_chart("demo", "0.0.0")),
        oci_registry.oci(repo_path),
        PLAIN,
        "--version",
        "v3.28.2",
        "--app-version",
        "3.28.2",
    )
    assert result.code == 0, result.stderr
    manifest = get_manifest(oci_registry, f"{repo_path}/demo", "v3.28.2").json()
    config = json.loads(get_blob(oci_registry, f"{repo_path}/demo", manifest["config"]["digest"]))
    assert (config["version"], config["appVersion"]) == ("v3.28.2", "3.28.2")
    assert manifest["annotations"]["org.opencontainers.image.version"] == "v3.28.2"
