"""One revision of a Git repository checked out for a preview (`--manifests` of a Kustomize
BundleDeployment whose source is `git`), as source-controller would check it out.

The repository is a tenant's: git runs with a deadline (the registry flags' `--deadline`), no
prompt, no hooks, a shallow fetch of the one revision, and every file it writes bounded by the
operating system (RLIMIT_FSIZE); the checkout as a whole is then refused past MAX_CHECKOUT_BYTES.
The revision: `commit`, else `tag`, else `branch` (default `master`, as Flux); a `semver` range
is not previewed (source-controller picks the tag on the cluster). Credentials: the `username`
and `password` of the source's Secret, sent as HTTP basic authentication.
"""

from __future__ import annotations

import base64
import os
import resource
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from bundler.api.kustomize import GitSource
from bundler.errors import InvalidInputError, TransientError

#: What one checkout may hold: Flux's default artifact size limit.
MAX_CHECKOUT_BYTES = 100 << 20
DEFAULT_BRANCH = "master"


def checkout(
    source: GitSource,
    destination: Path,
    *,
    deadline: float,
    secret: Mapping[str, str] | None,
    obj: str,
) -> None:
    """Check `source`'s revision out into the empty directory `destination`."""
    binary = shutil.which("git")
    if binary is None:
        raise InvalidInputError("previewing a Git source needs git on PATH", obj=obj)
    ref = source.ref
    if ref is not None and ref.semver:
        raise InvalidInputError(
            "a semver range is resolved by source-controller on the cluster; --manifests "
            "previews a branch, tag or commit",
            obj=obj,
            field="spec.options.kustomize.source.git.ref.semver",
        )
    revision = (ref.commit or ref.tag or ref.branch) if ref is not None else None
    revision = revision or DEFAULT_BRANCH
    config = ["-c", "core.hooksPath=/dev/null", "-c", "protocol.file.allow=never"]
    if secret is not None and "username" in secret:
        pair = f"{secret['username']}:{secret.get('password', '')}".encode()
        header = "Authorization: Basic " + base64.b64encode(pair).decode()
        config += ["-c", f"http.extraHeader={header}"]
    _git(binary, ["init", "--quiet", str(destination)], deadline, obj, source)
    fetch = ["fetch", "--quiet", "--depth", "1", source.url or "", revision]
    _git(binary, [*config, "-C", str(destination), *fetch], deadline, obj, source)
    checkout_args = ["-C", str(destination), "checkout", "--quiet", "FETCH_HEAD"]
    _git(binary, [*config, *checkout_args], deadline, obj, source)
    shutil.rmtree(destination / ".git")
    held = sum(p.stat().st_size for p in destination.rglob("*") if p.is_file())
    if held > MAX_CHECKOUT_BYTES:
        raise InvalidInputError(
            f"the checkout holds more than {MAX_CHECKOUT_BYTES >> 20} MiB",
            obj=obj,
            field="spec.options.kustomize.source.git",
        )


def _git(binary: str, args: list[str], deadline: float, obj: str, source: GitSource) -> None:
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/nonexistent"),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    try:
        done = subprocess.run(
            [binary, *args],
            capture_output=True,
            timeout=deadline,
            check=False,
            env=environment,
            preexec_fn=_bounded_files,
        )
    except subprocess.TimeoutExpired:
        raise TransientError(
            f"git did not answer within {deadline:g} s (--deadline): {source.url}", obj=obj
        ) from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()[-1000:]
        raise InvalidInputError(
            f"git {args[-1] if args else ''} from {source.url} failed: {said}",
            obj=obj,
            field="spec.options.kustomize.source.git",
        )


def _bounded_files() -> None:
    """In the git child: no file larger than a whole checkout may be."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_CHECKOUT_BYTES, MAX_CHECKOUT_BYTES))
