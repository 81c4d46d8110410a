"""Bad input against every `bundler` command: one clear line naming the file, document or flag and
the field, exit 2 for invalid input and 1 for other failures, and never a traceback.

Each table row is one input a user (or a broken server) can hand bundler; the ids say which.
Servers the tests need (a dead port, an HTTP server answering garbage, the test API server) listen
on 127.0.0.1 only and are stopped by the test that started them.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from bundler.apiserver.server import ApiServer
from tests.support.cli_helpers import LOOPBACK_ENDPOINTS, CliResult

ROOT = Path(__file__).parents[2]
DEAD = "127.0.0.1:1"  # nothing listens on port 1: connections are refused at once

HEAD = "apiVersion: bundler.dev/v1alpha1\n"
CLUSTER = HEAD + "kind: Cluster\nmetadata: {name: c, namespace: ws, labels: {env: prod}}\n"
HELM = "  helm: {repo: 'https://charts.example', chart: c, version: 1.0.0}\n"
ALL = "  targets: [{clusterSelector: {}}]\n"


def bundle_doc(spec: str, meta: str = "{name: b, namespace: ws}") -> str:
    """A Bundle with `spec` (indented body lines), followed by a Cluster it can target."""
    return f"{HEAD}kind: Bundle\nmetadata: {meta}\nspec:\n{spec}---\n{CLUSTER}"


def values_doc(values: str) -> str:
    """A Bundle whose spec.helm.values is the YAML flow text `values`, targeting every cluster."""
    return bundle_doc(
        f"  helm: {{repo: 'https://charts.example', chart: c, version: 1.0.0, values: {values}}}\n"
        + ALL
    )


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


ALIAS_BOMB = (
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "kind: Cluster\n"
)

CAPI = "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\n"
CAPI_META = "metadata: {name: c1, namespace: ns, labels: {bundler.dev/import: 'true'}}\n"
INITIALIZED = "status: {initialization: {controlPlaneInitialized: true}}\n"
KUBECONFIG_SECRET = (
    "---\napiVersion: v1\nkind: Secret\nmetadata: {name: c1-kubeconfig, namespace: ns}\n"
)


@dataclass(frozen=True)
class Case:
    id: str
    text: str | bytes
    code: int
    fragments: tuple[str, ...]


def case(id: str, text: str | bytes, code: int, *fragments: str) -> Case:
    return Case(id, text, code, fragments)


# Each input is written to in.yaml and given to `bundler render -f`.
DOCUMENT_CASES = [
    case(
        "empty-file",
        "",
        1,
        "in.yaml: read 1 file (",
        "no Bundle, Cluster, ClusterGroup or Cluster API",
        "no document in them",
    ),
    case("only-separators", "---\n---\n", 1, "no Bundle, Cluster, ClusterGroup"),
    case("binary-file", b"\x8c\x00\xff\xfe" * 20, 2, "in.yaml: not UTF-8 text (byte 0x8c"),
    case("list-document", "- a\n- b\n", 1, "in.yaml:1: skipped a list", "1 document skipped"),
    case("scalar-document", "hello\n", 1, "in.yaml:1: skipped a string", "no Bundle"),
    case(
        "malformed-second-document",
        CLUSTER + "---\nkey: [unclosed\n",
        2,
        "in.yaml:6: malformed YAML (line 6)",
    ),
    case("tab-indent", HEAD + "kind: Bundle\nmetadata:\n\tname: b\n", 2, "(line 4)", "'\\t'"),
    case("kind-a-list", HEAD + "kind: [Bundle]\n", 2, "in.yaml:2: kind: must be a string"),
    case("kind-a-mapping", HEAD + "kind: {a: 1}\n", 2, "in.yaml:2: kind: must be a string"),
    case("api-version-a-list", "apiVersion: [v1]\nkind: Secret\n", 2, "in.yaml:1: apiVersion"),
    case("control-character", CLUSTER + "x: \x07\n", 2, "in.yaml:4", "control character"),
    case(
        "spec-null",
        HEAD + "kind: Bundle\nmetadata: {name: b}\nspec: null\n",
        2,
        "in.yaml:4: spec: must be a mapping, got null",
    ),
    case(
        "metadata-without-name",
        HEAD + "kind: Bundle\nmetadata: {}\nspec:\n" + HELM,
        2,
        "in.yaml:3: metadata.name: required field is missing",
    ),
    case(
        "name-empty",
        HEAD + "kind: Cluster\nmetadata: {name: ''}\n",
        2,
        "metadata.name: must not be empty",
    ),
    case(
        "name-not-dns",
        HEAD + "kind: Cluster\nmetadata: {name: Bad_Name}\n",
        2,
        "in.yaml:3: metadata.name: 'Bad_Name' is not a valid name",
    ),
    case(
        "namespace-not-dns",
        HEAD + "kind: Cluster\nmetadata: {name: c, namespace: 'A B'}\n",
        2,
        "metadata.namespace: 'A B' is not a valid namespace name",
    ),
    case(
        "label-value-number",
        HEAD + "kind: Cluster\nmetadata: {name: c, labels: {env: 1}}\n",
        2,
        "in.yaml:3: metadata.labels.env: must be a string, got a number (quote it)",
    ),
    case(
        "label-value-bool",
        HEAD + "kind: Cluster\nmetadata: {name: c, labels: {enabled: true}}\n",
        2,
        "metadata.labels.enabled: must be a string, got a boolean (quote it)",
    ),
    case(
        "label-key-yaml-boolean",
        HEAD + "kind: Cluster\nmetadata: {name: c, labels: {on: x}}\n",
        2,
        "metadata.labels: key true must be a string (quote it)",
    ),
    case(
        "label-key-invalid",
        HEAD + "kind: Cluster\nmetadata: {name: c, labels: {'bad key': x}}\n",
        2,
        "metadata.labels: label key 'bad key'",
    ),
    case(
        "label-value-too-long",
        HEAD + "kind: Cluster\nmetadata: {name: c, labels: {k: " + "v" * 64 + "}}\n",
        2,
        "must be at most 63 characters",
    ),
    case(
        "target-bad-cluster-group-selector",
        bundle_doc(
            HELM + "  targets: [{clusterGroupSelector: {matchExpressions: "
            "[{key: env, operator: Foo, values: [a]}]}}]\n"
        ),
        2,
        "spec.targets[0].clusterGroupSelector.matchExpressions[0].operator",
    ),
    case(
        "cluster-group-selector-without-values",
        HEAD + "kind: ClusterGroup\nmetadata: {name: g}\n"
        "spec: {selector: {matchExpressions: [{key: env, operator: In}]}}\n",
        2,
        "spec.selector.matchExpressions[0].values: must be specified when operator is In",
    ),
    case(
        "cluster-group-selector-null",
        HEAD + "kind: ClusterGroup\nmetadata: {name: g}\nspec: {selector: null}\n",
        2,
        "spec.selector: must be a mapping, got null",
    ),
    case(
        "values-map-key-number",
        values_doc("{1: a}"),
        2,
        "spec.helm.values: key 1 must be a string (quote it)",
    ),
    case(
        "huge-integer",
        values_doc("{a: 99999999999999999999999}"),
        2,
        "in.yaml:5: malformed YAML (line 5)",
        "does not fit in 64 bits",
    ),
    case("not-a-number", values_doc("{a: .nan}"), 2, "'.nan' is not a number JSON can carry"),
    case("binary-tag", values_doc("{a: !!binary aGVsbG8=}"), 2, "!!binary is not supported"),
    case(
        "duplicate-keys",
        HEAD + "kind: Cluster\nmetadata:\n  name: a\n  name: b\n",
        2,
        "in.yaml:5: malformed YAML (line 5): key 'name' is repeated (first on line 4)",
    ),
    case("alias-bomb", ALIAS_BOMB, 2, "in.yaml:1", "aliases expand this document by more than"),
    case(
        "recursive-alias",
        values_doc("&v {a: *v}"),
        2,
        "in.yaml:5",
        "an alias refers to a node containing it",
    ),
    case(
        "deep-nesting-beyond-the-stack",
        values_doc(nested(5000)),
        2,
        "in.yaml:1: malformed YAML: nested more than 100 levels deep",
    ),
    case(
        "deep-nesting-over-the-limit",
        values_doc(nested(150)),
        2,
        "nested more than 100 levels deep",
    ),
    case(
        "negative-max-unavailable",
        bundle_doc(HELM + "  rolloutStrategy: {maxUnavailable: -1}\n"),
        2,
        "spec.rolloutStrategy.maxUnavailable",
    ),
    case(
        "repo-without-host",
        bundle_doc("  helm: {repo: 'oci://', chart: c, version: 1.0.0}\n" + ALL),
        2,
        "spec.helm.repo: 'oci://' does not name a host",
    ),
    case(
        "repo-port-out-of-range",
        bundle_doc("  helm: {repo: 'oci://host:99999/c', chart: c, version: 1.0.0}\n" + ALL),
        2,
        "spec.helm.repo: 'oci://host:99999/c' is not a valid URL: Port out of range",
    ),
    case(
        "chart-name-with-path",
        bundle_doc("  helm: {repo: 'https://x.example', chart: a/../b, version: 1.0.0}\n" + ALL),
        2,
        "spec.helm.chart: 'a/../b' is not a chart name",
    ),
    case(
        "cluster-group-name-invalid",
        bundle_doc(HELM + "  targets: [{clusterGroup: 'A B'}]\n"),
        2,
        "spec.targets[0].clusterGroup: 'A B' is not a valid name",
    ),
    case(
        "depends-on-name-invalid",
        bundle_doc(HELM + "  dependsOn: [{name: 'A/B'}]\n"),
        2,
        "spec.dependsOn[0].name: 'A/B' is not a valid name",
    ),
    case(
        "kubeconfig-secret-name-invalid",
        HEAD + "kind: Cluster\nmetadata: {name: c}\nspec: {kubeConfigSecret: 'A B'}\n",
        2,
        "spec.kubeConfigSecret: 'A B' is not a valid name",
    ),
    case(
        "capi-spec-list",
        CAPI + CAPI_META + "spec: [1]\n" + INITIALIZED,
        2,
        "in.yaml:1: spec: must be a mapping, got a list",
    ),
    case(
        "capi-status-string",
        CAPI + CAPI_META + "spec: {}\nstatus: provisioned\n",
        2,
        "in.yaml:1: status: must be a mapping, got a string",
    ),
    case(
        "capi-control-plane-flag-string",
        CAPI
        + CAPI_META
        + "spec: {}\nstatus: {initialization: {controlPlaneInitialized: 'true'}}\n",
        2,
        "status.initialization.controlPlaneInitialized: must be true or false, got a string",
    ),
    case(
        "capi-topology-list",
        CAPI + CAPI_META + "spec: {topology: [1]}\n" + INITIALIZED,
        2,
        "spec.topology: must be a mapping, got a list",
    ),
    case(
        "capi-name-number",
        CAPI + "metadata: {name: 5}\n",
        2,
        "in.yaml:1: metadata.name: must be a string, got a number",
    ),
    case(
        "capi-annotations-list",
        CAPI + "metadata: {name: c1, annotations: [a]}\nspec: {}\n",
        2,
        "metadata.annotations: must be a mapping, got a list",
    ),
    case(
        "kubeconfig-secret-bad-base64",
        CAPI
        + CAPI_META
        + "spec: {}\n"
        + INITIALIZED
        + KUBECONFIG_SECRET
        + "data: {value: '!!!not base64'}\n",
        2,
        "in.yaml:7: data.value: is not valid base64",
    ),
    case(
        "kubeconfig-secret-data-list",
        CAPI + CAPI_META + "spec: {}\n" + INITIALIZED + KUBECONFIG_SECRET + "data: [1]\n",
        2,
        "in.yaml:7: data: must be a mapping, got a list",
    ),
    case(
        "kubeconfig-secret-string-data-number",
        CAPI
        + CAPI_META
        + "spec: {}\n"
        + INITIALIZED
        + KUBECONFIG_SECRET
        + "stringData: {value: 5}\n",
        2,
        "in.yaml:7: stringData: must map strings to strings",
    ),
    case(
        "credentials-secret-type-number",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: ws}\ntype: 5\n",
        2,
        "in.yaml:1: type: must be a string, got a number",
    ),
    case(
        "credentials-secret-bad-key",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {'a/b': x}\n",
        2,
        "in.yaml:1: stringData: key 'a/b' must be at most 253 letters",
    ),
    # Rendering failures are confined to the cluster: exit 1, the cause on stderr.
    case(
        "template-error-in-map-key",
        values_doc("{'${ cluster.nope }': 1}"),
        1,
        "Bundle ws/b for Cluster ws/c: values (map key '${ cluster.nope }'): no key 'nope'",
    ),
    case(
        "template-infinite-loop",
        values_doc("{a: '${% for i in range(10**9) %}x${% endfor %}'}"),
        1,
        "values.a: range() of 1000000000 numbers is over the limit",
    ),
    case(
        "template-huge-string",
        values_doc("{a: '${ \"x\" * 10**12 }'}"),
        1,
        "values.a: `*` would build about 1000000000000 bytes",
    ),
    case(
        "template-infinity",
        values_doc("{a: '${ 1.0e308 * 10 }'}"),
        1,
        "values.a: the expression evaluates to inf, which JSON cannot carry",
    ),
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> CliResult:
    """`bundler ARGV` in-process; argparse's usage errors (SystemExit) count as their exit code."""
    from bundler.cli import main

    if argv and argv[0] in ("manager", "agent"):
        argv = (argv[0], *LOOPBACK_ENDPOINTS, *argv[1:])  # flags given later win
    try:
        code = main(list(argv))
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 2
    out, err = capsys.readouterr()
    return CliResult(code, out, err)


def assert_fails(result: CliResult, code: int, *fragments: str) -> None:
    assert result.code == code, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


@pytest.mark.parametrize("bad", DOCUMENT_CASES, ids=[c.id for c in DOCUMENT_CASES])
def test_render_names_the_document_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bad: Case
) -> None:
    path = tmp_path / "in.yaml"
    if isinstance(bad.text, bytes):
        path.write_bytes(bad.text)
    else:
        path.write_text(bad.text, encoding="utf-8")
    result = run(capsys, "render", "-f", str(path))
    assert_fails(result, bad.code, *bad.fragments)


def test_timestamps_stay_text_as_kubectl_reads_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(values_doc("{day: 2024-01-01}"), encoding="utf-8")
    result = run(capsys, "render", "-f", str(path), "-o", "json")
    assert result.code == 0, result.stderr
    deployment = json.loads(result.stdout)["items"][0]
    assert deployment["spec"]["options"]["helm"]["values"] == {"day": "2024-01-01"}


def _dir_without_yaml(root: Path) -> Path:
    (root / "notes.txt").write_text("not yaml\n")
    return root


def _dir_named_like_yaml(root: Path) -> Path:
    target = root / "x.yaml"
    (target / "inner.yaml").mkdir(parents=True)  # directories named *.yaml, no file
    return target


PATH_CASES: list[tuple[str, Callable[[Path], Path], str]] = [
    ("directory-without-yaml", _dir_without_yaml, "no .yaml or .yml file in this directory"),
    ("directory-named-x-yaml", _dir_named_like_yaml, "no .yaml or .yml file in this directory"),
    ("missing-path", lambda root: root / "nope.yaml", "no such file or directory"),
]


@pytest.mark.parametrize("command", ["render", "explain", "sim"])
@pytest.mark.parametrize(
    ("make", "message"), [c[1:] for c in PATH_CASES], ids=[c[0] for c in PATH_CASES]
)
def test_input_paths_that_hold_no_documents(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    make: Callable[[Path], Path],
    message: str,
) -> None:
    path = make(tmp_path)
    extra = ("--bundle", "ws/b", "--cluster", "ws/c") if command == "explain" else ()
    result = run(capsys, command, "-f", str(path), *extra)
    assert_fails(result, 2, str(path), message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (values_doc(nested(5000)), "nested more than 100 levels deep"),
        (values_doc("&v {a: *v}"), "an alias refers to a node containing it"),
    ],
    ids=["deep-nesting", "recursive-alias"],
)
def test_explain_and_sim_read_inputs_as_render_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "in.yaml"
    path.write_text(text, encoding="utf-8")
    explained = run(capsys, "explain", "-f", str(path), "--bundle", "ws/b", "--cluster", "ws/c")
    assert_fails(explained, 2, "in.yaml:", message)
    simulated = run(capsys, "sim", "-f", str(path), "--timeout", "5")
    assert_fails(simulated, 2, "in.yaml:", message)


# -- chart ----------------------------------------------------------------------------------------

GOOD_CHART = "apiVersion: v2\nname: demo\nversion: 1.2.3\n"

CHART_CASES: list[tuple[str, str | bytes | None, str]] = [
    ("no-chart-yaml", None, "no Chart.yaml in this directory"),
    ("bad-yaml", "apiVersion: v2\nname: [x\n", "Chart.yaml: malformed YAML (line 3)"),
    ("bad-version", "apiVersion: v2\nname: demo\nversion: not-semver!\n", "version: 'not-semver!'"),
    ("number-version", "apiVersion: v2\nname: demo\nversion: 1.0\n", "version: must be a string"),
    ("binary-chart-yaml", b"\x97\x00\xff" * 30, "Chart.yaml: not UTF-8 text"),
    ("deep-chart-yaml", GOOD_CHART + "x: " + nested(5000) + "\n", "nested more than 100 levels"),
    ("dependencies-number", GOOD_CHART + "dependencies: 5\n", "dependencies: must be a list"),
    ("duplicate-keys", GOOD_CHART + "name: other\n", "key 'name' is repeated"),
]


@pytest.mark.parametrize(
    ("chart_yaml", "message"), [c[1:] for c in CHART_CASES], ids=[c[0] for c in CHART_CASES]
)
def test_chart_package_and_push_name_the_chart_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, chart_yaml: str | bytes | None, message: str
) -> None:
    chart = tmp_path / "demo"
    chart.mkdir()
    if isinstance(chart_yaml, bytes):
        (chart / "Chart.yaml").write_bytes(chart_yaml)
    elif chart_yaml is not None:
        (chart / "Chart.yaml").write_text(chart_yaml)
    packaged = run(capsys, "chart", "package", str(chart), "-d", str(tmp_path / "out"))
    assert_fails(packaged, 2, str(chart), message)
    pushed = run(capsys, "chart", "push", str(chart), f"oci://{DEAD}/charts", "--plain-http")
    assert_fails(pushed, 2, str(chart), message)


@pytest.fixture
def chart_dir(tmp_path: Path) -> Path:
    chart = tmp_path / "demo"
    chart.mkdir()
    (chart / "Chart.yaml").write_text(GOOD_CHART)
    return chart


CHART_ARG_CASES: list[tuple[str, tuple[str, ...], int, tuple[str, ...]]] = [
    (
        "push-dead-registry",
        ("push", "{chart}", f"oci://{DEAD}/charts", "--plain-http"),
        1,
        (f"oci://{DEAD}/charts/demo:1.2.3: cannot reach registry {DEAD}: Connection refused",),
    ),
    (
        "push-missing-source",
        ("push", "{tmp}/nope", f"oci://{DEAD}/charts"),
        2,
        ("nope: no such chart directory or archive",),
    ),
    (
        "push-https-reference",
        ("push", "{chart}", "https://127.0.0.1/charts"),
        2,
        ("expected an oci://HOST/PATH reference",),
    ),
    ("push-no-host", ("push", "{chart}", "oci:///charts"), 2, ("invalid registry host ''",)),
    (
        "push-port-out-of-range",
        ("push", "{chart}", "oci://host:99999/charts"),
        2,
        ("oci://host:99999/charts: port 99999 is not between 1 and 65535",),
    ),
    (
        "push-tag-in-reference",
        ("push", "{chart}", "oci://host/charts:1.0"),
        2,
        ("a tag or digest is not allowed here",),
    ),
    (
        "push-uppercase-path",
        ("push", "{chart}", "oci://host/Charts"),
        2,
        ("invalid repository path component 'Charts'",),
    ),
    (
        "push-timeout-nan",
        ("push", "{chart}", f"oci://{DEAD}/charts", "--timeout", "nan"),
        2,
        ("--timeout: must be a finite number of seconds, got nan",),
    ),
    (
        "push-timeout-infinite",
        ("push", "{chart}", f"oci://{DEAD}/charts", "--timeout", "inf"),
        2,
        ("--timeout: must be a finite number of seconds, got inf",),
    ),
    (
        "pull-bad-version-before-any-request",
        ("pull", f"oci://{DEAD}/charts/demo", "--version", "not a version"),
        2,
        ("--version: invalid version constraint 'not a version'",),
    ),
    (
        "pull-destination-is-a-file",
        ("pull", f"oci://{DEAD}/charts/demo", "--version", "1.2.3", "-d", "{chart}/Chart.yaml"),
        2,
        ("--destination:", "Chart.yaml exists and is not a directory"),
    ),
    (
        "pull-reference-without-chart",
        ("pull", f"oci://{DEAD}", "--version", "1.2.3"),
        2,
        ("the reference must name a repository",),
    ),
    (
        "package-destination-is-a-file",
        ("package", "{chart}", "-d", "{chart}/Chart.yaml"),
        2,
        ("--destination:", "Chart.yaml exists and is not a directory"),
    ),
    (
        "versions-dead-registry",
        ("versions", f"oci://{DEAD}/charts/demo", "--plain-http"),
        1,
        ("cannot reach registry", "Connection refused"),
    ),
]


@pytest.mark.parametrize(
    ("argv", "code", "fragments"),
    [c[1:] for c in CHART_ARG_CASES],
    ids=[c[0] for c in CHART_ARG_CASES],
)
def test_chart_commands_reject_bad_references_and_flags(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    chart_dir: Path,
    argv: tuple[str, ...],
    code: int,
    fragments: tuple[str, ...],
) -> None:
    args = [a.format(chart=chart_dir, tmp=tmp_path) for a in argv]
    assert_fails(run(capsys, "chart", *args), code, *fragments)


# -- registries and repositories that answer nonsense ---------------------------------------------

Answer = tuple[int, bytes, Mapping[str, str]]
Responder = Callable[[str], Answer]


class _Responding(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # the name http.server dispatches to
        respond: Responder = self.server.respond  # type: ignore[attr-defined]
        status, body, headers = respond(self.path)
        self.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[Callable[[Responder], str]]:
    """Start HTTP servers on 127.0.0.1 answering with a responder; returns `host:port`."""
    servers: list[ThreadingHTTPServer] = []

    def start(respond: Responder) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Responding)
        server.respond = respond  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


JSON_HEADERS = {"Content-Type": "application/json"}
NEXT_PAGE = {**JSON_HEADERS, "Link": '</v2/charts/demo/tags/list?last=x>; rel="next"'}

TAG_LIST_CASES: list[tuple[str, Answer, str]] = [
    ("not-json", (200, b"\x00\xffnot json", JSON_HEADERS), "the registry's tag list is not JSON"),
    ("a-list", (200, b"[1, 2, 3]", JSON_HEADERS), 'is not an object with a "tags" list'),
    ("tags-not-text", (200, b'{"tags": [1, null]}', JSON_HEADERS), "tags that are not text"),
    ("pages-never-end", (200, b'{"tags": ["1.0.0"]}', NEXT_PAGE), "on more than 3 pages"),
]


@pytest.mark.parametrize(
    ("answer", "message"), [c[1:] for c in TAG_LIST_CASES], ids=[c[0] for c in TAG_LIST_CASES]
)
def test_chart_versions_against_a_registry_answering_nonsense(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    http_server: Callable[[Responder], str],
    answer: Answer,
    message: str,
) -> None:
    monkeypatch.setattr("bundler.oci.registry.MAX_TAG_PAGES", 3)
    host = http_server(lambda path: answer)
    for argv in (("versions",), ("pull", "--version", "^1")):
        result = run(
            capsys, "chart", argv[0], f"oci://{host}/charts/demo", "--plain-http", *argv[1:]
        )
        assert_fails(result, 1, f"oci://{host}/charts/demo: ", message)


def test_a_repository_index_nested_too_deep_fails_without_crashing(
    tmp_path: Path, http_server: Callable[[Responder], str]
) -> None:
    # libyaml's composer recurses on the C stack: without the streaming depth check first, this
    # index kills the process (SIGSEGV), so it runs in a process of its own.
    index = ("entries: {demo: " + nested(200_000) + "}\n").encode()
    host = http_server(lambda path: (200, index, {}))
    inputs = tmp_path / "in.yaml"
    inputs.write_text(
        bundle_doc(f"  helm: {{repo: 'http://{host}/charts', chart: demo, version: '^1'}}\n" + ALL)
    )
    docker = tmp_path / "docker"
    docker.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "bundler", "render", "-f", str(inputs), "--resolve"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DOCKER_CONFIG": str(docker), "HOME": str(tmp_path)},
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert f"http://{host}/charts/index.yaml: malformed YAML: nested more than 100" in done.stderr


# -- kubeconfigs and API servers -----------------------------------------------------------------


def kubeconfig(server: str, user: str = "{token: abc}") -> str:
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: '{server}'}}}}]\n"
        f"users: [{{name: u, user: {user}}}]\n"
        "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
        "current-context: x\n"
    )


KUBECONFIG_CASES: list[tuple[str, str | bytes | None, str]] = [
    ("missing-file", None, "file not found"),
    ("malformed-yaml", "clusters: [\n", "malformed YAML (line 2)"),
    ("a-list", "- 1\n", "cannot load: not a YAML mapping (apiVersion: v1, kind: Config)"),
    ("binary", b"\xf1\x00\x97" * 20, "not UTF-8 text"),
    ("clusters-a-number", "clusters: 5\n", "cannot load: clusters: must be a list of mappings"),
    ("server-not-a-url", kubeconfig("not a url"), "server 'not a url' is not an http(s) URL"),
    (
        "server-port-out-of-range",
        kubeconfig("http://127.0.0.1:99999"),
        "server 'http://127.0.0.1:99999' is not an http(s) URL",
    ),
    (
        "certificate-not-base64",
        kubeconfig("https://127.0.0.1:1", "{client-certificate-data: '!!!notbase64'}"),
        "cannot load: Invalid base64",
    ),
    ("empty-file", "", "cannot load"),
]

KUBECONFIG_FLAGS = {
    "manager": ("manager", "--kubeconfig"),
    "remote-agent": ("agent", "--mode", "remote", "--management-kubeconfig"),
    "pull-agent-management": ("agent", "--cluster", "ws/c", "--management-kubeconfig"),
}


@pytest.mark.parametrize("command", list(KUBECONFIG_FLAGS), ids=list(KUBECONFIG_FLAGS))
@pytest.mark.parametrize(
    ("content", "message"),
    [c[1:] for c in KUBECONFIG_CASES],
    ids=[c[0] for c in KUBECONFIG_CASES],
)
def test_bad_kubeconfigs_name_the_file(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    command: str,
    content: str | bytes | None,
    message: str,
) -> None:
    path = tmp_path / "kubeconfig"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    result = run(capsys, *KUBECONFIG_FLAGS[command], str(path))
    assert_fails(result, 2, f"kubeconfig {path}", message)


def test_a_kubeconfig_that_is_a_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, "manager", "--kubeconfig", str(tmp_path))
    assert_fails(result, 2, f"kubeconfig {tmp_path}: cannot load: not a file")


AGENT_FLAG_CASES: list[tuple[str, tuple[str, ...], str]] = [
    ("heartbeat-nan", ("--heartbeat-interval", "nan"), "--heartbeat-interval: must be a finite"),
    (
        "heartbeat-negative",
        ("--heartbeat-interval", "-1"),
        "--heartbeat-interval: must be positive",
    ),
    ("namespace-invalid", ("--namespace", "A B"), "--namespace: 'A B' is not a namespace name"),
    ("workspace-invalid", ("--workspace", "A B"), "--workspace: 'A B' is not a namespace name"),
    ("cluster-ref-invalid", ("--cluster", "WS/c!"), "--cluster: 'WS/c!' is not NAMESPACE/NAME"),
    ("cluster-ref-no-slash", ("--cluster", "c"), "--cluster: 'c' is not NAMESPACE/NAME"),
    ("workers-zero", ("--workers", "0"), "--workers: must be at least 1"),
]


@pytest.mark.parametrize(
    ("flags", "message"), [c[1:] for c in AGENT_FLAG_CASES], ids=[c[0] for c in AGENT_FLAG_CASES]
)
def test_agent_flags_are_checked_before_connecting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    # The kubeconfig does not exist: a flag error proves it was found before any connection.
    base = ("agent", "--management-kubeconfig", str(tmp_path / "absent"), "--cluster", "ws/c")
    assert_fails(run(capsys, *base, *flags), 2, message)


def test_an_api_server_nobody_listens_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig(f"http://{DEAD}"))
    result = run(capsys, "agent", "--mode", "remote", "--management-kubeconfig", str(path))
    assert_fails(result, 1, f"connection failed to http://{DEAD}: Connection refused")


def test_credentials_the_api_server_refuses(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with ApiServer(token="the-right-token") as server:
        path = server.kubeconfig(tmp_path / "kubeconfig", token="a-wrong-token")
        result = run(capsys, "agent", "--mode", "remote", "--management-kubeconfig", str(path))
    assert_fails(result, 1, "unauthorized", "the server refused the kubeconfig's credentials")
    assert "a-wrong-token" not in result.stderr


# -- the command line itself ---------------------------------------------------------------------


def test_a_file_that_cannot_be_written_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run(capsys, "crds", "--output-dir", str(blocker / "sub"))
    assert_fails(result, 1, f"error: {blocker / 'sub'}: Not a directory")


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "with-BUNDLER_DEBUG"])
def test_an_unexpected_exception_is_one_line_unless_debugging(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, debug: bool
) -> None:
    def broken(args: Any) -> int:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr("bundler.commands.chart.run_versions", broken)
    if debug:
        monkeypatch.setenv("BUNDLER_DEBUG", "1")
    else:
        monkeypatch.delenv("BUNDLER_DEBUG", raising=False)
    result = run(capsys, "chart", "versions", "oci://host/charts/demo")
    assert result.code == 1
    assert "error: internal error (RuntimeError: boom); please report it" in result.stderr
    assert ("Traceback" in result.stderr) is debug


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        ((), 2, "the following arguments are required: COMMAND"),
        (("frob",), 2, "invalid choice: 'frob'"),
        (("chart",), 2, "the following arguments are required: SUBCOMMAND"),
        (("render", "-f", "{tmp}/in.yaml"), 2, "in.yaml:1: malformed YAML: nested more than 100"),
    ],
    ids=["no-command", "unknown-command", "chart-without-subcommand", "deep-input"],
)
def test_python_dash_m_bundler_in_a_real_process(
    tmp_path: Path, argv: tuple[str, ...], code: int, message: str
) -> None:
    (tmp_path / "in.yaml").write_text(values_doc(nested(5000)))
    done = subprocess.run(
        [sys.executable, "-m", "bundler", *(a.format(tmp=tmp_path) for a in argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == code
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_cluster_name_longer_than_a_label_value_is_invalid_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    doc = "apiVersion: bundler.dev/v1alpha1\nkind: Cluster\nmetadata: {name: " + "c" * 70 + "}\n"
    (tmp_path / "in.yaml").write_text(doc)
    code, _, err = run(capsys, "render", "-f", str(tmp_path / "in.yaml"))
    assert code == 2
    assert "in.yaml:3: metadata.name:" in err and "label values" in err


def test_a_taken_metrics_address_names_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with socket.socket() as taken, ApiServer() as server:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        kubeconfig = server.kubeconfig(tmp_path / "kubeconfig")
        result = run(capsys, "manager", "--kubeconfig", str(kubeconfig), "--metrics-addr", address)
    assert_fails(result, 1, f"--metrics-addr {address}: cannot listen there")
