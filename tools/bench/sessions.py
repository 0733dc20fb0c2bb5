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

Attach and resume latency are not measured: attach is not built yet.
Every session is stopped and no process is left.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _real import Sandbox, fake_model, median, rss_kib, verdict

from host import descendants, run
from robota.core.control import ControlClient, parse_registration


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
        "attach / resume latency   not measured: attach is not built yet",
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
