"""``robota mcp serve``: a ``robota_run`` tool call's round trip against the raw turn.

    .venv/bin/python tools/bench/mcp.py [--quick] [--rounds N] [--agent NAME ...] [--tap]

Each agent (default codex, App Server, and claude-agent-acp, ACP) is real, isolated and offline
against the fake model, in a sandboxed profile (``_real.Sandbox``). robota: ``robota mcp serve``
driven by the official ``mcp`` client over stdio, as an MCP client runs it; one warm-up call
starts its agent and its task, then every call continues that task (the same warm agent and
session): ``tools/call`` written -> its result read, the answer checked. Raw: the same turn
through the raw protocol client (``tools/raw_client.py``) on a warm agent of its own, request
written -> the line ending the turn read. Rounds interleave, robota then raw, so drift on the
shared machine hits both alike; printed per agent: the medians of N (default 20), what robota
adds (the median of the per-round differences) against the target (under 10 ms), and the ratio.
The load average is printed at the start and at the end.

With ``--tap`` both agents run behind ``tools/wire_tap.py``, so each round splits exactly: the
agent's own time (the turn's request at the agent -> its end leaving it) apart from the client's
share around it (``tools/call`` written -> the request at the agent, the end -> the result read;
the raw client's the same two intervals). Printed beside the totals: each side's share and what
robota adds with the agent's own time left out, which moves with the machine's load far less
than the agent's turn does.

The server is ended by closing its stdin (as a client leaving does) and the raw agent as robota
ends one: no process is left.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

# This file is tools/bench/mcp.py: its folder, first on sys.path when it runs, would shadow the
# SDK's package ``mcp``; the SDK is imported with the folder set aside, then it comes back.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

sys.path.insert(0, str(_HERE))
from _real import (  # noqa: E402
    DEFAULT_AGENTS,
    ROBOTA,
    Pair,
    Sandbox,
    fake_model,
    median,
    read_tap,
    turn_marks,
    verdict,
)

TARGET_MS = 10.0


Span = tuple[float, float]
"""When a call was written and when its answer was read (``time.perf_counter``, the clock the
wire tap stamps with)."""


def raw_turn(agent: Any, prompt: str) -> Span:
    turn = agent.turn(prompt)
    if turn.text != f"ECHO: {prompt}":
        raise SystemExit(f"the raw client was answered {turn.text!r}")
    return float(turn.sent), float(turn.ended)


async def mcp_turn(session: ClientSession, prompt: str, task: str | Pair) -> tuple[Span, str]:
    """When ``tools/call`` went and its result came, and the task it ran on (the answer
    checked). A pair instead of a task starts a new task on the pair's agent: named, since
    the sandbox's default agent is the first of them all."""
    arguments = {"prompt": prompt}
    arguments.update({"agent": task.name} if isinstance(task, Pair) else {"task": task})
    sent = time.perf_counter()
    result = await session.call_tool("robota_run", arguments)
    ended = time.perf_counter()
    structured = result.structured_content or {}
    if result.is_error or structured.get("answer") != f"ECHO: {prompt}":
        raise SystemExit(f"robota_run was answered {result.content}")
    return (sent, ended), str(structured["task"])


def shares(spans: list[Span], tap: Path | None, pair: Pair) -> list[float] | None:
    """Each round's time outside the agent: its span less the agent's own time in it (the
    tap's mark of the turn's request to its end); ``None`` without a tap."""
    if tap is None:
        return None
    marks = turn_marks(read_tap(tap), pair.protocol)
    agent = [
        next(end - start for start, end in marks if sent <= start and end <= ended)
        for sent, ended in spans
    ]
    return [ended - sent - inside for (sent, ended), inside in zip(spans, agent, strict=True)]


def ms(values: list[float]) -> str:
    return f"{median(values) * 1e3:7.1f} ms  ({min(values) * 1e3:.1f}-{max(values) * 1e3:.1f})"


async def bench(sandbox: Sandbox, pair: Pair, rounds: int) -> list[str]:
    params = StdioServerParameters(
        command=str(ROBOTA),
        args=["mcp", "serve"],
        env={**sandbox.env},
        cwd=str(sandbox.cwd),
    )
    agent = pair.raw_agent()
    robota_spans: list[Span] = []
    raw_spans: list[Span] = []
    errors = (sandbox.root / f"mcp-{pair.name}.stderr").open("w")
    try:
        agent.start()
        agent.open(pair.raw_cwd)
        raw_turn(agent, "warm up")
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            _, task = await mcp_turn(session, "warm up", pair)  # its agent and task start here
            status = await session.call_tool("robota_task_status", {"task": task})
            ran_on = (status.structured_content or {}).get("agent")
            if ran_on != pair.name:
                raise SystemExit(f"robota ran the task on {ran_on!r}, not {pair.name!r}")
            for i in range(rounds):
                span, _ = await mcp_turn(session, f"turn {i}", task)
                robota_spans.append(span)
                # Blocking, on purpose: nothing else runs on this loop meanwhile.
                raw_spans.append(raw_turn(agent, f"turn {i}"))
    finally:
        agent.close()
        errors.close()
    robota_times = [ended - sent for sent, ended in robota_spans]
    raw_times = [ended - sent for sent, ended in raw_spans]
    added = median([r - w for r, w in zip(robota_times, raw_times, strict=True)]) * 1e3
    lines = [
        f"tools/call robota_run   {ms(robota_times)}",
        f"raw turn (warm agent)   {ms(raw_times)}",
        f"robota adds             {added:7.1f} ms  target < {TARGET_MS:g} ms: "
        f"{verdict(added, TARGET_MS)}  ratio {median(robota_times) / median(raw_times):.2f}x"
        f"  (median of {rounds})",
    ]
    robota_share = shares(robota_spans, pair.robota_tap, pair)
    raw_share = shares(raw_spans, pair.raw_tap, pair)
    if robota_share is not None and raw_share is not None:
        outside = median([r - w for r, w in zip(robota_share, raw_share, strict=True)]) * 1e3
        lines += [
            f"  outside the agent: robota {ms(robota_share)}",
            f"                     raw    {ms(raw_share)}",
            f"  robota adds, the agent's own time left out {outside:7.1f} ms",
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds (a smoke run)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--agent", action="append", dest="agents", metavar="NAME")
    parser.add_argument(
        "--tap", action="store_true", help="split each round's time at the agent's wire"
    )
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    names = tuple(options.agents or DEFAULT_AGENTS)
    print(f"load average at start: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="robota-bench-mcp-") as scratch, fake_model() as url:
        sandbox = Sandbox(Path(scratch), url, names, tap=options.tap)
        for name in names:
            pair = sandbox.pairs[name]
            print(f"{name} ({pair.robota.kind})")
            for line in trio.run(bench, sandbox, pair, rounds):
                print(f"  {line}")
            sys.stdout.flush()
    print(f"load average at end: {load_average()}")


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
