"""Read-only JSON values: what the in-memory store keeps and shares without copying.

A stored object is written once and then only read: by watch events, by every informer's cache, by
the indexes beside them. Copying it for each of those costs more than anything they do with it, so
the store freezes each object once, when it is written, and hands the frozen object to all of them.
:class:`FrozenDict` and :class:`FrozenList` are a `dict` and a `list` (JSON encoders, pydantic and
`isinstance` checks take them as such) whose every mutating method raises TypeError: a reader that
tries to change what it shares fails loudly instead of corrupting what every other reader sees.
Freezing shares what is already frozen, so the next version of an object shares its unchanged
parts with the last one. A caller that wants to change a value copies it (`json_copy`), which
gives plain dicts and lists again.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn


def _refuse(self: object, *args: object, **kwargs: object) -> NoReturn:
    raise TypeError(f"a stored {type(self).__name__} is read-only: copy it to change it")


class FrozenDict(dict[str, Any]):
    """A dict that refuses changes."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(item, memo) for key, item in self.items()}

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)


class FrozenList(list[Any]):
    """A list that refuses changes."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(item, memo) for item in self]

    def __reduce__(self) -> tuple[type[list[Any]], tuple[list[Any]]]:
        return list, (list(self),)


_FROZEN = (FrozenDict, FrozenList)


def freeze(value: Any) -> Any:
    """`value` as read-only dicts and lists; frozen parts are shared, not copied."""
    kind = type(value)
    if kind in _FROZEN:
        return value
    if kind is dict:
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if kind is list:
        return FrozenList([freeze(item) for item in value])
    if isinstance(value, dict):
        return FrozenDict({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return FrozenList([freeze(item) for item in value])
    return value
