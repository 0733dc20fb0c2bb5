"""The control protocol without a socket: what a connection makes of any bytes, and the
reply lines both sides write and read."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robota.core.control import (
    Call,
    ErrorCode,
    Failure,
    Ok,
    RequestRegistry,
    ServerConnection,
    decode_reply,
    encode_reply,
    encode_request,
)

from ._chunking import chunked
from ._requests import ALL, Status, TaskSend

REGISTRY = RequestRegistry(ALL)


def receive_all(data: bytes, max_line: int = 1024) -> list[Call | Failure]:
    connection = ServerConnection(REGISTRY, max_line=max_line)
    return connection.receive(data) + connection.end_of_input()


def brief(item: Call | Failure) -> tuple[Any, ...]:
    if isinstance(item, Call):
        return ("call", item.id, item.request)
    return ("fail", item.id, str(item.code), item.field)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"id": 1, "type": "status"}\n', ("call", 1, Status())),
        (b'{"id": 0, "type": "status"}\n', ("call", 0, Status())),
        (b'{"id": "a-b", "type": "status"}\n', ("call", "a-b", Status())),
        (
            b'{"type": "task.send", "id": 9, "task": "1", "text": "\\u00e9\\n"}\n',
            ("call", 9, TaskSend("1", "\u00e9\n")),
        ),
        (b'{"id": 1, "type": "status"}', ("call", 1, Status())),  # last line, no newline
        (b'  {"id": 1, "type": "status"}  \r\n', ("call", 1, Status())),
        (b"garbage\n", ("fail", None, "bad_json", None)),
        (b"\xff\xfe\n", ("fail", None, "bad_json", None)),
        (b'{"id": 1, "type": "status"\n', ("fail", None, "bad_json", None)),
        (b'{"id": NaN, "type": "status"}\n', ("fail", None, "bad_json", None)),
        (b"[1, 2]\n", ("fail", None, "bad_request", None)),
        (b'"status"\n', ("fail", None, "bad_request", None)),
        (b'{"type": "status"}\n', ("fail", None, "bad_request", "id")),
        (b'{"id": true, "type": "status"}\n', ("fail", None, "bad_request", "id")),
        (b'{"id": 1.5, "type": "status"}\n', ("fail", None, "bad_request", "id")),
        (b'{"id": null, "type": "status"}\n', ("fail", None, "bad_request", "id")),
        (b'{"id": 4}\n', ("fail", 4, "bad_request", "type")),
        (b'{"id": 4, "type": 7}\n', ("fail", 4, "bad_request", "type")),
        (b'{"id": 4, "type": "reboot"}\n', ("fail", 4, "unknown_type", None)),
        (b'{"id": 4, "type": "task.send", "task": "1"}\n', ("fail", 4, "bad_request", "text")),
        (b'{"id": 4, "type": "status", "x": 1}\n', ("fail", 4, "bad_request", "x")),
    ],
)
def test_one_line_table(line: bytes, expected: tuple[Any, ...]) -> None:
    assert [brief(item) for item in receive_all(line)] == [expected]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (b"garbage\n", ["not JSON", "'garbage'"]),
        (b"[1]\n", ["must be a JSON object", "found an array"]),
        (b'{"id": true, "type": "status"}\n', ["'id'", "integer or a string", "a boolean"]),
        (b'{"id": 1}\n', ["'type'", "found nothing"]),
        (b'{"id": 1, "type": "reboot"}\n', ["'reboot'", "shapes, status, task.send"]),
    ],
)
def test_messages_name_what_was_wrong(line: bytes, words: list[str]) -> None:
    (item,) = receive_all(line)
    assert isinstance(item, Failure)
    for word in words:
        assert word in item.message


def test_blank_lines_are_ignored() -> None:
    assert receive_all(b"\n  \n\r\n") == []


def test_garbage_then_a_good_request_on_the_same_connection() -> None:
    items = receive_all(b'nonsense\n{"id": 2, "type": "status"}\n')
    assert [brief(i) for i in items] == [("fail", None, "bad_json", None), ("call", 2, Status())]


def test_an_oversized_line_is_refused_and_the_next_request_served() -> None:
    connection = ServerConnection(REGISTRY, max_line=64)
    first = connection.receive(b'{"id": 1, "type": "status", "pad": "' + b"x" * 100)
    assert [brief(i) for i in first] == [("fail", None, "too_large", None)]
    assert isinstance(first[0], Failure)
    assert "longer than 64 bytes" in first[0].message
    assert connection.receive(b"x" * 10_000) == []
    rest = connection.receive(b'"}\n{"id": 2, "type": "status"}\n')
    assert [brief(i) for i in rest] == [("call", 2, Status())]


def test_the_default_bound_is_one_mebibyte() -> None:
    connection = ServerConnection(REGISTRY)
    body = b'{"id": 1, "type": "shapes", "blob": "'
    fits = body + b"x" * (1024 * 1024 - len(body) - 2) + b'"}'
    assert len(fits) == 1024 * 1024
    (item,) = connection.receive(fits + b"\n")
    assert isinstance(item, Call)
    (item,) = connection.receive(fits + b" \n")
    assert brief(item) == ("fail", None, "too_large", None)


requests = st.one_of(
    st.builds(lambda i: {"id": i, "type": "status"}, st.integers(0, 10**6)),
    st.builds(
        lambda i, t, w: {"id": i, "type": "task.send", "task": "1", "text": t, "wait": w},
        st.text(max_size=5),
        st.text(max_size=30),
        st.booleans(),
    ),
)
garbage = st.binary(max_size=60).filter(lambda b: b"\n" not in b)
lines = st.lists(st.one_of(requests.map(lambda r: json.dumps(r).encode()), garbage), max_size=12)


@settings(max_examples=300, deadline=None)
@given(items=lines, cuts=st.lists(st.integers(min_value=0), max_size=20))
def test_any_chunking_of_any_lines_gives_the_same_answers(
    items: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(item + b"\n" for item in items)
    whole = receive_all(data, max_line=200)
    connection = ServerConnection(REGISTRY, max_line=200)
    pieces: list[Call | Failure] = []
    for chunk in chunked(data, cuts):
        pieces += connection.receive(chunk)
    pieces += connection.end_of_input()
    assert pieces == whole
    # One answer per non-blank line: nothing is dropped, nothing is invented.
    assert len(whole) == sum(1 for item in items if item.strip())
    for item, answer in zip([i for i in items if i.strip()], whole, strict=True):
        if isinstance(answer, Call):
            assert json.loads(item)["id"] == answer.id


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=500))
def test_garbage_never_raises_and_every_answer_is_encodable(data: bytes) -> None:
    for item in receive_all(data, max_line=100):
        if isinstance(item, Failure):
            assert isinstance(decode_reply(encode_reply(item).rstrip(b"\n")), Failure)


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        (Ok(1, {"a": [1, None]}), b'{"id":1,"ok":true,"result":{"a":[1,null]}}\n'),
        (Ok("x", None), b'{"id":"x","ok":true,"result":null}\n'),
        (
            Failure(2, ErrorCode.BAD_REQUEST, "m", "text"),
            b'{"id":2,"ok":false,"error":{"code":"bad_request","message":"m","field":"text"}}\n',
        ),
        (
            Failure(None, "not_found", "no task 9"),
            b'{"id":null,"ok":false,"error":{"code":"not_found","message":"no task 9"}}\n',
        ),
        (Ok(3, "caf\u00e9\n"), '{"id":3,"ok":true,"result":"caf\u00e9\\n"}\n'.encode()),
    ],
)
def test_reply_lines(reply: Ok | Failure, line: bytes) -> None:
    assert encode_reply(reply) == line
    assert decode_reply(line.rstrip(b"\n")) == reply


def test_a_result_that_is_not_json_cannot_be_encoded() -> None:
    with pytest.raises(TypeError):
        encode_reply(Ok(1, object()))
    with pytest.raises(ValueError, match="JSON"):
        encode_reply(Ok(1, float("nan")))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"[]", "a reply must be a JSON object, found an array"),
        (b'{"id": 1}', "reply field 'ok' must be a boolean, found null"),
        (b'{"id": null, "ok": true}', "a successful reply must carry its request's id"),
        (b'{"id": [1], "ok": true}', "reply id must be an integer, a string or null"),
        (b'{"id": 1, "ok": false}', "a failed reply needs an 'error' object, found null"),
        (b'{"id": 1, "ok": false, "error": {"code": 1, "message": "m"}}', "a string 'code'"),
        (
            b'{"id": 1, "ok": false, "error": {"code": "c", "message": "m", "field": 2}}',
            "a reply's error field must be a string, found an integer",
        ),
    ],
)
def test_malformed_replies_are_refused_by_the_client_side(line: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        decode_reply(line)


def test_a_request_line_round_trips_through_the_server_side() -> None:
    line = encode_request(5, "task.send", {"task": "2", "text": "hello\nworld", "wait": True})
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert receive_all(line) == [Call(5, TaskSend("2", "hello\nworld", True))]


def test_request_fields_may_not_shadow_the_envelope() -> None:
    with pytest.raises(ValueError, match=r"may not be named \['id'\]"):
        encode_request(1, "status", {"id": 2})
