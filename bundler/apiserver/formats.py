"""The string formats kube-apiserver checks in custom resources, each checked as it checks it.

apiextensions-apiserver keeps a schema's `format` only when it is one of these (names compare
without dashes, so `date-time` is `datetime`): `bsonobjectid uri email hostname ipv4 ipv6 cidr mac
uuid uuid3 uuid4 uuid5 isbn isbn10 isbn13 creditcard ssn hexcolor rgbcolor byte password date
duration datetime`, and since Kubernetes 1.34 `k8s-short-name` and `k8s-long-name`; any other
format is dropped and checks nothing. The checks are kube-openapi's strfmt registry: its regular
expressions, and Go's parsers (net.ParseIP, net.ParseMAC, url.ParseRequestURI, time.ParseDuration,
net/mail.ParseAddress) written out here. Two are close but not exact: `uri` (absolute URI or
absolute path, no spaces or control characters) and `email` (RFC 5322 dot-atom or quoted local
part, optionally inside `Name <...>`).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable
from datetime import date

_RX_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
_RX_UUID3 = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.I)
_RX_UUID4 = re.compile(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}", re.I
)
_RX_UUID5 = re.compile(
    r"[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}", re.I
)
_RX_HEXCOLOR = re.compile(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_OCTET = r"\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*"
_RX_RGBCOLOR = re.compile(rf"rgb\({_OCTET},{_OCTET},{_OCTET}\)", re.ASCII)
_RX_BASE64 = re.compile(
    r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})"
)
_RX_SSN = re.compile(r"\d{3}[- ]?\d{2}[- ]?\d{4}", re.ASCII)
_SSN_LENGTH = 11
_RX_ISBN10 = re.compile(r"[0-9]{9}X|[0-9]{10}")
_RX_ISBN13 = re.compile(r"[0-9]{13}")
_RX_CREDIT_CARD = re.compile(
    r"4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}",
    re.ASCII,
)
_RX_BSON_OBJECT_ID = re.compile(r"[0-9a-fA-F]{24}")
_SHORT_NAME = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_RX_SHORT_NAME = re.compile(_SHORT_NAME)
_RX_LONG_NAME = re.compile(rf"{_SHORT_NAME}(\.{_SHORT_NAME})*")
_SHORT_NAME_MAX = 63
_LONG_NAME_MAX = 253
# kube-openapi's hostname pattern, where \p{L} (letters) and \p{S} (symbols) stand for themselves;
# `_host_shape` maps every letter to "a" and every symbol to "$" before matching it.
_RX_HOSTNAME = re.compile(
    r"([a-zA-Z0-9$]((-?[a-zA-Z0-9$]{0,62})?)"
    r"|([a-zA-Z0-9$](([a-zA-Z0-9\-$]{0,61}[a-zA-Z0-9$])?)(\.)){1,}([a-zA-Z]){2,63})"
)
_HOSTNAME_MAX = 255
_HOST_LABEL_MAX = 63
_RX_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_RX_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")
_DATE_TIME_MIN = 4
_RX_GO_DURATION = re.compile(r"[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)", re.ASCII)
_RX_LOOSE_DURATION = re.compile(r"((\d+)\s*([A-Za-zµ]+))", re.ASCII)
_DURATION_UNITS = (
    ("ns", "nano"),
    ("us", "µs", "micro"),
    ("ms", "milli"),
    ("s", "sec"),
    ("m", "min"),
    ("h", "hr", "hour"),
    ("d", "day"),
    ("w", "wk", "week"),
)
_RX_IPV4_SLOPPY = re.compile(r"(\d+)\.(\d+)\.(\d+)\.(\d+)", re.ASCII)
_OCTET_MAX = 255
_MAC_OCTETS = frozenset({6, 8, 20})
_MAC_MIN = 14
_RX_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+"
_DOT_ATOM = rf"{_ATEXT}(\.{_ATEXT})*"
_ADDR_SPEC = rf'({_DOT_ATOM}|"([^"\\]|\\.)*")@({_DOT_ATOM}|\[[^\[\]\\]*\])'
_RX_EMAIL = re.compile(rf"\s*({_ADDR_SPEC}|[^<>]*<{_ADDR_SPEC}>)\s*")
_BITS = {4: 32, 6: 128}


def is_string_format(name: str) -> bool:
    """Whether kube-apiserver checks this format of a string (else it drops it)."""
    return name.replace("-", "") in _CHECKS


def valid(name: str, value: str) -> bool:
    """Whether `value` is of the format `name` (one `is_string_format` accepts)."""
    return _CHECKS[name.replace("-", "")](value)


def _full(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda value: pattern.fullmatch(value) is not None


def _hostname(value: str) -> bool:
    if _RX_HOSTNAME.fullmatch(_host_shape(value)) is None:
        return False
    if len(value.encode()) > _HOSTNAME_MAX:
        return False
    return all(len(part.encode()) <= _HOST_LABEL_MAX for part in value.split("."))


def _host_shape(value: str) -> str:
    shaped = []
    for char in value:
        category = unicodedata.category(char)
        if category.startswith("S"):
            shaped.append("$")
        elif category.startswith("L") and not char.isascii():
            shaped.append("a")
        else:
            shaped.append(char)
    return "".join(shaped)


def _ipv4_sloppy(value: str) -> bool:
    found = _RX_IPV4_SLOPPY.fullmatch(value)
    return found is not None and all(int(part) <= _OCTET_MAX for part in found.groups())


def _ipv6(value: str) -> bool:
    if "%" in value:
        return False
    try:
        ipaddress.IPv6Address(value)
    except ValueError:
        return False
    return True


def _ip_version(value: str) -> int | None:
    """4 or 6 for what Kubernetes' sloppy net.ParseIP accepts (leading zeros allowed)."""
    if _ipv4_sloppy(value):
        return 4
    return 6 if _ipv6(value) else None


def _ipv4(value: str) -> bool:
    return _ip_version(value) is not None and "." in value


def _cidr(value: str) -> bool:
    address, slash, length = value.partition("/")
    version = _ip_version(address)
    if not slash or version is None or not length.isascii() or not length.isdigit():
        return False
    return int(length) <= _BITS[version]


def _mac(value: str) -> bool:
    if len(value) < _MAC_MIN:
        return False
    if value[2] in ":-":
        groups, size = value.split(value[2]), 2
        octets = len(groups)
    elif value[4] == ".":
        groups, size = value.split("."), 4
        octets = 2 * len(groups)
    else:
        return False
    hex_digits = "0123456789abcdefABCDEF"
    shaped = all(len(g) == size and all(c in hex_digits for c in g) for g in groups)
    return shaped and octets in _MAC_OCTETS


def _uri(value: str) -> bool:
    if not value or any(ord(c) < 0x20 or c in " \x7f" for c in value):
        return False
    return value.startswith("/") or _RX_SCHEME.match(value) is not None


def _date(value: str) -> bool:
    if _RX_DATE.fullmatch(value) is None:
        return False
    try:
        date(int(value[:4]), int(value[5:7]), int(value[8:]))
    except ValueError:
        return False
    return True


def _date_time(value: str) -> bool:
    if len(value) < _DATE_TIME_MIN:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not _date(parts[0]):
        return False
    found = _RX_TIME.fullmatch(parts[1])
    if found is None:
        return False
    hours, minutes, seconds = found.group(1, 2, 3)
    return hours <= "23" and minutes <= "59" and seconds <= "59"


def _duration(value: str) -> bool:
    if _RX_GO_DURATION.fullmatch(value) is not None:
        return True
    for _, _, unit_text in _RX_LOOSE_DURATION.findall(value):
        unit = unit_text.strip().lower()
        for variants in _DURATION_UNITS:
            last = len(variants) - 1
            for index, variant in enumerate(variants):
                if (index == last and unit.startswith(variant)) or variant == unit:
                    return True
    return False


def _isbn10(value: str) -> bool:
    digits = re.sub(r"[\s-]+", "", value)
    if _RX_ISBN10.fullmatch(digits) is None:
        return False
    checksum = sum((i + 1) * int(digits[i]) for i in range(9))
    checksum += 100 if digits[9] == "X" else 10 * int(digits[9])
    return checksum % 11 == 0


def _isbn13(value: str) -> bool:
    digits = re.sub(r"[\s-]+", "", value)
    if _RX_ISBN13.fullmatch(digits) is None:
        return False
    checksum = sum((1, 3)[i % 2] * int(digits[i]) for i in range(12))
    return int(digits[12]) - (10 - checksum % 10) % 10 == 0


def _credit_card(value: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", value)
    if _RX_CREDIT_CARD.fullmatch(digits) is None:
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        number = int(char) * (2 if position % 2 else 1)
        total += number - 9 if number > 9 else number
    return total % 10 == 0


def _ssn(value: str) -> bool:
    return len(value) == _SSN_LENGTH and _RX_SSN.fullmatch(value) is not None


def _short_name(value: str) -> bool:
    return len(value) <= _SHORT_NAME_MAX and _RX_SHORT_NAME.fullmatch(value) is not None


def _long_name(value: str) -> bool:
    return len(value) <= _LONG_NAME_MAX and _RX_LONG_NAME.fullmatch(value) is not None


_CHECKS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": _full(_RX_BSON_OBJECT_ID),
    "uri": _uri,
    "email": _full(_RX_EMAIL),
    "hostname": _hostname,
    "ipv4": _ipv4,
    "ipv6": _ipv6,
    "cidr": _cidr,
    "mac": _mac,
    "uuid": _full(_RX_UUID),
    "uuid3": _full(_RX_UUID3),
    "uuid4": _full(_RX_UUID4),
    "uuid5": _full(_RX_UUID5),
    "isbn": lambda value: _isbn10(value) or _isbn13(value),
    "isbn10": _isbn10,
    "isbn13": _isbn13,
    "creditcard": _credit_card,
    "ssn": _ssn,
    "hexcolor": _full(_RX_HEXCOLOR),
    "rgbcolor": _full(_RX_RGBCOLOR),
    "byte": _full(_RX_BASE64),
    "password": lambda _value: True,
    "date": _date,
    "duration": _duration,
    "datetime": _date_time,
    "k8sshortname": _short_name,
    "k8slongname": _long_name,
}
