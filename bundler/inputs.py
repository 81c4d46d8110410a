"""Reading input files: `-f PATH` arguments (files or directories of YAML) into API objects.

Used by the offline commands (render, explain) and the simulator. Everything that can be wrong with
the input raises InvalidInputError naming `FILE:DOC-INDEX` and the field.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler import yamlload
from bundler.api.bundle import Bundle
from bundler.api.cluster import Cluster, ClusterGroup
from bundler.api.documents import Document, parse_object, split_documents
from bundler.capi.render_inputs import import_documents, is_capi_input
from bundler.core.capi_import import ImportMode
from bundler.core.selectors import validate_selector
from bundler.core.validation import validate_bundle, validate_cluster, validate_metadata
from bundler.errors import InvalidInputError

YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class World:
    """Everything the inputs declare, in input order; `secrets` are the v1 Secret documents as
    written (checked as the API server would, namespace defaulted)."""

    bundles: list[Bundle] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    groups: list[ClusterGroup] = field(default_factory=list)
    secrets: list[dict[str, Any]] = field(default_factory=list)

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
        if path.is_dir():
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
        docs.extend(split_documents(_read_text(path), str(path)))
    return docs


def _read_text(path: Path) -> str:
    try:
        with path.open("rb") as stream:
            data = stream.read(yamlload.MAX_INPUT_BYTES + 1)  # a larger file is never read whole
    except OSError as err:
        raise InvalidInputError(f"cannot read: {err.strerror or err}", obj=str(path)) from None
    except MemoryError:
        raise InvalidInputError("too large to read: out of memory", obj=str(path)) from None
    if len(data) > yamlload.MAX_INPUT_BYTES:
        raise InvalidInputError(
            f"the file is larger than {yamlload.MAX_INPUT_BYTES >> 20} MiB, the limit for one"
            " input file",
            obj=str(path),
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidInputError(
            f"not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})", obj=str(path)
        ) from None


def load_world(paths: Sequence[str], capi_import: ImportMode = ImportMode.LABELED) -> World:
    """The objects the inputs declare; Cluster API Clusters (and their kubeconfig Secrets) become
    Clusters and class ClusterGroups exactly as the manager's importer would make them, and every
    Secret is kept as it is."""
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
        obj = parse_object(doc)
        assert isinstance(obj, Bundle | Cluster | ClusterGroup)
        ident = (obj.kind, obj.metadata.namespace or "", obj.metadata.name)
        if ident in seen:
            raise InvalidInputError(
                f"{obj.kind} {ident[1]}/{ident[2]} is also defined at {seen[ident]}",
                obj=doc.where,
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
    return world


def _add(world: World, obj: Bundle | Cluster | ClusterGroup, doc: Document) -> None:
    validate_metadata(obj.metadata, obj=doc.where)
    if isinstance(obj, Bundle):
        try:
            validate_bundle(obj)
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=doc.where, field=err.field) from None
        world.bundles.append(obj)
    elif isinstance(obj, Cluster):
        validate_cluster(obj, obj=doc.where)
        world.clusters.append(obj)
    else:
        try:
            validate_selector(obj.spec.selector, field="spec.selector")
        except InvalidInputError as err:
            raise InvalidInputError(err.message, obj=doc.where, field=err.field) from None
        world.groups.append(obj)
