"""Fleet's values templates (Go templates with `${ }` delimiters) read, and written as bundler's.

Fleet renders a bundle's values as Go's text/template with sprig's functions, `${` and `}` as
delimiters, over `.ClusterName`, `.ClusterNamespace`, `.ClusterLabels`, `.ClusterAnnotations` and
`.ClusterValues` (a Cluster's templateValues). bundler's templates use the same delimiters and
Fleet's spellings of those names, but they are Jinja: no leading dot, functions are filters.

`convert` writes the common forms as bundler's expressions, keeping Fleet's meaning:

- `${ .ClusterLabels.env }`, `${ $.ClusterValues.a.b }`: `${ ClusterLabels.env }`,
  `${ ClusterValues.a.b }`;
- `${ index .ClusterLabels "k8s.io/os" }`: `${ ClusterLabels['k8s.io/os'] }`;
- `${ get .ClusterLabels "k" }` (sprig's `""` when missing):
  `${ ClusterLabels['k'] | default('') }`;
- `${ default "x" .V }` or `${ .V | default "x" }` (sprig's x when V is empty):
  `${ V | default('x', true) }`;
- `${ .V | quote }` as the whole value (YAML reads the quoted text back as a string):
  `${ V | string }`; inside other text, where the quotes stay: `${ V | tojson }`;
- `${ toJson .V }` or `${ .V | toYaml }` as the whole value (YAML reads the structure back):
  `${ V }`, which keeps its type;
- `upper`, `lower`, `title`, `trim`, `toString`, `int`, `atoi`, `replace OLD NEW`: the filters of
  those names.

Anything else (`if`, `range`, `with`, variables, other functions, `${-` trimming) raises
NotConvertibleError saying what, to be reported by the caller with its file and line.

`fleet_syntax_hint` is the line a template error adds when the text is Fleet's syntax, and
`fleet_label_warnings` finds values written as Fleet's `global.fleet.clusterLabels.NAME`
substitution, which bundler does not do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bundler.api.bundle import Bundle

OPEN, CLOSE = "${", "}"
FLEET_LABEL_PREFIX = "global.fleet.clusterLabels."
# The names of Fleet's template context, which bundler also knows under these spellings.
CONTEXT_NAMES = (
    "ClusterName",
    "ClusterNamespace",
    "ClusterLabels",
    "ClusterAnnotations",
    "ClusterValues",
)
_JINJA_KEYWORDS = frozenset(
    {"and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None"}
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<raw>`[^`]*`)
      | (?P<number>-?[0-9]+(?:\.[0-9]+)?)
      | (?P<variable>\$[A-Za-z_][A-Za-z0-9_]*)
      | (?P<field>\$?(?:\.[A-Za-z_][A-Za-z0-9_]*)+|\$|\.)
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<punct>[|()]|:?=|,)
    )""",
    re.VERBOSE,
)
# Text that only Fleet's Go templates write inside `${ }`: a leading dot, `$.`, a function call
# with arguments, or a control word.
_GO_ACTION = re.compile(
    r"\$\{-?\s*(?:\$?\.[A-Za-z_]|(?:index|default|get|quote|printf|if|range|with|toJson|toYaml|"
    r"upper|lower|required|hasKey|eq|ne|and|or)\s+[^\s|}]|end\s*-?\}|else\s*-?\})"
)
_CONTROL_WORDS = frozenset(
    {"if", "range", "with", "else", "end", "define", "template", "block", "break", "continue"}
)
_TEXT_FILTERS = {"upper": "upper", "lower": "lower", "title": "title", "trim": "trim"}


class NotConvertibleError(ValueError):
    """A Fleet template form without a conversion; the message says which."""


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str


def looks_like_go_template(text: str) -> bool:
    """Whether `text` holds a `${ }` written in Fleet's Go-template syntax."""
    return _GO_ACTION.search(text) is not None


def fleet_syntax_hint(text: str) -> str | None:
    """What a template error adds when `text` is Fleet's syntax: that it is, and how to write
    it (the conversion when there is one); None when it is not Fleet's."""
    if not looks_like_go_template(text):
        return None
    try:
        written = convert(text)
    except NotConvertibleError:
        written = "${ ClusterLabels.name } (no leading dot; functions are filters: " + (
            "${ ClusterLabels.env | default('dev') })"
        )
    return f"this is Go-template syntax as in Fleet; in bundler write {written}"


def _segments(text: str) -> Iterator[tuple[bool, str]]:
    """(is an action, text) pieces of a Fleet template: literal text and `${ ... }` actions."""
    position = 0
    while True:
        start = text.find(OPEN, position)
        if start < 0:
            if position < len(text):
                yield False, text[position:]
            return
        if start > position:
            yield False, text[position:start]
        end = _action_end(text, start + len(OPEN))
        yield True, text[start + len(OPEN) : end]
        position = end + len(CLOSE)


def _action_end(text: str, position: int) -> int:
    """Where the action starting at `position` closes: the first `}` outside a string."""
    quote: str | None = None
    index = position
    while index < len(text):
        char = text[index]
        if quote is not None:
            if char == "\\" and quote == '"':
                index += 1
            elif char == quote:
                quote = None
        elif char in '"`':
            quote = char
        elif char == CLOSE:
            return index
        index += 1
    raise NotConvertibleError(f"{OPEN} without a closing {CLOSE}")


def convert(text: str) -> str:
    """`text` (a string of Fleet's values, or a key) written as bundler's template text with the
    same meaning; NotConvertibleError for a form without a conversion."""
    pieces = list(_segments(text))
    whole = len(pieces) == 1 and pieces[0][0]
    out: list[str] = []
    for is_action, piece in pieces:
        if not is_action:
            out.append(piece)
            continue
        expression = _unwrapped(_Converter(piece, whole=whole).expression())
        if out and out[-1].endswith("$"):
            # `$` before `${` would read as bundler's escape `$${`: write the dollar as text
            out[-1] = out[-1][:-1]
            out.append("${ '$' }")
        out.append(f"${{ {expression} }}")
    return "".join(out)


class _Converter:
    """One action's pipeline as a Jinja expression."""

    def __init__(self, action: str, *, whole: bool) -> None:
        if action.startswith("-") or action.endswith("-"):
            raise NotConvertibleError("whitespace trimming (`${-` or `-}`) has no conversion")
        if action.lstrip().startswith("/*"):
            raise NotConvertibleError("a template comment has no conversion")
        self.whole = whole
        self.tokens = _tokens(action)
        self.position = 0

    def expression(self) -> str:
        result = self._pipeline()
        if self.position != len(self.tokens):
            raise NotConvertibleError(f"unexpected {self.tokens[self.position].text!r}")
        return result

    def _peek(self) -> _Token | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _next(self) -> _Token:
        token = self._peek()
        if token is None:
            raise NotConvertibleError("the action ends too early")
        self.position += 1
        return token

    def _pipeline(self) -> str:
        commands = [self._command()]
        while (token := self._peek()) is not None and token.text == "|":
            self.position += 1
            commands.append(self._command())
        first = commands[0]
        if isinstance(first, str):
            value = first
        else:
            value = self._call(first[0], first[1], last=len(commands) == 1)
        for position, command in enumerate(commands[1:], start=2):
            if isinstance(command, str):
                raise NotConvertibleError("only a function can follow `|`")
            name, args = command
            value = self._call(name, [*args, value], last=position == len(commands))
        return value

    def _command(self) -> str | tuple[str, list[str]]:
        token = self._peek()
        if token is not None and token.text in _CONTROL_WORDS:
            raise NotConvertibleError(
                f"`{token.text}` has no conversion: write it as a Jinja statement (${{% ... %}})"
            )
        if (
            token is not None
            and token.kind == "word"
            and token.text not in ("true", "false", "nil")
        ):
            self.position += 1
            args = []
            while (following := self._peek()) is not None and following.text not in ("|", ")"):
                args.append(self._operand())
            return token.text, args
        return self._operand()

    def _operand(self) -> str:
        token = self._next()
        if token.kind == "field":
            return _field(token.text)
        if token.kind == "string":
            try:
                return _literal(json.loads(token.text))
            except ValueError:
                raise NotConvertibleError(
                    f"the string {token.text} has escapes without a conversion"
                ) from None
        if token.kind == "raw":
            return _literal(token.text[1:-1])
        if token.kind == "number":
            return token.text
        if token.kind == "word" and token.text in ("true", "false"):
            return token.text
        if token.kind == "word" and token.text == "nil":
            return "none"
        if token.text == "(":
            inner = self._pipeline()
            if self._next().text != ")":
                raise NotConvertibleError("a parenthesis is not closed")
            return f"({inner})"
        if token.kind == "variable":
            raise NotConvertibleError(f"the variable {token.text} has no conversion")
        if token.kind == "word":
            raise NotConvertibleError(f"{token.text!r} has no conversion here")
        raise NotConvertibleError(f"unexpected {token.text!r}")

    def _call(self, name: str, args: list[str], *, last: bool) -> str:
        """`name args...` in Go's order (a pipeline's value is the last argument)."""
        if name == "index" and len(args) >= 2:
            return args[0] + "".join(f"[{key}]" for key in args[1:])
        if name == "get" and len(args) == 2:
            return f"({args[0]}[{args[1]}] | default(''))"
        if name == "default" and len(args) == 2:
            return f"({args[1]} | default({args[0]}, true))"
        if name in ("quote", "squote") and len(args) == 1:
            if self.whole and last:
                return f"({args[0]} | string)"
            if name == "quote":
                return f"({args[0]} | tojson)"
            return f'("\'" ~ {args[0]} ~ "\'")'
        if name in ("toJson", "toYaml", "toPrettyJson") and len(args) == 1:
            if self.whole and last:
                return args[0]
            if name == "toJson":
                return f"({args[0]} | tojson)"
            raise NotConvertibleError(f"{name} inside other text has no conversion")
        if name in _TEXT_FILTERS and len(args) == 1:
            return f"({args[0]} | {_TEXT_FILTERS[name]})"
        if name == "toString" and len(args) == 1:
            return f"({args[0]} | string)"
        if name in ("int", "atoi", "int64") and len(args) == 1:
            return f"({args[0]} | int)"
        if name == "replace" and len(args) == 3:
            return f"({args[2]} | replace({args[0]}, {args[1]}))"
        raise NotConvertibleError(
            f"the function {name!r} with {len(args)} argument(s) has no conversion"
        )


def _unwrapped(expression: str) -> str:
    """`expression` without parentheses around the whole of it."""
    while expression.startswith("(") and expression.endswith(")"):
        depth = 0
        quote: str | None = None
        for index, char in enumerate(expression):
            if quote is not None:
                quote = None if char == quote and expression[index - 1] != "\\" else quote
            elif char in "'\"":
                quote = char
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0 and index != len(expression) - 1:
                    return expression
        expression = expression[1:-1]
    return expression


def _tokens(action: str) -> list[_Token]:
    tokens = []
    position = 0
    text = action.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise NotConvertibleError(f"cannot read {text[position:].strip()!r}")
        kind = match.lastgroup
        assert kind is not None
        tokens.append(_Token(kind, match.group(kind)))
        position = match.end()
    if any(t.kind == "punct" and t.text in (":=", "=", ",") for t in tokens):
        raise NotConvertibleError("variables have no conversion")
    return tokens


def _field(text: str) -> str:
    """`.ClusterLabels.env` (or `$.`...) as `ClusterLabels.env`."""
    parts = [p for p in text.removeprefix("$").split(".") if p]
    if not parts:
        raise NotConvertibleError("`.` (the whole context) has no conversion")
    if parts[0] not in CONTEXT_NAMES:
        raise NotConvertibleError(
            f".{parts[0]} is not in Fleet's template context ({', '.join(CONTEXT_NAMES)})"
        )
    written = parts[0]
    for part in parts[1:]:
        written += (
            f".{part}"
            if _IDENTIFIER.fullmatch(part) and part not in _JINJA_KEYWORDS
            else (f"[{_literal(part)}]")
        )
    return written


def _literal(value: Any) -> str:
    """A string as a Jinja literal."""
    if not isinstance(value, str):
        raise NotConvertibleError(f"{value!r} is not a string")
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def bundle_label_warnings(bundle: Bundle) -> list[str]:
    """`fleet_label_warnings` of a Bundle's values and of each target's."""
    if bundle.spec.helm is None:
        return []  # Fleet's labels are read from Helm values only
    found = fleet_label_warnings(bundle.spec.helm.values, "spec.helm.values")
    for index, target in enumerate(bundle.spec.targets):
        if target.helm is not None:
            found += fleet_label_warnings(target.helm.values, f"spec.targets[{index}].helm.values")
    return found


def fleet_label_warnings(values: Any, path: str) -> list[str]:
    """One line per string of `values` (under `path`) that is Fleet's
    `global.fleet.clusterLabels.NAME` substitution, which bundler passes as that text."""
    found: list[str] = []
    _find_labels(values, path, found, 0)
    return found


def _find_labels(node: Any, path: str, found: list[str], depth: int) -> None:
    if depth > 100:
        return
    if isinstance(node, str):
        if node.startswith(FLEET_LABEL_PREFIX) and len(node) > len(FLEET_LABEL_PREFIX):
            name = node[len(FLEET_LABEL_PREFIX) :]
            found.append(
                f"{path}: {node!r} is Fleet's cluster label substitution, which bundler does not "
                f"do (the value is this text); write {label_expression(name)}"
            )
    elif isinstance(node, Mapping):
        for key, child in node.items():
            _find_labels(child, f"{path}.{key}", found, depth + 1)
    elif isinstance(node, list):
        for index, child in enumerate(node):
            _find_labels(child, f"{path}[{index}]", found, depth + 1)


def label_expression(name: str) -> str:
    """bundler's template for Fleet's `global.fleet.clusterLabels.NAME`: the label, or `""` when
    the cluster has none (Fleet's documented meaning)."""
    key = (
        f".{name}"
        if _IDENTIFIER.fullmatch(name) and name not in _JINJA_KEYWORDS
        else (f"[{_literal(name)}]")
    )
    return f"${{ ClusterLabels{key} | default('') }}"
