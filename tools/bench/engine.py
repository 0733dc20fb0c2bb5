"""Engine benchmark: what the conversation engine adds to a turn, with an instant in-process agent.

    .venv/bin/python tools/bench/engine.py [--quick]

The agent is an actor in the same process that answers at once (``InstantAgent``: it opens a
session, and for each ``StartTurn`` delivers TurnStarted, one TextDelta and TurnCompleted), so
every microsecond measured is the engine's: route actor, store writes (a real SQLite file in WAL
mode), thread hops. Printed, in the same run:

* prompt -> agent: from ``Engine.tell(UserInput)`` to the agent receiving ``StartTurn`` (the
  attempt is committed to SQLite in between, by design), p50 / p99 over sequential turns;
* event -> front end: from the agent delivering its TextDelta to the front end's ``deliver``
  receiving it as ``TurnUpdate``, p50 / p99;
* throughput: 200 routes x 50 messages sent at once (persistence on), turns per second until
  every turn finished, and RSS before and after;
* the floor: the kernel's own figures measured here too (a thread hop through an ``Address`` to
  an actor and back to a thread, one store commit acknowledged), so the ratios read the same on
  any machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import trio

from robota.core import Actor, AgentHost, ChildSpec, Supervisor
from robota.core.agents import OpenSession, SessionEvent, SessionOpened, StartTurn, TurnAccepted
from robota.core.engine import (
    Engine,
    EngineAgent,
    RouteIdle,
    TaskDefaults,
    TurnFinished,
    TurnUpdate,
    UserInput,
)
from robota.core.events import TextDelta, TurnCompleted, TurnStarted
from robota.core.store import AppendAuditEvent, StoreClient, StoreWriter


class InstantAgent(Actor):
    """Answers every prompt at once; stamps when prompts arrive and events leave."""

    def __init__(self, stamps: dict[str, float]) -> None:
        super().__init__()
        self.stamps = stamps
        self.delivers: dict[str, Any] = {}
        self.turns = 0

    def receive(self, message: Any) -> None:
        if isinstance(message, OpenSession):
            self.delivers[message.key] = message.deliver
            message.deliver(SessionOpened(message.key, f"s-{message.key}", resumed=False))
        elif isinstance(message, StartTurn):
            now = time.perf_counter()
            self.turns += 1
            turn_id = f"turn-{self.turns}"
            self.stamps[f"start:{message.text}"] = now
            deliver = self.delivers[message.key]
            deliver(SessionEvent(message.key, TurnStarted(turn_id)))
            deliver(TurnAccepted(message.key, turn_id))
            self.stamps[f"event:{message.text}"] = time.perf_counter()
            deliver(SessionEvent(message.key, TextDelta("m", message.text)))
            deliver(SessionEvent(message.key, TurnCompleted(turn_id, "completed", final_text="ok")))


def instant_host(stamps: dict[str, float]) -> AgentHost:
    supervisor = Supervisor("instant", [ChildSpec("agent", lambda: InstantAgent(stamps))])
    return AgentHost("instant", supervisor.address("agent"), supervisor)


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class FrontEnd:
    """Counts finished turns per route and stamps when TextDeltas arrive."""

    def __init__(self) -> None:
        self.arrived: dict[str, float] = {}
        self.finished = 0
        self.idle: set[str] = set()
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.expect = 0

    def deliver(self, notice: object) -> None:
        if isinstance(notice, TurnUpdate) and isinstance(notice.event, TextDelta):
            self.arrived[notice.event.text] = time.perf_counter()
        elif isinstance(notice, TurnFinished):
            with self.lock:
                self.finished += 1
                if self.finished >= self.expect:
                    self.done.set()
        elif isinstance(notice, RouteIdle):
            self.idle.add(notice.route_key)


async def sequential(
    engine: Engine, stamps: dict[str, float], turns: int
) -> tuple[list[float], list[float]]:
    front = FrontEnd()
    engine.connect("seq", front.deliver)
    to_agent: list[float] = []
    to_front: list[float] = []
    for i in range(turns + 10):
        text = f"p{i}"
        front.expect = front.finished + 1
        front.done.clear()
        sent = time.perf_counter()
        engine.tell("seq", UserInput(text))
        await trio.to_thread.run_sync(front.done.wait, 10)
        if i < 10:  # warm-up: the first turns open the task and the session
            continue
        to_agent.append(stamps[f"start:{text}"] - sent)
        to_front.append(front.arrived[text] - stamps[f"event:{text}"])
    return to_agent, to_front


async def throughput(engine: Engine, routes: int, messages: int) -> tuple[float, float]:
    front = FrontEnd()
    front.expect = routes * messages
    for r in range(routes):
        engine.connect(f"route-{r}", front.deliver)
    started = time.perf_counter()
    for m in range(messages):
        for r in range(routes):
            engine.tell(f"route-{r}", UserInput(f"r{r}m{m}"))
    ok = await trio.to_thread.run_sync(front.done.wait, 300)
    elapsed = time.perf_counter() - started
    if not ok:
        raise SystemExit(f"only {front.finished} of {front.expect} turns finished in 300 s")
    return elapsed, front.expect / elapsed


async def kernel_floor(scratch: Path, n: int) -> tuple[list[float], list[float]]:
    """A thread hop to an actor and back, and one acknowledged store commit."""

    class Echo(Actor):
        def receive(self, message: Any) -> None:
            message.set()

    hops: list[float] = []
    commits: list[float] = []
    supervisor = Supervisor(
        "floor",
        [ChildSpec("echo", Echo), ChildSpec("store", lambda: StoreWriter(scratch / "floor.db"))],
    )
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        store = StoreClient(supervisor.address("store"))
        await store.ready(timeout=10)
        echo = supervisor.address("echo")

        def measure() -> None:
            for _ in range(n):
                event = threading.Event()
                start = time.perf_counter()
                echo.tell(event)
                event.wait(5)
                hops.append(time.perf_counter() - start)
            for i in range(n):
                start = time.perf_counter()
                store.write_sync(AppendAuditEvent("bench", {"i": i}), timeout=5)
                commits.append(time.perf_counter() - start)

        await trio.to_thread.run_sync(measure)
        supervisor.stop()
    return hops, commits


async def bench(quick: bool) -> None:
    turns = 200 if quick else 1000
    routes, messages = (50, 10) if quick else (200, 50)
    with tempfile.TemporaryDirectory(prefix="robota-bench-") as tmp:
        scratch = Path(tmp)
        hops, commits = await kernel_floor(scratch, 300 if quick else 1000)
        stamps: dict[str, float] = {}
        engine = Engine(
            scratch / "engine.db",
            [EngineAgent("acp", instant_host(stamps))],
            TaskDefaults(agent="instant", cwd=scratch),
        )
        rss_before = rss_mib()
        async with trio.open_nursery() as nursery:
            await nursery.start(engine.run)
            to_agent, to_front = await sequential(engine, stamps, turns)
            idle_rss = rss_mib()
            elapsed, rate = await throughput(engine, routes, messages)
            loaded_rss = rss_mib()
            nursery.cancel_scope.cancel()

    def us(v: float) -> str:
        return f"{v * 1e6:8.0f} us"

    print(f"engine benchmark ({'quick' if quick else 'full'}), python {sys.version.split()[0]}")
    print(f"{'':34} {'p50':>11} {'p99':>11}")
    rows = [
        ("prompt -> agent (incl. commit)", to_agent),
        ("agent event -> front end", to_front),
        ("floor: thread hop there and back", hops),
        ("floor: one store commit, acked", commits),
    ]
    for name, values in rows:
        print(f"{name:34} {us(statistics.median(values)):>11} {us(pct(values, 0.99)):>11}")
    floor = statistics.median(hops) + statistics.median(commits)
    print(
        f"prompt -> agent over the floor (hop + commit): {statistics.median(to_agent) / floor:.2f}x"
    )
    print(
        f"event -> front end over one hop: "
        f"{statistics.median(to_front) / statistics.median(hops):.2f}x"
    )
    print(
        f"throughput: {routes} routes x {messages} messages = {routes * messages} turns in "
        f"{elapsed:.2f} s: {rate:,.0f} turns/s"
    )
    print(
        f"RSS: {rss_before:.1f} MiB before the engine, {idle_rss:.1f} MiB after "
        f"{turns} sequential turns, {loaded_rss:.1f} MiB after the {routes}-route burst"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer turns, a smaller burst")
    args = parser.parse_args()
    trio.run(bench, args.quick)


if __name__ == "__main__":
    main()
