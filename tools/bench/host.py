"""The host (``robota server``): its start, a ``task send --wait`` round trip, its idle RSS.

    .venv/bin/python tools/bench/host.py [--quick] [--rss-only] [--sends N] [--agent NAME]

One real agent (default claude-agent-acp), isolated and offline against the fake model, in a
sandboxed profile (``_real.Sandbox``), and the same agent set up again for the raw client.

* start: ``robota server start`` (no chat transport) from spawn until it exits, which it does
  once the host reported ready, then ``server stop``; beside it, in the same run and
  interleaved, ``robota -p`` from spawn to exit for one turn, the start a user knows today.
  Target: ready within 1 s.
* send: on a running host, ``robota task send TASK TEXT --wait`` from spawn to exit, beside the
  raw client's turn on its own warm agent (``tools/raw_client.py``: ``session/prompt`` until its
  answer) and one CLI start, N rounds (default 20) interleaved. The CLI start is ``robota task
  status TASK --json``: the same process start, configuration, store read and name resolution
  as ``task send``, without the host (``robota --version`` is printed beside it). What the host
  adds is send - raw turn - CLI start (medians). Target: within 5 ms.
* idle RSS: the host's resident memory once the store knows 10 000 routes (tasks bound to
  ``cli:`` routes, written straight into SQLite) of which 100 are active (each told ``/status``
  by ``task.send`` on the host's control socket, the request ``robota task send --wait``
  makes, so its route actor is alive; one of them runs a turn, so its agent runs too), read
  from /proc 2 s after the load, and again 12 s after it (the host passivates a route with
  nothing in flight after 5 s of quiet); the agent's processes are counted apart
  (``--quick``: 1 000 routes, 10 active; ``--rss-only``: this part alone). Target: under 60 MB.
  The load goes straight to the socket (about 10 ms a request) rather than through 100 CLI
  processes (0.2-0.5 s each), so every route it made active still is when it is counted.

Every answer is checked (``ECHO: <prompt>``); the host is stopped and no process is left.
For an A/B, run it with ``PYTHONPATH=OLD/packages/cli/src:OLD/packages/core/src:...`` (another
checkout's sources first; the sandbox passes ``PYTHONPATH`` through), then without.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from _real import Sandbox, children, fake_model, median, rss_kib, verdict

from robota.core.config import resolve_profile
from robota.core.control import ControlClient

KNOWN_ROUTES = 10_000
ACTIVE_ROUTES = 100


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


def bench_send(sandbox: Sandbox, agent: str, sends: int) -> list[str]:
    pair = sandbox.pairs[agent]
    _, out = run(sandbox, "task", "new", "--agent", agent, "--json")
    task_id = json.loads(out)["task"]["id"]
    _, out = run(sandbox, "task", "send", task_id, "warm up", "--wait")
    raw = pair.raw_agent()
    raw.start()
    try:
        raw.open(pair.raw_cwd)
        raw.turn("warm up")
        send_times: list[float] = []
        raw_times: list[float] = []
        cli_times: list[float] = []
        version_times: list[float] = []
        for i in range(sends):
            seconds, out = run(sandbox, "task", "send", task_id, f"send {i}", "--wait")
            if out.strip() != f"ECHO: send {i}":
                raise SystemExit(f"task send --wait printed {out!r}")
            send_times.append(seconds)
            started = time.perf_counter()
            turn = raw.turn(f"send {i}")
            raw_times.append(time.perf_counter() - started)
            if turn.text != f"ECHO: send {i}":
                raise SystemExit(f"the raw client heard {turn.text!r}")
            cli_times.append(run(sandbox, "task", "status", task_id, "--json")[0])
            version_times.append(run(sandbox, "--version")[0])
    finally:
        raw.close()
    added = median(send_times) - median(raw_times) - median(cli_times)
    return [
        f"task send --wait          {median(send_times) * 1e3:7.1f} ms",
        f"raw client's turn         {median(raw_times) * 1e3:7.1f} ms",
        f"one CLI start (task status) {median(cli_times) * 1e3:5.1f} ms  "
        f"(robota --version: {median(version_times) * 1e3:.1f} ms)",
        f"the host adds             {added * 1e3:7.1f} ms  target <= 5 ms: {verdict(added, 0.005)}",
    ]


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

    for task_id in ids[:active]:
        send(task_id, "/status")
    # A command needs no agent: one turn, so the idle host has its agent running as in use.
    if send(ids[0], "one turn") != ["ECHO: one turn"]:
        raise SystemExit("the host's turn did not answer ECHO: one turn")
    loaded = time.monotonic()
    _, out = run(sandbox, "server", "status", "--json")
    status = json.loads(out)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="2 starts, 3 sends, 1 000 routes of which 10 active"
    )
    parser.add_argument("--rss-only", action="store_true", help="the idle RSS part alone")
    parser.add_argument("--sends", type=int, default=20)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--agent", default="claude-agent-acp")
    args = parser.parse_args()
    sends, starts = (3, 2) if args.quick else (args.sends, args.starts)
    known, active = (1_000, 10) if args.quick else (KNOWN_ROUTES, ACTIVE_ROUTES)
    print(
        f"host: agent {args.agent}, {starts} starts, {sends} sends, python {sys.version.split()[0]}"
    )
    with tempfile.TemporaryDirectory(prefix="rb-host-", dir="/tmp") as tmp, fake_model() as url:
        sandbox = Sandbox(Path(tmp), url, [args.agent], tap=False)
        try:
            rows = [] if args.rss_only else bench_start(sandbox, args.agent, starts)
            run(sandbox, "server", "start")
            if not args.rss_only:
                rows += bench_send(sandbox, args.agent, sends)
            rows += bench_rss(sandbox, args.agent, known, active)
        finally:
            subprocess.run(
                sandbox.robota("server", "stop"),
                check=False,
                env=sandbox.env,
                capture_output=True,
                timeout=60,
            )
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
