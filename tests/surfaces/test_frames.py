"""A surface client's frames: each of the vocabulary's becomes its typed message, and each
wrong one is refused with a message naming what was wrong (tables)."""

from __future__ import annotations

import json

import pytest

from robota.core.surfaces import (
    CLIENT_TYPES,
    MAX_FRAME,
    Abort,
    Ack,
    ClientFrame,
    Command,
    GetMessages,
    GetPending,
    PermissionResponse,
    Resume,
    Submit,
    SurfaceProtocolError,
    parse_client_frame,
)

GOOD: list[tuple[object, ClientFrame]] = [
    ({"type": "submit", "prompt": "hello"}, Submit("hello")),
    ({"type": "submit", "prompt": "/new", "extra": 1}, Submit("/new")),
    ({"type": "command", "name": "new"}, Command("new", {})),
    ({"type": "command", "name": "switch", "args": {"id": "s2"}}, Command("switch", {"id": "s2"})),
    ({"type": "command", "name": "new", "args": None}, Command("new", {})),
    ({"type": "abort"}, Abort()),
    (
        {"type": "permission-response", "id": "a1", "result": "accept"},
        PermissionResponse("a1", "accept"),
    ),
    (
        {"type": "permission-response", "id": "a1", "result": "decline"},
        PermissionResponse("a1", "decline"),
    ),
    ({"type": "get-messages"}, GetMessages()),
    ({"type": "get-pending"}, GetPending()),
    ({"type": "resume", "lastSeq": 0}, Resume(0)),
    ({"type": "resume", "lastSeq": 41}, Resume(41)),
    ({"type": "ack", "seq": 7}, Ack(7)),
]


@pytest.mark.parametrize(("frame", "expected"), GOOD)
def test_a_frame_of_the_vocabulary_becomes_its_message(frame: object, expected: object) -> None:
    assert parse_client_frame(json.dumps(frame)) == expected
    assert parse_client_frame(json.dumps(frame).encode()) == expected


def test_every_client_type_is_parsed() -> None:
    parsed = {json.loads(json.dumps(frame))["type"] for frame, _ in GOOD}
    assert parsed == set(CLIENT_TYPES)


BAD: list[tuple[str, str, str | None]] = [
    ("not json", "the frame is not JSON", None),
    ("[1, 2]", "a frame is a JSON object", None),
    ('"submit"', "a frame is a JSON object", None),
    ("{}", "type: expected a string", "type"),
    ('{"type": 3}', "type: expected a string", "type"),
    ('{"type": "dance"}', 'unknown frame type "dance"', "type"),
    ('{"type": "submit"}', "submit.prompt: expected a string", "submit.prompt"),
    ('{"type": "submit", "prompt": 5}', "submit.prompt: expected a string", "submit.prompt"),
    ('{"type": "submit", "prompt": "  "}', "submit.prompt: empty", "submit.prompt"),
    ('{"type": "command"}', "command.name: expected a non-empty string", "command.name"),
    ('{"type": "command", "name": ""}', "command.name", "command.name"),
    (
        '{"type": "command", "name": "new", "args": [1]}',
        "command.args: expected an object",
        "command.args",
    ),
    (
        '{"type": "permission-response", "result": "accept"}',
        "permission-response.id",
        "permission-response.id",
    ),
    (
        '{"type": "permission-response", "id": "a", "result": "yes"}',
        "permission-response.result: expected one of accept, accept_for_session, decline, cancel, "
        'found "yes"',
        "permission-response.result",
    ),
    ('{"type": "resume"}', "resume.lastSeq: expected an integer", "resume.lastSeq"),
    ('{"type": "resume", "lastSeq": -1}', "found -1", "resume.lastSeq"),
    ('{"type": "resume", "lastSeq": true}', "found true", "resume.lastSeq"),
    ('{"type": "resume", "lastSeq": 1.5}', "found 1.5", "resume.lastSeq"),
    ('{"type": "resume", "lastSeq": "3"}', 'found "3"', "resume.lastSeq"),
    ('{"type": "ack", "seq": 9007199254740992}', "ack.seq: expected an integer", "ack.seq"),
]


@pytest.mark.parametrize(("text", "message", "field"), BAD)
def test_a_wrong_frame_names_what_was_wrong(text: str, message: str, field: str | None) -> None:
    with pytest.raises(SurfaceProtocolError) as refused:
        parse_client_frame(text)
    assert message in str(refused.value)
    assert refused.value.field == field


def test_a_found_value_is_cut_short_in_the_message() -> None:
    with pytest.raises(SurfaceProtocolError) as refused:
        parse_client_frame(json.dumps({"type": "x" * 10_000}))
    assert len(str(refused.value)) < 200


def test_an_oversized_frame_is_refused_before_parsing() -> None:
    frame = json.dumps({"type": "submit", "prompt": "x" * MAX_FRAME})
    with pytest.raises(SurfaceProtocolError, match="longer than"):
        parse_client_frame(frame)


def test_bytes_that_are_not_utf8_are_not_json() -> None:
    with pytest.raises(SurfaceProtocolError, match="not JSON"):
        parse_client_frame(b"\xff\xfe{")
