"""The request types the control endpoint accepts, and the validation of a request's fields.

A request type is a frozen dataclass with a ``TYPE`` class variable (its wire name, such as
``"task.send"``); its fields are the request's fields, their annotations the JSON types they
accept, and a field with a default is optional::

    @dataclass(frozen=True, slots=True)
    class TaskSend:
        TYPE: ClassVar[str] = "task.send"
        task: str
        text: str
        wait: bool = False

A ``RequestRegistry`` is built once from such classes and checks them then (so a host with a
mistyped request type fails at start, not on the first request). ``build`` turns a decoded
JSON object into an instance or raises ``Refused`` naming the field, what was found and what
was expected. Unknown fields are refused rather than ignored: a misspelt ``wiat`` silently
doing nothing is worse than an error.

Supported annotations are the JSON shapes a command needs: ``str``, ``int``, ``float``,
``bool``, ``list[...]`` and ``dict[str, ...]`` of those, ``X | None``, and ``Any``/``object``
for a value passed through as decoded.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol import describe_json
from ._errors import ControlError

__all__ = ["RequestRegistry", "Refused", "describe_json"]

_NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")
_ENVELOPE = frozenset({"id", "type"})

Check = Callable[[object], bool]


class Refused(ControlError):
    """A request that cannot be served: ``code`` is the reply's error code, ``field`` the
    offending field when one is to blame."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _anything(value: object) -> bool:  # noqa: ARG001 (a check that accepts every value)
    return True


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_SCALARS: dict[object, tuple[Check, str]] = {
    str: (lambda v: isinstance(v, str), "a string"),
    int: (_is_int, "an integer"),
    float: (_is_number, "a number"),
    bool: (lambda v: isinstance(v, bool), "a boolean"),
    Any: (_anything, "any JSON value"),
    object: (_anything, "any JSON value"),
}


def _checker(annotation: object, where: str) -> tuple[Check, str]:
    """How to check a value against ``annotation``, and how to name what it expects."""
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        if len(members) != 1 or len(args) != 2:
            raise TypeError(f"{where}: only 'X | None' unions are supported, not {annotation}")
        inner, expected = _checker(members[0], where)
        return (lambda v: v is None or inner(v)), f"{expected} or null"
    if origin is list and len(args) == 1:
        item, item_expected = _checker(args[0], where)
        return (
            lambda v: isinstance(v, list) and all(item(x) for x in v),
            f"an array of {_plural(item_expected)}",
        )
    if origin is dict and len(args) == 2 and args[0] is str:
        item, item_expected = _checker(args[1], where)
        return (
            lambda v: isinstance(v, dict) and all(item(x) for x in v.values()),
            f"an object of {_plural(item_expected)}",
        )
    raise TypeError(f"{where}: unsupported field type {annotation!r}")


def _plural(expected: str) -> str:
    for article in ("an ", "a "):
        if expected.startswith(article):
            return expected[len(article) :] + "s"
    return expected


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    required: bool
    check: Check
    expected: str


@dataclass(frozen=True, slots=True)
class _Spec:
    cls: type[Any]
    fields: tuple[_Field, ...]

    def names(self) -> str:
        return ", ".join(f.name if f.required else f"{f.name}?" for f in self.fields) or "none"


def _spec(cls: type[Any]) -> tuple[str, _Spec]:
    where = getattr(cls, "__qualname__", repr(cls))
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"{where}: a request type must be a dataclass")
    if not cls.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        raise TypeError(f"{where}: a request type must be frozen")
    name = getattr(cls, "TYPE", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise TypeError(f"{where}: TYPE must be a dotted lower-case name, not {name!r}")
    hints = typing.get_type_hints(cls)
    fields = []
    for field in dataclasses.fields(cls):
        if field.name in _ENVELOPE:
            raise TypeError(f"{where}: field {field.name!r} is reserved for the envelope")
        check, expected = _checker(hints[field.name], f"{where}.{field.name}")
        required = (
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        )
        fields.append(_Field(field.name, required, check, expected))
    return name, _Spec(cls, tuple(fields))


class RequestRegistry:
    """The request types one endpoint serves, by wire name."""

    def __init__(self, request_types: Iterable[type[Any]]) -> None:
        self._specs: dict[str, _Spec] = {}
        for cls in request_types:
            name, spec = _spec(cls)
            if name in self._specs:
                other = self._specs[name].cls.__qualname__
                raise TypeError(f"request type {name!r} is declared twice ({other}, {cls})")
            self._specs[name] = spec

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._specs))

    def build(self, type_name: str, fields: Mapping[str, object]) -> object:
        """The request ``type_name`` with ``fields`` (the envelope keys already removed)."""
        spec = self._specs.get(type_name)
        if spec is None:
            known = ", ".join(self.names) or "none"
            raise Refused(
                "unknown_type", f"unknown request type {type_name!r}; this host serves: {known}"
            )
        declared = {f.name for f in spec.fields}
        for name in fields:
            if name not in declared:
                raise Refused(
                    "bad_request",
                    f"{type_name}: unknown field {name!r}; it takes: {spec.names()}",
                    name,
                )
        values: dict[str, object] = {}
        for field in spec.fields:
            if field.name not in fields:
                if field.required:
                    raise Refused(
                        "bad_request",
                        f"{type_name}: missing field {field.name!r} ({field.expected})",
                        field.name,
                    )
                continue
            value = fields[field.name]
            if not field.check(value):
                raise Refused(
                    "bad_request",
                    f"{type_name}: field {field.name!r} must be {field.expected}, "
                    f"found {describe_json(value)}",
                    field.name,
                )
            values[field.name] = value
        return spec.cls(**values)
