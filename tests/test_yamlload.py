"""Tests of reading YAML: libyaml where installed, every strictness check kept, one-line errors."""

from __future__ import annotations

import pytest
import yaml

from bundler import yamlload
from bundler.errors import InvalidInputError

BIG_INT = "9" * 5000


def test_libyaml_parses_where_it_is_installed() -> None:
    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML was built without libyaml")
    assert issubclass(yamlload._StrictLoader, yaml.CSafeLoader)


#: Each input is refused with one line: (id, text, what the message says).
REFUSED = [
    ("repeated-key", "a: 1\na: 2\n", "(line 2): key 'a' is repeated (first on line 1)"),
    ("self-alias", "a: &x [*x]\n", "an alias refers to a node containing it"),
    ("too-deep-flow", "[" * 5000 + "]" * 5000, "nested more than 100 levels deep"),
    ("too-deep-block", "".join(f"{' ' * i}- \n" for i in range(0, 400, 2)), "nested more"),
    ("nan", "a: .nan\n", "(line 1): '.nan' is not a number JSON can carry"),
    ("infinity", "a: -.inf\n", "is not a number JSON can carry"),
    ("over-64-bits", "a: 9223372036854775808\n", "(line 1): the integer does not fit in 64 bits"),
    ("over-4300-digits", f"a: {BIG_INT}\n", "(line 1): the integer does not fit in 64 bits"),
    ("long-base-60", f"a: 1:{'1:' * 3000}1\n", "the integer does not fit in 64 bits"),
    # libyaml refuses the escape; PyYAML alone builds the string, and bundler refuses it
    ("lone-surrogate", 'a: "\\ud800"\n', "(line 1): "),
    ("lone-surrogate-key", '"\\udfff": 1\n', "(line 1): "),
    ("binary-tag", "a: !!binary aGk=\n", "tag !!binary is not supported"),
    ("tab-indent", "a:\n\tb: 1\n", "found character '\\t' that cannot start any token"),
    ("control-character", "a: \x07\n", "(line 1): control character '\\x07'"),
    ("map-tag-on-a-list", "a: !!map [x]\n", "expected a mapping node"),
    ("seq-tag-on-a-scalar", "a: !!seq x\n", "expected a sequence node"),
    ("map-tag-on-a-scalar", "a: !!map x\n", "expected a mapping node"),
    ("unhashable-key", "? [a]\n: 1\n", "found unhashable key"),
    ("unknown-tag", "a: !thing x\n", "could not determine a constructor"),
]


@pytest.mark.parametrize(("text", "message"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_bad_yaml_is_one_line_naming_the_problem(text: str, message: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        yamlload.load_all(text, "in.yaml")
    assert message in str(raised.value)
    assert str(raised.value).startswith("in.yaml:")
    assert "\n" not in str(raised.value)


def test_alias_bomb_is_refused() -> None:
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n"
        for p, n in zip("abcdefgh", "bcdefghi", strict=True)
    )
    with pytest.raises(InvalidInputError, match="aliases expand this document by more than"):
        yamlload.load_all(text, "in.yaml")


def test_a_text_over_the_input_limit_is_refused_before_parsing() -> None:
    text = "a: " + "x" * yamlload.MAX_INPUT_BYTES
    with pytest.raises(InvalidInputError, match=f"over the limit of {yamlload.MAX_INPUT_BYTES}"):
        yamlload.load_all(text, "in.yaml")


def test_an_error_in_a_later_document_names_its_line() -> None:
    with pytest.raises(InvalidInputError, match=r"^in\.yaml:5: .*nested more than 100"):
        yamlload.load_all("a: 1\n---\nb: 2\n---\n" + "[" * 200 + "]" * 200, "in.yaml")


def test_scalars_are_what_json_carries() -> None:
    text = "t: 2001-12-14\nn: 9223372036854775807\nf: 1.5\ns: '\\u00e9'\nb: yes\nz: ~\n"
    assert yamlload.load(text, "in.yaml") == {
        "t": "2001-12-14",
        "n": 9223372036854775807,
        "f": 1.5,
        "s": "\\u00e9",
        "b": True,
        "z": None,
    }


def test_merge_keys_and_aliases_build_as_pyyaml_builds_them() -> None:
    text = "base: &b {x: 1, y: [2]}\nchild: {<<: *b, y: [3]}\nsame: *b\n"
    loaded = yamlload.load(text, "in.yaml")
    assert loaded == yaml.safe_load(text)
    assert loaded["same"] is loaded["base"]
