"""The cyclic garbage collector during a start: off while modules load, then frozen.

A start allocates some 70 000 objects (modules, classes, functions) that live as long as the
process, and the collector would traverse them over and over while they are created: about
10-15 ms of a ``robota -p`` start on this kind of machine, for nothing (nothing of it is
garbage). So ``main`` pauses the collector; once the heavy imports are done and the engine is
built, ``settle`` moves everything alive into the permanent generation (``gc.freeze``), where
later collections never look, and turns the collector back on. That also keeps the pauses of
collections during turns short: they no longer walk the start's objects.
"""

from __future__ import annotations

import gc

__all__ = ["pause", "settle"]

_paused = False


def pause() -> None:
    global _paused  # noqa: PLW0603 (one switch per process, like the collector itself)
    if gc.isenabled():
        gc.disable()
        _paused = True


def settle() -> None:
    """End the pause ``pause`` began (a no-op when it began none)."""
    global _paused  # noqa: PLW0603
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
