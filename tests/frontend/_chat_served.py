"""The chat service's test harness (``robota.core.frontend.ChatService``): the service run
against the in-memory platform (``_fake_platform``) with a real store and a real front-end
port whose engine side is a recording hub (``Hub``)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio
import trio.testing

from robota.core.engine import UserInput
from robota.core.frontend import ChatService, FrontEndPort, TransportContext, TransportStatus
from robota.core.store import StoreClient, open_reader, unconsumed_inbox

from ._fake_platform import FakePlatform

START = time.time()


class Hub:
    """The engine's side of the port: the routes' deliver callbacks, and what was told."""

    def __init__(self) -> None:
        self.connected: dict[str, Callable[[object], None]] = {}
        self.told: list[tuple[str, object]] = []

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        self.connected[route_key] = deliver

    def disconnect(self, route_key: str) -> None:
        self.connected.pop(route_key, None)

    def tell(self, route_key: str, request: object) -> None:
        self.told.append((route_key, request))


@dataclass
class Served:
    service: ChatService
    platform: FakePlatform
    hub: Hub
    statuses: list[TransportStatus]

    def told(self) -> list[tuple[str, str, str | None, int | None]]:
        """(route, text, message id, inbox row) of each ``UserInput`` told."""
        return [
            (route, r.text, r.message_id, r.inbox)
            for route, r in self.hub.told
            if isinstance(r, UserInput)
        ]


@asynccontextmanager
async def served(
    store: tuple[Path, StoreClient],
    platform: FakePlatform,
    *,
    teams: dict[str, Any] | None = None,
    linked: bool = True,
    max_busy_chats: int | None = None,
) -> AsyncIterator[Served]:
    path, client = store
    hub = Hub()
    statuses: list[TransportStatus] = []
    context = TransportContext(
        name="fake",
        settings=None,
        port=FrontEndPort(hub),
        store=client,
        db_path=path,
        config=None,  # type: ignore[arg-type]  # nothing here reads it
        profile=None,  # type: ignore[arg-type]
        report=statuses.append,
        started_at=START,
        teams=teams or {},
    )
    service = ChatService(context, platform, max_busy_chats=max_busy_chats)
    async with trio.open_nursery() as nursery:
        with trio.fail_after(20):
            await nursery.start(service.run)
            if linked:
                await platform.linked.wait()
                await trio.testing.wait_all_tasks_blocked()
        yield Served(service, platform, hub, statuses)
        nursery.cancel_scope.cancel()


async def settle(served_: Served, until: Callable[[], bool]) -> None:
    """Wait (bounded) until ``until`` holds: the store's writes are another thread's."""
    with trio.fail_after(10):
        while not until():
            await trio.sleep(0.01)


def inbox_left(path: Path) -> list[str]:
    with closing(open_reader(path)) as db:
        return [row.message_id for row in unconsumed_inbox(db, "fake")]
