"""The effects a team actor delivers, recorded and waited for."""

from __future__ import annotations

import threading

from robota.core.teams import (
    TeamEffect,
)


class Deliveries:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.effects: list[TeamEffect] = []

    def __call__(self, effect: TeamEffect) -> None:
        with self._cond:
            self.effects.append(effect)
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[TeamEffect]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.effects) >= count, timeout):
                raise TimeoutError(f"{len(self.effects)} of {count} effects in {timeout:g} s")
            return list(self.effects)
