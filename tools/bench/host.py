"""The host (``robota server``): its start, a ``task send --wait`` round trip, its idle RSS.

    .venv/bin/python tools/bench/host.py [--quick] [--rss-only] [--sends N] [--warmup N]
        [--agent NAME] [--base CHECKOUT]

One real agent (default claude-agent-acp), isolated and offline against the fake model, in a
sandboxed profile (``_real.Sandbox``), and the same agent set up again for the raw client.

* start: ``robota server start`` (no chat transport) from spawn until it exits, which it does
  once the host reported ready, then ``server stop``; beside it, in the same run and
  interleaved, ``robota -p`` from spawn to exit for one turn, the start a user knows today.
  Target: ready within 1 s.
* send: on a running host, ``robota task send TASK TEXT --wait`` from spawn to exit, beside the
  raw client's turn on its own warm agent (``tools/raw_client.py``: ``session/prompt`` until its
  answer) and one CLI start, N rounds (default 40, after 5 not counted), each round's
  measurements in a shuffled order. The CLI start is ``robota task status TASK --json``: the
  same process start, configuration, store read and name resolution as ``task send``, without
  the host (``robota --version`` is printed beside it). What the host adds is send - raw turn -
  CLI start, taken inside each round (``_rounds``): its median (target: within 5 ms) and IQR.
  Since the host resolves TASK, ``task send`` reads neither the configuration nor the store,
  so ``task status`` does more than the send's own client; the stricter figure, "over a bare
  start", takes ``robota --version`` (the interpreter, click and ``robota.cli``) as the CLI
  start instead: all the send's client path beyond it counts as the host's.
  A wire tap on the control socket (``_control_tap``) also times each ``task.send`` from its
  request in to its reply out, and the wire tap on the host's agent (``tools/wire_tap.py``, in
  front of the raw client's agent too) that turn's ``session/prompt`` until its response: the
  first less the second is the host's own share of the send, without the CLI's start or the
  agent's turn in it, split into the way in (request in -> prompt out) and the way out (answer
  in -> reply out). ``--base CHECKOUT`` runs a second host on that checkout's sources (this
  venv, its ``packages/*/src`` first on ``PYTHONPATH``) and interleaves both hosts' measurements
  in the same shuffled rounds, with the branch's figures less the base's per round; start and
  RSS are then left out.
* idle RSS: the host's resident memory once the store knows 10 000 routes (tasks bound to
  ``cli:`` routes, written straight into SQLite) of which 100 are active (each told ``/status``
  by ``task.send`` on the host's control socket, the request ``robota task send --wait``
  makes, so its route actor is alive; one of them runs a turn first, so its agent runs too),
  read from /proc 2 s after the load, and again 12 s after it (the host passivates a route with
  nothing in flight after 5 s of quiet); the agent's processes are counted apart
  (``--quick``: 1 000 routes, 10 active; ``--rss-only``: this part alone). Target: under 60 MB.
  The load goes straight to the socket (about 10 ms a request) rather than through 100 CLI
  processes (0.2-0.5 s each), and the routes are counted there (``server.status``) right
  after it, so every route it made active still is when it is counted.

Every answer is checked (``ECHO: <prompt>``); the host is stopped and no process is left.
The load average is printed at the start and at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from _control_tap import ControlTap
from _real import (
    Protocol,
    RawAgent,
    Sandbox,
    children,
    fake_model,
    median,
    read_tap,
    rss_kib,
    turn_marks,
    verdict,
)
from _rounds import Spread, per_round, round_order, spread

from robota.core.config import resolve_profile
from robota.core.control import ControlClient

KNOWN_ROUTES = 10_000
ACTIVE_ROUTES = 100
MEASURED = ("send", "raw", "cli", "version")
"""A send round's measurements, per side: ``task send --wait``, the raw client's turn, the CLI
start (``task status``) and ``robota --version``."""


def run(sandbox: Sandbox, *args: str, timeout: float = 120) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        sandbox.robota(*args),
        env=sandbox.env,
        cwd=sandbox.cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"robota {' '.join(args)}: exit {done.returncode}: {done.stderr[-800:]}")
    return seconds, done.stdout


def host_pid(sandbox: Sandbox) -> int:
    _, out = run(sandbox, "server", "status", "--json")
    status = json.loads(out)
    if not status["running"]:
        raise SystemExit("the host is not running")
    return int(status["pid"])


def bench_start(sandbox: Sandbox, agent: str, rounds: int) -> list[str]:
    starts: list[float] = []
    prints: list[float] = []
    run(sandbox, "-p", "warm up", "--agent", agent)
    for i in range(rounds):
        seconds, out = run(sandbox, "server", "start", "--json")
        if not json.loads(out).get("started"):
            raise SystemExit(f"server start did not start a host: {out}")
        starts.append(seconds)
        run(sandbox, "server", "stop")
        seconds, out = run(sandbox, "-p", f"start {i}", "--agent", agent)
        if out != f"ECHO: start {i}\n":
            raise SystemExit(f"robota -p answered {out!r}")
        prints.append(seconds)
    return [
        f"server start until ready  {median(starts) * 1e3:7.0f} ms  "
        f"({min(starts) * 1e3:.0f}-{max(starts) * 1e3:.0f})  target <= 1000 ms: "
        f"{verdict(median(starts), 1.0)}",
        f"robota -p, one turn       {median(prints) * 1e3:7.0f} ms  "
        f"({min(prints) * 1e3:.0f}-{max(prints) * 1e3:.0f})  ratio start/print "
        f"{median(starts) / median(prints):.2f}",
    ]


@dataclass
class Side:
    """One checkout's host under measurement: its sandbox (and host), task and wire tap."""

    label: str
    sandbox: Sandbox
    task_id: str = ""
    tap: ControlTap | None = None
    raw: RawAgent | None = None
    """The raw client on this side's own copy of the agent: each agent's session grows by
    one turn a round, the host's and the raw client's alike."""


def timed_send(side: Side, agent: str, text: str) -> tuple[float, float, float, float]:
    """``task send --wait`` from spawn to exit, then the host's own share of it on the wire:
    its whole ``task.send`` on the control socket less its agent's turn on the agent's wire
    (``session/prompt`` out until its response), and of that share the way in (request in ->
    prompt out) and the way out (the agent's answer in -> reply out)."""
    assert side.tap is not None
    mark = side.tap.mark()
    seconds, out = run(side.sandbox, "task", "send", side.task_id, text, "--wait")
    if out.strip() != f"ECHO: {text}":
        raise SystemExit(f"task send --wait printed {out!r}")
    calls = side.tap.requests("task.send", mark)
    if len(calls) != 1:
        raise SystemExit(f"the control tap saw {len(calls)} task.send requests, not one")
    came, went = calls[0]
    pair = side.sandbox.pairs[agent]
    assert pair.robota_tap is not None
    start, end = agent_turn(pair.robota_tap, pair.protocol, came, went)
    return seconds, (went - came) - (end - start), start - came, went - end


def agent_turn(log: Path, protocol: Protocol, came: float, went: float) -> tuple[float, float]:
    """The one turn the agent's wire tap saw between ``came`` and ``went``. The tap logs a
    line after forwarding it, so the answer's entry may land a moment after the host replied:
    it is waited for (a few seconds at most)."""
    deadline = time.monotonic() + 5.0
    while True:
        turns = [
            (start, end)
            for start, end in turn_marks(read_tap(log), protocol)
            if came <= start and end <= went
        ]
        if len(turns) == 1 or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    if len(turns) != 1:
        raise SystemExit(f"the agent's wire shows {len(turns)} turns inside one task.send")
    return turns[0]


def timed_turn(raw: RawAgent, text: str) -> float:
    started = time.perf_counter()
    turn = raw.turn(text)
    seconds = time.perf_counter() - started
    if turn.text != f"ECHO: {text}":
        raise SystemExit(f"the raw client heard {turn.text!r}")
    return seconds


def measure_round(
    sides: list[Side], agent: str, index: int, rng: random.Random
) -> dict[str, float]:
    """One round: each side's send, raw turn, CLI start and ``--version``, all in one
    shuffled order."""
    marks: dict[str, float] = {}
    names = [f"{side.label}:{kind}" for side in sides for kind in MEASURED]
    by_label = {side.label: side for side in sides}
    for name in round_order(names, rng):
        label, kind = name.split(":")
        side = by_label[label]
        text = f"{kind} {label} {index}"
        if kind == "send":
            marks[name], *shares = timed_send(side, agent, text)
            for part, share in zip(("wire", "in", "out"), shares, strict=True):
                marks[f"{label}:{part}"] = share
        elif kind == "raw":
            assert side.raw is not None
            marks[name] = timed_turn(side.raw, text)
        elif kind == "cli":
            marks[name] = run(side.sandbox, "task", "status", side.task_id, "--json")[0]
        else:
            marks[name] = run(side.sandbox, "--version")[0]
    return marks


def side_rows(side: Side, rounds: list[dict[str, float]]) -> list[str]:
    def of(kind: str) -> Spread:
        return spread([r[f"{side.label}:{kind}"] for r in rounds])

    label = side.label
    added = spread(per_round(rounds, [f"{label}:send"], [f"{label}:raw", f"{label}:cli"]))
    bare = spread(per_round(rounds, [f"{label}:send"], [f"{label}:raw", f"{label}:version"]))
    wire = of("wire")
    return [
        f"task send --wait          {of('send').ms()}",
        f"raw client's turn         {of('raw').ms()}",
        f"one CLI start (task status) {of('cli').ms()[2:]}",
        f"robota --version          {of('version').ms()}",
        f"the host adds             {added.median * 1e3:7.1f} ms  target <= 5 ms: "
        f"{verdict(added.median, 0.005)}",
        f"  per round: send - raw turn - CLI start {added.ms()}",
        f"over a bare start         {bare.median * 1e3:7.1f} ms  target <= 5 ms: "
        f"{verdict(bare.median, 0.005)}",
        f"  per round: send - raw turn - --version {bare.ms()}",
        f"the host's share, tapped  {wire.ms()}",
        "  (task.send on the control socket less its agent's turn on the agent's wire)",
        f"  request in -> prompt out {of('in').ms()}",
        f"  answer in -> reply out  {of('out').ms()}",
    ]


def bench_send(sides: list[Side], agent: str, sends: int, warmup: int, seed: int) -> list[str]:
    for side in sides:
        _, out = run(side.sandbox, "task", "new", "--agent", agent, "--json")
        side.task_id = json.loads(out)["task"]["id"]
        run(side.sandbox, "task", "send", side.task_id, "warm up", "--wait")
    rng = random.Random(seed)
    rounds: list[dict[str, float]] = []
    with ExitStack() as stack:
        for side in sides:
            pair = side.sandbox.pairs[agent]
            side.raw = pair.raw_agent()
            side.raw.start()
            stack.callback(side.raw.close)
            side.raw.open(pair.raw_cwd)
            side.raw.turn("warm up")
            side.tap = stack.enter_context(ControlTap(control_socket(side.sandbox)))
        for i in range(warmup + sends):
            marks = measure_round(sides, agent, i, rng)
            if i >= warmup:
                rounds.append(marks)
    rows = [f"send rounds: {sends} measured after {warmup} warm-up, order shuffled (seed {seed})"]
    for side in sides:
        if len(sides) > 1:
            rows.append(f"== {side.label}")
        rows += side_rows(side, rounds)
    if len(sides) == 2:
        base, branch = (side.label for side in sides)
        # The branch's figure less the base's, inside each round.
        adds = per_round(
            rounds,
            [f"{branch}:send", f"{base}:raw", f"{base}:cli"],
            [f"{branch}:raw", f"{branch}:cli", f"{base}:send"],
        )
        wires = per_round(rounds, [f"{branch}:wire"], [f"{base}:wire"])
        rows += [
            f"== {branch} - {base}, per round",
            f"the host adds             {spread(adds).ms()}",
            f"the host's share, tapped  {spread(wires).ms()}",
        ]
    return rows


def control_socket(sandbox: Sandbox) -> Path:
    return sandbox.home / "data" / "run" / "control.sock"


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (an agent's own children: node, its tools)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        below = [child for child, _ in children(todo.pop())]
        found += below
        todo += below
    return found


def seed_routes(db_path: Path, agent: str, cwd: Path, known: int) -> list[str]:
    """``known`` tasks, each current on a ``cli:`` route of its own; their ids."""
    now = time.time()
    ids = [uuid.uuid4().hex[:12] for _ in range(known)]
    with sqlite3.connect(db_path) as db:
        db.executemany(
            "INSERT INTO tasks (id, agent, cwd, runtime_kind, created_at, updated_at) "
            "VALUES (?, ?, ?, 'acp', ?, ?)",
            [(task_id, agent, str(cwd), now, now) for task_id in ids],
        )
        db.executemany(
            "INSERT INTO routes (route_key, current_task_id, updated_at) VALUES (?, ?, ?)",
            [(f"cli:{task_id}", task_id, now) for task_id in ids],
        )
    return ids


def bench_rss(sandbox: Sandbox, agent: str, known: int, active: int) -> list[str]:
    run(sandbox, "server", "stop")
    db_path = sandbox.home / "data" / "robota.sqlite"
    ids = seed_routes(db_path, agent, sandbox.cwd, known)
    run(sandbox, "server", "start")
    pid = host_pid(sandbox)
    empty_kib = rss_kib(pid)
    socket = resolve_profile({"ROBOTA_HOME": str(sandbox.home)}).control_socket

    def send(task_id: str, text: str) -> list[str]:
        with ControlClient(socket, timeout=120) as client:
            sent = client.call("task.send", {"task": task_id, "text": text, "wait": True})
        return [turn["final"] for turn in sent["turns"]]

    # A command needs no agent: one turn, so the idle host has its agent running as in use. It
    # goes first, and the status is read on the socket right after the commands: a route is
    # passivated after 5 s of quiet, which a turn and a CLI start can outlast on a loaded
    # machine, and then fewer routes than were made active would be counted.
    if send(ids[0], "one turn") != ["ECHO: one turn"]:
        raise SystemExit("the host's turn did not answer ECHO: one turn")
    for task_id in ids[:active]:
        send(task_id, "/status")
    loaded = time.monotonic()
    with ControlClient(socket, timeout=120) as client:
        status = client.call("server.status")
    time.sleep(max(0.0, loaded + 2.0 - time.monotonic()))
    host_kib = rss_kib(pid)
    agent_pids = [a["pid"] for a in status["agents"] if a["pid"]]
    agents_kib = sum(rss_kib(p) for a in agent_pids for p in [a, *descendants(a)])
    time.sleep(max(0.0, loaded + 12.0 - time.monotonic()))
    quiet_kib = rss_kib(pid)
    _, out = run(sandbox, "server", "status", "--json")
    quiet = json.loads(out)["routes"]
    return [
        f"routes known / active     {status['routes']['known']} / {status['routes']['active']}",
        f"host RSS at start         {empty_kib / 1024:7.1f} MB",
        f"host RSS, idle            {host_kib / 1024:7.1f} MB  target < 60 MB: "
        f"{verdict(host_kib / 1024, 60)}",
        f"host RSS, idle 12 s       {quiet_kib / 1024:7.1f} MB  ({quiet['active']} routes active)",
        f"its agent's processes     {agents_kib / 1024:7.1f} MB (apart; pid {agent_pids})",
    ]


def checkout_path(checkout: Path) -> str:
    """``PYTHONPATH`` running another checkout's sources with this venv (its packages' ``src``
    first: the editable installs' finders come after the path)."""
    sources = sorted(checkout.resolve().glob("packages/*/src"))
    if not sources:
        raise SystemExit(f"{checkout}: no packages/*/src (not a robota checkout)")
    return ":".join(str(src) for src in sources)


def stop_host(sandbox: Sandbox) -> None:
    subprocess.run(
        sandbox.robota("server", "stop"),
        check=False,
        env=sandbox.env,
        capture_output=True,
        timeout=60,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="2 starts, 1 + 3 send rounds, 1 000 routes of which 10 active",
    )
    parser.add_argument("--sends", type=int, default=40, help="measured send rounds")
    parser.add_argument("--warmup", type=int, default=5, help="send rounds not counted")
    parser.add_argument("--rss-only", action="store_true", help="the idle RSS part alone")
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13, help="the rounds' shuffle")
    parser.add_argument("--agent", default="claude-agent-acp")
    parser.add_argument(
        "--base",
        type=Path,
        metavar="CHECKOUT",
        help="A/B the send against another checkout's sources (its host beside this one's, "
        "rounds interleaved); start and RSS are then not measured",
    )
    args = parser.parse_args()
    sends, warmup, starts = (3, 1, 2) if args.quick else (args.sends, args.warmup, args.starts)
    known, active = (1_000, 10) if args.quick else (KNOWN_ROUTES, ACTIVE_ROUTES)
    print(
        f"host: agent {args.agent}, {starts} starts, {sends} sends, python {sys.version.split()[0]}"
        + (f", A/B against {args.base}" if args.base else "")
    )
    print(f"load average at start: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="rb-host-", dir="/tmp") as tmp, fake_model() as url:
        sides = [Side("branch", Sandbox(Path(tmp) / "branch", url, [args.agent], tap=True))]
        if args.base is not None:
            base = Sandbox(
                Path(tmp) / "base",
                url,
                [args.agent],
                tap=True,
                pythonpath=checkout_path(args.base),
            )
            sides.insert(0, Side("base", base))
        sandbox = sides[-1].sandbox
        try:
            rows = [] if args.base or args.rss_only else bench_start(sandbox, args.agent, starts)
            for side in sides:
                run(side.sandbox, "server", "start")
            if not args.rss_only:
                rows += bench_send(sides, args.agent, sends, warmup, args.seed)
            if args.base is None:
                rows += bench_rss(sandbox, args.agent, known, active)
        finally:
            for side in sides:
                stop_host(side.sandbox)
    for row in rows:
        print(row)
    print(f"load average at end: {load_average()}")


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


if __name__ == "__main__":
    main()
