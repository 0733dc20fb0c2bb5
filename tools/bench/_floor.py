"""The architecture's floor for one turn: its thread hops and commits with no robota logic.

A turn's way through robota has a fixed shape (docs/architecture/threads.md §2 and
docs/architecture/store.md §3, invariants 2 and 3): the trio loop hands the prompt to the route
actor, the route hands the turn attempt to the store writer, the writer commits it and only
then does the loop write the prompt to the agent; the agent's end goes from the loop to the
route, the route hands the outcome and the final's ledger claim to the writer, the writer
commits and only then does the loop write the answer out.
Each way is a loop -> actor -> writer -> commit -> loop chain.

``measure_floor`` runs exactly that chain with the kernel's own pieces (an ``Actor`` that only
forwards, the real ``StoreWriter`` on a real SQLite file, the same ops robota writes) and
nothing else, after a quiet gap before each sample as a warm turn has (the agent's own time, in
which the caches go cold). What robota adds per turn beyond this floor is its own logic.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from robota.core import Actor, ChildSpec, LoopPort, Supervisor
from robota.core.store import (
    CreateTask,
    FinishTurnAttempt,
    InsertTurnAttempt,
    RecordFinalDelivery,
    StoreClient,
    StoreWriter,
    Together,
    WriteOp,
)

__all__ = ["Floor", "measure_floor"]


@dataclass(frozen=True)
class Floor:
    inbound: list[float]
    """Seconds: loop -> actor -> writer commits the attempt -> loop."""
    outbound: list[float]
    """Seconds: loop -> actor -> writer commits outcome and claim -> loop."""

    @property
    def total_ms(self) -> float:
        return (statistics.median(self.inbound) + statistics.median(self.outbound)) * 1e3


@dataclass(frozen=True)
class _Hand:
    op: WriteOp[Any]
    done: Any
    """Called on the loop once the op committed."""


class _Route(Actor):
    """Forwards each op to the store with an ack that goes back to the loop, as a route does."""

    def __init__(self, store: StoreClient, port: LoopPort) -> None:
        super().__init__()
        self.store = store
        self.port = port

    def receive(self, message: Any) -> None:
        port, done = self.port, message.done
        self.store.submit(message.op, lambda outcome: port.post(done, outcome))


async def _chain(route: Any, op: WriteOp[Any]) -> float:
    arrived = trio.Event()
    seen: list[float] = []

    def done(outcome: object) -> None:
        if isinstance(outcome, BaseException):
            raise outcome
        seen.append(time.perf_counter())
        arrived.set()

    started = time.perf_counter()
    route.tell(_Hand(op, done))
    with trio.fail_after(10):
        await arrived.wait()
    return seen[0] - started


async def _measure(scratch: Path, samples: int, gap: float) -> Floor:
    port = LoopPort()
    supervisor = Supervisor(
        "floor",
        [
            ChildSpec("store", lambda: StoreWriter(scratch / "floor.sqlite")),
            ChildSpec("route", lambda: _Route(store, port)),
        ],
    )
    store = StoreClient(supervisor.address("store"))
    inbound: list[float] = []
    outbound: list[float] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        await store.ready(timeout=10)
        await store.write(CreateTask("floor", "agent", str(scratch), "acp"), timeout=10)
        route = supervisor.address("route")
        for _ in range(samples + 2):  # the first two warm the code paths up
            attempt = uuid.uuid4().hex
            await trio.sleep(gap)
            insert = InsertTurnAttempt(attempt, "floor", "route", "a prompt")
            inbound.append(await _chain(route, insert))
            await trio.sleep(gap)
            finish = FinishTurnAttempt(attempt, "completed", final_text="an answer")
            outbound.append(await _chain(route, Together((finish, RecordFinalDelivery(attempt)))))
        supervisor.stop()
    return Floor(inbound[2:], outbound[2:])


def measure_floor(samples: int = 30, gap: float = 0.03) -> Floor:
    """The floor's two chains, ``samples`` times each, ``gap`` seconds of quiet before each."""
    with tempfile.TemporaryDirectory(prefix="robota-floor-") as tmp:
        return trio.run(_measure, Path(tmp), samples, gap)
