"""Fuzzing the input paths: whatever YAML a user hands bundler, reading it ends in the objects or in
one BundlerError (an input error naming file, line and field, or the error saying the inputs hold
nothing bundler reads), never another exception.

Targets: the YAML loader (bundler.yamlload), documents into API objects (bundler.api.documents,
validation), `-f` reading of files and directories (bundler.inputs.load_world, the Cluster API
import included), the `bundler render` and `explain` commands end to end, label selectors
(bundler.core.selectors), and `bundler import fleet` of fleet.yaml files of any shape. Every
corpus file runs as a case of its own on every `make test`, and seeds the mutated texts; `make
fuzz` runs the same properties for many more examples.
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from bundler import yamlload
from bundler.api.documents import parse_object, split_documents
from bundler.api.selector import LabelSelector
from bundler.cli import main
from bundler.core.selectors import selector_matches, selector_to_string, validate_selector
from bundler.errors import BundlerError, InvalidInputError, NothingToReadError
from bundler.inputs import load_world
from tests.support.fuzz.strategies import (
    corpus_texts,
    documents,
    fleet_documents,
    labels,
    selectors,
    yaml_texts,
)

CORPUS = corpus_texts()
INTERNAL_ERROR = "internal error"


def read_documents(text: str) -> None:
    """What every command does with one input text: documents, then objects."""
    for doc in split_documents(text, "fuzz.yaml"):
        if doc.body.get("apiVersion") == "bundler.dev/v1alpha1":
            parse_object(doc)


def load_file(text: str) -> None:
    """`-f DIR` reading: the text as a file in a directory, loaded as the commands load it."""
    with tempfile.TemporaryDirectory(prefix="bundler-fuzz-") as scratch:
        Path(scratch, "in.yaml").write_text(text, encoding="utf-8")
        load_world([scratch])


def run_bundler(*argv: str) -> tuple[int, str]:
    """`bundler ARGV` in-process: its exit code and what it printed on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(argv))
    return code, err.getvalue()


# The commands reading -f: (command, its other arguments).
COMMANDS = {
    "render": (),
    "explain": ("--bundle", "ws/web", "--cluster", "ws/prod-eu-1"),
}


def command_on(text: str, command: str) -> tuple[int, str]:
    with tempfile.TemporaryDirectory(prefix="bundler-fuzz-") as scratch:
        path = Path(scratch, "in.yaml")
        path.write_text(text, encoding="utf-8")
        return run_bundler(command, "-f", str(path), *COMMANDS[command])


@pytest.mark.parametrize("text", [t for _, t in CORPUS], ids=[name for name, _ in CORPUS])
def test_the_corpus_reads_as_objects_or_input_errors(text: str) -> None:
    for target in (read_documents, load_file):
        with contextlib.suppress(InvalidInputError, NothingToReadError):
            target(text)
    for command in COMMANDS:
        code, err = command_on(text, command)
        assert code in (0, 1, 2) and INTERNAL_ERROR not in err, err


@given(st.one_of(st.text(max_size=300), st.binary(max_size=300), yaml_texts()))
def test_the_yaml_loader_answers_documents_or_an_input_error(text: str | bytes) -> None:
    with contextlib.suppress(InvalidInputError):
        yamlload.load_all(text, "fuzz.yaml")


@given(yaml_texts())
def test_documents_become_objects_or_an_input_error(text: str) -> None:
    with contextlib.suppress(InvalidInputError):
        read_documents(text)


@given(yaml_texts())
def test_files_given_with_f_are_read_or_refused_in_one_error(text: str) -> None:
    with contextlib.suppress(InvalidInputError, NothingToReadError):
        load_file(text)


@given(st.one_of(yaml_texts(), documents().map(lambda d: _dumped(d))))
def test_render_never_fails_internally(text: str) -> None:
    code, err = command_on(text, "render")
    assert code in (0, 1, 2), err
    assert INTERNAL_ERROR not in err, err
    if code:
        assert err.startswith("error: ") or err.startswith("notice: "), err


@given(fleet_documents())
def test_importing_a_fleet_yaml_never_fails_internally(document: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory(prefix="bundler-fuzz-") as scratch:
        Path(scratch, "web").mkdir()
        Path(scratch, "web", "fleet.yaml").write_text(_dumped(document), encoding="utf-8")
        code, err = run_bundler("import", "fleet", scratch)
    assert code in (0, 1, 2), err
    assert INTERNAL_ERROR not in err, err


@given(selectors(), labels())
def test_selectors_are_checked_or_refused_and_then_match_without_error(
    selector: dict[str, Any], cluster_labels: dict[str, str]
) -> None:
    try:
        model = LabelSelector.model_validate(selector)
        validate_selector(model, field="spec.selector")
    except (ValidationError, BundlerError):
        return
    matched = selector_matches(model, cluster_labels)
    assert isinstance(matched, bool)
    selector_to_string(model)
    if not model.matchExpressions:
        wanted = dict(model.matchLabels or {})
        assert selector_matches(model, {**cluster_labels, **wanted})


def _dumped(document: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(document, allow_unicode=True)
