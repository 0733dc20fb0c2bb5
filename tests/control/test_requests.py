"""The typed request registry: fields checked against their annotations, errors naming the
field, what was found and what was expected; bad request types refused when registered."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest

from robota.core.control import Refused, RequestRegistry

from ._requests import ALL, Shapes, Status, TaskSend

REGISTRY = RequestRegistry(ALL)


@pytest.mark.parametrize(
    ("type_name", "fields", "expected"),
    [
        ("status", {}, Status()),
        ("task.send", {"task": "3", "text": "hi"}, TaskSend("3", "hi")),
        ("task.send", {"task": "3", "text": "hi", "wait": True}, TaskSend("3", "hi", True)),
        ("task.send", {"task": "3", "text": "", "timeout": 2}, TaskSend("3", "", timeout=2)),
        ("task.send", {"task": "3", "text": "", "timeout": None}, TaskSend("3", "")),
        ("shapes", {"tags": ["a", "b"], "env": {"x": 1}}, Shapes(tags=["a", "b"], env={"x": 1})),
        ("shapes", {"blob": {"any": [1, None]}}, Shapes(blob={"any": [1, None]})),
        ("shapes", {"count": -4}, Shapes(count=-4)),
    ],
)
def test_valid_requests_become_their_dataclass(
    type_name: str, fields: dict[str, Any], expected: object
) -> None:
    assert REGISTRY.build(type_name, fields) == expected


@pytest.mark.parametrize(
    ("type_name", "fields", "code", "field", "message"),
    [
        (
            "stauts",
            {},
            "unknown_type",
            None,
            "unknown request type 'stauts'; this host serves: shapes, status, task.send",
        ),
        (
            "task.send",
            {"task": "3"},
            "bad_request",
            "text",
            "task.send: missing field 'text' (a string)",
        ),
        (
            "task.send",
            {"task": "3", "text": "x", "wiat": True},
            "bad_request",
            "wiat",
            "task.send: unknown field 'wiat'; it takes: task, text, wait?, timeout?",
        ),
        (
            "task.send",
            {"task": 3, "text": "x"},
            "bad_request",
            "task",
            "task.send: field 'task' must be a string, found an integer",
        ),
        (
            "task.send",
            {"task": "3", "text": "x", "wait": 1},
            "bad_request",
            "wait",
            "task.send: field 'wait' must be a boolean, found an integer",
        ),
        (
            "task.send",
            {"task": "3", "text": "x", "timeout": "5"},
            "bad_request",
            "timeout",
            "task.send: field 'timeout' must be a number or null, found a string",
        ),
        (
            "task.send",
            {"task": "3", "text": "x", "timeout": True},
            "bad_request",
            "timeout",
            "task.send: field 'timeout' must be a number or null, found a boolean",
        ),
        (
            "shapes",
            {"count": 1.5},
            "bad_request",
            "count",
            "shapes: field 'count' must be an integer, found a number",
        ),
        (
            "shapes",
            {"count": False},
            "bad_request",
            "count",
            "shapes: field 'count' must be an integer, found a boolean",
        ),
        (
            "shapes",
            {"tags": ["a", 2]},
            "bad_request",
            "tags",
            "shapes: field 'tags' must be an array of strings, found an array",
        ),
        (
            "shapes",
            {"env": {"x": "1"}},
            "bad_request",
            "env",
            "shapes: field 'env' must be an object of integers, found an object",
        ),
        (
            "status",
            {"verbose": True},
            "bad_request",
            "verbose",
            "status: unknown field 'verbose'; it takes: none",
        ),
    ],
)
def test_invalid_requests_are_refused_with_what_was_wrong(
    type_name: str, fields: dict[str, Any], code: str, field: str | None, message: str
) -> None:
    with pytest.raises(Refused) as refused:
        REGISTRY.build(type_name, fields)
    assert (refused.value.code, refused.value.field, refused.value.message) == (
        code,
        field,
        message,
    )


@dataclass(frozen=True, slots=True)
class NoName:
    text: str


@dataclass(frozen=True, slots=True)
class BadName:
    TYPE: ClassVar[str] = "Task Send"


@dataclass(slots=True)
class Mutable:
    TYPE: ClassVar[str] = "mutable"


@dataclass(frozen=True, slots=True)
class ReservedField:
    TYPE: ClassVar[str] = "reserved"
    id: int


@dataclass(frozen=True, slots=True)
class WideUnion:
    TYPE: ClassVar[str] = "wide"
    value: int | str


@dataclass(frozen=True, slots=True)
class Unsupported:
    TYPE: ClassVar[str] = "unsupported"
    value: tuple[int, int]


@dataclass(frozen=True, slots=True)
class StatusAgain:
    TYPE: ClassVar[str] = "status"


class NotADataclass:
    TYPE: ClassVar[str] = "plain"


@pytest.mark.parametrize(
    ("cls", "message"),
    [
        (NoName, "TYPE must be a dotted lower-case name, not None"),
        (BadName, "TYPE must be a dotted lower-case name, not 'Task Send'"),
        (Mutable, "a request type must be frozen"),
        (ReservedField, "field 'id' is reserved for the envelope"),
        (WideUnion, "only 'X | None' unions are supported"),
        (Unsupported, "unsupported field type"),
        (StatusAgain, "request type 'status' is declared twice"),
        (NotADataclass, "a request type must be a dataclass"),
    ],
)
def test_bad_request_types_are_refused_at_registration(cls: type, message: str) -> None:
    with pytest.raises(TypeError, match=re.escape(message)):
        RequestRegistry([Status, cls])
