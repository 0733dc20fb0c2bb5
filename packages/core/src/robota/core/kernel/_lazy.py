"""Lazy facades (PEP 562): a package's names load their modules on first use.

A facade that imports every module it exports makes each ``import robota.<package>`` pay for
all of them; print mode's start must spawn its agent before trio and pykka load (see
``robota.cli._prestart``). So ``robota.core`` and ``robota.runtimes`` keep their ``__all__``
and their imports for type checkers, and resolve each name through ``lazy_attributes``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose name ``N`` lives in ``homes[N]`` (a
    module relative to it). Once loaded, a name is an ordinary attribute of the package."""

    def getattr_(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        setattr(sys.modules[package], name, value)
        return value

    def dir_() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return getattr_, dir_
