"""The resource budget of rendering one cluster's values: size, steps and nesting.

A template author must not be able to exhaust the manager. Every operation that can build
something large is checked against one :class:`RenderBudget` per cluster render *before* it
builds it: sizes are estimated from operand sizes (a rough JSON size in bytes), nesting is
bounded, and work is counted in steps: a loop iteration (a step per node of the loop's body,
so a body of a thousand comparisons costs a thousand steps each time it runs), a call, a filter,
and the items and kilobytes each operation processes (so sorting a large list in a loop runs out
of steps).

Sizes are memoised by object identity for the duration of one render, so measuring a value
costs time proportional to its distinct parts, not to its unrolled size (``[a, a]`` nested
forty times is measured in forty steps, and its size is correctly enormous). That is sound
because the sandbox forbids mutating methods, so a measured container never changes while
the render runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sized
from typing import Any

from jinja2 import Undefined

#: Steps (loop iterations, calls, filters, items and KiB processed) in one cluster's render.
DEFAULT_STEP_LIMIT = 100_000
#: Processing this many bytes at C speed costs about as much as one loop iteration.
_BYTES_PER_STEP = 1024
#: Dividing or printing an integer of 400 digits costs about as much as one loop iteration
#: (one of 4300 digits, about 0.6 ms: a hundred).
_INT_DIGITS_PER_STEP = 400
#: Containers nested deeper than this are refused (values trees are never this deep).
MAX_NESTING = 100
#: Python refuses to print integers longer than this (sys.int_info.default_max_str_digits).
MAX_INT_DIGITS = 4300
#: Rough JSON size of values whose text we never build (floats, opaque objects).
_SCALAR_SIZE = 24


class RenderLimitError(Exception):
    """A template tried to build, run or nest more than one cluster's render may."""


def text_size(text: str | bytes) -> int:
    """Bytes of ``text`` in UTF-8, without encoding it when it is ASCII (the common case)."""
    if isinstance(text, bytes) or text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def int_digits(number: int) -> int:
    """An upper bound of the decimal digits of ``number``, without printing it."""
    return number.bit_length() * 3 // 10 + 1


class RenderBudget:
    """What one cluster's render may still build and do. Never shared between renders."""

    def __init__(self, limit_bytes: int, step_limit: int = DEFAULT_STEP_LIMIT) -> None:
        self.limit_bytes = limit_bytes
        self.step_limit = step_limit
        self.steps = 0
        self.rendered_bytes = 0
        #: Whether the rendered values were refused room: the one check whose outcome depends
        #: on the order parts are charged in.
        self.out_of_room = False
        # id -> (the object, to keep its id unique; size; height)
        self._measured: dict[int, tuple[object, int, int]] = {}

    def step(self, what: str, count: int = 1) -> None:
        """Count ``count`` steps of work."""
        self.steps += count
        if self.steps > self.step_limit:
            raise RenderLimitError(
                f"{what} exceeds the limit of {self.step_limit} steps (loop iterations, calls"
                " and items processed) for rendering one cluster's values"
            )

    def work(self, value: Any) -> int:
        """The steps it costs to process ``value`` once: its items, plus its KiB."""
        if isinstance(value, Undefined | str | bytes) or not isinstance(value, Sized):
            return self.size_of(value) // _BYTES_PER_STEP
        return len(value) + self.size_of(value) // _BYTES_PER_STEP

    def charge_work(self, what: str, *values: Any) -> None:
        """Count the steps of processing each of ``values`` once."""
        self.step(what, sum(self.work(value) for value in values))

    def allow(self, size: int, what: str) -> None:
        """Build a value of about ``size`` bytes: refused over the limit, and costs steps."""
        self.require(size, what)
        self.step(what, size // _BYTES_PER_STEP)

    def require(self, size: int, what: str) -> None:
        """Refuse to build one value of ``size`` bytes if it is over the limit."""
        if size > self.limit_bytes:
            raise RenderLimitError(
                f"{what} would build about {size} bytes, over the limit of"
                f" {self.limit_bytes} bytes for one cluster's rendered values"
            )

    def require_room(self, size: int, what: str) -> None:
        """Refuse ``size`` more bytes of output if the rendered values would exceed the limit."""
        if self.rendered_bytes + size > self.limit_bytes:
            self.out_of_room = True
            raise RenderLimitError(
                f"{what} makes the rendered values exceed the limit of"
                f" {self.limit_bytes} bytes for one cluster"
            )

    def charge(self, size: int, what: str) -> None:
        """Add ``size`` bytes to the rendered values."""
        self.require_room(size, what)
        self.rendered_bytes += size

    def mark(self) -> tuple[int, int]:
        """Where the budget stands, to go back to with `rewind`."""
        return self.steps, self.rendered_bytes

    def rewind(self, mark: tuple[int, int]) -> None:
        """Undo what was counted since `mark`."""
        self.steps, self.rendered_bytes = mark
        self.out_of_room = False

    def require_int_digits(self, digits: int, what: str) -> None:
        """Refuse to build an integer of about ``digits`` decimal digits if it is too long."""
        if digits > MAX_INT_DIGITS:
            raise RenderLimitError(
                f"{what} would build an integer of about {digits} digits, over the limit of"
                f" {MAX_INT_DIGITS} digits"
            )

    def size_of(self, value: Any) -> int:
        """The rough JSON size of ``value`` in bytes, capped just above the limit."""
        return self._measure(value, 0)[0]

    def height_of(self, value: Any) -> int:
        """How deeply ``value`` nests: 0 for a scalar, 1 for a flat list or map."""
        return self._measure(value, 0)[1]

    def metered(self, items: Iterable[Any], what: str) -> Iterator[Any]:
        """Yield ``items``, counting a step per item and refusing once they add up too large."""
        total = 2
        for item in items:
            self.step(what)
            total += self.size_of(item) + 1
            self.require(total, what)
            yield item

    def counted(self, items: Iterable[Any], what: str, cost: int = 1) -> Iterator[Any]:
        """Yield ``items``, counting ``cost`` steps per item (for loops over values that exist:
        the cost of running the loop's body once)."""
        for item in items:
            self.step(what, cost)
            yield item

    def _measure(self, value: Any, depth: int) -> tuple[int, int]:
        """(size, height) of ``value``; containers are memoised by identity."""
        if isinstance(value, Undefined):
            return 0, 0  # touching it would raise; it fails where it is used
        if isinstance(value, str | bytes):
            return text_size(value), 0
        if isinstance(value, bool) or value is None:
            return 5, 0
        if isinstance(value, int):
            # Python divides and prints integers in time quadratic in their digits: a long one
            # counts as large as the work it costs
            digits = int_digits(value)
            return digits + (digits // _INT_DIGITS_PER_STEP) ** 2 * _BYTES_PER_STEP, 0
        if isinstance(value, range):
            return 2 + len(value) * (int_digits(max(abs(value.start), abs(value.stop))) + 1), 0
        if not isinstance(value, Mapping | list | tuple):
            return _SCALAR_SIZE, 0
        known = self._measured.get(id(value))
        if known is not None:
            return known[1], known[2]
        if depth >= MAX_NESTING:
            raise RenderLimitError(f"values nested more than {MAX_NESTING} levels deep")
        size, height = self._measure_children(value, depth)
        if height > MAX_NESTING:
            raise RenderLimitError(f"values nested more than {MAX_NESTING} levels deep")
        self._measured[id(value)] = (value, size, height)
        return size, height

    def _measure_children(
        self, value: Mapping[Any, Any] | list[Any] | tuple[Any, ...], depth: int
    ) -> tuple[int, int]:
        parts: Iterable[Any] = (
            (part for pair in value.items() for part in pair)
            if isinstance(value, Mapping)
            else value
        )
        size, height = 2, 0
        for part in parts:
            part_size, part_height = self._measure(part, depth + 1)
            size += part_size + 1
            height = max(height, part_height + 1)
            if size > self.limit_bytes:
                return self.limit_bytes + 1, height  # over is over: stop counting
        return size, height
