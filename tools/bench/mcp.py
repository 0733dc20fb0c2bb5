"""``robota mcp serve``: a ``robota_run`` tool call's round trip against the raw turn.

    .venv/bin/python tools/bench/mcp.py [--quick] [--rounds N] [--agent NAME ...]

Each agent (default codex, App Server, and claude-agent-acp, ACP) is real, isolated and offline
against the fake model, in a sandboxed profile (``_real.Sandbox``). robota: ``robota mcp serve``
driven by the official ``mcp`` client over stdio, as an MCP client runs it; one warm-up call
starts its agent and its task, then every call continues that task (the same warm agent and
session): ``tools/call`` written -> its result read, the answer checked. Raw: the same turn
through the raw protocol client (``tools/raw_client.py``) on a warm agent of its own, request
written -> the line ending the turn read. Rounds interleave, robota then raw, so drift on the
shared machine hits both alike; printed per agent: the medians of N (default 20), what robota
adds (the median of the per-round differences) against the target (under 10 ms), and the ratio.

The server is ended by closing its stdin (as a client leaving does) and the raw agent as robota
ends one: no process is left.
"""

from __future__ import annotations

import argparse
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
from _real import DEFAULT_AGENTS, ROBOTA, Pair, Sandbox, fake_model, median, verdict  # noqa: E402

TARGET_MS = 10.0


def raw_turn(agent: Any, prompt: str) -> float:
    turn = agent.turn(prompt)
    if turn.text != f"ECHO: {prompt}":
        raise SystemExit(f"the raw client was answered {turn.text!r}")
    return float(turn.ended - turn.sent)


async def mcp_turn(session: ClientSession, prompt: str, task: str | None) -> tuple[float, str]:
    """Seconds ``tools/call`` -> result, and the task it ran on (the answer checked)."""
    arguments = {"prompt": prompt} if task is None else {"prompt": prompt, "task": task}
    sent = time.perf_counter()
    result = await session.call_tool("robota_run", arguments)
    seconds = time.perf_counter() - sent
    structured = result.structured_content or {}
    if result.is_error or structured.get("answer") != f"ECHO: {prompt}":
        raise SystemExit(f"robota_run was answered {result.content}")
    return seconds, str(structured["task"])


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
    robota_times: list[float] = []
    raw_times: list[float] = []
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
            _, task = await mcp_turn(session, "warm up", None)  # its agent and task start here
            for i in range(rounds):
                seconds, _ = await mcp_turn(session, f"turn {i}", task)
                robota_times.append(seconds)
                # Blocking, on purpose: nothing else runs on this loop meanwhile.
                raw_times.append(raw_turn(agent, f"turn {i}"))
    finally:
        agent.close()
        errors.close()
    added = median([r - w for r, w in zip(robota_times, raw_times, strict=True)]) * 1e3
    return [
        f"tools/call robota_run   {ms(robota_times)}",
        f"raw turn (warm agent)   {ms(raw_times)}",
        f"robota adds             {added:7.1f} ms  target < {TARGET_MS:g} ms: "
        f"{verdict(added, TARGET_MS)}  ratio {median(robota_times) / median(raw_times):.2f}x"
        f"  (median of {rounds})",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds (a smoke run)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--agent", action="append", dest="agents", metavar="NAME")
    options = parser.parse_args()
    rounds = 3 if options.quick else options.rounds
    names = tuple(options.agents or DEFAULT_AGENTS)
    with tempfile.TemporaryDirectory(prefix="robota-bench-mcp-") as scratch, fake_model() as url:
        sandbox = Sandbox(Path(scratch), url, names, tap=False)
        for name in names:
            pair = sandbox.pairs[name]
            print(f"{name} ({pair.robota.kind})")
            for line in trio.run(bench, sandbox, pair, rounds):
                print(f"  {line}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
