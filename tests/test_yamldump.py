"""Tests of writing YAML: every string reads back as that string, in YAML 1.1, 1.2 and kubectl."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import yaml

from bundler.yamldump import dump, reads_as_another_type
from tests.support.kubectl import find_kubectl

#: Strings some YAML reader takes for another type: (id, text, the reading that changes it).
NOT_STRINGS = [
    ("exponent", "1e3", "1.2 float"),
    ("exponent-upper-signed", "1E+3", "1.2 float"),
    ("fraction-exponent", "0.5e-3", "float"),
    ("leading-dot", ".5", "float"),
    ("trailing-dot", "1.", "1.1 float"),
    ("octal-1.2", "0o17", "1.2 int"),
    ("octal-1.1", "0777", "1.1 int"),
    ("hex", "0x1F", "int"),
    ("binary", "0b101", "1.1 int"),
    ("underscores", "1_000", "1.1 int"),
    ("signed", "+1", "int"),
    ("base-60", "1:20", "1.1 int"),
    ("base-60-float", "190:20:30.15", "1.1 float"),
    ("infinity", ".inf", "float"),
    ("negative-infinity", "-.Inf", "float"),
    ("not-a-number", ".NaN", "float"),
    ("yes", "yes", "1.1 bool"),
    ("y", "y", "1.1 bool"),
    ("n-upper", "N", "1.1 bool"),
    ("on", "on", "1.1 bool"),
    ("off-upper", "OFF", "1.1 bool"),
    ("true-title", "True", "bool"),
    ("null", "null", "null"),
    ("tilde", "~", "null"),
    ("empty", "", "null"),
    ("date", "2001-12-14", "1.1 timestamp"),
    ("timestamp", "2001-12-14t21:59:43.10-05:00", "1.1 timestamp"),
    ("merge-key", "<<", "1.1 merge"),
]

STRINGS = ["hello", "v1.2.3", "1.2.3", "10.0.0.1", "e3", "1e", "_1", ".", "nginx", "yesno"]


@pytest.mark.parametrize(
    "text", [c[1] for c in NOT_STRINGS], ids=[f"{c[0]} ({c[2]})" for c in NOT_STRINGS]
)
def test_strings_another_reader_would_retype_are_quoted(text: str) -> None:
    assert reads_as_another_type(text)
    assert dump({"v": text}).startswith(("v: '", 'v: "'))


@pytest.mark.parametrize("text", STRINGS)
def test_plain_strings_stay_bare(text: str) -> None:
    assert not reads_as_another_type(text)
    assert dump({"v": text}) == f"v: {text}\n"


def test_every_string_reads_back_as_itself_in_pyyaml_and_kubectl() -> None:
    data = {f"k{i}": text for i, text in enumerate([c[1] for c in NOT_STRINGS] + STRINGS)}
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": data}
    text = dump(manifest)
    assert yaml.safe_load(text)["data"] == data  # YAML 1.1
    # kubectl's reader (Go, sigs.k8s.io/yaml) turns a bare 1e3 into 1000 and yes into true
    kubectl, missing = find_kubectl()
    assert kubectl is not None, missing
    read = subprocess.run(
        [kubectl, "annotate", "--local", "-f", "-", "checked=yes", "-o", "json"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, "KUBECONFIG": os.devnull},
    )
    assert json.loads(read.stdout)["data"] == data


def test_keys_are_quoted_too_with_no_aliases_and_multiline_blocks() -> None:
    shared = {"a": 1}
    written = dump({"x": shared, "y": shared, "z": "l1\nl2"})
    assert written == "x:\n  a: 1\n'y':\n  a: 1\nz: |-\n  l1\n  l2\n"
