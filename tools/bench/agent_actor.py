"""Agent actor benchmark: what the actor layer adds to a turn, beside a raw client in the same run.

    .venv/bin/python tools/bench/agent_actor.py [--turns N]

Two copies of the same instant ACP agent (``tests/support/fault_agent.py``: one text chunk and
``end_turn`` per prompt) run side by side. One is driven by a bare ``AcpClient`` on the trio
loop; the other through the agent actor the way a route drives it (``StartTurn`` told to the
agent's address, notices delivered back to a thread-safe sink). Turns alternate between the two
so that machine noise falls on both. Each figure is prompt-sent to ``TurnCompleted``-received.

Also measured: the first turn of a cold agent through the actor (lazy spawn, handshake, session
open), and how long a restart takes: from the agent's exit mid-turn to the next turn's end.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

from robota.core import AgentLaunch, ChildSpec, LoopPort
from robota.core.agents import OpenSession, SessionEvent, SessionSpec, StartTurn
from robota.core.events import RuntimeEvent, TurnCompleted
from robota.core.testing import FAST_BACKOFF, supervised
from robota.runtimes import AcpClient, AgentProcess, Connection, agent_host

ROOT = Path(__file__).resolve().parents[2]
FAULT_AGENT = ROOT / "tests" / "support" / "fault_agent.py"


class Sink:
    """Completion times of turns, recorded from any thread; waited for on trio without polling
    (a busy wait would fight the actor thread for the GIL and measure itself)."""

    def __init__(self) -> None:
        self._port = LoopPort()
        self.done: list[float] = []
        self._changed = trio.Event()

    def __call__(self, notice: object) -> None:
        event = notice.event if isinstance(notice, SessionEvent) else notice
        if isinstance(event, TurnCompleted):
            self._port.post(self._record, time.perf_counter())

    def _record(self, when: float) -> None:
        self.done.append(when)
        self._changed.set()
        self._changed = trio.Event()

    async def wait(self, count: int, timeout: float = 30.0) -> float:
        with trio.fail_after(timeout):
            while len(self.done) < count:
                await self._changed.wait()
        return self.done[count - 1]


def launch_for(state: Path, **env: str) -> AgentLaunch:
    return AgentLaunch(
        name="instant",
        kind="acp",
        command=sys.executable,
        args=(str(FAULT_AGENT),),
        env={"FAULT_AGENT_STATE": str(state), **env},
        home=state,
        config_path=state / "config.yaml",
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bench(turns: int, scratch: Path) -> None:
    raw_sink = Sink()

    def raw_events(_session: str, event: RuntimeEvent) -> None:
        raw_sink(event)

    process = await AgentProcess.launch(launch_for(scratch / "raw"))
    assert process.process.stdin is not None and process.process.stdout is not None
    connection = Connection(
        process.process.stdin, process.process.stdout, name="raw", jsonrpc_field=True
    )
    client = AcpClient(connection, raw_events)
    host = agent_host(launch_for(scratch / "actor"), acp=True, backoff=FAST_BACKOFF)
    actor_sink = Sink()
    raw_times: list[float] = []
    actor_times: list[float] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(process.drain_stderr)
        await nursery.start(connection.run)
        await client.initialize(nursery)
        session = await client.new_session(scratch)
        async with supervised([ChildSpec("agent", lambda: host.service)]):
            began = time.perf_counter()
            host.address.tell(OpenSession("route", SessionSpec(scratch), actor_sink))
            host.address.tell(StartTurn("route", "cold"))
            cold = await actor_sink.wait(1) - began
            for n in range(turns):
                began = time.perf_counter()
                await client.prompt(session.id, f"raw {n}")
                raw_times.append(await raw_sink.wait(n + 1) - began)
                began = time.perf_counter()
                host.address.tell(StartTurn("route", f"actor {n}"))
                actor_times.append(await actor_sink.wait(n + 2) - began)
            began = time.perf_counter()
            host.address.tell(StartTurn("route", "EXIT now"))
            await actor_sink.wait(turns + 2)
            host.address.tell(StartTurn("route", "after the restart"))
            restart = await actor_sink.wait(turns + 3) - began
        await process.shutdown()
        client.close("benchmark over")
        nursery.cancel_scope.cancel()
    show(turns, raw_times, actor_times, cold, restart)


def show(turns: int, raw: list[float], actor: list[float], cold: float, restart: float) -> None:
    ms: Callable[[float], str] = lambda s: f"{s * 1000:8.3f} ms"  # noqa: E731
    print(f"agent actor vs raw ACP client, {turns} warm turns each, interleaved")
    print(f"{'':24}{'actor':>11}  {'raw':>11}  {'added':>11}  ratio")
    for label, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        a, r = pct(actor, q), pct(raw, q)
        print(f"turn {label:<19}{ms(a)}  {ms(r)}  {ms(a - r)}  {a / r:5.2f}x")
    mean_a, mean_r = statistics.fmean(actor), statistics.fmean(raw)
    print(
        f"{'turn mean':<24}{ms(mean_a)}  {ms(mean_r)}  {ms(mean_a - mean_r)}  "
        f"{mean_a / mean_r:5.2f}x"
    )
    print(f"{'cold first turn':<24}{ms(cold)}  (spawn + initialize + session/new + turn)")
    print(f"{'exit mid-turn -> next':<24}{ms(restart)}  (failed turn, restart, load, turn)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    logging.disable(logging.ERROR)  # the planned agent exit is logged as a crash; not news here

    with tempfile.TemporaryDirectory(prefix="robota-bench-") as scratch:
        trio.run(bench, args.turns, Path(scratch))


if __name__ == "__main__":
    main()
