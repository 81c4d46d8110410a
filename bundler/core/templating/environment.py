"""The sandboxed Jinja environment values are rendered with.

Delimiters are ``${ }``, ``${% %}`` and ``${# #}``, so Helm's ``{{ }}`` and Jinja's own
``{% %}`` and ``{# #}`` in values are plain text. The environment is immutable (no method
that mutates a list or map can be called), strict about undefined names, looks up keys
before attributes on maps (a label called ``items`` is that label, not ``dict.items``),
never evaluates template code at compile time, and routes every operation that can build
something large through :mod:`bundler.core.templating.guards` (the compiler in
:mod:`bundler.core.templating.compiler` inserts the guards the sandbox has no hook for).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from jinja2 import StrictUndefined, Undefined
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

from bundler.core.templating.convert import preview
from bundler.core.templating.filters import to_objects
from bundler.core.templating.guards import (
    Guard,
    bounded_range,
    budget_of,
    check_binop,
    check_call,
    checked_result,
    finalize_output,
    guarded_concat,
    guarded_filter,
    guarded_literal,
    guarded_loop,
    guarded_operand,
)

_KEYS_SHOWN = 10


class ValuesEnvironment(ImmutableSandboxedEnvironment):
    """The Jinja sandbox for values: ``${ }`` delimiters, keys before attributes, size checks."""

    intercepted_binops = frozenset({"+", "*", "**", "%"})

    def __init__(self) -> None:
        super().__init__(
            variable_start_string="${",
            variable_end_string="}",
            block_start_string="${%",
            block_end_string="%}",
            comment_start_string="${#",
            comment_end_string="#}",
            undefined=StrictUndefined,
            finalize=finalize_output,
            keep_trailing_newline=True,
            autoescape=False,
            # constant folding would run template code while compiling, outside any budget
            optimized=False,
        )
        self.globals["range"] = bounded_range
        del self.globals["lipsum"]  # builds any amount of text on request
        self.filters.update(
            {
                Guard.FILTER: guarded_filter,
                Guard.CONCAT: guarded_concat,
                Guard.LOOP: guarded_loop,
                Guard.LITERAL: guarded_literal,
                Guard.OPERAND: guarded_operand,
                "to_objects": to_objects,
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
        """``left <operator> right`` for ``+ * ** %``, refused first if the result is too big."""
        check_binop(operator, left, right, budget_of(context))
        return super().call_binop(context, operator, left, right)

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        """A call from a template: one step, checked before and after."""
        budget = budget_of(context)
        what, args = check_call(obj, args, kwargs, budget)
        return checked_result(super().call(context, obj, *args, **kwargs), budget, what)

    def _missing_key(self, mapping: Mapping[Any, Any], key: Any) -> Undefined:
        keys = [preview(str(k)) for k in itertools.islice(mapping, _KEYS_SHOWN + 1)]
        missing = f"no key {preview(repr(key))}"
        if not keys:
            hint = f"{missing} in an empty map"
        else:
            shown = ", ".join(keys[:_KEYS_SHOWN]) + (", ..." if len(keys) > _KEYS_SHOWN else "")
            hint = f"{missing} in a map with keys {shown}"
        return self.undefined(hint=hint, obj=mapping, name=key)


#: Built once; never changed after.
ENVIRONMENT = ValuesEnvironment()
