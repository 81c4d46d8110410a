"""What `--manifests` shows for a Kustomize BundleDeployment: the objects kustomize-controller
would apply on its cluster.

An OCI artifact is pulled within the artifact bounds (bundler.oci.artifacts: size cap, request
timeout, deadline) and unpacked (bundler.oci.artifact_archive refuses traversal), then built as
kustomize-controller builds it: where `path` holds no kustomization file, one listing its
manifests is written (as Flux generates it); `targetNamespace`, `patches` and `components` are laid
over it by an overlay; kubectl's built-in kustomize (`kubectl kustomize`, the engine the README
names; the one beside bundler's Python, from the `kubectl` extra, else the one on PATH) builds
the overlay within `--render-timeout`, its output read within MAX_RENDERED_BYTES;
then `postBuild.substitute` is applied to each object as Flux applies it
(bundler.core.flux.substitution), except to objects labelled or annotated
`kustomize.toolkit.fluxcd.io/substitute: disabled`.

A Git source is checked out by bundler.manifests.git_fetch (bounded in time and size).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from bundler.api.kustomize import KustomizeOptions
from bundler.core.flux.substitution import check_names, substitute
from bundler.errors import BundlerError, InvalidInputError, TemplateError
from bundler.manifests import git_fetch
from bundler.manifests.engine import MAX_RENDERED_BYTES
from bundler.oci import artifact_archive, artifacts
from bundler.oci.reference import parse_tagged
from bundler.oci.registry import RegistryOptions
from bundler.yamlload import load_all

Obj = dict[str, Any]

KUBECTL = "kubectl"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
SUBSTITUTE_KEY = "kustomize.toolkit.fluxcd.io/substitute"
INSTALL_HINT = (
    "building Kustomize manifests needs kubectl on PATH (its built-in kustomize); from a "
    "checkout: pip install '.[kubectl]'"
)


@dataclass(frozen=True)
class KustomizeBuilder:
    """Builds Kustomize BundleDeployments' manifests with `kubectl` within `timeout` seconds."""

    timeout: float
    kubectl: str = KUBECTL

    def build(
        self,
        options: KustomizeOptions,
        registry: RegistryOptions,
        obj: str,
        secret: Mapping[str, str] | None = None,
    ) -> list[Obj]:
        """The objects the Kustomization of `options` applies; `secret`: the data of the
        source's credentials Secret (a Git source's username and password)."""
        with tempfile.TemporaryDirectory(prefix="bundler-kustomize-") as scratch:
            root = Path(scratch, "source")
            root.mkdir()
            self._fetch(options, registry, root, obj, secret)
            built = self._kustomize(_overlay(options, root, Path(scratch, "overlay"), obj), obj)
        variables = (options.postBuild.substitute if options.postBuild else None) or {}
        check_names(variables, obj=obj)
        return [_substituted(doc, variables, obj) for doc in built]

    def _fetch(
        self,
        options: KustomizeOptions,
        registry: RegistryOptions,
        root: Path,
        obj: str,
        secret: Mapping[str, str] | None,
    ) -> None:
        source = options.source
        if source is not None and source.git is not None:
            git_fetch.checkout(source.git, root, deadline=registry.deadline, secret=secret, obj=obj)
            return
        if source is None or source.oci is None or not source.oci.url:
            raise InvalidInputError(
                "no source to build from", obj=obj, field="spec.options.kustomize.source"
            )
        repository, _ = parse_tagged(source.oci.url)
        if not source.oci.tag:
            raise InvalidInputError(
                "no tag to preview (a version range is resolved by --resolve, as the manager "
                "resolves it)",
                obj=obj,
                field="spec.options.kustomize.source.oci.tag",
            )
        pulled = artifacts.pull_artifact(repository.tagged(source.oci.tag), registry)
        artifact_archive.extract(pulled.archive, root, source=pulled.reference.url)

    def _kustomize(self, overlay: Path, obj: str) -> list[Obj]:
        beside = Path(sys.executable).parent / self.kubectl
        binary = str(beside) if beside.is_file() else shutil.which(self.kubectl)
        if binary is None:
            raise InvalidInputError(INSTALL_HINT, obj=obj)
        command = [binary, "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(overlay)]
        try:
            done = subprocess.run(command, capture_output=True, timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise TemplateError(
                f"kustomize build took longer than {self.timeout:g} s (--render-timeout)",
                obj=obj,
            ) from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip()[-2000:]
            raise TemplateError(f"kustomize build failed: {message}", obj=obj)
        if len(done.stdout) > MAX_RENDERED_BYTES:
            raise TemplateError(
                f"kustomize build wrote more than {MAX_RENDERED_BYTES >> 20} MiB", obj=obj
            )
        return [doc.body for doc in load_all(done.stdout, obj) if isinstance(doc.body, dict)]


def _overlay(options: KustomizeOptions, root: Path, overlay: Path, obj: str) -> Path:
    """An overlay over `path` of the source adding what the Kustomization adds."""
    base = _inside(root, options.path or ".", obj, "path")
    if not any((base / name).is_file() for name in KUSTOMIZATION_FILES):
        _generate(base)
    overlay.mkdir()
    spec: Obj = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(base, overlay)],
    }
    if options.targetNamespace:
        spec["namespace"] = options.targetNamespace
    if options.patches:
        spec["patches"] = [p.model_dump(mode="json", exclude_none=True) for p in options.patches]
    if options.components:
        spec["components"] = [
            os.path.relpath(_inside(root, f"{options.path or '.'}/{c}", obj, "components"), overlay)
            for c in options.components
        ]
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    return overlay


def _generate(base: Path) -> None:
    """A kustomization.yaml listing the manifests under `base`, as Flux writes one for a
    directory of plain manifests."""
    found = sorted(
        str(p.relative_to(base))
        for p in base.rglob("*")
        if p.is_file() and p.suffix in (".yaml", ".yml")
    )
    spec = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
    (base / "kustomization.yaml").write_text(
        yaml.safe_dump({**spec, "resources": found}), encoding="utf-8"
    )


def _inside(root: Path, relative: str, obj: str, field: str) -> Path:
    target = (root / relative).resolve()
    if target != root.resolve() and root.resolve() not in target.parents:
        raise InvalidInputError(
            f"{relative!r} leaves the source", obj=obj, field=f"spec.options.kustomize.{field}"
        )
    if not target.is_dir():
        raise InvalidInputError(
            f"{relative!r} is not a directory of the source",
            obj=obj,
            field=f"spec.options.kustomize.{field}",
        )
    return target


def _substituted(doc: Obj, variables: dict[str, str], obj: str) -> Obj:
    found = doc.get("metadata")
    meta: Obj = found if isinstance(found, dict) else {}
    marks = [meta.get("labels"), meta.get("annotations")]
    if any(isinstance(m, dict) and m.get(SUBSTITUTE_KEY) == "disabled" for m in marks):
        return doc
    where = f"{obj}: {doc.get('kind')} {meta.get('name')}"
    text = substitute(
        yaml.safe_dump(doc, sort_keys=False, width=float("inf")), variables, obj=where
    )
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise BundlerError(f"substituted manifest is not YAML: {err}", obj=where) from None
    return loaded if isinstance(loaded, dict) else doc
