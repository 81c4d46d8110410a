"""Building a `kubernetes` ApiClient from a kubeconfig (file or dict) or the pod's service account.

Every client built here has urllib3's own retries switched off: bundler.kube.retry is the single
retry policy, so the bound on a call's duration is the one it documents. Loading failures become
InvalidInputError naming the source; they never quote credentials.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from kubernetes.client import ApiClient, Configuration
from kubernetes.config.config_exception import ConfigException
from kubernetes.config.incluster_config import load_incluster_config
from kubernetes.config.kube_config import load_kube_config, load_kube_config_from_dict

from bundler import yamlload
from bundler.errors import InvalidInputError

KUBECONFIG_ENV = "KUBECONFIG"

# What the loaders raise on malformed input besides ConfigException (missing keys, wrong shapes).
_LOAD_ERRORS = (ConfigException, yaml.YAMLError, OSError, KeyError, TypeError, ValueError)
# The lists of a kubeconfig whose entries the loader looks up by name.
_NAMED_SECTIONS = ("clusters", "contexts", "users")


def client_from_kubeconfig(path: str | Path, context: str | None = None) -> ApiClient:
    """A client for `context` (default: the file's current-context) of the kubeconfig at `path`.

    `path` may list several files separated by `os.pathsep`, as KUBECONFIG does.
    """
    source = f"kubeconfig {path}"
    files = [Path(p).expanduser() for p in str(path).split(os.pathsep) if p]
    missing = [str(f) for f in files if not f.exists()]
    if not files or missing:
        raise InvalidInputError(f"file not found: {', '.join(missing) or path}", obj=source)
    for file in files:
        _check_shape(_read_kubeconfig(file), f"kubeconfig {file}")
    return _build(
        source,
        lambda cfg: load_kube_config(  # type: ignore[no-untyped-call]
            config_file=str(path), context=context, client_configuration=cfg, persist_config=False
        ),
    )


def client_from_kubeconfig_dict(
    kubeconfig: Mapping[str, Any], context: str | None = None, *, source: str = "kubeconfig"
) -> ApiClient:
    """A client from an already-parsed kubeconfig, e.g. the `value` of a Cluster API Secret."""
    if not isinstance(kubeconfig, Mapping) or not kubeconfig:
        raise InvalidInputError("not a kubeconfig mapping", obj=source)
    _check_shape(kubeconfig, source)
    return _build(
        source,
        lambda cfg: load_kube_config_from_dict(  # type: ignore[no-untyped-call]
            config_dict=dict(kubeconfig),
            context=context,
            client_configuration=cfg,
            persist_config=False,
        ),
    )


def client_from_kubeconfig_text(
    text: str | bytes, context: str | None = None, *, source: str = "kubeconfig"
) -> ApiClient:
    """A client from kubeconfig YAML text (a Secret's decoded `value`)."""
    parsed = yamlload.load(text, source, unique_keys=False)
    return client_from_kubeconfig_dict(parsed, context, source=source)


def client_in_cluster() -> ApiClient:
    """A client using the pod's service account token and CA."""
    return _build(
        "in-cluster config",
        lambda cfg: load_incluster_config(client_configuration=cfg),  # type: ignore[no-untyped-call]
    )


def default_client(kubeconfig: str | Path | None = None, context: str | None = None) -> ApiClient:
    """The explicit kubeconfig, else $KUBECONFIG, else the in-cluster service account."""
    path = kubeconfig or os.environ.get(KUBECONFIG_ENV)
    if path:
        return client_from_kubeconfig(path, context)
    if context is not None:
        raise InvalidInputError(
            f"context {context!r} given but no kubeconfig (pass one or set {KUBECONFIG_ENV})",
            obj="in-cluster config",
        )
    return client_in_cluster()


def _build(source: str, load: Callable[[Configuration], None]) -> ApiClient:
    cfg = Configuration()
    try:
        load(cfg)
    except _LOAD_ERRORS as exc:
        raise InvalidInputError(f"cannot load: {_first_line(exc)}", obj=source) from exc
    _check_server(cfg.host, source)
    cfg.retries = False
    return ApiClient(configuration=cfg)


def _read_kubeconfig(file: Path) -> Any:
    """A kubeconfig file parsed as kubectl reads it (a repeated key: the last one wins)."""
    source = f"kubeconfig {file}"
    if not file.is_file():
        raise InvalidInputError("cannot load: not a file", obj=source)
    try:
        data = file.read_bytes()
    except OSError as err:
        raise InvalidInputError(f"cannot load: {err.strerror or err}", obj=source) from None
    try:
        return yamlload.load(data, source, unique_keys=False)
    except InvalidInputError as err:
        raise InvalidInputError(f"cannot load: {err.message}", obj=source) from None


def _check_shape(kubeconfig: Any, source: str) -> None:
    """The structure the loader walks, so a malformed file fails naming the field, not with
    the loader's own TypeError or KeyError. An empty file is left to the loader, which says so."""
    if kubeconfig is None:
        return
    if not isinstance(kubeconfig, Mapping):
        raise InvalidInputError(
            "cannot load: not a YAML mapping (apiVersion: v1, kind: Config)", obj=source
        )
    for section in _NAMED_SECTIONS:
        entries = kubeconfig.get(section)
        if entries is None:
            continue
        if not isinstance(entries, list) or not all(
            isinstance(entry, Mapping) and isinstance(entry.get("name"), str) for entry in entries
        ):
            raise InvalidInputError(
                f"cannot load: {section}: must be a list of mappings, each with a name", obj=source
            )


def _check_server(url: str, source: str) -> None:
    """The server URL the kubeconfig gives, checked before any request is made with it."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # urlsplit checks the port only when asked for it
        usable = parts.scheme in ("https", "http") and bool(parts.hostname)
    except ValueError:  # a port out of range, an unclosed IPv6 bracket
        usable = False
    if not usable or any(c.isspace() for c in url):
        raise InvalidInputError(
            f"cannot load: server {url!r} is not an http(s) URL with a host and a valid port",
            obj=source,
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
