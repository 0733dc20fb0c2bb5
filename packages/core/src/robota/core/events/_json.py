"""Runtime events as JSON objects: the ``stream-json`` lines of print mode, and back.

One object per event, ``type`` first, then the event's fields under their own (snake_case)
names; nested values (file changes, plan entries, usage, errors) are objects, tuples are
arrays, absent optionals are left out. Decoding checks every field against the event's type
hints (strings, integers, booleans, the allowed literal values, nested objects), so a file
written by another version or edited by hand fails with the line's field path and what was
wrong, never with a half-built event.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

from .._errors import RobotaError
from .._records import Record, fields_of, is_value
from ._model import (
    ApprovalRequested,
    ApprovalResolved,
    PlanUpdated,
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
    TurnStarted,
    UsageUpdated,
)

__all__ = [
    "EVENT_TYPES",
    "EventFormatError",
    "dataclass_from_json",
    "dataclass_to_json",
    "event_from_json",
    "event_to_json",
]

EVENT_TYPES: Mapping[str, type[RuntimeEvent]] = {
    "turn_started": TurnStarted,
    "text_delta": TextDelta,
    "reasoning_delta": ReasoningDelta,
    "tool_started": ToolStarted,
    "tool_updated": ToolUpdated,
    "tool_completed": ToolCompleted,
    "plan": PlanUpdated,
    "usage": UsageUpdated,
    "approval_requested": ApprovalRequested,
    "approval_resolved": ApprovalResolved,
    "turn_completed": TurnCompleted,
}
_TYPE_NAMES = {cls: name for name, cls in EVENT_TYPES.items()}


class EventFormatError(RobotaError, ValueError):
    """A JSON object that is not a valid event; the message names the field and the problem."""


def event_to_json(event: RuntimeEvent) -> dict[str, Any]:
    """``{"type": ..., <fields>}`` for ``event``."""
    return {"type": _TYPE_NAMES[type(event)], **_encode_fields(event)}


def event_from_json(obj: object) -> RuntimeEvent:
    """The event ``obj`` describes. ``EventFormatError`` names what is wrong."""
    if not isinstance(obj, dict):
        raise EventFormatError(f"expected an object, found {_kind(obj)}")
    name = obj.get("type")
    cls = EVENT_TYPES.get(name) if isinstance(name, str) else None
    if cls is None or not isinstance(name, str):
        known = ", ".join(EVENT_TYPES)
        raise EventFormatError(f"type: expected one of {known}, found {name!r}")
    fields = {k: v for k, v in obj.items() if k != "type"}
    event = _decode_dataclass(cls, fields, name)
    assert isinstance(event, cls)
    return event


def dataclass_to_json(instance: Any) -> dict[str, Any]:
    """Any frozen dataclass of JSON-shaped fields in the events' form (``None`` left out,
    tuples as arrays, nested dataclasses as objects): the notices an attached terminal reads."""
    return _encode_fields(instance)


def dataclass_from_json(cls: type, obj: object, path: str) -> Any:
    """``cls`` from ``obj``, every field checked against ``cls``'s type hints;
    ``EventFormatError`` names the field path (from ``path``) and what was wrong."""
    return _decode_dataclass(cls, obj, path)


# -- encoding ------------------------------------------------------------------------------


def _encode_fields(instance: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, _ in fields_of(type(instance)):
        value = getattr(instance, name)
        if value is None:
            continue
        out[name] = _encode(value)
    return out


def _encode(value: Any) -> Any:
    if is_value(value):
        return _encode_fields(value)
    if isinstance(value, tuple):
        return [_encode(item) for item in value]
    return value


# -- decoding ------------------------------------------------------------------------------


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode_dataclass(cls: type, obj: object, path: str) -> Any:
    if not isinstance(obj, dict):
        raise EventFormatError(f"{path}: expected an object, found {_kind(obj)}")
    hints = _hints(cls)
    fields = fields_of(cls)
    unknown = sorted(set(obj) - {name for name, _ in fields})
    if unknown:
        raise EventFormatError(f"{path}: unknown field {unknown[0]!r}")
    values: dict[str, Any] = {}
    for name, required in fields:
        if name not in obj:
            if required and _allows_none(hints[name]):
                values[name] = None  # the encoder leaves absent optionals out
            elif required:
                raise EventFormatError(f"{path}.{name}: missing")
            continue
        values[name] = _decode(obj[name], hints[name], f"{path}.{name}")
    return cls(**values)


def _allows_none(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType) and type(None) in get_args(hint)


def _decode(value: object, hint: Any, path: str) -> Any:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode(value, option, path)
            except EventFormatError as error:
                errors.append(str(error))
        raise EventFormatError(
            errors[0] if len(errors) == 1 else f"{path}: {_kind(value)} fits no type"
        )
    if origin is Literal:
        allowed = get_args(hint)
        if value not in allowed or isinstance(value, bool):
            raise EventFormatError(f"{path}: expected one of {list(allowed)}, found {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise EventFormatError(f"{path}: expected an array, found {_kind(value)}")
        (item,) = (a for a in get_args(hint) if a is not Ellipsis)
        return tuple(_decode(v, item, f"{path}[{n}]") for n, v in enumerate(value))
    if isinstance(hint, type) and (issubclass(hint, Record) or dataclasses.is_dataclass(hint)):
        return _decode_dataclass(hint, value, path)
    if hint is bool:
        if not isinstance(value, bool):
            raise EventFormatError(f"{path}: expected true or false, found {_kind(value)}")
        return value
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise EventFormatError(f"{path}: expected an integer, found {_kind(value)}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise EventFormatError(f"{path}: expected a string, found {_kind(value)}")
        return value
    raise EventFormatError(f"{path}: cannot decode {hint!r}")  # a field type added, not taught


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
