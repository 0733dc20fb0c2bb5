"""Background sessions (``robota session``): start until ready, list, stop, and idle RSS.

    .venv/bin/python tools/bench/sessions.py [--quick] [--rounds N] [--agent NAME]

One real agent (default claude-agent-acp), isolated and offline against the fake model, in a
sandboxed profile (``_real.Sandbox``).

* start: ``robota session start --background --json`` from spawn until it exits, which it does
  once the session registered and answered ready; beside it, in the same run and interleaved,
  ``robota --version`` (the CLI's own start) as the baseline.
* list: ``robota session list --json`` with the sessions started so far alive (each row asks
  its owner over its socket), against the same baseline.
* stop: ``robota session stop ID`` until the process is gone.
* idle RSS: one session's resident memory after one turn (``session.send`` with ``wait`` over
  its control socket, answer checked), read from /proc after 2 s idle; its agent's processes
  are counted apart. Target: under 60 MB.

* attach: connect until the session's hello (``session.attach``), a command typed through the
  attached connection to its first notice, and a re-attach after a disconnect, beside a plain
  ``session.status`` round trip on the same socket (``--quick``: 20 rounds).
Every session is stopped and no process is left.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _real import Sandbox, fake_model, median, rss_kib, verdict

from host import descendants, run
from robota.core.control import ControlClient, Registration, parse_registration


def ms(values: list[float]) -> str:
    return f"{median(values) * 1e3:7.0f} ms  ({min(values) * 1e3:.0f}-{max(values) * 1e3:.0f})"


def bench(sandbox: Sandbox, agent: str, rounds: int) -> list[str]:
    starts: list[float] = []
    lists: list[float] = []
    stops: list[float] = []
    versions: list[float] = []
    ids: list[str] = []
    for _ in range(rounds):
        seconds, out = run(sandbox, "session", "start", "--background", "--agent", agent, "--json")
        starts.append(seconds)
        ids.append(json.loads(out)["id"])
        versions.append(run(sandbox, "--version")[0])
        seconds, out = run(sandbox, "session", "list", "--json")
        lists.append(seconds)
        if sorted(r["id"] for r in json.loads(out) if r["state"] == "idle") != sorted(ids):
            raise SystemExit(f"session list did not show every session idle: {out}")
    registration = parse_registration(
        (sandbox.home / "data" / "run" / "sessions" / f"{ids[0]}.json").read_bytes()
    )
    empty_kib = rss_kib(registration.pid)
    with ControlClient(Path(registration.socket), timeout=120) as client:
        sent = client.call(
            "session.send",
            {"generation": registration.generation, "text": "one turn", "wait": True},
        )
    if [t["final"] for t in sent["turns"]] != ["ECHO: one turn"]:
        raise SystemExit(f"the session answered {sent}")
    rows_attach = bench_attach(registration, rounds * 10)
    time.sleep(2.0)
    session_kib = rss_kib(registration.pid)
    agents_kib = sum(rss_kib(p) for p in descendants(registration.pid))
    for session_id in ids:
        stops.append(run(sandbox, "session", "stop", session_id)[0])
    return [
        f"session start until ready {ms(starts)}  ratio to robota --version "
        f"{median(starts) / median(versions):.1f}",
        f"session list ({rounds} max)     {ms(lists)}  ratio to robota --version "
        f"{median(lists) / median(versions):.1f}",
        f"robota --version          {ms(versions)}",
        f"session stop until gone   {ms(stops)}",
        f"session RSS before a turn {empty_kib / 1024:7.1f} MB",
        f"session RSS, idle         {session_kib / 1024:7.1f} MB  target < 60 MB: "
        f"{verdict(session_kib / 1024, 60)}",
        f"its agent's processes     {agents_kib / 1024:7.1f} MB (apart)",
        *rows_attach,
    ]


def attach(registration: Registration) -> tuple[socket.socket, float]:
    """An attach connection and the seconds from connect to the session's hello."""
    started = time.perf_counter()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(registration.socket)
    request = {"id": 1, "type": "session.attach", "generation": registration.generation}
    sock.sendall(json.dumps(request).encode() + b"\n")
    if json.loads(read_line(sock)).get("type") != "hello":
        raise SystemExit("the session refused the attach")
    return sock, time.perf_counter() - started


def read_line(sock: socket.socket) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(1)
        if not chunk:
            raise SystemExit("the session closed the connection")
        data += chunk
    return data


def bench_attach(registration: Registration, rounds: int) -> list[str]:
    """Attach (connect until hello), a prompt to its first notice, and a re-attach after a
    disconnect, beside a plain ``session.status`` round trip on the same socket."""
    statuses: list[float] = []
    attaches: list[float] = []
    firsts: list[float] = []
    for i in range(rounds):
        started = time.perf_counter()
        with ControlClient(Path(registration.socket), timeout=60) as client:
            client.call("session.status")
        statuses.append(time.perf_counter() - started)
        sock, seconds = attach(registration)
        attaches.append(seconds)
        started = time.perf_counter()
        sock.sendall(json.dumps({"type": "submit", "prompt": f"/status {i}"}).encode() + b"\n")
        read_line(sock)  # the route's first notice for it (its reply to the command)
        firsts.append(time.perf_counter() - started)
        sock.close()  # a disconnect; the next round re-attaches
    return [
        f"attach until hello        {median(attaches) * 1e3:7.2f} ms  ratio to session.status "
        f"{median(attaches) / median(statuses):.1f}",
        f"re-attach after a disconnect {median(attaches[1:]) * 1e3:4.2f} ms",
        f"attached: command to first notice {median(firsts) * 1e3:.2f} ms",
        f"session.status round trip {median(statuses) * 1e3:7.2f} ms",
        "resume: not measured (no seq resume buffer on this carrier yet)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 rounds")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--agent", default="claude-agent-acp")
    args = parser.parse_args()
    rounds = 2 if args.quick else args.rounds
    print(f"sessions: agent {args.agent}, {rounds} rounds, python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="rb-ses-", dir="/tmp") as tmp, fake_model() as url:
        sandbox = Sandbox(Path(tmp), url, [args.agent], tap=False)
        try:
            rows = bench(sandbox, args.agent, rounds)
        finally:
            _, out = run(sandbox, "session", "list", "--json")
            for row in json.loads(out):
                if row["state"] != "unknown":
                    subprocess.run(
                        sandbox.robota("session", "stop", row["id"]),
                        check=False,
                        env=sandbox.env,
                        capture_output=True,
                        timeout=60,
                    )
    for row in rows:
        print(row)


if __name__ == "__main__":
    main()
