"""Flux's postBuild variable substitution, for previews: `${name}` in the built manifests replaced
by the Kustomization's `postBuild.substitute` values, as kustomize-controller does. Pure.

kustomize-controller substitutes with fluxcd/pkg/envsubst in its default (not strict) mode, so a
variable it was not given stands for the empty string and counts as set. The forms previews
evaluate: `${name}`, `${name:-default}` and `${name:=default}` (the default when the value is
empty), `${name-default}` and `${name=default}` (the default when it is not set: never, in that
mode), a default holding `${...}` itself, and the escapes `$${` (a literal `${`) and `$$` (a
literal `$`). Flux's string functions (`${#name}`, `${name^^}`, `${name/a/b}`, ...) are applied on
the cluster only: a preview refuses them, naming the expression. Variable names must be what Flux
accepts (`^[_[:alpha:]][_[:alpha:][:digit:]]*$`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bundler.errors import InvalidInputError

_NAME = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")
#: The defaulting operators, longest first: `:-` before `-`.
_OPERATORS = (":-", ":=", "-", "=")


def check_names(variables: Mapping[str, str], *, obj: str) -> None:
    """InvalidInputError for a variable name Flux refuses."""
    for name in variables:
        if not _NAME.fullmatch(name):
            raise InvalidInputError(
                f"variable {name!r} is not a name Flux substitutes "
                "(a letter or _, then letters, digits or _)",
                obj=obj,
                field="postBuild.substitute",
            )


def substitute(text: str, variables: Mapping[str, str], *, obj: str) -> str:
    """`text` with its variables replaced; InvalidInputError naming `obj` for an expression that
    is not closed or that a preview does not evaluate."""
    out, end = _expand(text, 0, variables, obj, nested=False)
    assert end == len(text)
    return out


def _expand(
    text: str, start: int, variables: Mapping[str, str], obj: str, *, nested: bool
) -> tuple[str, int]:
    """Expand from `start` to the end of `text`, or (when `nested`) to the `}` closing a
    default: the expansion and the index after what was read."""
    out: list[str] = []
    i = start
    while i < len(text):
        char = text[i]
        if nested and char == "}":
            return "".join(out), i
        if char != "$":
            out.append(char)
            i += 1
        elif text.startswith("$${", i):
            out.append("${")
            i += 3
        elif text.startswith("$$", i):
            out.append("$")
            i += 2
        elif text.startswith("${", i):
            value, i = _expression(text, i, variables, obj)
            out.append(value)
        else:
            out.append(char)
            i += 1
    if nested:
        raise _error(text[start - 2 :], "has no closing }", obj)
    return "".join(out), i


def _expression(text: str, start: int, variables: Mapping[str, str], obj: str) -> tuple[str, int]:
    """The value of the `${...}` at `start`, and the index after its `}`."""
    found = _NAME.match(text, start + 2)
    if found is None:
        raise _error(text[start : start + 20], "is not an expression a preview evaluates", obj)
    name, i = found.group(), found.end()
    value = variables.get(name, "")
    if text.startswith("}", i):
        return value, i + 1
    operator = next((op for op in _OPERATORS if text.startswith(op, i)), None)
    if operator is None:
        closing = text.find("}", i)
        shown = text[start : closing + 1] if closing >= 0 else text[start : start + 20]
        raise _error(shown, "uses a function Flux applies on the cluster only", obj)
    default, after = _expand(text, i + len(operator), variables, obj, nested=True)
    # Not strict: a variable not given is set, to the empty string.
    use_default = operator.startswith(":") and value == ""
    return (default if use_default else value), after + 1


def _error(expression: str, why: str, obj: str) -> InvalidInputError:
    return InvalidInputError(
        f"{expression!r} {why} (a preview evaluates ${{name}}, ${{name:-default}}, "
        "${name:=default}, ${name-default} and ${name=default})",
        obj=obj,
        field="postBuild.substitute",
    )
