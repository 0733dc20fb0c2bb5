"""A frozen record for the control client's path (``Ok``, ``Failure``, ``Overlong``).

``@dataclass(frozen=True, slots=True)`` costs about 1 ms per class at import (it makes the
class twice and compiles its methods), and a ``robota task`` command pays for every class it
imports on each call; these records are few and small, so they say their own ``__init__``.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["Record"]


class Record:
    """A frozen value compared, hashed and shown by its fields (``__match_args__``), as a
    frozen, slotted dataclass is. A subclass names its ``__slots__`` and ``__match_args__``
    and sets its fields in ``__init__`` with ``object.__setattr__``."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    """The fields in their order (``__slots__`` is sorted)."""

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
        return f"{type(self).__name__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")
