"""`bundler images update`: write the image tags the Bundles' policies choose into YAML files.

For git workflows (a CI job that opens a pull request): every line of the input files carrying an
image policy marker (bundler.core.images.markers: `# {"$imagepolicy": "NS/BUNDLE:IMAGE[:part]"}`)
gets the value the image named there resolves to now, as the manager would resolve it
(bundler.oci.images: the Bundle's `spec.images[]` policy, filters and platform; target overrides
do not apply, a marked line names no target). Only images some marker names are resolved; all of
them are resolved before any file is written, so a failure leaves every file as it was. Documents
of kinds bundler does not read (values, Deployments) are where markers live: skipped as objects
without a notice (`--strict` still refuses them).

Only the value on a marked line changes (bundler.core.images.markers.rewrite): comments, quoting,
layout and line endings stay. Each change prints as `FILE:LINE: OLD -> NEW`. Exit 0 when every
marked value is already current, 1 when something changed (or would, with --dry-run) or failed,
2 for invalid input. A file found in a directory given with `-f` must lie inside it: a symbolic
link out of the directory is invalid input before anything is read. Files are written whole: the
new text goes to a temporary file beside the file's real place, renamed over it (its mode kept),
so a reader never sees half a file, and a hard link elsewhere keeps the old text. Credentials:
the image's `secretRef` Secret when the inputs hold it, else
the Docker config (`--registry-config PATH`, else `$DOCKER_CONFIG/config.json`, else
`~/.docker/config.json`).
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundler.api.bundle import Bundle
from bundler.api.images import ResolvedImage
from bundler.commands.arguments import (
    add_input_paths,
    add_registry_arguments,
    image_resolver_settings,
)
from bundler.commands.manifests import add_registry_config_argument
from bundler.core.images.markers import ImageAddress, Marker, find_markers, marked_value, rewrite
from bundler.errors import BundlerError, InvalidInputError
from bundler.inputs import STDIN, World, input_files, load_world, read_input_text
from bundler.oci.images import ImageResolver, ImageResolverSettings

EXIT_CURRENT = 0
EXIT_CHANGED = 1
DOCKER_CONFIG_HINT = (
    "add the registry's credentials to the Docker config (--registry-config, $DOCKER_CONFIG, "
    "~/.docker/config.json) or put the image's secretRef Secret among the inputs"
)


def register(sub: Any) -> None:
    images: argparse.ArgumentParser = sub.add_parser(
        "images",
        help="container images of Bundles: write the tags their policies choose into YAML",
        description="Container images of Bundles (spec.images).",
    )
    commands = images.add_subparsers(dest="images_command", required=True, metavar="SUBCOMMAND")
    update = commands.add_parser(
        "update",
        help="write the tags image policies choose into lines marked "
        '# {"$imagepolicy": "NS/BUNDLE:IMAGE[:tag|:name|:digest]"}',
        description="Resolve the images that marker comments name against their registries and "
        "rewrite the marked values in place. Exit 0: every value is current; 1: some value "
        "changed (or would, with --dry-run), or a registry failed; 2: invalid input.",
    )
    add_input_paths(update)
    update.add_argument(
        "--dry-run", action="store_true", help="print the changes without writing any file"
    )
    add_registry_config_argument(update, "images whose secretRef Secret is not among the inputs")
    add_registry_arguments(update)
    update.set_defaults(run=run_update)


@dataclass(frozen=True)
class MarkedFile:
    path: Path
    text: str
    markers: list[Marker]
    # where the text is written: the file itself, or the target of the link `path` is
    real_path: Path


def run_update(args: argparse.Namespace) -> int:
    if STDIN in args.paths:
        raise InvalidInputError("cannot write back to standard input: give files", field="-f")
    # Markers live in documents of other kinds (values, Deployments): no notice for skipping them.
    inside = _files_inside_directories(args.paths)
    world = load_world(args.paths, strict=args.strict)
    files = [_marked_file(path, real) for path, real in inside.items()]
    resolver = ImageResolver(_settings(args))
    resolved: dict[ImageAddress, ResolvedImage] = {}
    for marked in files:
        for marker in marked.markers:
            if marker.address not in resolved:
                where = f"{marked.path}:{marker.line}"
                resolved[marker.address] = _resolve(world, marker.address, resolver, where)
    changed = sum(_update(marked, resolved, dry_run=args.dry_run) for marked in files)
    if not changed:
        print("every marked image value is current", file=sys.stderr)
    return EXIT_CHANGED if changed else EXIT_CURRENT


def _files_inside_directories(paths: list[str]) -> dict[Path, Path]:
    """Every input file with its real path; InvalidInputError for a file found in a directory
    whose real path is outside that directory (a symbolic link out of it)."""
    found: dict[Path, Path] = {}
    for raw in paths:
        root = Path(raw).resolve() if Path(raw).is_dir() else None
        # values files of charts kept beside the Bundles carry markers too
        for path in input_files([raw], skip_charts=False):
            real = path.resolve()
            if root is not None and not real.is_relative_to(root):
                raise InvalidInputError(
                    f"a symbolic link out of the directory {raw} (to {real}): images update "
                    "reads and writes only files inside the directories it is given",
                    obj=str(path),
                )
            found.setdefault(path, real)
    return found


def _marked_file(path: Path, real: Path) -> MarkedFile:
    text = read_input_text(path)
    return MarkedFile(path, text, find_markers(text, str(path)), real)


def write_atomically(path: Path, text: str) -> None:
    """`text` as the whole content of `path` (a real path, no link): written to a temporary
    file in the same directory with `path`'s mode, then renamed over it."""
    mode = stat.S_IMODE(path.stat().st_mode)
    handle, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(scratch, mode)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def _settings(args: argparse.Namespace) -> ImageResolverSettings:
    config: Path | None = args.registry_config
    if config is not None and not config.is_file():
        raise InvalidInputError(f"{config} does not exist", field="--registry-config")
    return image_resolver_settings(args, docker_config=True, config_path=config)


def _resolve(
    world: World, address: ImageAddress, resolver: ImageResolver, where: str
) -> ResolvedImage:
    bundle = _bundle(world, address, where)
    images = {image.name: image for image in bundle.spec.images}
    image = images.get(address.image)
    if image is None:
        raise InvalidInputError(
            f"Bundle {address.namespace}/{address.bundle} has no image {address.image!r} in "
            f"spec.images (it has: {', '.join(images) or 'none'})",
            obj=where,
        )
    secret = (
        None
        if image.secretRef is None
        else world.secret_data(address.namespace, image.secretRef.name)
    )
    try:
        return resolver.resolve(image, secret)
    except BundlerError as error:
        raise type(error)(
            error.message, obj=f"Bundle {address.namespace}/{address.bundle}", field=error.field
        ) from None


def _bundle(world: World, address: ImageAddress, where: str) -> Bundle:
    for bundle in world.bundles:
        if (bundle.metadata.namespace, bundle.metadata.name) == (address.namespace, address.bundle):
            return bundle
    raise InvalidInputError(
        f"the image policy marker names Bundle {address.namespace}/{address.bundle}, which is not "
        "among the inputs",
        obj=where,
    )


def _update(
    marked: MarkedFile, resolved: dict[ImageAddress, ResolvedImage], *, dry_run: bool
) -> int:
    """Print and (unless `dry_run`) write the changes of one file; how many values changed."""
    lines = marked.text.splitlines(keepends=True)
    changed = 0
    for marker in marked.markers:
        image = resolved[marker.address]
        value = marked_value(marker.part, image.repository, image.tag, image.digest)
        if value == marker.value:
            continue
        line = lines[marker.line - 1]
        content = line.rstrip("\r\n")
        lines[marker.line - 1] = rewrite(content, value) + line[len(content) :]
        print(f"{marked.path}:{marker.line}: {marker.value} -> {value}")
        changed += 1
    if changed and not dry_run:
        try:
            write_atomically(marked.real_path, "".join(lines))
        except OSError as err:
            why = err.strerror or str(err)
            raise BundlerError(f"cannot write: {why}", obj=str(marked.path)) from None
    return changed
