"""Generated Kubernetes names are valid, bounded, deterministic and distinct."""

from __future__ import annotations

import hashlib
import itertools

import pytest

from bundler.core.naming import (
    bundle_deployment_name,
    cluster_namespace,
    is_dns1123_label,
    is_dns1123_subdomain,
    shorten_name,
)
from bundler.errors import InvalidInputError


def sha12(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:12]


LABEL_CASES = [
    ("single-char", "a", True),
    ("dashes-inside", "a-b--c", True),
    ("leading-digit", "0abc", True),
    ("max-63", "a" * 63, True),
    ("empty", "", False),
    ("too-long-64", "a" * 64, False),
    ("leading-dash", "-a", False),
    ("trailing-dash", "a-", False),
    ("uppercase", "Abc", False),
    ("dot", "a.b", False),
    ("underscore", "a_b", False),
    ("trailing-newline", "abc\n", False),
]


@pytest.mark.parametrize(
    ("s", "expected"), [c[1:] for c in LABEL_CASES], ids=[c[0] for c in LABEL_CASES]
)
def test_is_dns1123_label(s: str, expected: bool) -> None:
    assert is_dns1123_label(s) is expected


SUBDOMAIN_CASES = [
    ("label", "abc", True),
    ("dotted", "a.b-c.d", True),
    ("max-253", ".".join(["a" * 63] * 4)[:253].rstrip("."), True),
    ("too-long-254", "a" * 254, False),
    ("empty", "", False),
    ("double-dot", "a..b", False),
    ("leading-dot", ".a", False),
    ("trailing-dot", "a.", False),
    ("dash-before-dot", "a-.b", False),
    ("dash-after-dot", "a.-b", False),
    ("uppercase", "a.B", False),
]


@pytest.mark.parametrize(
    ("s", "expected"), [c[1:] for c in SUBDOMAIN_CASES], ids=[c[0] for c in SUBDOMAIN_CASES]
)
def test_is_dns1123_subdomain(s: str, expected: bool) -> None:
    assert is_dns1123_subdomain(s) is expected


def test_cluster_namespace_design_shape() -> None:
    ns = cluster_namespace("fleet-default", "prod-eu-1")
    assert ns == f"cluster-fleet-default-prod-eu-1-{sha12('fleet-default/prod-eu-1')}"


# The readable part has room for 50 characters: "cluster-ws-" is 11, so a cluster name with '-' or
# '.' at its 39th character puts that separator exactly at the cut.
NAMESPACE_CASES = [
    ("short", "ws", "c1"),
    ("dotted-cluster", "ws", "prod.eu.example.com"),
    ("long-workspace", "w" * 63, "c"),
    ("long-cluster", "ws", "c" * 253),
    ("both-long", "w" * 63, "c" * 253),
    ("dash-at-cut", "ws", "a" * 38 + "-" + "b" * 20),
    ("dot-at-cut", "ws", "a" * 38 + "." + "b" * 20),
    ("double-dash-at-cut", "ws", "a" * 37 + "--" + "b" * 20),
    ("digits", "0", "1"),
]


@pytest.mark.parametrize(
    ("workspace", "cluster"), [c[1:] for c in NAMESPACE_CASES], ids=[c[0] for c in NAMESPACE_CASES]
)
def test_cluster_namespace_is_a_bounded_label_ending_in_the_full_hash(
    workspace: str, cluster: str
) -> None:
    ns = cluster_namespace(workspace, cluster)
    assert len(ns) <= 63
    assert is_dns1123_label(ns)
    assert ns.startswith("cluster-")
    assert ns.endswith("-" + sha12(f"{workspace}/{cluster}"))
    assert not ns[: -len(sha12(""))].endswith("--")
    assert ns == cluster_namespace(workspace, cluster)


def test_cluster_namespace_distinct_over_many_pairs() -> None:
    long_prefix = "c" * 120
    workspaces = ["w", "w-a", "fleet-default", "x" * 63, "x" * 62 + "y", "a", "a-b"]
    clusters = [
        "c",
        "a-c",
        "b-c",
        "a.b",
        "a-b",
        *(f"{long_prefix}-{i}" for i in range(60)),
        *(f"{long_prefix}.{i}" for i in range(20)),
        *(f"prod-eu-{i}" for i in range(40)),
    ]
    pairs = list(itertools.product(workspaces, clusters))
    names = [cluster_namespace(w, c) for w, c in pairs]
    assert len(set(names)) == len(pairs)
    assert all(len(n) <= 63 and is_dns1123_label(n) for n in names)


def test_cluster_namespace_pairs_that_read_alike_differ() -> None:
    assert cluster_namespace("a-b", "c") != cluster_namespace("a", "b-c")
    assert cluster_namespace("a", "b.c") != cluster_namespace("a", "b-c")


@pytest.mark.parametrize(
    ("workspace", "cluster"),
    [("Fleet", "c"), ("", "c"), ("w.x", "c"), ("w" * 64, "c"), ("w", "C"), ("w", ""), ("w", "a_b")],
    ids=[
        "uppercase-ws",
        "empty-ws",
        "dotted-ws",
        "long-ws",
        "uppercase-cluster",
        "empty-cluster",
        "underscore-cluster",
    ],
)
def test_cluster_namespace_rejects_invalid_names(workspace: str, cluster: str) -> None:
    with pytest.raises(InvalidInputError, match="DNS-1123"):
        cluster_namespace(workspace, cluster)


SHORTEN_FITS = [
    ("shorter", "podinfo", 53),
    ("exactly-53", "p" * 53, 53),
    ("exactly-63", "p" * 63, 63),
]


@pytest.mark.parametrize(
    ("name", "max_len"), [c[1:] for c in SHORTEN_FITS], ids=[c[0] for c in SHORTEN_FITS]
)
def test_shorten_name_keeps_names_that_fit(name: str, max_len: int) -> None:
    assert shorten_name(name, max_len) == name


SHORTEN_CUT = [
    ("helm-54", "p" * 54, 53),
    ("object-64", "p" * 64, 63),
    ("dash-at-cut", "a" * 39 + "-" + "b" * 30, 53),
    ("dashes-at-cut", "a" * 37 + "---" + "b" * 30, 53),
    ("dot-at-cut", "a" * 39 + "." + "b" * 30, 53),
    ("dotted-243", ".".join(["s" * 60] * 4), 63),
]


@pytest.mark.parametrize(
    ("name", "max_len"), [c[1:] for c in SHORTEN_CUT], ids=[c[0] for c in SHORTEN_CUT]
)
def test_shorten_name_truncates_and_appends_the_hash(name: str, max_len: int) -> None:
    short = shorten_name(name, max_len)
    digest = sha12(name)
    assert len(short) <= max_len
    assert short.endswith("-" + digest)
    head = short[: -len(digest) - 1]
    assert name.startswith(head)
    assert head[-1].isalnum()
    if "." not in name:
        assert is_dns1123_label(short)
    assert is_dns1123_subdomain(short)
    assert shorten_name(name, max_len) == short


def test_shorten_name_distinct_for_names_sharing_a_long_prefix() -> None:
    names = [f"{'r' * 60}-{i}" for i in range(200)]
    shortened = {shorten_name(n, 53) for n in names}
    assert len(shortened) == len(names)


def test_shorten_name_needs_room_for_the_hash() -> None:
    with pytest.raises(ValueError, match="no room"):
        shorten_name("x" * 20, 13)


BD_CASES = [
    ("label-as-is", "podinfo", "podinfo"),
    ("63-as-is", "b" * 63, "b" * 63),
]


@pytest.mark.parametrize(
    ("bundle", "expected"), [c[1:] for c in BD_CASES], ids=[c[0] for c in BD_CASES]
)
def test_bundle_deployment_name_keeps_labels(bundle: str, expected: str) -> None:
    assert bundle_deployment_name("fleet-default", bundle) == expected


@pytest.mark.parametrize(
    "bundle",
    ["b" * 64, "cert-manager.v1", "a.b", ".".join(["s" * 60] * 4)],
    ids=["too-long", "dotted", "short-dotted", "subdomain-243"],
)
def test_bundle_deployment_name_makes_other_names_labels(bundle: str) -> None:
    name = bundle_deployment_name("fleet-default", bundle)
    assert is_dns1123_label(name)
    assert name.endswith("-" + sha12(f"fleet-default/{bundle}"))
    assert name == bundle_deployment_name("fleet-default", bundle)


def test_bundle_deployment_names_distinct_within_a_workspace() -> None:
    bundles = ["a.b", "a-b", "a", *(f"{'n' * 70}{i}" for i in range(50)), "x.y.z", "x-y.z", "x.y-z"]
    names = {bundle_deployment_name("ws", b) for b in bundles}
    assert len(names) == len(bundles)
