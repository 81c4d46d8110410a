"""`bundler chart package|push|pull|versions`: Helm charts in OCI registries, Helm's layout.

Registry credentials come from `--username` with `--password-stdin`, else from the Docker config
(`DOCKER_CONFIG` or `~/.docker/config.json`), which is read and never written. A registry on a
loopback host (127.0.0.1, localhost, [::1]) is spoken to over plain HTTP, as by `render`, `sim` and
the manager, unless a TLS flag (`--ca-file`, `--insecure-skip-tls-verify`) asks for TLS; any other
over HTTPS unless `--plain-http` is given.

`package` and `push` take `--version` and `--app-version` as `helm package` does (the archive's
Chart.yaml is rewritten). `push` refuses to put a different chart under a tag that already holds
one (the same version would name two charts) unless `--force`, which replaces it with a warning.
`org.opencontainers.image.created` is written only when `SOURCE_DATE_EPOCH` gives the time, so the
same chart pushed again is the same manifest.

Every registry operation is bounded: `--timeout` per request, `--deadline` for the whole operation
(a tag listing, a pull: manifest and chart), and the size caps of bundler.oci.limits (a chart 100
MiB, compressed or not). Exit codes: 2 for invalid input (flags, references, chart files,
credentials refused), 1 for everything else, a missing chart or version included.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bundler.commands.flag_types import check_seconds
from bundler.core.versions import (
    SemVer,
    is_exact_version,
    parse_constraint,
    resolve_version,
    version_to_tag,
)
from bundler.errors import InvalidInputError, RegistryAnswerError
from bundler.oci import chart as chart_metadata
from bundler.oci import credentials, package, reference, registry, repository, untar
from bundler.oci.client import DEFAULT_DEADLINE_S, DEFAULT_TIMEOUT_S
from bundler.oci.package import ChartArchive


def add_connection_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("registry connection")
    group.add_argument(
        "--plain-http",
        action="store_true",
        help="use HTTP instead of HTTPS (the default for loopback hosts, unless --ca-file or "
        "--insecure-skip-tls-verify asks for TLS)",
    )
    group.add_argument("--username", help="registry user (with --password-stdin)")
    group.add_argument(
        "--password-stdin", action="store_true", help="read the registry password from stdin"
    )
    group.add_argument("--ca-file", type=Path, help="verify the registry with this CA bundle")
    group.add_argument(
        "--insecure-skip-tls-verify", action="store_true", help="do not verify the registry's TLS"
    )
    group.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        help=f"seconds to wait for each registry request (default {DEFAULT_TIMEOUT_S:g})",
    )
    group.add_argument(
        "--deadline",
        type=float,
        default=DEFAULT_DEADLINE_S,
        help="seconds for a whole registry operation, however slowly the registry answers "
        f"(default {DEFAULT_DEADLINE_S:g})",
    )


def _add_override_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--version",
        metavar="VERSION",
        help="set the chart's version (Chart.yaml is rewritten), as helm package --version",
    )
    parser.add_argument(
        "--app-version",
        metavar="VERSION",
        help="set the chart's appVersion, as helm package --app-version",
    )


def _read_password() -> str:
    return sys.stdin.read().rstrip("\r\n")


def registry_options(args: argparse.Namespace, host: str) -> registry.RegistryOptions:
    if args.password_stdin and not args.username:
        raise InvalidInputError("--password-stdin needs --username")
    if args.username and not args.password_stdin:
        raise InvalidInputError("--username needs --password-stdin (passwords are not flags)")
    password = _read_password() if args.password_stdin else None
    if args.ca_file is not None and not args.ca_file.is_file():
        raise InvalidInputError(f"CA file {args.ca_file} does not exist", field="--ca-file")
    check_seconds(args.timeout, "--timeout")
    check_seconds(args.deadline, "--deadline")
    tls_verify: bool | str = not args.insecure_skip_tls_verify
    # A TLS flag asks for TLS, even on a loopback host (which is otherwise plain HTTP).
    tls_asked = args.insecure_skip_tls_verify or args.ca_file is not None
    if args.ca_file is not None and tls_verify:
        tls_verify = str(args.ca_file)
    return registry.RegistryOptions(
        credentials=credentials.resolve(host, args.username, password),
        plain_http=args.plain_http
        or (not tls_asked and reference.uses_plain_http(host, frozenset())),
        tls_verify=tls_verify,
        timeout=args.timeout,
        deadline=args.deadline,
    )


def output_dir(raw: str, flag: str) -> Path:
    """Where a command writes its files: an existing directory, or a path to create one at."""
    path = Path(raw)
    if path.exists() and not path.is_dir():
        raise InvalidInputError(f"{raw} exists and is not a directory", field=flag)
    return path


def _overrides(args: argparse.Namespace) -> chart_metadata.Overrides:
    return chart_metadata.Overrides(version=args.version, app_version=args.app_version)


def run_package(args: argparse.Namespace) -> int:
    destination = output_dir(args.destination, "--destination")
    target, archive = package.package(Path(args.chart_dir), destination, _overrides(args))
    print(f"Packaged: {target}")
    print(f"Digest: {archive.digest}")
    return 0


def archive_to_push(source: Path, overrides: chart_metadata.Overrides) -> ChartArchive:
    """The archive of a chart directory or `.tgz`, checked (and repackaged with `overrides`)."""
    if source.is_dir():
        return package.build_archive(source, overrides)
    if source.is_file():
        return package.load_archive(source.read_bytes(), source=str(source), overrides=overrides)
    raise InvalidInputError("no such chart directory or archive", obj=str(source))


SOURCE_DATE_EPOCH = "SOURCE_DATE_EPOCH"


def created_annotation() -> str | None:
    """`org.opencontainers.image.created` from SOURCE_DATE_EPOCH (seconds), or None."""
    raw = os.environ.get(SOURCE_DATE_EPOCH)
    if raw is None or raw == "":
        return None
    try:
        when = datetime.fromtimestamp(int(raw), tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise InvalidInputError(
            f"must be a number of seconds since 1970, got {raw!r}", field=SOURCE_DATE_EPOCH
        ) from None
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_push(args: argparse.Namespace) -> int:
    location = reference.parse_location(args.remote)
    archive = archive_to_push(Path(args.chart), _overrides(args))
    pushed = registry.push_chart(
        archive,
        location,
        registry_options(args, location.host),
        force=args.force,
        created=created_annotation(),
    )
    if pushed.replaced is not None:
        print(
            f"warning: {pushed.reference.url}: replaced a different chart ({pushed.replaced}); "
            "clusters running this version get the new chart at Flux's next reconcile",
            file=sys.stderr,
        )
    print(f"Pushed: {pushed.reference.url}")
    print(f"Digest: {pushed.digest}")
    return 0


def tag_for(
    repo: reference.ChartRepository,
    version: str | None,
    options: registry.RegistryOptions,
    *,
    what: str = "the chart",
) -> reference.ChartTag:
    """An exact version names its tag; a range, or no version (the latest, stable preferred, as
    Helm does), is resolved against the repository's tags (`what`'s, for the message)."""
    if version is not None and is_exact_version(version):
        return repo.tagged(version_to_tag(version))
    versions = repository.oci_chart_versions(repo, options)
    if version is None:
        chosen = _latest(versions)
    else:
        chosen = resolve_version(version, versions, field="--version")
    if chosen is None:
        wanted = "no version" if version is None else f"no version matches {version!r}"
        raise RegistryAnswerError(
            f"{wanted} among the {len(versions)} SemVer tags of {what}", obj=repo.url
        )
    return repo.tagged(version_to_tag(chosen))


def _latest(newest_first: list[str]) -> str | None:
    stable = [v for v in newest_first if not SemVer.parse(v).prerelease]
    candidates = stable or newest_first
    return candidates[0] if candidates else None


def run_pull(args: argparse.Namespace) -> int:
    repo = reference.parse_repository(args.ref)
    if args.version is not None and not is_exact_version(args.version):
        parse_constraint(args.version, field="--version")  # a typo fails before any request
    destination = output_dir(args.destination, "--destination")
    options = registry_options(args, repo.host)
    pulled = registry.pull_chart(tag_for(repo, args.version, options), options)
    if args.untar:
        name = str(pulled.chart_yaml["name"])
        saved = untar.extract(pulled.archive, name, destination, source=pulled.reference.url)
    else:
        destination.mkdir(parents=True, exist_ok=True)
        saved = destination / pulled.filename
        saved.write_bytes(pulled.archive)
    print(f"Pulled: {pulled.reference.url}")
    print(f"Digest: {pulled.digest}")
    print(f"Saved: {saved}")
    return 0


def run_versions(args: argparse.Namespace) -> int:
    repo = reference.parse_repository(args.ref)
    for version in repository.oci_chart_versions(repo, registry_options(args, repo.host)):
        print(version)
    return 0


def register(sub: Any) -> None:
    """Add `chart` and its sub-commands to the `bundler` parser."""
    chart: argparse.ArgumentParser = sub.add_parser(
        "chart", help="package, push, pull and list Helm charts in OCI registries"
    )
    commands = chart.add_subparsers(dest="chart_command", required=True, metavar="SUBCOMMAND")

    pkg = commands.add_parser(
        "package",
        help="write a deterministic NAME-VERSION.tgz",
        description="Package a chart directory as helm package does (dependencies must be in "
        "charts/), deterministically: the same directory gives the same digest.",
    )
    pkg.add_argument("chart_dir", metavar="DIR", help="the chart directory (with Chart.yaml)")
    pkg.add_argument("-d", "--destination", default=".", metavar="OUT", help="output directory")
    _add_override_flags(pkg)
    pkg.set_defaults(run=run_package)

    push = commands.add_parser(
        "push",
        help="push a chart to oci://HOST/PATH as PATH/NAME:VERSION",
        description="Push a chart directory or .tgz in Helm's OCI layout, with the annotations "
        "helm push writes (org.opencontainers.image.created only from SOURCE_DATE_EPOCH). A tag "
        "that already holds a different chart is refused unless --force.",
    )
    push.add_argument("chart", metavar="DIR|TGZ", help="a chart directory or packaged .tgz")
    push.add_argument("remote", metavar="oci://HOST[:PORT]/PATH")
    _add_override_flags(push)
    push.add_argument(
        "--force",
        action="store_true",
        help="replace a different chart already pushed under the same tag (with a warning)",
    )
    add_connection_flags(push)
    push.set_defaults(run=run_push)

    pull = commands.add_parser("pull", help="download a chart from oci://HOST/PATH/NAME")
    pull.add_argument("ref", metavar="oci://HOST[:PORT]/PATH/NAME")
    pull.add_argument(
        "--version",
        help="an exact version, or a range resolved against the tags "
        "(default: the latest version, stable preferred)",
    )
    pull.add_argument("-d", "--destination", default=".", metavar="DIR", help="output directory")
    pull.add_argument("--untar", action="store_true", help="unpack the chart as DIR/NAME")
    add_connection_flags(pull)
    pull.set_defaults(run=run_pull)

    versions = commands.add_parser("versions", help="list a chart's versions, newest first")
    versions.add_argument("ref", metavar="oci://HOST[:PORT]/PATH/NAME")
    add_connection_flags(versions)
    versions.set_defaults(run=run_versions)
