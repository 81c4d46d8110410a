"""Validation of emitted objects against the upstream CRD schemas copied into tests/data/schemas.

`validate(obj)` finds the CustomResourceDefinition serving the object's apiVersion and kind, and
checks the object against that version's openAPIV3Schema made as strict as an API server is:

- an object schema with neither `additionalProperties` nor `x-kubernetes-preserve-unknown-fields`
  rejects unknown fields (the server would prune them silently, so a typo must fail the test);
- `x-kubernetes-int-or-string` accepts an integer or a string, `nullable` allows null;
- `x-kubernetes-list-type: set|map` rejects duplicate items or duplicate map keys;
- `x-kubernetes-validations` rules are evaluated when written in the small CEL subset these CRDs
  use (has(), !, &&, ||, ==, !=, in [...], .matches()); rules outside it are skipped
  (`unsupported_rules()` lists them, and a test keeps Flux and Cluster API free of them);
- metadata is checked the way the server checks ObjectMeta, minimally: a DNS-1123 subdomain name,
  a DNS-1123 label namespace, well-formed label keys and values.

The schema directory is `tests/data/schemas` (its README names each file's upstream source); a
test of the validator itself passes another `root`.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft7Validator, ValidationError, validators

SCHEMAS_DIR = Path(__file__).resolve().parents[1] / "data" / "schemas"
_MAX_REPORTED_ERRORS = 10

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$"
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_KEY = rf"^({_DNS_LABEL}(\.{_DNS_LABEL})*/)?{_LABEL_NAME}$"
_LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"

# ObjectMeta as the API server checks it; other metadata fields are server-managed and allowed.
_METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 253, "pattern": _DNS_SUBDOMAIN},
        "namespace": {"type": "string", "maxLength": 63, "pattern": f"^{_DNS_LABEL}$"},
        "labels": {
            "type": "object",
            "propertyNames": {"maxLength": 317, "pattern": _LABEL_KEY},
            "additionalProperties": {"type": "string", "maxLength": 63, "pattern": _LABEL_VALUE},
        },
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


def validate(obj: dict[str, Any], root: Path = SCHEMAS_DIR) -> None:
    """Raise AssertionError naming every violation (path and cause) when `obj` is not valid."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise AssertionError(f"object has no string apiVersion/kind: {_preview(obj)}")
    validator = _validator(root, api_version, kind)
    errors = sorted(validator.iter_errors(obj), key=lambda e: _format_path(e.absolute_path))
    if errors:
        metadata = obj.get("metadata")
        name = metadata.get("name", "<unnamed>") if isinstance(metadata, dict) else "<unnamed>"
        lines = [f"- {_format_path(e.absolute_path) or '<root>'}: {e.message}" for e in errors]
        shown = "\n".join(lines[:_MAX_REPORTED_ERRORS])
        more = len(lines) - _MAX_REPORTED_ERRORS
        suffix = f"\n(and {more} more)" if more > 0 else ""
        raise AssertionError(f"{kind} {name!r} ({api_version}) is invalid:\n{shown}{suffix}")


def served_kinds() -> list[tuple[str, str]]:
    """Every (apiVersion, kind) the schema directory serves, sorted."""
    return sorted(_crd_index(SCHEMAS_DIR))


def crd_schema(api_version: str, kind: str) -> dict[str, Any]:
    """The openAPIV3Schema of one served kind, as the CRD has it (a copy)."""
    return copy.deepcopy(_crd_index(SCHEMAS_DIR)[(api_version, kind)])


def unsupported_rules(api_version: str, kind: str, root: Path = SCHEMAS_DIR) -> list[str]:
    """The CEL rules of one served schema that the subset evaluator skips."""
    schema = _crd_index(root)[(api_version, kind)]
    return [rule for rule in _rules_in(schema) if _compile_rule(rule) is None]


# --- CRD index and strict schemas -------------------------------------------------------------


@functools.cache
def _crd_index(root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    if not root.is_dir():
        raise AssertionError(f"CRD schema directory {root} not found")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    index: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(root.rglob("*.yaml")):
        for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=loader):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec["versions"]:
                if version.get("served", False):
                    key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                    index[key] = version["schema"]["openAPIV3Schema"]
    return index


@functools.cache
def _validator(root: Path, api_version: str, kind: str) -> Any:
    index = _crd_index(root)
    schema = index.get((api_version, kind))
    if schema is None:
        known = ", ".join(f"{k} {v}" for v, k in sorted(index))
        raise AssertionError(f"no served CRD for {kind} {api_version} in {root} (known: {known})")
    strict = _strict(schema)
    strict.setdefault("properties", {})["metadata"] = copy.deepcopy(_METADATA_SCHEMA)
    return _KubeValidator(strict)


def _strict(node: dict[str, Any]) -> dict[str, Any]:
    """A JSON-schema copy of one OpenAPI node with the API server's pruning made into errors."""
    out = dict(node)
    nullable = bool(out.pop("nullable", False))
    if out.pop("x-kubernetes-int-or-string", False):
        out["type"] = ["integer", "string"]
    if "properties" in out:
        out["properties"] = {name: _strict(sub) for name, sub in out["properties"].items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(out.get(key), dict):
            out[key] = _strict(out[key])
    for key in ("anyOf", "allOf", "oneOf"):
        if key in out:
            out[key] = [_strict(sub) for sub in out[key]]
    is_object = out.get("type") == "object" or "properties" in out
    if (
        is_object
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return _allow_null(out) if nullable else out


def _allow_null(node: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in node or "oneOf" in node or "type" not in node:
        return {"anyOf": [{"type": "null"}, node]}
    types = node["type"] if isinstance(node["type"], list) else [node["type"]]
    widened = {**node, "type": [*types, "null"]}
    if "enum" in node:
        widened["enum"] = [*node["enum"], None]
    return widened


def _rules_in(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for rule in node.get("x-kubernetes-validations", []):
            yield rule["rule"]
        for value in node.values():
            yield from _rules_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _rules_in(value)


# --- Kubernetes keywords ------------------------------------------------------------------------


def _list_type(validator: Any, list_type: str, instance: Any, schema: dict[str, Any]) -> Any:
    if not validator.is_type(instance, "array") or list_type not in ("set", "map"):
        return
    keys = schema.get("x-kubernetes-list-map-keys", [])
    seen: set[str] = set()
    for position, item in enumerate(instance):
        if list_type == "map" and isinstance(item, dict):
            identity = json.dumps([item.get(k) for k in keys])
        else:
            identity = json.dumps(item, sort_keys=True)
        if identity in seen:
            what = f"map keys {keys} = {identity}" if list_type == "map" else identity
            yield ValidationError(f"item {position} duplicates {what} in a list-type={list_type}")
        seen.add(identity)


def _cel_validations(validator: Any, rules: list[Any], instance: Any, _: dict[str, Any]) -> Any:
    for rule in rules:
        evaluate = _compile_rule(rule["rule"])
        if evaluate is None:
            continue
        try:
            holds = evaluate(instance)
        except _CelError as err:
            yield ValidationError(f"rule {rule['rule']!r} failed to evaluate: {err}")
            continue
        if holds is not True:
            yield ValidationError(rule.get("message") or f"failed rule: {rule['rule']}")


_KubeValidator = validators.extend(
    Draft7Validator,
    {"x-kubernetes-list-type": _list_type, "x-kubernetes-validations": _cel_validations},
)


# --- the CEL subset ----------------------------------------------------------------------------

Evaluator = Callable[[Any], Any]

_TOKEN = re.compile(r"\s*(\|\||&&|==|!=|!|\(|\)|\[|\]|,|\.|'[^'\\]*'|\"[^\"\\]*\"|[A-Za-z_]\w*)")


class _CelError(Exception):
    """A rule that parsed but cannot be evaluated on this value (a missing field, a bad type)."""


class _UnsupportedRuleError(Exception):
    """A rule outside the subset."""


@functools.cache
def _compile_rule(rule: str) -> Evaluator | None:
    try:
        return _Parser(_tokenize(rule)).parse()
    except _UnsupportedRuleError:
        return None


def _tokenize(rule: str) -> list[str]:
    tokens, position = [], 0
    while position < len(rule.rstrip()):
        match = _TOKEN.match(rule, position)
        if match is None:
            raise _UnsupportedRuleError(rule[position:])
        tokens.append(match.group(1))
        position = match.end()
    return tokens


@dataclass
class _Parser:
    """Recursive descent over: or, and, not, ==/!=/in, has(path), path[.matches(str)], literals."""

    tokens: list[str]
    position: int = 0

    def parse(self) -> Evaluator:
        evaluate = self._or()
        if self.position != len(self.tokens):
            raise _UnsupportedRuleError(self.tokens[self.position])
        return evaluate

    def _peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> str:
        token = self._peek()
        if token is None or (expected is not None and token != expected):
            raise _UnsupportedRuleError(f"expected {expected!r}, got {token!r}")
        self.position += 1
        return token

    def _or(self) -> Evaluator:
        operands = [self._and()]
        while self._peek() == "||":
            self._take()
            operands.append(self._and())
        return operands[0] if len(operands) == 1 else _any_true(operands)

    def _and(self) -> Evaluator:
        operands = [self._unary()]
        while self._peek() == "&&":
            self._take()
            operands.append(self._unary())
        return operands[0] if len(operands) == 1 else _all_true(operands)

    def _unary(self) -> Evaluator:
        if self._peek() == "!":
            self._take()
            operand = self._unary()
            return lambda value: not _boolean(operand(value))
        return self._comparison()

    def _comparison(self) -> Evaluator:
        left = self._primary()
        operator = self._peek()
        if operator in ("==", "!="):
            self._take()
            right = self._primary()
            equal = operator == "=="
            return lambda value: (left(value) == right(value)) is equal
        if operator == "in":
            self._take()
            members = self._primary()
            return lambda value: left(value) in members(value)
        return left

    def _primary(self) -> Evaluator:
        token = self._take()
        if token == "(":
            inner = self._or()
            self._take(")")
            return inner
        if token == "[":
            return self._list()
        if token[0] in "'\"":
            literal = token[1:-1]
            return lambda _: literal
        if token == "has":
            return self._has()
        path = self._path(token)
        if path and path[-1] == "matches" and self._peek() == "(":
            return self._matches(path[:-1])
        return lambda value: _select(value, path)

    def _has(self) -> Evaluator:
        self._take("(")
        path = self._path(self._take())
        self._take(")")
        if not path:
            raise _UnsupportedRuleError("has() needs a field")
        *parents, field = path
        return lambda value: field in _mapping(_select(value, parents))

    def _matches(self, path: list[str]) -> Evaluator:
        self._take("(")
        pattern = self._primary()
        self._take(")")
        return lambda value: re.search(pattern(value), _string(_select(value, path))) is not None

    def _path(self, head: str) -> list[str]:
        if head != "self":
            raise _UnsupportedRuleError(head)
        names = []
        while self._peek() == ".":
            self._take()
            names.append(self._take())
        return names

    def _list(self) -> Evaluator:
        items: list[Evaluator] = []
        while self._peek() != "]":
            items.append(self._primary())
            if self._peek() == ",":
                self._take()
        self._take("]")
        return lambda value: [item(value) for item in items]


def _any_true(operands: list[Evaluator]) -> Evaluator:
    return _first_winning(operands, winner=True)


def _all_true(operands: list[Evaluator]) -> Evaluator:
    return _first_winning(operands, winner=False)


def _first_winning(operands: list[Evaluator], *, winner: bool) -> Evaluator:
    # CEL's && and || are commutative over errors: an operand equal to `winner` decides the result
    # even when another operand fails to evaluate.
    def evaluate(value: Any) -> bool:
        failure: _CelError | None = None
        for operand in operands:
            try:
                if _boolean(operand(value)) is winner:
                    return winner
            except _CelError as err:
                failure = err
        if failure is not None:
            raise failure
        return not winner

    return evaluate


def _boolean(result: Any) -> bool:
    if not isinstance(result, bool):
        raise _CelError(f"expected a bool, got {result!r}")
    return result


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _CelError(f"expected a string, got {value!r}")
    return value


def _mapping(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _CelError(f"expected an object, got {value!r}")
    return value


def _select(value: Any, path: list[str]) -> Any:
    for name in path:
        mapping = _mapping(value)
        if name not in mapping:
            raise _CelError(f"no such key: {name}")
        value = mapping[name]
    return value


def _format_path(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".")


def _preview(obj: Any) -> str:
    text = json.dumps(obj, default=str)
    return text if len(text) <= 200 else text[:200] + "..."
