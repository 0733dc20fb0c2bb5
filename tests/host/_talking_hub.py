"""A hub whose route talks when the test says so, for the attach tests' in-process
``AttachDesk``."""

from __future__ import annotations

from collections.abc import Callable

from robota.core.engine import (
    FrontEndRequest,
)

ROUTE = "session:0123456789ab"


class TalkingHub:
    """A route hub whose notices the test sends; it remembers what it was told."""

    def __init__(self) -> None:
        self.deliver: Callable[[object], None] | None = None
        self.told: list[FrontEndRequest] = []

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        assert route_key == ROUTE
        self.deliver = deliver

    def disconnect(self, route_key: str) -> None:
        self.deliver = None

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        self.told.append(request)
