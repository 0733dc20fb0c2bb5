"""The engine as one tree in the tests: an engine on the fault agent, run in this trio run,
with a route's notices recorded and waited for."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import trio

from robota.core.engine import (
    Engine,
    EngineAgent,
    TaskDefaults,
)
from robota.core.testing import FAST_BACKOFF, Recording, wait_until
from robota.runtimes import agent_host

from ..support.agent_actor import fault_launch

T = TypeVar("T")


ROUTE = "console:test"


def make_engine(tmp_path: Path, **options: Any) -> Engine:
    host = agent_host(fault_launch(tmp_path), acp=True, backoff=FAST_BACKOFF)
    return Engine(
        tmp_path / "robota.db",
        [EngineAgent("acp", host)],
        TaskDefaults(agent="fault", cwd=tmp_path),
        backoff=FAST_BACKOFF,
        **options,
    )


@asynccontextmanager
async def running(engine: Engine) -> AsyncIterator[trio.CancelScope]:
    """Run ``engine``; cancelling the yielded scope kills its whole tree mid-flight."""
    async with trio.open_nursery() as nursery:
        await nursery.start(engine.run)
        yield nursery.cancel_scope
        nursery.cancel_scope.cancel()


@asynccontextmanager
async def connected(tmp_path: Path, route: str = ROUTE) -> AsyncIterator[tuple[Engine, Recording]]:
    """A running engine with ``route``'s notices recorded."""
    engine = make_engine(tmp_path)
    notices = Recording()
    engine.connect(route, notices.add)
    async with running(engine):
        yield engine, notices


def of(notices: Recording, kind: type[T], where: Callable[[T], bool] = lambda _: True) -> list[T]:
    return [n for n in notices.messages if isinstance(n, kind) and where(n)]


async def until(notices: Recording, kind: type[T], count: int = 1, timeout: float = 20) -> list[T]:
    await wait_until(lambda: len(of(notices, kind)) >= count, timeout=timeout)
    return of(notices, kind)
