"""Route actors of both kinds for the directory's tests: ``LoopCounter`` on the trio loop and
``ThreadCounter`` on a thread, each counting what it was told and keeping it as its state."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from robota.core import LoopRouteActor, RouteActor


class LoopCounter(LoopRouteActor[dict[str, Any]]):
    """Counts messages and remembers them, on the loop; ``"boom"`` crashes it, and the first
    ``failing_restores`` incarnations (of any key) raise in ``restore``."""

    instances: ClassVar[list[LoopCounter]] = []
    failing_restores: ClassVar[int] = 0

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.state: dict[str, Any] = {"count": 0, "seen": []}
        self.restored_in: threading.Thread | None = None
        self.handled_in: threading.Thread | None = None
        LoopCounter.instances.append(self)

    def restore(self, state: dict[str, Any] | None) -> None:
        self.restored_in = threading.current_thread()
        if LoopCounter.failing_restores > 0:
            LoopCounter.failing_restores -= 1
            raise RuntimeError("restore failed")
        if state is not None:
            self.state = state

    def receive(self, message: Any) -> None:
        self.handled_in = threading.current_thread()
        if message == "boom":
            raise RuntimeError("route bug")
        self.state["count"] += 1
        self.state["seen"].append(message)

    def snapshot(self) -> dict[str, Any]:
        return {"count": self.state["count"], "seen": list(self.state["seen"])}


class ThreadCounter(RouteActor[dict[str, Any]]):
    """The same counter on a thread of its own."""

    def receive(self, message: Any) -> None:
        pass

    def snapshot(self) -> dict[str, Any]:
        return {}
