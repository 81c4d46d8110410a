"""Request bodies in Kubernetes' Protobuf encoding, read as the JSON the same object would be.

Recent kubectl (1.36 and 1.37 do; 1.32 sent JSON) sends built-in objects as
`application/vnd.kubernetes.protobuf` from its typed clients (`kubectl create
namespace|secret|serviceaccount|role|...`); kube-apiserver decodes such a body into the kind's Go
type. Here it becomes the JSON Go's encoder would write of that value
(bundler.apiserver.protobuf_kinds says how each field reads), so everything after the body is read
is the path a JSON body takes.

The encoding (k8s.io/apimachinery runtime/serializer/protobuf): the four bytes `k8s\\x00`, then a
`runtime.Unknown` message whose `typeMeta` holds apiVersion and kind and whose `raw` is the
object's message. Unknown fields are skipped, as generated Go code skips them.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from bundler.api.resources import Verb
from bundler.apiserver.protobuf_kinds import MESSAGES, Field, Presence, Shape, Wire
from bundler.apiserver.routing import ResourceRoute, is_built_in
from bundler.apiserver.statuses import HttpError
from bundler.store.protocol import Obj

PROTOBUF = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
DELETE_OPTIONS = "DeleteOptions"
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_MAX_VARINT_BYTES = 10
_INT64_SIGN = 1 << 63
_UINT64 = 1 << 64
# runtime.Unknown and its TypeMeta (k8s.io/apimachinery/pkg/runtime/generated.proto)
_UNKNOWN_TYPE_META, _UNKNOWN_RAW, _UNKNOWN_ENCODING = 1, 2, 3
_TYPE_META_API_VERSION, _TYPE_META_KIND = 1, 2
_TIMESTAMP_SECONDS, _TIMESTAMP_NANOS = 1, 2
_MAP_KEY, _MAP_VALUE = 1, 2
_FIELDS_V1_RAW = 1
_CUSTOM_RESOURCE_MEDIA_TYPES = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json, application/yaml"
)

Fields = dict[int, list[int | bytes]]


class ProtobufError(ValueError):
    """The bytes are not the message they claim to be."""


def as_json(route: ResourceRoute, verb: Verb, body: bytes) -> bytes:
    """The JSON a Protobuf body of `verb` on `route` reads as: the object of a create or update,
    the DeleteOptions of a delete. A kind read as JSON only is refused as kube-apiserver refuses
    an encoding it does not take (415); a patch is left for the patch handler to refuse."""
    res = route.resource
    if verb in (Verb.DELETE, Verb.DELETE_COLLECTION):
        return _json_of(body, DELETE_OPTIONS) if body else body
    if verb not in (Verb.CREATE, Verb.UPDATE):
        return body
    if not is_built_in(res):  # apiextensions-apiserver's answer for a custom resource
        raise HttpError(415, _CUSTOM_RESOURCE_MEDIA_TYPES)
    if res.kind not in MESSAGES:
        raise HttpError(
            415,
            f"the test API server reads a {res.kind} as JSON only (application/json), "
            f"not as {PROTOBUF}",
        )
    return _json_of(body, res.kind)


def _json_of(body: bytes, message: str) -> bytes:
    try:
        api_version, kind, raw = _unwrap(body)
        obj = _message(message, raw)
    except ProtobufError as error:
        raise HttpError(400, f"the request body is not a valid Protobuf object: {error}") from None
    typed: Obj = {}
    if api_version:
        typed["apiVersion"] = api_version
    if kind:
        typed["kind"] = kind
    return json.dumps({**typed, **obj}).encode()


def _unwrap(body: bytes) -> tuple[str, str, bytes]:
    if not body.startswith(MAGIC):
        raise ProtobufError(
            "provided data does not appear to be a protobuf message, expected prefix "
            f"[{' '.join(str(byte) for byte in MAGIC)}]"
        )
    unknown = _fields(body[len(MAGIC) :])
    if _last_bytes(unknown, _UNKNOWN_ENCODING):
        raise ProtobufError("a contentEncoding is not supported")
    type_meta = _fields(_last_bytes(unknown, _UNKNOWN_TYPE_META))
    return (
        _text(_last_bytes(type_meta, _TYPE_META_API_VERSION)),
        _text(_last_bytes(type_meta, _TYPE_META_KIND)),
        _last_bytes(unknown, _UNKNOWN_RAW),
    )


def _message(name: str, data: bytes) -> Obj:
    found = _fields(data)
    out: Obj = {}
    for number, field in MESSAGES[name].items():
        values = found.get(number)
        if values is None:
            if field.presence is Presence.POINTER:
                continue
            zero = _zero(field)
            if zero is not _LEFT_OUT:
                out[field.name] = zero
            continue
        value = _read(field, values)
        if field.presence is Presence.OMIT_EMPTY and _empty(field, value):
            continue
        if field.presence is Presence.OMIT_ZERO and value is None:
            continue
        out[field.name] = value
    return out


_LEFT_OUT = object()


def _zero(field: Field) -> Any:
    """What a field the message does not carry reads as (its Go zero value, as JSON)."""
    if field.wire is Wire.MESSAGE and field.shape is Shape.SINGLE:
        return _message(field.message, b"")  # a struct is always written
    if field.wire in (Wire.TIME, Wire.MICRO_TIME) and field.shape is Shape.SINGLE:
        return _LEFT_OUT if field.presence is Presence.OMIT_ZERO else None
    if field.presence is not Presence.ALWAYS:
        return _LEFT_OUT
    if field.shape is not Shape.SINGLE:
        return None  # a nil slice or map
    return {Wire.STRING: "", Wire.BOOL: False, Wire.INT: 0}.get(field.wire)


def _empty(field: Field, value: Any) -> bool:
    """Whether Go's omitempty leaves this value out (never a struct's)."""
    if field.shape is not Shape.SINGLE:
        return not value
    if field.wire in (Wire.MESSAGE, Wire.TIME, Wire.MICRO_TIME):
        return False
    return value in ("", 0, False)


def _read(field: Field, values: list[int | bytes]) -> Any:
    if field.shape is Shape.REPEATED:
        return [_scalar(field, value) for value in values]
    if field.shape is Shape.MAP:
        entries: dict[str, Any] = {}
        for entry in values:
            pair = _fields(_as_bytes(entry))
            key = _text(_last_bytes(pair, _MAP_KEY))
            item = pair.get(_MAP_VALUE)
            entries[key] = _scalar(field, item[-1]) if item else _scalar(field, b"")
        return entries
    return _scalar(field, values[-1])


def _scalar(field: Field, value: int | bytes) -> Any:
    if field.wire is Wire.MESSAGE:
        return _message(field.message, _as_bytes(value))
    return _READERS[field.wire](value)


def _string(value: int | bytes) -> str:
    return _text(_as_bytes(value))


def _bytes(value: int | bytes) -> str:
    return base64.b64encode(_as_bytes(value)).decode()


def _bool(value: int | bytes) -> bool:
    return _as_int(value) != 0


def _int(value: int | bytes) -> int:
    number = _as_int(value)
    return number - _UINT64 if number >= _INT64_SIGN else number


def _time(value: int | bytes) -> str | None:
    moment = _timestamp(_as_bytes(value), keep_micros=False)
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_time(value: int | bytes) -> str | None:
    moment = _timestamp(_as_bytes(value), keep_micros=True)
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _timestamp(data: bytes, *, keep_micros: bool) -> datetime | None:
    """metav1.Time's reading: no bytes is the zero time; Time keeps whole seconds, MicroTime
    microseconds."""
    if not data:
        return None
    found = _fields(data)
    seconds = _int(found.get(_TIMESTAMP_SECONDS, [0])[-1])
    nanos = _int(found.get(_TIMESTAMP_NANOS, [0])[-1]) if keep_micros else 0
    try:
        return datetime.fromtimestamp(seconds, UTC).replace(microsecond=max(nanos, 0) // 1000)
    except (OverflowError, OSError, ValueError) as error:
        raise ProtobufError(f"a timestamp out of range: {error}") from None


def _fields_v1(value: int | bytes) -> Any:
    try:
        return json.loads(_last_bytes(_fields(_as_bytes(value)), _FIELDS_V1_RAW) or b"null")
    except (ValueError, UnicodeDecodeError) as error:
        raise ProtobufError(f"fieldsV1 is not JSON: {error}") from None


_READERS: dict[Wire, Callable[[int | bytes], Any]] = {
    Wire.STRING: _string,
    Wire.BYTES: _bytes,
    Wire.BOOL: _bool,
    Wire.INT: _int,
    Wire.TIME: _time,
    Wire.MICRO_TIME: _micro_time,
    Wire.FIELDS_V1: _fields_v1,
}


def _fields(data: bytes) -> Fields:
    """The fields of one message by number, each occurrence in order (varints as ints, length-
    delimited ones as bytes; fixed-size ones, which no message here has, are skipped)."""
    found: Fields = {}
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("a field numbered 0")
        if wire == _VARINT:
            value, at = _varint(data, at)
            found.setdefault(number, []).append(value)
        elif wire == _LENGTH:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise ProtobufError("a length beyond the end of the message")
            found.setdefault(number, []).append(data[at : at + size])
            at += size
        elif wire in (_FIXED64, _FIXED32):
            at += 8 if wire == _FIXED64 else 4
            if at > len(data):
                raise ProtobufError("a fixed-size field beyond the end of the message")
        else:
            raise ProtobufError(f"wire type {wire} of field {number} is not supported")
    return found


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    for index in range(at, min(at + _MAX_VARINT_BYTES, len(data))):
        byte = data[index]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value % _UINT64, index + 1
        shift += 7
    raise ProtobufError("a varint that does not end")


def _last_bytes(found: Fields, number: int) -> bytes:
    values = found.get(number)
    return _as_bytes(values[-1]) if values else b""


def _as_bytes(value: int | bytes) -> bytes:
    if isinstance(value, int):
        raise ProtobufError("a varint where a length-delimited field belongs")
    return value


def _as_int(value: int | bytes) -> int:
    if not isinstance(value, int):
        raise ProtobufError("a length-delimited field where a varint belongs")
    return value


def _text(data: bytes) -> str:
    # Go keeps any bytes in a string; its JSON encoder writes invalid UTF-8 as U+FFFD.
    return data.decode("utf-8", "replace")
