"""The Slack transport served by the host: event -> eyes, progress message, final; cadence; load.

    .venv/bin/python tools/bench/slack.py [--quick] [--turns N] [--tools N] [--channels C]
                                          [--per-channel M] [--agent NAME]

One real agent (default codex-acp), isolated and offline against the fake model, in a sandboxed
profile (``_real.Sandbox``) whose ``transports.slack`` points at the fake Slack of the tests
(tests/support/fake_slack.py: loopback Web API and Socket Mode, the real wire
protocol), run in this process. The host is ``robota server start`` (ready once Socket Mode is
up and ``auth.test`` succeeded). All times are on the fake's clock (``trio.current_time``):
from just before the envelope's frame is written to the socket (it reaches the host over
loopback) until the fake received the bot's Web API call.

* turns, one at a time in the owner's DM: N fast ones (the model answers at once: ``ECHO:
  <prompt>``): event -> the ``eyes`` reaction (``reactions.add``), -> the first progress
  message (the thread's first ``chat.postMessage``), -> the final answer (the ``markdown``
  reply); p50 and p99 of each.
* cadence: one turn of T tool calls (the model's ``TOOLS T``: T shell calls one after another, 0.2
  s each in a short turn, ``tools_prompt``): the progress message's ``chat.update`` calls, their
  count, and the least, median and largest gap between two, against the card renderer's throttle
  (``CardPolicy``: an update at most every ``interval`` s, ``critical_interval`` for what must
  show at once).
* load: C channels x M messages pushed at once (each a channel message that mentions the bot,
  as Slack sends it: a ``message`` and an ``app_mention`` event); every message must end with
  ``white_check_mark`` and one final answer in its thread (none doubled); messages per second
  from the first push to the last answer.
* memory after a burst (issue 28 s.3, ``_burst``): the host's idle RSS just before the load
  and once idle after it (its routes passivated, its channels' lanes let go, garbage
  collected), both from this run, and their ratio against the target (within 10 %).

Targets (issue 15): eyes within 50 ms of the envelope reaching the host, the first progress
message within 300 ms, nothing lost or doubled, updates never faster than the throttle.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _burst import AFTER_QUIET, BEFORE_QUIET, QUICK_QUIET, idle_rss  # noqa: E402
from _burst import rows as burst_rows  # noqa: E402
from _real import Sandbox, fake_model, pct, spacing, tools_prompt, verdict  # noqa: E402
from feishu import host_pid, run, say  # noqa: E402 (the same robota calls and printing)
from tests.support.fake_slack import (  # noqa: E402 (needs the path set above)
    BOT_USER,
    FakeSlack,
    dm,
    events_api,
    fake_slack,
)
from tests.support.slack import configure  # noqa: E402

from robota.core.cards import CardPolicy  # noqa: E402

BOUND = 180.0
"""Seconds one wait may take: reached only when something is broken."""
DM = "D0ALICE"
MARKS = ("eyes", "progress", "final")
TARGETS: dict[str, tuple[str, float]] = {
    "eyes": ("<= 50 ms (p50)", 0.050),
    "progress": ("<= 300 ms (p50)", 0.300),
}
_clock = iter(range(1, 10_000_000))


def now_ts() -> str:
    return f"{int(time.time())}.{next(_clock):06d}"


def replies(fake: FakeSlack, channel: str, ts: str) -> list[dict[str, Any]]:
    return [
        m
        for (c, _), m in sorted(fake.messages.items())
        if c == channel and m.get("thread_ts") == ts
    ]


def finals(fake: FakeSlack, channel: str, ts: str) -> list[dict[str, Any]]:
    return [
        m
        for m in replies(fake, channel, ts)
        if any(b.get("type") == "markdown" for b in m.get("blocks") or [])
    ]


def reactions(fake: FakeSlack, channel: str, ts: str) -> set[str]:
    return {name for c, t, name in fake.reactions if (c, t) == (channel, ts)}


def done(fake: FakeSlack, channel: str, ts: str) -> bool:
    names = reactions(fake, channel, ts)
    return bool(finals(fake, channel, ts)) and "eyes" not in names and bool(names)


async def one_turn(fake: FakeSlack, text: str, expect: str) -> tuple[str, dict[str, float]]:
    """Push one DM and wait for its answer; each mark's delay after the push."""
    ts = now_ts()
    pushed = trio.current_time()
    await fake.push(events_api(dm(text, ts=ts), event_id=f"Ev{ts}"))
    await fake.wait_until(lambda: done(fake, DM, ts), timeout=BOUND)
    answer = json.dumps(finals(fake, DM, ts), ensure_ascii=False)
    if expect not in answer:
        raise SystemExit(f"the answer to {text!r} lacks {expect!r}: {answer[:300]}")
    eyes = [
        c.at
        for c in fake.calls_of("reactions.add")
        if c.args.get("timestamp") == ts and c.args.get("name") == "eyes"
    ]
    posts = [c.at for c in fake.calls_of("chat.postMessage") if c.args.get("thread_ts") == ts]
    final_at = [
        c.at
        for c in fake.calls_of("chat.postMessage")
        if c.args.get("thread_ts") == ts
        and any(b.get("type") == "markdown" for b in c.args.get("blocks") or [])
    ]
    marks = {"eyes": min(eyes), "progress": min(posts), "final": min(final_at)}
    return ts, {k: v - pushed for k, v in marks.items()}


def rows_of(label: str, turns: list[dict[str, float]]) -> list[str]:
    rows = [f"{label} turns: {len(turns)}"]
    for mark in MARKS:
        values = [t[mark] for t in turns]
        p50, p99 = pct(values, 0.5), pct(values, 0.99)
        target = ""
        if mark in TARGETS:
            words, limit = TARGETS[mark]
            target = f"  target {words}: {verdict(p50, limit)}"
        rows.append(
            f"  event -> {mark:<9} p50 {p50 * 1e3:8.1f} ms  p99 {p99 * 1e3:8.1f} ms{target}"
        )
    return rows


async def cadence(fake: FakeSlack, tools: int) -> list[str]:
    """One turn of ``tools`` shell calls: the progress message's update gaps."""
    ts, _ = await one_turn(fake, tools_prompt(tools), f"TOOLS: {tools} calls done")
    progress = replies(fake, DM, ts)[0]
    updates = sorted(
        c.at
        for c in fake.calls_of("chat.update")
        if c.args.get("ts") == progress["ts"] and c.args.get("channel") == DM
    )
    gaps = [b - a for a, b in itertools.pairwise(updates)]
    policy = CardPolicy()
    if not gaps:
        return [f"cadence: a turn of {tools} tool calls: {len(updates)} updates, no gap"]
    least, kept = spacing(gaps, policy.interval, policy.critical_interval)
    terminal = gaps[-1]
    return [
        f"cadence: a turn of {tools} tool calls: {len(updates)} updates of its progress message, "
        f"gap least {least} (terminal apart), p50 {pct(gaps, 0.5):.2f} s, most {max(gaps):.2f} s, "
        f"terminal {terminal:.2f} s; throttle {policy.interval:g} s "
        f"({policy.critical_interval:g} s for the terminal update): {'pass' if kept else 'OVER'}"
    ]


def finals_by_thread(fake: FakeSlack) -> dict[tuple[str, str], int]:
    """(channel, thread_ts) -> the final answers in that thread, all read in one pass."""
    counts: dict[tuple[str, str], int] = {}
    for (channel, _), m in fake.messages.items():
        if any(b.get("type") == "markdown" for b in m.get("blocks") or []):
            key = (channel, str(m.get("thread_ts")))
            counts[key] = counts.get(key, 0) + 1
    return counts


def threads_done(fake: FakeSlack, sent: list[tuple[str, str]]) -> list[bool]:
    by_thread = finals_by_thread(fake)
    names: dict[tuple[str, str], set[str]] = {}
    for channel, ts, name in fake.reactions:
        names.setdefault((channel, ts), set()).add(name)
    return [
        bool(by_thread.get(key)) and bool(names.get(key)) and "eyes" not in names[key]
        for key in sent
    ]


def mention(channel: str, ts: str, n: int) -> list[dict[str, Any]]:
    """The two events Slack sends for one channel message that mentions the bot."""
    message = {**dm(f"<@{BOT_USER}> load {n}", ts=ts), "channel": channel}
    message["channel_type"] = "channel"
    app_mention = {k: v for k, v in message.items() if k != "channel_type"}
    app_mention["type"] = "app_mention"
    return [message, app_mention]


async def load(fake: FakeSlack, channels: int, per_channel: int) -> list[str]:
    """``channels`` x ``per_channel`` messages at once: all answered once, throughput."""
    sent: list[tuple[str, str]] = []
    pushed = trio.current_time()
    n = 0
    for _ in range(per_channel):
        for c in range(channels):
            n += 1
            channel, ts = f"C0LOAD{c:03d}", now_ts()
            sent.append((channel, ts))
            for k, event in enumerate(mention(channel, ts, n)):
                await fake.push(events_api(event, event_id=f"EvLoad{n}-{k}"))
    # Polled, not on every call the fake records: each check reads every message, and the fake
    # shares this process (checking on every call starved it of the time to answer).
    with trio.fail_after(BOUND * 3):
        while not all(threads_done(fake, sent)):
            await trio.sleep(0.25)
    elapsed = trio.current_time() - pushed
    answered = sum(1 for c, t in sent if "white_check_mark" in reactions(fake, c, t))
    by_thread = finals_by_thread(fake)
    doubled = sum(1 for key in sent if by_thread.get(key, 0) > 1)
    return [
        f"load: {channels} channels x {per_channel} messages at once: {answered}/{len(sent)} "
        f"answered, {doubled} answers doubled, {elapsed:.1f} s, "
        f"{len(sent) / elapsed:.1f} messages/s"
    ]


async def bench(args: argparse.Namespace, sandbox: Sandbox) -> None:
    async with fake_slack() as fake:
        configure(sandbox.home, fake.api_url)

        async def robota(*argv: str) -> str:
            call: Callable[[], str] = lambda: run(sandbox, *argv)  # noqa: E731
            return await trio.to_thread.run_sync(call)

        await robota("server", "start")
        try:
            await fake.wait_until(lambda: fake.connections, timeout=BOUND)
            # A first turn starts the agent; it is not counted.
            await one_turn(fake, "warm up", "ECHO: warm up")
            turns = []
            for i in range(args.turns):
                turns.append((await one_turn(fake, f"fast {i}", f"ECHO: fast {i}"))[1])
            if turns:
                say(rows_of("fast", turns))
            if args.tools:
                say(await cadence(fake, args.tools))
            if args.channels and args.per_channel:
                pid = await trio.to_thread.run_sync(host_pid, sandbox)
                before = await idle_rss(pid, trio.current_time(), args.quiet[0])
                say(await load(fake, args.channels, args.per_channel))
                after = await idle_rss(pid, trio.current_time(), args.quiet[1])
                say(burst_rows("burst", before, after, args.quiet))
        finally:
            await robota("server", "stop")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="5 turns, 20 tool calls, 3 channels x 2 messages"
    )
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--tools", type=int, default=500)
    parser.add_argument("--channels", type=int, default=100)
    parser.add_argument("--per-channel", type=int, default=5)
    parser.add_argument("--agent", default="codex-acp")
    args = parser.parse_args()
    args.quiet = (BEFORE_QUIET, AFTER_QUIET)
    if args.quick:
        args.turns, args.tools, args.channels, args.per_channel = 5, 20, 3, 2
        args.quiet = QUICK_QUIET
    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"slack: agent {args.agent}, {args.turns} turns, {args.tools} tool calls, "
        f"{args.channels} x {args.per_channel} load, load average {load_avg}, "
        f"python {sys.version.split()[0]}"
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rb-slack-", dir="/tmp") as tmp, fake_model() as url:
        sandbox = Sandbox(Path(tmp), url, [args.agent], tap=False)
        trio.run(bench, args, sandbox)
    print(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
