"""Size checks that run before the sandbox builds anything: operators, calls, filters, loops.

Each check estimates what an operation would build from the sizes of its operands and
refuses it (:class:`RenderLimitError`) before Python allocates it, so ``"x" * 10**9`` fails at
once instead of after a gigabyte; each also counts the work it does in steps. Results are
measured again afterwards, and lazy results (generators) are metered item by item. The
functions here that take a Jinja ``Context`` are installed in the environment under names a
template cannot spell; the compiler routes ``~``, every filter, every loop, every list or
map literal and every comparison operand through them.

The bound: every filter, test, operator and method a template can reach takes time linear in
the size of its operands (or has them capped: the characters ``trim``/``strip`` remove, the
digits of integers), and is charged a step per item and per KiB of them before it runs, so one
render does at most :data:`~bundler.core.templating.budget.DEFAULT_STEP_LIMIT` steps' work.
A slice (``s[1:]``) copies what it returns, so it is charged by the size of that copy; an item
lookup returns what exists and costs nothing more. Text is encoded and decoded only as UTF-8,
ASCII or Latin-1 (:data:`ALLOWED_CODECS`): Python's other codecs include pure-Python ones that
take time quadratic in their input (``punycode``: 60 KB took over 90 s) or reach compression.
A step costs at most a few microseconds: measured with ``python -m bundler.sim.bench_limits``
on 2 shared cores, the slowest filters process about 1 ms per KiB of text (``wordwrap(1)``) or
3.5 ms per KiB of one-character list items (``map``, ``sort``), and the slowest render a template
can force, stopped by the step limit, took 0.3 s and under 10 MiB.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence, Sized
from encodings import aliases, normalize_encoding
from enum import StrEnum
from typing import Any, Literal

from jinja2 import Undefined, pass_context
from jinja2.runtime import Context
from jinja2.sandbox import MAX_RANGE

from bundler.core.templating.budget import RenderBudget, RenderLimitError, int_digits, text_size
from bundler.core.templating.convert import preview, to_text

#: The per-render budget's name in the template variables. Like the guards' names it holds
#: a space, which no template identifier or filter name can, so templates cannot reach it.
BUDGET_VARIABLE = "bundler budget"


class Guard(StrEnum):
    """The guards' names in the environment's filters."""

    FILTER = "bundler filter"
    CONCAT = "bundler concat"
    LOOP = "bundler loop"
    LITERAL = "bundler literal"
    OPERAND = "bundler operand"
    SLICE = "bundler slice"


_TEXTS = (str, bytes)
#: ``strip(chars)`` compares each stripped character with every one of ``chars``.
MAX_STRIP_CHARS = 256
_STRIP_METHODS = frozenset({"strip", "lstrip", "rstrip"})
_STRIP_CHARS_PER_STEP = 32
_SEQUENCES = (str, bytes, list, tuple)
#: The codecs ``str.encode`` and ``bytes.decode`` may use (as Python's codec registry names them).
ALLOWED_CODECS = frozenset({"utf_8", "ascii", "latin_1"})
_DIGIT_RUN = re.compile(r"\d+")
_NESTED_FIELD = re.compile(r"\{[^{}]*\{")


def budget_of(context: Context) -> RenderBudget:
    """The budget of the render ``context`` belongs to."""
    budget = context.get(BUDGET_VARIABLE)
    if not isinstance(budget, RenderBudget):
        raise TypeError("values templates render only through bundler.core.templating")
    return budget


def checked_result(result: Any, budget: RenderBudget, what: str) -> Any:
    """``result`` if it is within the limit; lazy results are metered as they are consumed."""
    if isinstance(result, Iterator):
        return budget.metered(result, what)
    if isinstance(result, int):  # int.from_bytes; arithmetic on longer ints is quadratic
        budget.require_int_digits(int_digits(result), what)
    budget.allow(budget.size_of(result), what)
    return result


def bounded_range(*args: int) -> range:
    """``range`` for templates: at most MAX_RANGE numbers, with the limit named on failure."""
    _fail_on_undefined(args)
    numbers = range(*args)
    try:
        count = len(numbers)
    except OverflowError:
        count = MAX_RANGE + 1
    if count > MAX_RANGE:
        raise RenderLimitError(f"range() of {count} numbers is over the limit of {MAX_RANGE}")
    return numbers


# --- operators --------------------------------------------------------------------------


def check_binop(operator: str, left: Any, right: Any, budget: RenderBudget) -> None:
    """Refuse ``left <operator> right`` if its result would be too large."""
    what = f"`{operator}`"
    budget.charge_work(what, left, right)
    if operator == "+" and isinstance(left, _SEQUENCES) and isinstance(right, _SEQUENCES):
        budget.allow(budget.size_of(left) + budget.size_of(right), what)
    elif operator == "*":
        _check_multiply(left, right, budget, what)
    elif operator == "**":
        _check_power(left, right, budget, what)
    elif operator == "%" and isinstance(left, _TEXTS):
        budget.allow(format_bound(left, _percent_args(right), "%", budget), what)


def _check_multiply(left: Any, right: Any, budget: RenderBudget, what: str) -> None:
    if isinstance(left, int) and isinstance(right, int):
        budget.require_int_digits(int_digits(left) + int_digits(right), what)
        return
    for sequence, count in ((left, right), (right, left)):
        if isinstance(sequence, _SEQUENCES) and isinstance(count, int):
            budget.allow(budget.size_of(sequence) * max(count, 0), what)


def _check_power(base: Any, exponent: Any, budget: RenderBudget, what: str) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        budget.require_int_digits(math.ceil(exponent * math.log10(abs(base))) + 1, what)


def _percent_args(right: Any) -> list[Any]:
    if isinstance(right, tuple):
        return list(right)
    if isinstance(right, Mapping):
        return list(right.values())
    return [right]


def format_bound(
    template: str | bytes, args: Sequence[Any], style: Literal["%", "{"], budget: RenderBudget
) -> int:
    """An upper bound of the size of formatting ``args`` into ``template``.

    Every field may print the largest argument padded to the widest width in the template;
    widths can also come from the arguments (``%*d``, ``{:{}}``).
    """
    text = template if isinstance(template, str) else template.decode("latin-1")
    widths = [_width(run, budget) for run in _DIGIT_RUN.findall(text)]
    widths_from_args = "*" in text if style == "%" else bool(_NESTED_FIELD.search(text))
    if widths_from_args:
        widths += [abs(arg) for arg in args if isinstance(arg, int)]
    largest = max((budget.size_of(arg) for arg in args), default=0)
    return text_size(template) + text.count(style) * (largest + max(widths, default=0))


def _width(digits: str, budget: RenderBudget) -> int:
    # never convert a huge digit run to int: anything longer than the limit's digits is over it
    if len(digits) > len(str(budget.limit_bytes)):
        return budget.limit_bytes + 1
    return int(digits)


def replace_bound(text: Any, old: Any, new: Any, count: Any, budget: RenderBudget) -> int:
    """An upper bound of the size of ``text.replace(old, new, count)``."""
    occurrences = _occurrences(text, old)
    if occurrences is None:  # a filter replaces in the printed form of a non-string
        occurrences = budget.size_of(text) + 1
    if isinstance(count, int) and count >= 0:
        occurrences = min(occurrences, count)
    return budget.size_of(text) + occurrences * budget.size_of(new)


def _occurrences(text: Any, old: Any) -> int | None:
    if isinstance(text, str) and isinstance(old, str):
        return text.count(old)
    if isinstance(text, bytes) and isinstance(old, bytes):
        return text.count(old)
    return None


# --- calls ----------------------------------------------------------------------------------


def check_call(
    function: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], budget: RenderBudget
) -> tuple[str, tuple[Any, ...]]:
    """Count and check a call; returns what to call it in messages and the arguments to pass."""
    _fail_on_undefined((*args, *kwargs.values()))
    target = getattr(function, "__wrapped__", function)  # the sandbox wraps str.format
    receiver = getattr(target, "__self__", None)
    name = getattr(target, "__name__", type(function).__name__)
    what = f"{type(receiver).__name__}.{name}()" if receiver is not None else f"{name}()"
    budget.step(what)
    budget.charge_work(what, receiver, *args, *kwargs.values())
    if isinstance(receiver, int) and name == "to_bytes":
        budget.allow(abs(_int_arg(args, kwargs, 0, "length", 1)), what)
    if not isinstance(receiver, _TEXTS):
        return what, args
    if name in _STRIP_METHODS:
        _check_strip_chars(receiver, _arg(args, kwargs, 0, "chars", None), budget, what)
    if name == ("encode" if isinstance(receiver, str) else "decode"):
        _check_codec(_arg(args, kwargs, 0, "encoding", "utf-8"), what)
    for arg in (*args, *kwargs.values()):
        if isinstance(arg, int):
            budget.require(abs(arg), what)  # widths, counts and tab sizes
    if name == "join" and args:
        items = _sized(args[0], budget, what)
        budget.allow(budget.size_of(items) + len(items) * text_size(receiver), what)
        return what, (items, *args[1:])
    budget.allow(_text_method_bound(receiver, name, args, kwargs, budget), what)
    return what, args


def _text_method_bound(
    receiver: str | bytes,
    name: str,
    args: tuple[Any, ...],
    kwargs: Mapping[str, Any],
    budget: RenderBudget,
) -> int:
    size = text_size(receiver)
    if name == "expandtabs":
        tabs = receiver.count("\t") if isinstance(receiver, str) else receiver.count(b"\t")
        return size + tabs * _int_arg(args, kwargs, 0, "tabsize", 8)
    if name == "replace" and len(args) >= 2:
        count = _arg(args, kwargs, 2, "count", -1)
        return replace_bound(receiver, args[0], args[1], count, budget)
    if name == "translate" and args and isinstance(args[0], Mapping):
        largest = max((budget.size_of(v) for v in args[0].values()), default=1)
        return size * max(largest, 1)
    if name == "format":
        return format_bound(receiver, [*args, *kwargs.values()], "{", budget)
    if name == "format_map" and args and isinstance(args[0], Mapping):
        return format_bound(receiver, list(args[0].values()), "{", budget)
    return size  # other methods build at most a small multiple of the receiver


# --- filters --------------------------------------------------------------------------------

#: Filters that apply their arguments (a test, a filter) to every item of their input.
_PER_ITEM_FILTERS = frozenset({"map", "select", "reject", "selectattr", "rejectattr"})
#: Filters that run a Python loop per word, tag or byte of their input, not C code per KiB.
_PER_WORD_FILTERS = frozenset({"wordwrap", "title", "striptags", "urlencode"})
#: The shortest a word (`a `) or a tag (`<a>`) can be, in bytes.
_WORD_BYTES = 2


def check_filter(
    name: str, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], budget: RenderBudget
) -> Any:
    """Count and check a filter; returns the value to apply it to."""
    what = f"filter {name!r}"
    budget.step(what)
    if isinstance(value, Undefined):
        return value  # `default` handles it; any other filter fails with the missing name
    arguments = (*args, *kwargs.values())
    argument_work = sum(budget.work(argument) for argument in arguments)
    if name in _PER_ITEM_FILTERS and argument_work:
        value = _sized(value, budget, what)  # `select("in", big)` scans `big` once per item
        budget.step(what, len(value) * argument_work)
    budget.charge_work(what, value, *arguments)
    if name in _PER_WORD_FILTERS:
        budget.step(what, budget.size_of(value) // _WORD_BYTES)
    if name == "trim":
        _check_strip_chars(value, _arg(args, kwargs, 0, "chars", None), budget, what)
    if name == "sum":
        _check_sum_start(_arg(args, kwargs, 1, "start", 0), what)
    if name == "join":
        items = _sized(value, budget, what)
        separator = _arg(args, kwargs, 0, "d", "")
        budget.allow(budget.size_of(items) + len(items) * budget.size_of(separator), what)
        return items
    budget.allow(_filter_bound(name, value, args, kwargs, budget), what)
    return value


def _filter_bound(
    name: str, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], budget: RenderBudget
) -> int:
    size = budget.size_of(value)
    if name == "center":
        return max(size, _int_arg(args, kwargs, 0, "width", 80))
    if name == "batch":
        fill = _arg(args, kwargs, 1, "fill_with", None)
        linecount = _int_arg(args, kwargs, 0, "linecount", 0)
        return 0 if fill is None else linecount * (budget.size_of(fill) + 1)
    if name == "indent":
        width = _arg(args, kwargs, 0, "width", 4)
        indent = text_size(width) if isinstance(width, str) else _as_int(width)
        lines = value.count("\n") + 1 if isinstance(value, str) else size
        return size + lines * indent
    if name == "wordwrap":
        wrapstring = _arg(args, kwargs, 2, "wrapstring", None) or "\n"
        return size * (1 + budget.size_of(wrapstring))
    if name == "replace" and len(args) >= 2:
        count = _arg(args, kwargs, 2, "count", None)
        return replace_bound(value, args[0], args[1], count, budget)
    if name == "to_objects":
        items = len(value) if isinstance(value, Sized) else 0
        fields = sum(budget.size_of(a) + 8 for a in (*args, *kwargs.values()))
        return size + items * fields
    if name == "format" and isinstance(value, str):
        return format_bound(value, [*args, *kwargs.values()], "%", budget)
    if name == "tojson":  # each item on its own line, indented once per level
        indent = _int_arg(args, kwargs, 0, "indent", 0)
        return size * (2 + max(indent, 0) * budget.height_of(value))
    return size  # other filters build at most a small multiple of their input


def _check_strip_chars(text: Any, chars: Any, budget: RenderBudget, what: str) -> None:
    if not isinstance(chars, _TEXTS):
        return
    if len(chars) > MAX_STRIP_CHARS:
        raise RenderLimitError(
            f"{what} is given {len(chars)} characters to remove, over the limit of"
            f" {MAX_STRIP_CHARS}"
        )
    # each character stripped is compared with each of `chars`
    budget.step(what, budget.work(text) * (len(chars) // _STRIP_CHARS_PER_STEP))


def _check_codec(encoding: Any, what: str) -> None:
    """Refuse a codec other than UTF-8, ASCII or Latin-1, however it is spelled."""
    if not isinstance(encoding, str):
        raise TypeError(f"{what}: the encoding must be a string")
    normalized = normalize_encoding(encoding.lower()).replace(".", "_")
    if aliases.aliases.get(normalized, normalized) not in ALLOWED_CODECS:
        raise RenderLimitError(
            f"{what} with the codec {preview(repr(encoding))} is not available in values"
            " templates: only utf-8, ascii and latin-1 are"
        )


def _check_sum_start(start: Any, what: str) -> None:
    # summing lists copies the total so far once per item: quadratic
    if isinstance(start, bool) or not isinstance(start, int | float):
        raise TypeError(f"{what} adds numbers: its start must be a number")


def _arg(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: Any
) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _int_arg(
    args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: int
) -> int:
    return _as_int(_arg(args, kwargs, index, name, default))


def _as_int(value: Any) -> int:
    # never do arithmetic on a value of unknown type: `3 * [..]` would build a list here
    return value if isinstance(value, int) else 0


def _sized(items: Any, budget: RenderBudget, what: str) -> Any:
    return items if isinstance(items, Sized) else list(budget.metered(items, what))


def _fail_on_undefined(values: Sequence[Any]) -> None:
    # a builtin given an undefined value would fail with a TypeError that hides the name
    for value in values:
        if isinstance(value, Undefined):
            value._fail_with_undefined_error()


# --- the guards the compiler inserts ---------------------------------------------------------


@pass_context
def guarded_filter(context: Context, value: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
    """``value | name(*args, **kwargs)``, checked by the environment's ``call_filter``."""
    return context.environment.call_filter(name, value, args, kwargs, context=context)


@pass_context
def guarded_concat(context: Context, parts: list[Any]) -> str:
    """``a ~ b ~ ...``, with values written as in mixed text."""
    budget = budget_of(context)
    texts = [to_text(part, budget) for part in parts]
    budget.allow(sum(map(text_size, texts)), "`~`")
    return "".join(texts)


@pass_context
def guarded_loop(context: Context, iterable: Any, cost: int = 1) -> Iterator[Any]:
    """The items a ``for`` loop runs over, each charged ``cost``: the nodes of the loop's body,
    whose own operations (attribute lookups, comparisons of small values, literals) are too
    cheap to charge one by one but add up when a loop repeats a thousand of them."""
    return budget_of(context).counted(iterable, "a loop", cost)


@pass_context
def guarded_literal(context: Context, value: Any) -> Any:
    """A list, tuple or map literal, measured (it may repeat large values)."""
    budget = budget_of(context)
    budget.require(budget.size_of(value), "a list or map literal")
    return value


@pass_context
def guarded_operand(context: Context, value: Any) -> Any:
    """An operand of a comparison or test, whose cost grows with its size (``x in big``)."""
    budget_of(context).charge_work("a comparison", value)
    return value


@pass_context
def guarded_slice(context: Context, value: Any) -> Any:
    """What ``obj[start:stop:step]`` returned, a copy: charged by its items and KiB."""
    budget = budget_of(context)
    budget.charge_work("a slice", value)
    budget.require(budget.size_of(value), "a slice")
    return value


@pass_context
def finalize_output(context: Context, value: Any) -> str:
    """What a ``${ }`` in mixed text writes."""
    return to_text(value, budget_of(context))
