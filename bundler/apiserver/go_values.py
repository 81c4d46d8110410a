"""How kube-apiserver, a Go program, prints values inside its messages.

- `go_quote`: `%q` / strconv.Quote, how strings are quoted (`"a\\"b"`, `"\\x01"`);
- `go_value`: `%v` of a JSON scalar, so floats print as Go prints them (`10`, `1.5`, `1e+06`);
- `go_json`: encoding/json's compact form: keys sorted, `<`, `>` and `&` escaped, floats without
  a needless `.0`.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}
# encoding/json escapes these even inside strings, so its output is safe to embed in HTML.
_JSON_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_JSON_SPECIAL = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# strconv's %g chooses the exponent form from this many digits on, with the shortest precision.
_G_EXPONENT_FROM = 6
# encoding/json writes floats in exponent form outside [1e-6, 1e21).
_JSON_SMALL = 1e-6
_JSON_LARGE = 1e21
_CONTROL_LIMIT = 0x20
_DELETE = 0x7F
_BMP_LIMIT = 0x10000


def go_quote(text: str) -> str:
    """`text` as Go's `%q` writes it."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif code < _CONTROL_LIMIT or code == _DELETE:
            out.append(f"\\x{code:02x}")
        elif char.isprintable() or char == " ":
            out.append(char)
        else:
            out.append(f"\\u{code:04x}" if code < _BMP_LIMIT else f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def go_value(value: bool | int | float) -> str:
    """A number or boolean as Go's `%v` writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _go_float(value)


def go_json(value: Any) -> str:
    """`value` as Go's json.Marshal writes it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, dict):
        fields = (f"{_json_string(str(k))}:{go_json(value[k])}" for k in sorted(value))
        return "{" + ",".join(fields) + "}"
    return "[" + ",".join(go_json(item) for item in value) + "]"


def _json_string(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in _JSON_SPECIAL:
            out.append(_JSON_SPECIAL[char])
        elif char in _JSON_HTML_ESCAPES:
            out.append(_JSON_HTML_ESCAPES[char])
        elif code < _CONTROL_LIMIT or char in ("\u2028", "\u2029"):
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _shortest(value: float) -> tuple[str, int]:
    """The shortest decimal digits of abs(value) and where the point goes: 1.5 is ("15", 1)."""
    parts = Decimal(repr(abs(value))).as_tuple()
    text = "".join(map(str, parts.digits)).lstrip("0") or "0"
    return text.rstrip("0") or "0", len(text) + int(parts.exponent)


def _fixed(digits: str, point: int) -> str:
    if point <= 0:
        return "0." + "0" * -point + digits
    if point >= len(digits):
        return digits + "0" * (point - len(digits))
    return digits[:point] + "." + digits[point:]


def _exponent(digits: str, point: int, width: int) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    power = point - 1
    return f"{mantissa}e{'-' if power < 0 else '+'}{abs(power):0{width}d}"


def _go_float(value: float) -> str:
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, point = _shortest(value)
    power = point - 1
    if power < -4 or power >= _G_EXPONENT_FROM:
        return sign + _exponent(digits, point, 2)
    return sign + _fixed(digits, point)


def _json_float(value: float) -> str:
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits, point = _shortest(value)
    if _JSON_SMALL <= abs(value) < _JSON_LARGE:
        return sign + _fixed(digits, point)
    return sign + _exponent(digits, point, 1)
