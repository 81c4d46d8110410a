"""Loading a store from a kubeconfig, $KUBECONFIG or the in-cluster service account."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from bundler.errors import InvalidInputError
from bundler.kube.client import client_from_kubeconfig_text
from bundler.kube.store import KubeStore, load_store


def kubeconfig(server: str = "http://127.0.0.1:1", context: str = "test") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": "s3cr3t-token"}}],
        "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
        "current-context": context,
    }


@pytest.fixture
def no_ambient_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_loads_explicit_kubeconfig(tmp_path: Path) -> None:
    path = write(tmp_path / "config", yaml.safe_dump(kubeconfig()))
    with load_store(path) as store:
        assert isinstance(store, KubeStore)


def test_loads_kubeconfig_from_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_ambient_config: None
) -> None:
    monkeypatch.setenv("KUBECONFIG", write(tmp_path / "config", yaml.safe_dump(kubeconfig())))
    with load_store(context="test") as store:
        assert isinstance(store, KubeStore)


def test_loads_kubeconfig_dict() -> None:
    with KubeStore.from_kubeconfig_dict(kubeconfig()) as store:
        assert isinstance(store, KubeStore)


@pytest.mark.parametrize(
    ("content", "context", "message"),
    [
        (None, None, "file not found"),
        ("", None, "cannot load"),
        ("clusters: [unclosed", None, "cannot load"),
        (yaml.safe_dump(kubeconfig()), "nope", "cannot load"),
        (yaml.safe_dump({**kubeconfig(), "clusters": []}), None, "cannot load"),
    ],
    ids=["missing-file", "empty-file", "not-yaml", "unknown-context", "missing-cluster"],
)
def test_bad_kubeconfig_file(
    tmp_path: Path, content: str | None, context: str | None, message: str
) -> None:
    path = tmp_path / "config"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InvalidInputError, match=message) as raised:
        load_store(str(path), context)
    assert str(path) in str(raised.value)
    assert "s3cr3t-token" not in str(raised.value)


def test_kubeconfig_env_pointing_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_ambient_config: None
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    with pytest.raises(InvalidInputError, match="file not found"):
        load_store()


def test_no_config_at_all(no_ambient_config: None) -> None:
    with pytest.raises(InvalidInputError, match="in-cluster config"):
        load_store()


def test_context_without_kubeconfig(no_ambient_config: None) -> None:
    with pytest.raises(InvalidInputError, match="no kubeconfig"):
        load_store(context="prod")


@pytest.mark.parametrize(
    "text",
    ["", "just a string", "clusters: [unclosed", "{}"],
    ids=["empty", "scalar", "not-yaml", "empty-mapping"],
)
def test_bad_kubeconfig_text(text: str) -> None:
    with pytest.raises(InvalidInputError, match="prod-kubeconfig"):
        client_from_kubeconfig_text(text, source="prod-kubeconfig")
