"""The pbbp2 codec against the official SDK's generated class, byte for byte.

``lark_oapi.ws.pb.pbbp2_pb2.Frame`` is what the platform's own client serialises and parses;
every frame here is encoded by both and decoded by both, so a difference in field order, varint
width, optional-field presence or header layout fails.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from robota.transports.feishu import (
    METHOD_CONTROL,
    METHOD_DATA,
    Frame,
    FrameError,
    Header,
    decode,
    encode,
)

if TYPE_CHECKING:
    from lark_oapi.ws.pb.pbbp2_pb2 import Frame as SdkFrame

# Importing lark_oapi loads the whole SDK, about 3 s of CPU: at a test's first need, not at
# collection (where every pytest worker paid it), and the SDK's tests share one worker.
pytestmark = pytest.mark.xdist_group("lark_sdk")


@functools.cache
def sdk_class() -> type[SdkFrame]:
    from lark_oapi.ws.pb.pbbp2_pb2 import Frame as SdkFrame

    return SdkFrame


def sdk_frame(frame: Frame) -> SdkFrame:
    sdk = sdk_class()()
    sdk.SeqID, sdk.LogID, sdk.service, sdk.method = (
        frame.seq_id,
        frame.log_id,
        frame.service,
        frame.method,
    )
    for header in frame.headers:
        added = sdk.headers.add()
        added.key, added.value = header.key, header.value
    if frame.payload_encoding is not None:
        sdk.payload_encoding = frame.payload_encoding
    if frame.payload_type is not None:
        sdk.payload_type = frame.payload_type
    if frame.payload is not None:
        sdk.payload = frame.payload
    if frame.log_id_new is not None:
        sdk.LogIDNew = frame.log_id_new
    return sdk


def from_sdk(data: bytes) -> Frame:
    sdk = sdk_class()()
    sdk.ParseFromString(data)
    return Frame(
        seq_id=sdk.SeqID,
        log_id=sdk.LogID,
        service=sdk.service,
        method=sdk.method,
        headers=tuple(Header(h.key, h.value) for h in sdk.headers),
        payload_encoding=sdk.payload_encoding if sdk.HasField("payload_encoding") else None,
        payload_type=sdk.payload_type if sdk.HasField("payload_type") else None,
        payload=sdk.payload if sdk.HasField("payload") else None,
        log_id_new=sdk.LogIDNew if sdk.HasField("LogIDNew") else None,
    )


def headers(**pairs: str) -> tuple[Header, ...]:
    return tuple(Header(k, v) for k, v in pairs.items())


FRAMES = {
    "ping": Frame(service=33554678, method=METHOD_CONTROL, headers=headers(type="ping")),
    "pong with ClientConfig": Frame(
        service=33554678,
        method=METHOD_CONTROL,
        headers=headers(type="pong"),
        payload=b'{"PingInterval":120,"ReconnectCount":-1,"ReconnectInterval":120,'
        b'"ReconnectNonce":30}',
    ),
    "event": Frame(
        seq_id=7,
        log_id=9_000_000_001,
        service=33554678,
        method=METHOD_DATA,
        headers=headers(type="event", message_id="m-1", sum="1", seq="0", trace_id="t-1"),
        payload='{"schema":"2.0","event":{"text":"你好"}}'.encode(),
    ),
    "fragment 2 of 3 with ACK header": Frame(
        seq_id=2**64 - 1,
        log_id=2**63,
        service=-1,
        method=METHOD_DATA,
        headers=headers(type="event", message_id="m-2", sum="3", seq="1", biz_rt="12"),
        payload_encoding="",
        payload_type="json",
        payload=b"",
        log_id_new="log-\u00e9",
    ),
    "card": Frame(
        service=2**31 - 1,
        method=METHOD_DATA,
        headers=headers(type="card", message_id="m-3", sum="1", seq="0"),
        payload=b"{}",
    ),
    "empty headers, unset optionals": Frame(service=0, method=METHOD_CONTROL),
}


@pytest.mark.parametrize("name", FRAMES)
def test_the_codec_writes_and_reads_what_the_sdk_writes_and_reads(name: str) -> None:
    frame = FRAMES[name]
    ours = encode(frame)
    theirs = sdk_frame(frame).SerializeToString()
    assert ours == theirs
    assert decode(theirs) == frame
    assert from_sdk(ours) == frame


def test_a_ping_is_the_bytes_the_platform_expects() -> None:
    ping = encode(FRAMES["ping"])
    assert ping.hex() == "0800100018f681801020002a0c0a0474797065120470696e67"


def test_header_lookup_and_an_appended_header() -> None:
    frame = FRAMES["event"].with_header("biz_rt", "3")
    assert frame.header("message_id") == "m-1"
    assert frame.header("biz_rt") == "3"
    assert frame.header("absent") is None
    assert from_sdk(encode(frame)).headers[-1] == Header("biz_rt", "3")


def test_unknown_fields_are_skipped_as_protobuf_does() -> None:
    known = encode(FRAMES["event"])
    # field 15 varint, field 16 fixed64, field 17 bytes, field 18 fixed32
    unknown = b"\x78\x05" + b"\x81\x01" + bytes(8) + b"\x8a\x01\x02hi" + b"\x95\x01" + bytes(4)
    assert decode(unknown + known) == FRAMES["event"]
    assert from_sdk(unknown + known) == FRAMES["event"]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (encode(FRAMES["event"])[:-3], "past the end"),
        (b"\x08", "truncated varint"),
        (b"\x08\x00\x10\x00\x18\x00", "lacks its required method"),
        (b"", "lacks its required SeqID, LogID, service, method"),
        (b"\x08" + b"\xff" * 11, "longer than ten bytes"),
        (b"\x0a\x00", "SeqID has wire type 2"),
        (b"\x0b", "unsupported wire type 3"),
        (b"\x08\x00\x10\x00\x18\x00\x20\x00\x2a\x02\x0a\x00", "lacks its key or value"),
        (b"\x08\x00\x10\x00\x18\x00\x20\x00\x3a\x01\xff", "payload_type is not UTF-8"),
        (b"\x00\x00", "field number 0"),
    ],
)
def test_malformed_bytes_are_a_frame_error_naming_the_fault(data: bytes, says: str) -> None:
    with pytest.raises(FrameError, match=says):
        decode(data)


def test_values_that_do_not_fit_their_fields_are_refused() -> None:
    with pytest.raises(FrameError, match="service"):
        encode(Frame(service=2**31))
    with pytest.raises(FrameError, match="SeqID"):
        encode(Frame(seq_id=-1))


texts = st.text(max_size=20)
frames = st.builds(
    Frame,
    seq_id=st.integers(0, 2**64 - 1),
    log_id=st.integers(0, 2**64 - 1),
    service=st.integers(-(2**31), 2**31 - 1),
    method=st.integers(-(2**31), 2**31 - 1),
    headers=st.lists(st.builds(Header, texts, texts), max_size=6).map(tuple),
    payload_encoding=st.none() | texts,
    payload_type=st.none() | texts,
    payload=st.none() | st.binary(max_size=300),
    log_id_new=st.none() | texts,
)


@given(frames)
def test_any_frame_round_trips_and_matches_the_sdk(frame: Frame) -> None:
    data = encode(frame)
    assert data == sdk_frame(frame).SerializeToString()
    assert decode(data) == frame


@given(st.binary(max_size=200))
def test_arbitrary_bytes_decode_or_raise_frame_error(data: bytes) -> None:
    try:
        frame = decode(data)
    except FrameError:
        return
    assert decode(encode(frame)) == frame
