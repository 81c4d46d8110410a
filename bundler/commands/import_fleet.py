"""`bundler import fleet DIR`: a checkout of a Fleet repository as Bundles.

The repository is read as Fleet's gitjob reads it: every path of the GitRepo (`spec.paths`, else
the root; globs allowed) is walked, and a directory is a bundle when it holds a fleet.yaml, or,
for a path itself, when it or a subdirectory without its own fleet.yaml holds YAML (Fleet's rule;
hidden directories are not entered). Each bundle's fleet.yaml (its helm part), the values files it
names, and the GitRepo's targets become one Bundle (bundler.core.fleet.bundle); a chart kept in
the repository (a helm.chart path, or a bundle directory with a Chart.yaml and no chart named) is
packaged and pushed to `--push-charts oci://REGISTRY/PATH` (as `bundler chart push`, refusing a
different chart under a taken tag), and the Bundle names it there.

Output: the Bundles as YAML on stdout, or one file per Bundle in `-o DIR` (`NAME.yaml`). On
stderr, one `not converted:` line per thing of the Fleet input the Bundles do not do and one
`note:` line per difference in meaning or step to take on the clusters, each naming FILE:LINE and
the field, then a summary. Exit 0 when everything was converted, 1 when something was not (the
Bundles of the rest are still written), 2 for input Fleet itself would refuse.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler import yamldump, yamlload
from bundler.api.bundle import Bundle
from bundler.api.documents import Document, parse_object
from bundler.commands.chart import add_connection_flags, archive_to_push, registry_options
from bundler.core.fleet.bundle import (
    BundleSource,
    Chart,
    GitRepo,
    Imported,
    convert_bundle,
    helm_blocks,
    local_chart,
)
from bundler.core.fleet.names import helm_release_name
from bundler.core.fleet.notes import Located, NoteKind, Notes
from bundler.core.validation import validate_bundle
from bundler.errors import BundlerError, InvalidInputError
from bundler.inputs import read_input_text
from bundler.oci import chart as chart_metadata
from bundler.oci import reference, registry
from bundler.oci.registry import RegistryOptions

FLEET_FILES = ("fleet.yaml", "fleet.yml")
FLEET_API_VERSION = "fleet.cattle.io/v1alpha1"
DEFAULT_WORKSPACE = "fleet-default"
YAML_SUFFIXES = (".yaml", ".yml")
CHART_FILE = "Chart.yaml"
EXIT_OK = 0
EXIT_NOT_CONVERTED = 1
# GitRepo fields about fetching git: bundler reads the checkout it is given.
_FETCHING = (
    "repo",
    "branch",
    "revision",
    "pollingInterval",
    "disablePolling",
    "clientSecretName",
    "caBundle",
    "insecureSkipTLSVerify",
    "webhookSecret",
    "forceSyncGeneration",
)
_GITREPO_CONVERTED = frozenset(
    {
        "paths",
        "targets",
        "targetNamespace",
        "keepResources",
        "paused",
        "correctDrift",
        "helmSecretName",
        "serviceAccount",
        *_FETCHING,
    }
)


_DEFAULT_TARGET_NOTE = (
    "with no targets, as in Fleet, every bundle goes to the clusters of the workspace's "
    "ClusterGroup `default` (create it)"
)


def register(sub: Any) -> None:
    """Add `import` and `import fleet` to the `bundler` parser."""
    group: argparse.ArgumentParser = sub.add_parser(
        "import", help="turn another tool's repository into Bundles"
    )
    tools = group.add_subparsers(dest="import_command", required=True, metavar="TOOL")
    fleet = tools.add_parser(
        "fleet",
        help="turn a Fleet repository (fleet.yaml files and a GitRepo) into Bundles",
        description="Read a checkout of a Fleet repository as Fleet does and write one Bundle per "
        "Fleet bundle: the fleet.yaml's helm part, its values files, and the GitRepo's targets "
        "combined with the targetCustomizations as Fleet combines them. Charts kept in the "
        "repository are pushed with --push-charts. Everything without an equivalent is listed "
        "on stderr with FILE:LINE. Exit 0: all converted; 1: something was not (listed); 2: "
        "invalid input. See docs/migrating-from-fleet.md.",
    )
    fleet.add_argument("directory", metavar="DIR", help="a checkout of the Fleet repository")
    fleet.add_argument(
        "--gitrepo",
        metavar="GITREPO.yaml",
        help="the GitRepo deploying the repository: its name, namespace (the workspace), paths "
        "and targets (default: no targets, which Fleet reads as the ClusterGroup default); "
        "ClusterGroups in the same file let customizations and targets naming different groups "
        "be combined exactly",
    )
    fleet.add_argument(
        "--push-charts",
        metavar="oci://REGISTRY/PATH",
        help="push the charts kept in the repository there, and name them from there",
    )
    fleet.add_argument(
        "-o",
        "--output-dir",
        metavar="DIR",
        help="write one NAME.yaml per Bundle into DIR (default: all on stdout)",
    )
    add_connection_flags(fleet)
    fleet.set_defaults(run=run_import_fleet)


# -- the GitRepo ------------------------------------------------------------------------------


def _gitrepo(path: str | None, root: Path, notes: Notes) -> tuple[GitRepo, list[str]]:
    """The GitRepo (its name defaulting to the directory's) and its paths."""
    if path is None:
        name = helm_release_name(root.resolve().name or "fleet")
        notes.note(
            Located(str(root), {}, line=0),
            "--gitrepo",
            f"no GitRepo given: the bundles are named {name}-PATH after the directory, go to the "
            f"workspace {DEFAULT_WORKSPACE}, and {_DEFAULT_TARGET_NOTE}",
        )
        return GitRepo(name=name, namespace=DEFAULT_WORKSPACE), ["."]
    text = read_input_text(Path(path))
    documents = [d for d in yamlload.load_all(text, path) if isinstance(d.body, dict)]
    found = [doc for doc in documents if doc.body.get("kind") == "GitRepo"]
    groups = {
        str(doc.body["metadata"]["name"]): (doc.body.get("spec") or {}).get("selector") or {}
        for doc in documents
        if doc.body.get("kind") == "ClusterGroup"
        and isinstance(doc.body.get("metadata"), dict)
        and doc.body["metadata"].get("name")
    }
    if len(found) != 1:
        raise InvalidInputError(
            f"expected one GitRepo ({FLEET_API_VERSION}) document, found {len(found)}", obj=path
        )
    located = Located(path, found[0].body, found[0].line, found[0].lines)
    body = found[0].body
    metadata = body.get("metadata") or {}
    spec = body.get("spec") or {}
    if not isinstance(spec, dict) or not isinstance(metadata, dict) or not metadata.get("name"):
        raise InvalidInputError("a GitRepo needs metadata.name and a spec", obj=located.at(None))
    namespace = metadata.get("namespace")
    if not namespace:
        namespace = DEFAULT_WORKSPACE
        notes.note(
            located, "metadata.namespace", f"unset: the Bundles go to the workspace {namespace}"
        )
    for key in spec:
        if key in _FETCHING:
            continue
        if key not in _GITREPO_CONVERTED:
            notes.dropped(located, f"spec.{key}", "no equivalent in bundler")
    targets = spec.get("targets") or []
    if not isinstance(targets, list):
        raise InvalidInputError("must be a list", obj=located.at("spec.targets"))
    correct = spec.get("correctDrift")
    gitrepo = GitRepo(
        name=str(metadata["name"]),
        namespace=str(namespace),
        targets=targets,
        target_namespace=spec.get("targetNamespace") or None,
        keep_resources=bool(spec.get("keepResources")),
        paused=bool(spec.get("paused")),
        correct_drift=correct if isinstance(correct, dict) else None,
        helm_secret_name=spec.get("helmSecretName") or None,
        service_account=spec.get("serviceAccount") or None,
        located=located,
        groups=groups,
    )
    if not targets:
        notes.note(located, "spec.targets", _DEFAULT_TARGET_NOTE)
    paths = [str(p) for p in spec.get("paths") or []] or ["."]
    return gitrepo, paths


# -- finding the bundles ----------------------------------------------------------------------


def _fleet_file(directory: Path) -> Path | None:
    for name in FLEET_FILES:
        if (directory / name).is_file():
            return directory / name
    return None


def _visible_dirs(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))


def _has_resources_without_fleet_yaml(directory: Path) -> bool:
    """Fleet's rule for a path without a fleet.yaml: YAML in it, or in a subdirectory that has
    no fleet.yaml of its own."""
    if _fleet_file(directory) is not None:
        return False
    for entry in directory.iterdir():
        if entry.is_file() and entry.suffix in YAML_SUFFIXES:
            return True
    return any(_has_resources_without_fleet_yaml(d) for d in _visible_dirs(directory))


def bundle_directories(root: Path, paths: list[str]) -> list[Path]:
    """The bundle directories of the GitRepo's paths, as Fleet finds them."""
    found: list[Path] = []
    for raw in paths:
        pattern = raw.lstrip("/") or "."
        matches = (
            sorted(glob.glob(str(root / pattern)))
            if glob.has_magic(pattern)
            else [str(root / pattern)]
        )
        for match in matches:
            base = Path(match)
            if not base.is_dir():
                continue
            if _fleet_file(base) is not None or _has_resources_without_fleet_yaml(base):
                found.append(base)
            for current, dirs, _ in os.walk(base):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in dirs:
                    child = Path(current, name)
                    if _fleet_file(child) is not None:
                        found.append(child)
    return list(dict.fromkeys(found))


# -- one bundle -------------------------------------------------------------------------------


@dataclass
class _Publisher:
    """Pushes the charts kept in the repository, each once."""

    location: reference.OciLocation | None
    options: RegistryOptions | None
    pushed: dict[Path, Chart | str] = field(default_factory=dict)

    def chart(self, path: Path) -> Chart | str:
        """Where the chart at `path` was pushed, or why it was not."""
        key = path.resolve()
        if key not in self.pushed:
            self.pushed[key] = self._push(path)
        return self.pushed[key]

    def _push(self, path: Path) -> Chart | str:
        if not path.exists():
            return f"no chart at {path}"
        if self.location is None or self.options is None:
            return (
                f"a chart kept in the repository ({path}): pass --push-charts "
                "oci://REGISTRY/PATH to publish it and name it from there"
            )
        try:
            archive = archive_to_push(path, chart_metadata.Overrides())
            pushed = registry.push_chart(archive, self.location, self.options)
        except BundlerError as err:
            return f"{path} cannot be published: {err}"
        print(f"pushed: {pushed.reference.url} ({pushed.digest})", file=sys.stderr)
        return Chart(
            repo=self.location.url,
            chart=archive.metadata.name,
            version=archive.metadata.version,
            insecure=self.options.plain_http,
        )


def _located(path: Path, source: str) -> Located:
    """A single-document YAML file (empty: an empty mapping)."""
    documents = yamlload.load_all(read_input_text(path), source)
    documents = [d for d in documents if d.body is not None]
    if len(documents) > 1:
        raise InvalidInputError(
            f"expected one YAML document, found {len(documents)}", obj=f"{source}:1"
        )
    if not documents:
        return Located(source, {})
    return Located(source, documents[0].body, documents[0].line, documents[0].lines)


def _source(directory: Path, root: Path, publisher: _Publisher) -> BundleSource:
    relative = directory.relative_to(root).as_posix()
    fleet_file = _fleet_file(directory)
    fleet = Located(str(directory / FLEET_FILES[0]), {})
    if fleet_file is not None:
        fleet = _located(fleet_file, str(fleet_file))
    if not isinstance(fleet.body, dict):
        raise InvalidInputError("a fleet.yaml must be a mapping", obj=fleet.at(None))
    values_files: dict[str, Located] = {}
    local_charts: dict[str, Chart] = {}
    problems: dict[str, str] = {}
    blocks = helm_blocks(fleet.body)
    if not any(path == "helm" for path, _ in blocks):
        blocks.insert(0, ("helm", {}))
    for path, helm in blocks:
        for name in helm.get("valuesFiles") or []:
            file = directory / str(name)
            if file.is_file() and str(name) not in values_files:
                values_files[str(name)] = _located(file, str(file))
        wanted = local_chart(helm)
        if wanted is None and path == "helm" and not helm.get("chart") and not helm.get("repo"):
            wanted = "." if (directory / CHART_FILE).is_file() else None
        if wanted is None:
            continue
        published = publisher.chart(directory / wanted)
        if isinstance(published, Chart):
            local_charts[path] = published
        else:
            problems[path] = published
    return BundleSource(
        path=relative,
        fleet=fleet,
        values_files=values_files,
        local_charts=local_charts,
        chart_problems=problems,
    )


def _checked(imported: Imported) -> None:
    """Drop the document (with a note) when bundler itself would refuse it."""
    if imported.document is None:
        return
    text = yamldump.dump(imported.document)
    located = yamlload.load_all(text, imported.name)[0]
    doc = Document(imported.name, 0, located.body, located.line, located.lines)
    try:
        bundle = parse_object(doc)
        assert isinstance(bundle, Bundle)
        validate_bundle(bundle)
    except InvalidInputError as err:
        where = Located(f"Bundle {imported.name}", {}, line=0)
        imported.notes.dropped(where, err.field or "", f"bundler refuses it: {err.message}")
        imported.document = None


# -- the command ------------------------------------------------------------------------------


def _publisher(args: argparse.Namespace) -> _Publisher:
    if not args.push_charts:
        return _Publisher(None, None)
    location = reference.parse_location(args.push_charts)
    return _Publisher(location, registry_options(args, location.host))


def _write(documents: list[dict[str, Any]], output_dir: str | None) -> None:
    if output_dir is None:
        sys.stdout.write("".join(f"---\n{yamldump.dump(d)}" for d in documents))
        return
    target = Path(output_dir)
    if target.exists() and not target.is_dir():
        raise InvalidInputError(f"{output_dir} exists and is not a directory", field="-o")
    target.mkdir(parents=True, exist_ok=True)
    for document in documents:
        path = target / f"{document['metadata']['name']}.yaml"
        path.write_text(yamldump.dump(document), encoding="utf-8")
        print(f"wrote: {path}", file=sys.stderr)


def import_repository(
    root: Path, gitrepo_file: str | None, publisher: _Publisher
) -> tuple[list[Imported], Notes]:
    """Every bundle of the repository at `root`, converted, and the GitRepo's own notes."""
    if not root.is_dir():
        raise InvalidInputError("not a directory", obj=str(root))
    notes = Notes()
    gitrepo, paths = _gitrepo(gitrepo_file, root, notes)
    imported = []
    for directory in bundle_directories(root, paths):
        one = convert_bundle(_source(directory, root, publisher), gitrepo)
        _checked(one)
        imported.append(one)
    return imported, notes


def _lines(imported: list[Imported], notes: Notes) -> Iterator[str]:
    yield from (str(n) for n in notes.items)
    for one in imported:
        yield from (str(n) for n in one.notes.items)


def run_import_fleet(args: argparse.Namespace) -> int:
    publisher = _publisher(args)
    imported, notes = import_repository(Path(args.directory), args.gitrepo, publisher)
    names: dict[str, Imported] = {}
    for one in imported:
        if one.document is not None and one.name in names:
            raise InvalidInputError(
                f"two bundles are named {one.name}: the fleet.yaml `name` of one must change",
                obj=args.directory,
            )
        names[one.name] = one
    if not imported:
        raise InvalidInputError("no Fleet bundle in this directory", obj=args.directory)
    documents = [one.document for one in imported if one.document is not None]
    _write(documents, args.output_dir)
    lines = list(_lines(imported, notes))
    for line in lines:
        print(line, file=sys.stderr)
    dropped = sum(line.startswith(NoteKind.NOT_CONVERTED.value) for line in lines)
    skipped = len(imported) - len(documents)
    summary = f"{len(documents)} Bundle{'s' if len(documents) != 1 else ''} written"
    if skipped:
        summary += f", {skipped} Fleet bundle{'s' if skipped != 1 else ''} not converted"
    if dropped:
        summary += f"; {dropped} thing{'s' if dropped != 1 else ''} not converted (listed above)"
    print(f"import: {summary}", file=sys.stderr)
    return EXIT_NOT_CONVERTED if dropped else EXIT_OK
