"""`bundler artifact push|pull|versions`: directories of manifests in OCI registries, in Flux's
artifact format (what `flux push artifact` writes and Flux's OCIRepository reads).

Connection flags, credentials, bounds and exit codes are those of `bundler chart` (see
bundler.commands.chart): `--username` with `--password-stdin` or the Docker config, plain HTTP to
loopback registries, `--timeout` per request and `--deadline` per operation, 2 for invalid input
and 1 for everything else. `push` records `--source` and `--revision` as Flux does and writes
`org.opencontainers.image.created` only from SOURCE_DATE_EPOCH, so the same directory pushed again
is the same manifest; it refuses to put a different artifact under a tag that holds one unless
`--force`. `pull` takes a tag, or resolves `--version` (an exact version, a range, or by default
the latest) against the SemVer tags as `chart pull` does, and writes the files into a directory
that must be absent or empty.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from bundler.commands.chart import (
    add_connection_flags,
    created_annotation,
    output_dir,
    registry_options,
    run_versions,
    tag_for,
)
from bundler.core.versions import is_exact_version, parse_constraint
from bundler.errors import InvalidInputError
from bundler.oci import artifact_archive, artifacts, reference
from bundler.oci.artifact_layout import Origin

WHAT = "the artifact"


def run_push(args: argparse.Namespace) -> int:
    repo, tag = reference.parse_tagged(args.remote)
    if tag is None:
        raise InvalidInputError(
            "the reference must name a tag: oci://HOST/PATH:TAG", obj=args.remote
        )
    archive = artifact_archive.pack(Path(args.directory))
    origin = Origin(source=args.source, revision=args.revision, created=created_annotation())
    pushed = artifacts.push_artifact(
        archive,
        repo.tagged(tag),
        registry_options(args, repo.host),
        origin=origin,
        force=args.force,
    )
    if pushed.replaced is not None:
        print(
            f"warning: {pushed.reference.url}: replaced a different artifact ({pushed.replaced}); "
            "clusters following this tag get the new one at Flux's next reconcile",
            file=sys.stderr,
        )
    print(f"Pushed: {pushed.reference.url}")
    print(f"Digest: {pushed.digest}")
    print(f"Files: {archive.files}")
    return 0


def run_pull(args: argparse.Namespace) -> int:
    repo, tag = reference.parse_tagged(args.ref)
    if tag is not None and args.version is not None:
        raise InvalidInputError("give a tag or --version, not both", obj=args.ref)
    if args.version is not None and not is_exact_version(args.version):
        parse_constraint(args.version, field="--version")  # a typo fails before any request
    destination = output_dir(args.output, "--output")
    options = registry_options(args, repo.host)
    if tag is not None:
        chosen = repo.tagged(tag)
    else:
        chosen = tag_for(repo, args.version, options, what=WHAT)
    pulled = artifacts.pull_artifact(chosen, options)
    files = artifact_archive.extract(pulled.archive, destination, source=pulled.reference.url)
    print(f"Pulled: {pulled.reference.url}")
    print(f"Digest: {pulled.digest}")
    for label, value in (("Source", pulled.origin.source), ("Revision", pulled.origin.revision)):
        if value:
            print(f"{label}: {value}")
    print(f"Saved: {files} files in {destination}")
    return 0


def register(sub: Any) -> None:
    """Add `artifact` and its sub-commands to the `bundler` parser."""
    artifact: argparse.ArgumentParser = sub.add_parser(
        "artifact",
        help="push, pull and list directories of manifests in OCI registries (Flux's format)",
    )
    commands = artifact.add_subparsers(dest="artifact_command", required=True, metavar="SUBCOMMAND")

    push = commands.add_parser(
        "push",
        help="push a directory of manifests to oci://HOST/PATH:TAG",
        description="Pack a directory as `flux push artifact` does (a gzipped tarball layer "
        "application/vnd.cncf.flux.content.v1.tar+gzip, config "
        "application/vnd.cncf.flux.config.v1+json), reproducibly: sorted entries, fixed times "
        "and owners, so the same directory is the same digest. .git/ and what Flux's CLI leaves "
        "out by default are left out; symbolic links are packed as the file they point to inside "
        "the directory, and refused when they leave it; at most 100 MiB of files. "
        "org.opencontainers.image.created is written only from SOURCE_DATE_EPOCH. A tag that "
        "already holds a different artifact is refused unless --force.",
    )
    push.add_argument("directory", metavar="DIR", help="the directory of manifests")
    push.add_argument("remote", metavar="oci://HOST[:PORT]/PATH:TAG")
    push.add_argument(
        "--source", help="the source address, e.g. the Git URL (org.opencontainers.image.source)"
    )
    push.add_argument(
        "--revision",
        help="the source revision, as Flux writes it: <branch|tag>@sha1:<commit> "
        "(org.opencontainers.image.revision)",
    )
    push.add_argument(
        "--force",
        action="store_true",
        help="replace a different artifact already pushed under the same tag (with a warning)",
    )
    add_connection_flags(push)
    push.set_defaults(run=run_push)

    pull = commands.add_parser(
        "pull",
        help="download an artifact from oci://HOST/PATH[:TAG] into a directory",
        description="Download a Flux artifact and unpack its files into --output, which must be "
        "absent or empty: all of them or none, at most 100 MiB once decompressed, only files and "
        "directories below it.",
    )
    pull.add_argument("ref", metavar="oci://HOST[:PORT]/PATH[:TAG]")
    pull.add_argument(
        "--version",
        help="without a tag: an exact version, or a range resolved against the tags "
        "(default: the latest version, stable preferred)",
    )
    pull.add_argument(
        "-o", "--output", required=True, metavar="DIR", help="the directory to write the files in"
    )
    add_connection_flags(pull)
    pull.set_defaults(run=run_pull)

    versions = commands.add_parser("versions", help="list an artifact's SemVer tags, newest first")
    versions.add_argument("ref", metavar="oci://HOST[:PORT]/PATH")
    add_connection_flags(versions)
    versions.set_defaults(run=run_versions)
