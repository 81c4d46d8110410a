"""Reading input files: `-f PATH` arguments (files or directories of YAML) into API objects.

Used by the offline commands (render, explain) and the simulator. Everything that can be wrong with
the input raises InvalidInputError naming `FILE:LINE` (the offending field's line where the YAML
writes it, else the document's first line) and the field. `-` reads standard input.

Documents of kinds bundler does not own (a Deployment, a fleet.yaml) are skipped, each with one
notice in `World.notices`; `strict=True` makes them errors instead.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler import yamlload
from bundler.api.bootstrap import BootstrapConfig
from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.documents import (
    Document,
    describe_kind,
    is_bundler_document,
    parse_object,
    split_documents,
)
from bundler.capi.render_inputs import import_documents, is_capi_input
from bundler.core.capi_import import ImportMode
from bundler.core.selectors import validate_selector
from bundler.core.validation import validate_bundle, validate_cluster, validate_metadata
from bundler.errors import InvalidInputError

YAML_SUFFIXES = (".yaml", ".yml")
STDIN = "-"
STDIN_SOURCE = "<stdin>"


@dataclass
class World:
    """Everything the inputs declare, in input order; `secrets` and `config_maps` are the v1
    Secret and ConfigMap documents as written (checked as the API server would, namespace
    defaulted)."""

    bundles: list[Bundle] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    groups: list[ClusterGroup] = field(default_factory=list)
    secrets: list[dict[str, Any]] = field(default_factory=list)
    config_maps: list[dict[str, Any]] = field(default_factory=list)
    bootstrap_configs: list[BootstrapConfig] = field(default_factory=list)
    # one line per document skipped because bundler does not own its kind
    notices: list[str] = field(default_factory=list)

    def stored(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        """The input Secret or ConfigMap (`kind`) `namespace/name` as the API server stores it (a
        Secret's `stringData` folded into `data`), or None when the inputs do not hold it."""
        found = self.secrets if kind == "Secret" else self.config_maps
        for obj in found:
            meta = obj["metadata"]
            if (meta["namespace"], meta["name"]) != (namespace, name):
                continue
            stored = {k: v for k, v in obj.items() if k != "stringData"}
            folded = {
                k: base64.b64encode(v.encode()).decode()
                for k, v in (obj.get("stringData") or {}).items()
            }
            if folded:
                stored["data"] = {**(obj.get("data") or {}), **folded}
            return stored
        return None

    def secret_data(self, namespace: str, name: str) -> dict[str, str] | None:
        """The decoded data of the input Secret `namespace/name` (`stringData` winning, as the API
        server folds it in), or None when the inputs do not hold it."""
        for secret in self.secrets:
            meta = secret["metadata"]
            if (meta["namespace"], meta["name"]) == (namespace, name):
                data = secret.get("data") or {}
                decoded = {
                    k: base64.b64decode(v).decode("utf-8", "replace") for k, v in data.items()
                }
                return {**decoded, **(secret.get("stringData") or {})}
        return None


def input_files(paths: Iterable[str]) -> list[Path]:
    """The YAML files named, directories expanded recursively in sorted order.

    A directory without any YAML file is an error: it is a wrong path more often than not.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if raw == STDIN:
            files.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in YAML_SUFFIXES and p.is_file())
            if not found:
                raise InvalidInputError("no .yaml or .yml file in this directory", obj=raw)
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise InvalidInputError("no such file or directory", obj=raw)
    return files


def read_documents(paths: Sequence[str]) -> list[Document]:
    docs: list[Document] = []
    for path in input_files(paths):
        source = STDIN_SOURCE if str(path) == STDIN else str(path)
        docs.extend(split_documents(read_input_text(path), source))
    return docs


def _read_bytes(path: Path) -> bytes:
    # one byte over the limit tells it is over: a larger input is never read whole
    if str(path) == STDIN:
        return sys.stdin.buffer.read(yamlload.MAX_INPUT_BYTES + 1)
    with path.open("rb") as stream:
        return stream.read(yamlload.MAX_INPUT_BYTES + 1)


def read_input_text(path: Path) -> str:
    """The UTF-8 text of an input file (`-`: standard input), at most MAX_INPUT_BYTES."""
    try:
        data = _read_bytes(path)
    except OSError as err:
        raise InvalidInputError(f"cannot read: {err.strerror or err}", obj=str(path)) from None
    except MemoryError:
        raise InvalidInputError("too large to read: out of memory", obj=str(path)) from None
    if len(data) > yamlload.MAX_INPUT_BYTES:
        raise InvalidInputError(
            f"larger than {yamlload.MAX_INPUT_BYTES >> 20} MiB, the limit for one input",
            obj=str(path),
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidInputError(
            f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})", obj=str(path)
        ) from None


def load_world(
    paths: Sequence[str], capi_import: ImportMode = ImportMode.LABELED, *, strict: bool = False
) -> World:
    """The objects the inputs declare; Cluster API Clusters (and their kubeconfig Secrets) become
    Clusters and class ClusterGroups exactly as the manager's importer would make them, and every
    Secret is kept as it is. Documents of other kinds are skipped with a notice
    (strict: refused)."""
    world = World()
    seen: dict[tuple[str, str, str], str] = {}
    capi_docs: list[Document] = []
    docs = read_documents(paths)
    if not docs:
        raise InvalidInputError(
            "no Bundle, Cluster, ClusterGroup or Cluster API document in the inputs",
            obj=", ".join(paths),
        )
    for doc in docs:
        if is_capi_input(doc.body):
            capi_docs.append(doc)
            continue
        if not is_bundler_document(doc.body):
            _skip(world, doc, strict=strict)
            continue
        obj = parse_object(doc)
        assert isinstance(obj, Bundle | Cluster | ClusterGroup | BootstrapConfig)
        ident = (obj.kind, obj.metadata.namespace or "", obj.metadata.name)
        if ident in seen:
            raise InvalidInputError(
                f"{obj.kind} {ident[1]}/{ident[2]} is also defined at {seen[ident]}",
                obj=doc.at("metadata.name"),
                field="metadata.name",
            )
        seen[ident] = doc.where
        _add(world, obj, doc)
    imported = import_documents(
        capi_docs, mode=capi_import, clusters=world.clusters, groups=world.groups
    )
    world.clusters.extend(imported.clusters)
    world.groups.extend(imported.groups)
    world.secrets.extend(imported.secrets)
    world.config_maps.extend(imported.config_maps)
    return world


def _skip(world: World, doc: Document, *, strict: bool) -> None:
    what = describe_kind(doc.body)
    if strict:
        raise InvalidInputError(
            f"{what} is not a kind bundler reads (without --strict it is skipped)",
            obj=doc.at("kind"),
            field="kind",
        )
    world.notices.append(f"notice: {doc.where}: skipped {what}: not a kind bundler reads")


def _add(
    world: World, obj: Bundle | Cluster | ClusterGroup | BootstrapConfig, doc: Document
) -> None:
    try:
        _validate(obj, doc)
    except InvalidInputError as err:
        raise doc.error(err) from None
    if isinstance(obj, Bundle):
        world.bundles.append(obj)
    elif isinstance(obj, Cluster):
        world.clusters.append(obj)
    elif isinstance(obj, BootstrapConfig):
        world.bootstrap_configs.append(obj)
    else:
        world.groups.append(obj)


def _validate(obj: Bundle | Cluster | ClusterGroup | BootstrapConfig, doc: Document) -> None:
    validate_metadata(obj.metadata, obj=doc.where)
    if isinstance(obj, Bundle):
        validate_bundle(obj)
    elif isinstance(obj, Cluster):
        validate_cluster(obj, obj=doc.where)
    elif isinstance(obj, ClusterGroup):
        validate_selector(obj.spec.selector, field="spec.selector")
