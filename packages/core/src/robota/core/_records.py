"""Records: frozen, slotted value classes whose methods are written at build time.

Why: ``@dataclass(frozen=True, slots=True)`` writes each class's ``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` as source text, compiles each
when the class is defined and then makes the class a second time for its slots: about 0.5 ms
per class on this kind of machine, and a ``robota -p`` start defines some 190 of them before
its first answer (``python -X importtime`` and a profile of the start). A record is a plain
class: its methods are in its module's source, compiled once into the ``.pyc`` like all code.

How: a record is declared as a dataclass is, as a subclass of ``Record`` (``class
X(Record, kw_only=True)`` for keyword-only fields) with annotated fields (defaults,
``field(default_factory=..., compare=False, repr=False)``), and ``tools/gen_records.py`` writes
its methods at the end of its body, below a marker line: ``__slots__``, ``__match_args__``,
``__init__``, ``__repr__``, ``__eq__`` and ``__hash__`` as a frozen slotted dataclass has them,
and a ``del`` of the fields' class-level defaults (a slot and a class attribute of one name
cannot coexist; the defaults live on in ``__init__``'s signature). ``Record`` itself has no
slots and only the frozen ``__setattr__``/``__delattr__`` (raising ``FrozenInstanceError`` as
a frozen dataclass does); through ``dataclass_transform`` it tells type checkers that its
subclasses are frozen dataclasses (fields, read-only attributes), and ``__init__``'s checked
signature is the generated one. tests/packaging/test_records.py checks that the checked-in code
is what the generator writes now, so a field changed without regenerating fails CI.

Not supported on records (they are not dataclasses): ``dataclasses.replace``, ``fields``,
``asdict``; this module's ``replace`` serves records and dataclasses alike, and a class that
needs the others stays a dataclass.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError
from typing import Any, TypeVar, dataclass_transform

V = TypeVar("V")

__all__ = ["FACTORY", "Record", "field", "fields_of", "is_value", "replace"]


class _Factory:
    """What a field made by ``default_factory`` defaults to in ``__init__``: its factory runs
    when the argument is this."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


FACTORY: Any = _Factory()


def field(
    *,
    default: Any = None,
    default_factory: Callable[[], Any] | None = None,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    """A field's options, read by the generator from the source; what this returns in the
    class body is dropped by the generated ``del``."""
    return (default, default_factory, compare, repr)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Record:
    """The base of records (module docstring): frozen, with no slots of its own."""

    __slots__ = ()

    def __init_subclass__(cls, *, kw_only: bool = False) -> None:
        # kw_only is the generator's (and type checkers') to read: nothing to do at runtime.
        super().__init_subclass__()

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    # copy and pickle set a slotted object's state with setattr, which a frozen record
    # refuses: its state is its slots' values, set back as ``__init__`` sets them (a frozen
    # slotted dataclass has the same pair).
    def __getstate__(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _slots(type(self)))

    def __setstate__(self, state: tuple[object, ...]) -> None:
        for name, value in zip(_slots(type(self)), state, strict=True):
            object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


def replace(value: V, /, **changes: Any) -> V:
    """``value`` with ``changes``: a new record made by its ``__init__`` with its other fields
    as they are (``dataclasses.replace`` for a dataclass)."""
    if not isinstance(value, Record):
        return dataclasses.replace(value, **changes)  # type: ignore[type-var]
    names = _slots(type(value))
    unknown = changes.keys() - set(names)
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field {sorted(unknown)[0]!r}")
    kept = {name: getattr(value, name) for name in names if name not in changes}
    return type(value)(**kept, **changes)


def fields_of(cls: type) -> tuple[tuple[str, bool], ...]:
    """``(name, required)`` of each field of a record or dataclass ``cls``, in their order: a
    record's read from its generated ``__init__`` (one parameter a field, a default where the
    field has one)."""
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = _fields_of(cls)
    return known


_FIELDS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _fields_of(cls: type) -> tuple[tuple[str, bool], ...]:
    if not issubclass(cls, Record):
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"{cls.__name__} is neither a record nor a dataclass")
        return tuple(
            (f.name, f.default is MISSING and f.default_factory is MISSING)
            for f in dataclasses.fields(cls)
        )
    code = cls.__init__.__code__
    positional = code.co_varnames[1 : code.co_argcount]
    keywords = code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
    defaults = len(cls.__init__.__defaults__ or ())
    keyword_defaults = cls.__init__.__kwdefaults__ or {}
    required = len(positional) - defaults
    return (
        *((name, n < required) for n, name in enumerate(positional)),
        *((name, name not in keyword_defaults) for name in keywords),
    )


def is_value(value: object) -> bool:
    """Whether ``value`` is a record or a dataclass instance (not a class)."""
    return isinstance(value, Record) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type)
    )


def _slots(cls: type) -> tuple[str, ...]:
    """Every slot of ``cls``, its bases' first."""
    return tuple(
        name for klass in reversed(cls.__mro__) for name in vars(klass).get("__slots__", ())
    )
