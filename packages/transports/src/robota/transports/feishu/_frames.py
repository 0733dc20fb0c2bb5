"""pbbp2 frames, the long connection's binary messages, as a pure codec (no protobuf runtime).

Every binary WebSocket message of the Feishu long connection is one proto2 ``pbbp2.Frame``::

    1 SeqID   uint64 (required)      5 headers           repeated Header{1 key, 2 value: string}
    2 LogID   uint64 (required)      6 payload_encoding  string (optional)
    3 service int32  (required)      7 payload_type      string (optional)
    4 method  int32  (required)      8 payload           bytes  (optional)
                                     9 LogIDNew          string (optional)

``method`` 0 is CONTROL (``type`` header ``ping`` / ``pong``), 1 is DATA (``type`` ``event`` or
``card``, with ``message_id``, ``sum``, ``seq`` and ``trace_id`` headers and a JSON payload).

``encode`` writes what the official SDK's generated class writes, byte for byte: fields in
number order, the four required ones always, an optional one only when set (``None`` is unset;
``b""`` is set and empty), a negative ``int32`` as its ten-byte two's complement varint.
``decode`` skips fields it does not know (as protobuf does) and raises ``FrameError`` on
anything else: a truncated message, a wire type a field cannot have, a required field missing,
text that is not UTF-8. The caller drops such a frame and the connection goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ._errors import FrameError

__all__ = [
    "METHOD_CONTROL",
    "METHOD_DATA",
    "Frame",
    "FrameError",
    "Header",
    "decode",
    "encode",
]

METHOD_CONTROL = 0
METHOD_DATA = 1

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_U64 = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class Header:
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class Frame:
    seq_id: int = 0
    log_id: int = 0
    service: int = 0
    method: int = METHOD_CONTROL
    headers: tuple[Header, ...] = ()
    payload_encoding: str | None = None
    payload_type: str | None = None
    payload: bytes | None = None
    log_id_new: str | None = None

    def header(self, key: str) -> str | None:
        """The value of the first header named ``key``, ``None`` when there is none."""
        return next((h.value for h in self.headers if h.key == key), None)

    def with_header(self, key: str, value: str) -> Frame:
        """This frame with one more header at the end (as an ACK appends ``biz_rt``)."""
        return replace(self, headers=(*self.headers, Header(key, value)))


# -- encoding --------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= _U64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _length_delimited(number: int, data: bytes) -> bytes:
    return _tag(number, _BYTES) + _varint(len(data)) + data


def _encode_header(header: Header) -> bytes:
    return _length_delimited(1, header.key.encode()) + _length_delimited(2, header.value.encode())


def encode(frame: Frame) -> bytes:
    """The frame's protobuf bytes."""
    for name, value, low, high in (
        ("SeqID", frame.seq_id, 0, _U64),
        ("LogID", frame.log_id, 0, _U64),
        ("service", frame.service, -(1 << 31), (1 << 31) - 1),
        ("method", frame.method, -(1 << 31), (1 << 31) - 1),
    ):
        if not low <= value <= high:
            raise FrameError(f"{name} {value} does not fit its field")
    out = bytearray()
    out += _tag(1, _VARINT) + _varint(frame.seq_id)
    out += _tag(2, _VARINT) + _varint(frame.log_id)
    out += _tag(3, _VARINT) + _varint(frame.service)
    out += _tag(4, _VARINT) + _varint(frame.method)
    for header in frame.headers:
        out += _length_delimited(5, _encode_header(header))
    if frame.payload_encoding is not None:
        out += _length_delimited(6, frame.payload_encoding.encode())
    if frame.payload_type is not None:
        out += _length_delimited(7, frame.payload_type.encode())
    if frame.payload is not None:
        out += _length_delimited(8, frame.payload)
    if frame.log_id_new is not None:
        out += _length_delimited(9, frame.log_id_new.encode())
    return bytes(out)


# -- decoding --------------------------------------------------------------------------------


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise FrameError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value & _U64, at
        shift += 7
        if shift >= 70:
            raise FrameError("varint longer than ten bytes")


def _fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field: an int, or the bytes of a length field."""
    at = 0
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise FrameError("field number 0")
        if wire == _VARINT:
            value, at = _read_varint(data, at)
            yield number, wire, value
        elif wire == _BYTES:
            length, at = _read_varint(data, at)
            if at + length > len(data):
                raise FrameError(f"field {number} runs past the end of the frame")
            yield number, wire, data[at : at + length]
            at += length
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if at + size > len(data):
                raise FrameError(f"field {number} runs past the end of the frame")
            yield number, wire, int.from_bytes(data[at : at + size], "little")
            at += size
        else:
            raise FrameError(f"field {number} has unsupported wire type {wire}")


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def _text(value: bytes, name: str) -> str:
    try:
        return value.decode()
    except UnicodeDecodeError:
        raise FrameError(f"{name} is not UTF-8") from None


def _decode_header(data: bytes) -> Header:
    key = value = None
    for number, wire, raw in _fields(data):
        if number in (1, 2):
            if wire != _BYTES or not isinstance(raw, bytes):
                raise FrameError(f"header field {number} has wire type {wire}")
            if number == 1:
                key = _text(raw, "a header key")
            else:
                value = _text(raw, "a header value")
    if key is None or value is None:
        raise FrameError("a header lacks its key or value")
    return Header(key, value)


_REQUIRED = {1: "SeqID", 2: "LogID", 3: "service", 4: "method"}
_OPTIONAL_TEXT = {6: "payload_encoding", 7: "payload_type", 9: "log_id_new"}


def decode(data: bytes) -> Frame:
    """The frame in ``data``; ``FrameError`` when it is not a well-formed pbbp2 frame."""
    ints: dict[int, int] = {}
    texts: dict[str, str] = {}
    headers: list[Header] = []
    payload: bytes | None = None
    for number, wire, raw in _fields(bytes(data)):
        if number in _REQUIRED:
            if wire != _VARINT or not isinstance(raw, int):
                raise FrameError(f"{_REQUIRED[number]} has wire type {wire}")
            ints[number] = raw
        elif number in (5, 8) or number in _OPTIONAL_TEXT:
            if wire != _BYTES or not isinstance(raw, bytes):
                raise FrameError(f"field {number} has wire type {wire}")
            if number == 5:
                headers.append(_decode_header(raw))
            elif number == 8:
                payload = raw
            else:
                texts[_OPTIONAL_TEXT[number]] = _text(raw, _OPTIONAL_TEXT[number])
    missing = [name for number, name in _REQUIRED.items() if number not in ints]
    if missing:
        raise FrameError(f"the frame lacks its required {', '.join(missing)}")
    return Frame(
        seq_id=ints[1],
        log_id=ints[2],
        service=_int32(ints[3]),
        method=_int32(ints[4]),
        headers=tuple(headers),
        payload_encoding=texts.get("payload_encoding"),
        payload_type=texts.get("payload_type"),
        payload=payload,
        log_id_new=texts.get("log_id_new"),
    )
