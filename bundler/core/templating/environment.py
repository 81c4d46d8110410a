"""The sandboxed Jinja environment values are rendered with.

Delimiters are ``${ }``, ``${% %}`` and ``${# #}``, so Helm's ``{{ }}`` and Jinja's own
``{% %}`` and ``{# #}`` in values are plain text. The environment is immutable (no method
that mutates a list or map can be called), strict about undefined names, looks up keys
before attributes on maps (a label called ``items`` is that label, not ``dict.items``),
never evaluates template code at compile time, and routes every operation that can build
something large through :mod:`bundler.core.templating.guards` (the compiler in
:mod:`bundler.core.templating.compiler` inserts the guards the sandbox has no hook for).

A missing name or key is undefined along the whole chain after it: ``${ a.b.c | default(1) }``
is 1 when ``a`` has no ``b``, and without ``default`` the error names ``b``. Every filter call,
including those ``map`` makes, goes through :meth:`ValuesEnvironment.call_filter`, which checks
it against the budget and hands text filters the text of a non-string (``true``, ``null``),
never Python's ``str()`` of it. Of Jinja's builtins, :data:`REFUSED_FILTERS` are not available
(see there why) and ``wordwrap`` and ``join`` are bundler's own (linear, and writing values as
text); see :mod:`bundler.core.templating.guards` for the bound on the others.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from jinja2 import ChainableUndefined, StrictUndefined, TemplateRuntimeError, Undefined
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

from bundler.core.templating.convert import preview, to_text
from bundler.core.templating.filters import join_as_text, to_objects
from bundler.core.templating.guards import (
    Guard,
    bounded_range,
    budget_of,
    check_binop,
    check_call,
    check_filter,
    checked_result,
    finalize_output,
    guarded_concat,
    guarded_filter,
    guarded_literal,
    guarded_loop,
    guarded_operand,
    guarded_slice,
)
from bundler.core.templating.wordwrap import wordwrap

_KEYS_SHOWN = 10
_GUARD_NAMES = frozenset(guard.value for guard in Guard)

#: Jinja's filters values templates do not get, and why.
REFUSED_FILTERS = {
    "urlize": "it takes time quadratic in its input (20 KB took 11 s) and writes HTML links",
    "pprint": "it writes Python's representation of a value; use `tojson`",
    "random": "its result changes on every render, so every cluster would redeploy each time",
}

#: Filters that work on the text of their input: a non-string is converted as in mixed text.
TEXT_FILTERS = frozenset(
    {
        "capitalize",
        "center",
        "e",
        "escape",
        "forceescape",
        "indent",
        "lower",
        "replace",
        "string",
        "striptags",
        "title",
        "trim",
        "truncate",
        "upper",
        "wordcount",
        "wordwrap",
    }
)


class ValuesUndefined(ChainableUndefined, StrictUndefined):
    """A missing value: strict in every use, but its attributes and items are itself, so
    ``default`` applies to a whole chain and the error names the first missing key."""

    __slots__ = ()


class ValuesEnvironment(ImmutableSandboxedEnvironment):
    """The Jinja sandbox for values: ``${ }`` delimiters, keys before attributes, size checks."""

    intercepted_binops = frozenset({"+", "-", "*", "/", "//", "**", "%"})

    def __init__(self) -> None:
        super().__init__(
            variable_start_string="${",
            variable_end_string="}",
            block_start_string="${%",
            block_end_string="%}",
            comment_start_string="${#",
            comment_end_string="#}",
            undefined=ValuesUndefined,
            finalize=finalize_output,
            keep_trailing_newline=True,
            autoescape=False,
            # constant folding would run template code while compiling, outside any budget
            optimized=False,
        )
        self.globals["range"] = bounded_range
        del self.globals["lipsum"]  # builds any amount of text on request
        for name in REFUSED_FILTERS:
            del self.filters[name]
        self.filters.update(
            {
                Guard.FILTER: guarded_filter,
                Guard.CONCAT: guarded_concat,
                Guard.LOOP: guarded_loop,
                Guard.LITERAL: guarded_literal,
                Guard.OPERAND: guarded_operand,
                Guard.SLICE: guarded_slice,
                "to_objects": to_objects,
                "wordwrap": wordwrap,
                "join": join_as_text,
            }
        )

    def getattr(self, obj: Any, attribute: str) -> Any:
        """``obj.attribute``: on a map its key wins over any Python attribute."""
        if isinstance(obj, Mapping):
            try:
                return obj[attribute]
            except (TypeError, LookupError):
                if not hasattr(obj, attribute):
                    return self._missing_key(obj, attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """``obj[argument]``, naming the map's keys when the key is missing."""
        if isinstance(obj, Mapping):
            try:
                return obj[argument]
            except (TypeError, LookupError):
                if not (isinstance(argument, str) and hasattr(obj, argument)):
                    return self._missing_key(obj, argument)
        return super().getitem(obj, argument)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """``left <operator> right``: charged for its operands, refused first if too big."""
        check_binop(operator, left, right, budget_of(context))
        return super().call_binop(context, operator, left, right)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """A call from a template: one step, checked before and after."""
        budget = budget_of(context)
        what, args = check_call(obj, args, kwargs, budget)
        return checked_result(super().call(context, obj, *args, **kwargs), budget, what)

    def call_filter(
        self,
        name: str,
        value: Any,
        args: Any = None,
        kwargs: Any = None,
        context: Context | None = None,
        eval_ctx: EvalContext | None = None,
    ) -> Any:
        """``value | name(*args, **kwargs)`` from a template or ``map``, checked around the call."""
        if context is None:
            raise TypeError("values templates render only through bundler.core.templating")
        if not isinstance(name, str) or name in _GUARD_NAMES:
            raise TemplateRuntimeError(f"no filter named {preview(repr(name))}")
        if name in REFUSED_FILTERS:
            raise TemplateRuntimeError(refused_filter_message(name))
        budget = budget_of(context)
        args, kwargs = tuple(args or ()), dict(kwargs or {})
        if name in TEXT_FILTERS and not isinstance(value, str | Undefined):
            value = to_text(value, budget)
        value = check_filter(name, value, args, kwargs, budget)
        result = super().call_filter(name, value, args, kwargs, context, eval_ctx)
        return checked_result(result, budget, f"filter {name!r}")

    def _missing_key(self, mapping: Mapping[Any, Any], key: Any) -> Undefined:
        keys = [preview(str(k)) for k in itertools.islice(mapping, _KEYS_SHOWN + 1)]
        missing = f"no key {preview(repr(key))}"
        if not keys:
            hint = f"{missing} in an empty map"
        else:
            shown = ", ".join(keys[:_KEYS_SHOWN]) + (", ..." if len(keys) > _KEYS_SHOWN else "")
            hint = f"{missing} in a map with keys {shown}"
        return self.undefined(hint=hint, obj=mapping, name=key)


def refused_filter_message(name: str) -> str:
    """Why the filter ``name`` is not available in values templates."""
    return f"filter {name!r} is not available in values templates: {REFUSED_FILTERS[name]}"


#: Built once; never changed after.
ENVIRONMENT = ValuesEnvironment()
