"""Turning what a template expression evaluates to into values and text.

A whole-string expression keeps its native type but is copied into plain data (dict, list,
str, int, float, bool, None), so rendered values never alias the cluster's context and never
carry template objects. In mixed text a string is written as itself and anything else as
JSON (``true``, ``null``, ``[1, 2]``), the spelling YAML and Helm users expect; Python's
``True``/``None`` would leak the implementation.

Python's printed form of an object that is not a value (``<jinja2.utils.Cycler object at
0x7f...>``, from ``'%s' % cycler(1)``) holds a memory address, which would change the rendered
values, and so the deploymentID, on every render: a string holding one is refused. So is a
string holding half of a UTF-16 surrogate pair (``'\\ud800'``), which no encoding can write.
An integer value beyond 64 bits is refused as the values files refuse it (Go, Helm and the API
server read JSON numbers as 64-bit at most); written into text it is only digits, and allowed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from jinja2 import Undefined

from bundler.core.templating.budget import RenderBudget

_SCALARS = (bool, int, float, type(None))
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_OBJECT_ADDRESS = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")
_SURROGATE = re.compile("[\ud800-\udfff]")


class NotAValueError(Exception):
    """An expression evaluated to something that is not a value (a function, a namespace)."""

    def __init__(self, value: object) -> None:
        surrogate = _SURROGATE.search(value) if isinstance(value, str) else None
        if surrogate is not None:
            super().__init__(
                f"the text holds \\u{ord(surrogate.group()):04x}, half of a character, alone:"
                " no encoding can write it"
            )
            return
        if isinstance(value, str):
            super().__init__(
                "the text holds the printed form of a Python object with its memory address"
                " (`<... at 0x...>`), which changes on every render: only strings, numbers,"
                " bools, null, lists and maps are values"
            )
            return
        if isinstance(value, float):
            super().__init__(f"the expression evaluates to {value!r}, which JSON cannot carry")
            return
        if isinstance(value, int):
            super().__init__(
                "the expression evaluates to an integer that does not fit in 64 bits"
                " (write it into text, e.g. with `| string`, to keep it as digits)"
            )
            return
        super().__init__(
            f"the expression evaluates to a {type(value).__name__!r}, which is not a string,"
            " number, bool, null, list or map"
        )


def to_plain(value: Any, budget: RenderBudget, *, int64: bool = True) -> Any:
    """A fresh plain-data copy of ``value``, refused if it is larger than the budget allows
    (or, with ``int64``, if it holds an integer beyond 64 bits)."""
    budget.allow(budget.size_of(value), "the expression")
    return _copy(value, budget, int64)


def to_text(value: Any, budget: RenderBudget) -> str:
    """``value`` as it is written into mixed text: strings as-is, anything else as JSON."""
    if isinstance(value, str):
        return _plain_text(value)
    if isinstance(value, Undefined):
        return str(value)  # a missing name raises; `${ x if c }` with c false writes nothing
    return json.dumps(to_plain(value, budget, int64=False), ensure_ascii=False)


def preview(text: str, width: int = 60) -> str:
    """``text`` shortened for an error message."""
    return text if len(text) <= width else f"{text[: width - 3]}..."


def _plain_text(text: str) -> str:
    if _OBJECT_ADDRESS.search(text) or _SURROGATE.search(text):
        raise NotAValueError(text)
    return str.__str__(text)  # drops a Markup subclass: we never escape


def _copy(value: Any, budget: RenderBudget, int64: bool) -> Any:
    if isinstance(value, str):
        return _plain_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise NotAValueError(value)
    if int64 and isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        raise NotAValueError(value)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Undefined):
        str(value)  # a missing name raises; `${ x if c }` with c false is null
        return None
    if isinstance(value, Mapping):
        return {_key(key, budget): _copy(item, budget, int64) for key, item in value.items()}
    if isinstance(value, list | tuple | range):
        return [_copy(item, budget, int64) for item in value]
    if isinstance(value, Iterator | KeysView | ValuesView | ItemsView):
        # a lazy result (map, select, dict views): expand it under the budget, then copy
        return to_plain(list(budget.metered(value, "a list")), budget, int64=int64)
    raise NotAValueError(value)


def _key(key: Any, budget: RenderBudget) -> str:
    if isinstance(key, str):
        return _plain_text(key)
    if isinstance(key, _SCALARS):
        return to_text(key, budget)  # as JSON would: 1 -> "1", True -> "true"
    raise NotAValueError(key)
