"""The WebSocket surface of a background session (the workspace's daemon), against the raw client.

    .venv/bin/python tools/bench/serve.py [--quick] [--rounds N] [--agent NAME]

One real agent (default claude-agent-acp), isolated and offline against the fake model, in a
sandboxed profile (``_real.Sandbox``); the daemon is started with ``robota daemon start --json``
and driven through the URL it prints (trio-websocket as the client).

* turn: ``submit`` -> first ``text_delta`` and ``submit`` -> ``complete`` on the WebSocket,
  interleaved round by round with the same turn through the raw protocol client on a warm agent
  of its own (``tools/raw_client.py``: request written -> first text chunk read, -> the line
  ending the turn read). Medians of N (default 20); ratio robota/raw of the medians.
* resume: a client leaves in the middle of a turn, the turn ends, a new connection sends
  ``resume{lastSeq}`` first: from opening it until the turn's ``complete`` is replayed, beside a
  fresh connection until its ``hello`` (the baseline). Target: resume within 10 ms.
* fan-out: 8 clients observe one session while a ninth drives; for every message, each
  observer's receive time minus the driver's (p50/p99), and submit -> complete with the 8
  watching against without.
* idle RSS: the daemon's resident memory after the turns, read from /proc after 2 s idle; its
  agent's processes apart. Target: under 60 MB.

The daemon is stopped and the raw agent ended: no process is left.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from _real import DEFAULT_AGENTS, Pair, Sandbox, fake_model, median, pct, rss_kib, verdict
from trio_websocket import WebSocketConnection, open_websocket_url

from host import descendants, run
from robota.core.control import parse_registration

TIMEOUT = 60.0
FANOUT = 8


async def receive(ws: WebSocketConnection) -> dict[str, Any]:
    with trio.fail_after(TIMEOUT):
        message: dict[str, Any] = json.loads(await ws.get_message())
    return message


async def until(ws: WebSocketConnection, kind: str) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    while not got or got[-1]["type"] != kind:
        got.append(await receive(ws))
    return got


async def ws_turn(ws: WebSocketConnection, prompt: str) -> tuple[float, float]:
    """Seconds submit -> first text_delta, submit -> complete (the answer checked)."""
    sent = time.perf_counter()
    await ws.send_message(json.dumps({"type": "submit", "prompt": prompt}))
    first = None
    while True:
        message = await receive(ws)
        if message["type"] == "text_delta" and first is None:
            first = time.perf_counter()
        if message["type"] in ("complete", "interrupted", "error"):
            break
    ended = time.perf_counter()
    if message["type"] != "complete" or message.get("result") != f"ECHO: {prompt}":
        raise SystemExit(f"the daemon answered {message}")
    return (first or ended) - sent, ended - sent


def raw_turn(agent: Any, prompt: str) -> tuple[float, float]:
    turn = agent.turn(prompt)
    if turn.text != f"ECHO: {prompt}":
        raise SystemExit(f"the raw client was answered {turn.text!r}")
    return (turn.first or turn.ended) - turn.sent, turn.ended - turn.sent


def ms(values: list[float]) -> str:
    return f"{median(values) * 1e3:7.1f} ms  ({min(values) * 1e3:.1f}-{max(values) * 1e3:.1f})"


async def turns(url: str, agent: Any, rounds: int) -> list[str]:
    ws_first: list[float] = []
    ws_done: list[float] = []
    raw_first: list[float] = []
    raw_done: list[float] = []
    async with open_websocket_url(url) as ws:
        await receive(ws)
        await ws_turn(ws, "warm up")  # the daemon's agent starts on its first turn
        for i in range(rounds):
            first, done = await ws_turn(ws, f"turn {i}")
            ws_first.append(first)
            ws_done.append(done)
            # Blocking, on purpose: nothing else runs on this loop meanwhile.
            first, done = raw_turn(agent, f"turn {i}")
            raw_first.append(first)
            raw_done.append(done)
    return [
        f"submit -> first text_delta  {ms(ws_first)}  raw {ms(raw_first)}  "
        f"ratio {median(ws_first) / median(raw_first):.2f}x",
        f"submit -> complete          {ms(ws_done)}  raw {ms(raw_done)}  "
        f"ratio {median(ws_done) / median(raw_done):.2f}x  (median of {rounds})",
    ]


async def resumes(url: str, rounds: int) -> list[str]:
    hellos: list[float] = []
    replays: list[float] = []
    for i in range(rounds):
        started = time.perf_counter()
        async with open_websocket_url(url) as watcher:
            await receive(watcher)
            hellos.append(time.perf_counter() - started)
            async with open_websocket_url(url) as leaver:
                await receive(leaver)
                await leaver.send_message(json.dumps({"type": "ack", "seq": 0}))
                await watcher.send_message(json.dumps({"type": "submit", "prompt": f"gone {i}"}))
                seen = await until(leaver, "user_message")
            # The leaver is gone mid-turn; the turn ends without it.
            await until(watcher, "complete")
        started = time.perf_counter()
        async with open_websocket_url(url) as back:
            await back.send_message(json.dumps({"type": "resume", "lastSeq": seen[-1]["seq"]}))
            rest = [m for m in await until(back, "complete") if m["type"] != "hello"]
            replays.append(time.perf_counter() - started)
        if rest[0]["seq"] != seen[-1]["seq"] + 1:
            raise SystemExit(f"resume did not start right after {seen[-1]['seq']}: {rest[0]}")
    return [
        f"resume after a disconnect   {ms(replays)}  target <= 10 ms: "
        f"{verdict(median(replays) * 1e3, 10)}",
        f"fresh connect until hello   {ms(hellos)}  ratio {median(replays) / median(hellos):.2f}x",
    ]


async def fanout(url: str, rounds: int, alone: list[float]) -> list[str]:
    lags: list[float] = []
    watched: list[float] = []
    async with open_websocket_url(url) as driver:
        await receive(driver)
        observers = []
        async with trio.open_nursery() as nursery:
            for _ in range(FANOUT):
                ws = await nursery.start(_connected, url)
                observers.append(ws)
            for i in range(rounds):
                seen: list[dict[int, float]] = [{} for _ in observers]

                async def watch(index: int, ws: WebSocketConnection, seen: Any = seen) -> None:
                    while True:
                        message = await receive(ws)
                        seen[index][message["seq"]] = time.perf_counter()
                        if message["type"] == "complete":
                            return

                got: dict[int, float] = {}
                async with trio.open_nursery() as watchers:
                    for index, ws in enumerate(observers):
                        watchers.start_soon(watch, index, ws)
                    sent = time.perf_counter()
                    await driver.send_message(json.dumps({"type": "submit", "prompt": f"fan {i}"}))
                    while True:
                        message = await receive(driver)
                        got[message["seq"]] = time.perf_counter()
                        if message["type"] == "complete":
                            watched.append(got[message["seq"]] - sent)
                            break
                for times in seen:
                    lags += [times[seq] - got[seq] for seq in got if seq in times]
            nursery.cancel_scope.cancel()
    return [
        f"{FANOUT} observers: fan-out lag  p50 {pct(lags, 0.5) * 1e3:.2f} ms  p99 "
        f"{pct(lags, 0.99) * 1e3:.2f} ms  (observer receive - driver receive, n={len(lags)})",
        f"submit -> complete, {FANOUT} watching {ms(watched)}  ratio to none watching "
        f"{median(watched) / median(alone):.2f}x",
    ]


async def _connected(url: str, *, task_status: Any) -> None:
    async with open_websocket_url(url) as ws:
        await receive(ws)  # hello
        await ws.send_message(json.dumps({"type": "ack", "seq": 0}))  # live from now
        task_status.started(ws)
        await trio.sleep_forever()


def bench(sandbox: Sandbox, pair: Pair, rounds: int) -> list[str]:
    _, out = run(sandbox, "daemon", "start", "--json", "--agent", pair.name)
    started = json.loads(out)
    url = started["url"]
    lines: list[str] = []
    agent = pair.raw_agent()
    try:
        agent.start()
        agent.open(pair.raw_cwd)
        raw_turn(agent, "warm up")
        lines += trio.run(turns, url, agent, rounds)
        lines += trio.run(resumes, url, rounds)
        alone = _alone(url, rounds)
        lines += trio.run(fanout, url, rounds, alone)
        pid = _pid(sandbox, started["id"])
        time.sleep(2.0)
        kib = rss_kib(pid)
        agents = sum(rss_kib(p) for p in descendants(pid))
        lines += [
            f"daemon RSS, idle            {kib / 1024:7.1f} MB  target < 60 MB: "
            f"{verdict(kib / 1024, 60)}",
            f"its agent's processes       {agents / 1024:7.1f} MB (apart)",
        ]
    finally:
        agent.close()
        run(sandbox, "daemon", "stop")
    return lines


def _alone(url: str, rounds: int) -> list[float]:
    async def main() -> list[float]:
        async with open_websocket_url(url) as ws:
            await receive(ws)
            return [(await ws_turn(ws, f"alone {i}"))[1] for i in range(rounds)]

    return trio.run(main)


def _pid(sandbox: Sandbox, session_id: str) -> int:
    path = sandbox.home / "data" / "run" / "sessions" / f"{session_id}.json"
    return parse_registration(path.read_bytes()).pid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds (the tests' run)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--agent", default=DEFAULT_AGENTS[1])
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds
    with tempfile.TemporaryDirectory(prefix="robota-bench-serve-") as tmp, fake_model() as url:
        sandbox = Sandbox(Path(tmp), url, [args.agent], tap=False)
        pair = sandbox.pairs[args.agent]
        print(f"{args.agent} ({pair.protocol}), {rounds} rounds, interleaved with the raw client")
        for line in bench(sandbox, pair, rounds):
            print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
