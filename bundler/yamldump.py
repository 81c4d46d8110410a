"""Writing YAML that every reader reads back as it was written: strings stay strings.

PyYAML quotes a string only when its own YAML 1.1 reading would take it for another type, so it
prints ``1e3``, ``0o17`` or ``1_000`` bare, which YAML 1.2 readers and Go's (kubectl, Helm) read
as numbers. Here a string is quoted when any of the usual readings would not take it for a
string: YAML 1.1's types (booleans ``y``/``n``/``yes``/``no``/``on``/``off``, null ``~``, ints in
binary, octal, hex or base 60 such as ``1:20``, floats, timestamps), the YAML 1.2 core schema
(``0o17``, ``1e3``, ``.inf``, ``.nan``), case variants and underscores included. Quoting a
string that did not need it is harmless; missing one changes a value. No aliases are written.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

_WORDS = r"y|n|yes|no|on|off|true|false|null|~|[-+]?\.inf|\.nan|<<|="
_DIGITS = r"[0-9][0-9_]*"
_NUMBERS = (
    rf"[-+]?(?:{_DIGITS}(?:\.[0-9_]*)?|\.{_DIGITS})(?:e[-+]?[0-9]+)?",  # ints, floats
    r"[-+]?0b[01_]+|[-+]?0o?[0-7_]+|[-+]?0x[0-9a-f_]+",  # binary, octal, hex
    rf"[-+]?{_DIGITS}(?::[0-5]?[0-9])+(?:\.[0-9_]*)?",  # base 60 (1.1): 1:20, 1:20:30.5
    r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+).*)?",  # timestamps (1.1)
)
_NOT_A_STRING = re.compile("|".join((_WORDS, *_NUMBERS)), re.IGNORECASE)


def reads_as_another_type(text: str) -> bool:
    """Whether some YAML reader would take the bare scalar ``text`` for something not a string."""
    return text == "" or _NOT_A_STRING.fullmatch(text) is not None  # a bare empty scalar is null


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else "'" if reads_as_another_type(value) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump(obj: Any) -> str:
    """``obj`` as one YAML document: keys in their order, unicode kept, strings that would read
    as another type quoted."""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
