"""The envelope, the JSON checks and the framing every carrier shares: tables of what encodes
to what, of bad input and the one error naming its path, what was expected and what found."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from robota.core.protocol import (
    MAX_SEQ,
    PROTOCOL_VERSION,
    Failure,
    LineSplitter,
    MalformedReply,
    Ok,
    Overlong,
    ProtocolError,
    Request,
    WireError,
    check_seq,
    decode_reply,
    decode_request,
    encode_line,
    encode_reply,
    encode_request,
    loads_strict,
)
from robota.core.surfaces import SurfaceProtocolError


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        (Ok(7, {"a": [1, "é"]}), b'{"id":7,"ok":true,"result":{"a":[1,"\xc3\xa9"]}}\n'),
        (Ok("x", None), b'{"id":"x","ok":true,"result":null}\n'),
        (
            Failure(3, "bad_request", "no", "text"),
            b'{"id":3,"ok":false,"error":{"code":"bad_request","message":"no","field":"text"}}\n',
        ),
        (
            Failure(None, "busy", "full"),
            b'{"id":null,"ok":false,"error":{"code":"busy","message":"full"}}\n',
        ),
    ],
)
def test_a_reply_encodes_to_one_line_and_back(reply: Any, line: bytes) -> None:
    assert encode_reply(reply) == line
    assert decode_reply(line) == reply


@pytest.mark.parametrize(
    ("line", "decoded"),
    [
        (b'{"id": 1, "type": "status"}', Request(1, "status", {})),
        (b' {"id": "a", "type": "x.y", "n": [1]}\r', Request("a", "x.y", {"n": [1]})),
        (b"  ", None),
        (b"nope", ("bad_json", None, None)),
        (b'{"id": 1, "type": "x", "n": NaN}', ("bad_json", None, None)),
        (b"[1]", ("bad_request", None, None)),
        (b'{"type": "x"}', ("bad_request", None, "id")),
        (b'{"id": 1.5, "type": "x"}', ("bad_request", None, "id")),
        (b'{"id": true, "type": "x"}', ("bad_request", None, "id")),
        (b'{"id": 4}', ("bad_request", 4, "type")),
        (b'{"id": 4, "type": 7}', ("bad_request", 4, "type")),
        (Overlong(b"abc", 2), ("too_large", None, None)),
    ],
)
def test_a_request_line_decodes_to_its_request_or_the_failure_to_send_back(
    line: bytes | Overlong, decoded: Any
) -> None:
    got = decode_request(line)
    if isinstance(decoded, tuple):
        assert isinstance(got, Failure)
        assert (got.code, got.id, got.field) == decoded
    else:
        assert got == decoded


def test_a_request_is_one_line_its_fields_beside_the_envelope() -> None:
    line = encode_request(1, "session.attach", {"generation": "g", "protocol": PROTOCOL_VERSION})
    assert line == b'{"id":1,"type":"session.attach","generation":"g","protocol":2}\n'
    with pytest.raises(ValueError, match="may not be named"):
        encode_request(1, "x", {"type": "y"})


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"[]", "a reply must be a JSON object, found an array"),
        (b'{"id": true, "ok": true}', "reply id must be"),
        (b'{"ok": true, "result": 1}', "must carry its request's id"),
        (b'{"id": 1, "ok": "yes"}', "'ok' must be a boolean, found a string"),
        (b'{"id": 1, "ok": false}', "needs an 'error' object, found null"),
        (b'{"id": 1, "ok": false, "error": {"code": 1}}', "string 'code'"),
        (b'{"id": 1, "ok": false, "error": {"code": "c", "message": "m", "field": 3}}', "field"),
        (b'{"id": 1, "ok": true, "result": NaN}', "NaN is not JSON"),
        (b"\xff", "utf-8"),
    ],
)
def test_a_bad_reply_names_what_is_wrong(line: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_reply(line)


def test_a_malformed_reply_is_a_protocol_error() -> None:
    with pytest.raises(ProtocolError):
        decode_reply(b"{}")
    assert issubclass(MalformedReply, ProtocolError)
    assert issubclass(WireError, ProtocolError) and issubclass(SurfaceProtocolError, ProtocolError)


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (None, "found nothing"),
        (True, "found true"),
        (-1, "found -1"),
        (MAX_SEQ + 1, f"found {MAX_SEQ + 1}"),
        (1.5, "found 1.5"),
        ("3", 'found "3"'),
        ("x" * 100, "found " + json.dumps("x" * 100)[:37] + "..."),
    ],
)
def test_a_bad_seq_names_its_path_what_was_expected_and_what_found(value: Any, found: str) -> None:
    with pytest.raises(ProtocolError) as raised:
        check_seq(value, "resume.lastSeq")
    assert str(raised.value) == f"resume.lastSeq: expected an integer from 0 to {MAX_SEQ}, {found}"
    assert raised.value.path == "resume.lastSeq"


@pytest.mark.parametrize("value", [0, 1, MAX_SEQ])
def test_a_seq(value: int) -> None:
    assert check_seq(value, "seq") == value


@pytest.mark.parametrize("text", [b"NaN", b"[Infinity]", b"-Infinity", "{", b"\xc3"])
def test_strict_json_refuses_what_is_not_json(text: bytes | str) -> None:
    with pytest.raises(ValueError):
        loads_strict(text)


def test_framing_round_trips_messages_apart_from_their_vocabulary() -> None:
    messages: list[Any] = [{"type": "hello", "protocol": 2}, [1, "\n"], "é"]
    data = b"".join(encode_line(message) for message in messages)
    lines = LineSplitter(1024).feed(data)
    assert [loads_strict(line) for line in lines if isinstance(line, bytes)] == messages


def test_the_envelope_loads_without_the_engine() -> None:
    """A control client (``robota task send``) pays for the envelope and the framing only."""
    probe = (
        "import sys, json\n"
        "from robota.core.protocol import decode_reply, encode_request, LineSplitter\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "robota.core.protocol._envelope" in loaded
    for heavy in ("robota.core.engine", "robota.core.protocol._notices", "trio", "pykka"):
        assert heavy not in loaded, f"the envelope loaded {heavy}"
