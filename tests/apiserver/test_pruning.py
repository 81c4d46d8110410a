"""Pruning drops what a structural schema does not know, as kube-apiserver's decoder does, and
names each unknown field with the API server's paths: metadata first, the rest sorted."""

from __future__ import annotations

import pytest

from bundler.apiserver.pruning import prune
from bundler.apiserver.structural import compile_schema
from bundler.store.protocol import Obj

SCHEMA = compile_schema(
    {
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "size": {"type": "integer", "default": 1},
                    "note": {"type": "string", "nullable": True},
                    "items": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"key": {"type": "string"}}},
                    },
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {
                            "known": {"type": "object", "properties": {"a": {"type": "string"}}}
                        },
                    },
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "properties": {"spec": {"type": "object"}},
                    },
                },
            },
        },
    }
)


@pytest.mark.parametrize(
    ("given", "kept", "unknown"),
    [
        (
            {"spec": {"name": "a", "foo": 1, "bar": {"x": 1}}},
            {"spec": {"name": "a"}},
            ["spec.bar", "spec.foo"],
        ),
        (
            {"apiVersion": "v1", "kind": "K", "other": 1, "spec": {}},
            {"apiVersion": "v1", "kind": "K", "spec": {}},
            ["other"],
        ),
        (
            {"metadata": {"name": "a", "nickname": "b"}, "spec": {"foo": 1}},
            {"metadata": {"name": "a"}, "spec": {}},
            ["metadata.nickname", "spec.foo"],
        ),
        (
            {"spec": {"items": [{"key": "a"}, {"key": "b", "extra": 1}]}},
            {"spec": {"items": [{"key": "a"}, {"key": "b"}]}},
            ["spec.items[1].extra"],
        ),
        (
            {"spec": {"labels": {"a": "b", "c": "d"}}},
            {"spec": {"labels": {"a": "b", "c": "d"}}},
            [],
        ),
        (
            {"spec": {"free": {"anything": {"deep": 1}, "known": {"a": "x", "b": "y"}}}},
            {"spec": {"free": {"anything": {"deep": 1}, "known": {"a": "x"}}}},
            ["spec.free.known.b"],
        ),
        (
            {"spec": {"template": {"kind": "Pod", "metadata": {"x": 1}, "spec": {}, "junk": 1}}},
            {"spec": {"template": {"kind": "Pod", "metadata": {"x": 1}, "spec": {}}}},
            ["spec.template.junk"],
        ),
        (
            {"spec": {"name": None, "size": None, "note": None}},
            {"spec": {"size": None, "note": None}},
            [],
        ),
        ({"spec": {"items": [None]}}, {"spec": {"items": [None]}}, []),
    ],
    ids=[
        "unknown-fields",
        "root-keeps-type-and-metadata",
        "metadata-keeps-object-meta",
        "list-items",
        "additional-properties-are-known",
        "preserve-unknown-fields-prunes-only-what-it-describes",
        "embedded-resource-keeps-its-type-and-metadata",
        "nulls-go-unless-nullable-or-defaulted",
        "null-list-items-stay",
    ],
)
def test_prune(given: Obj, kept: Obj, unknown: list[str]) -> None:
    assert prune(given, SCHEMA) == unknown
    assert given == kept
