"""A wire tap between a client and an agent: relays JSON-RPC lines and stamps each one.

    python3 -I -S tools/wire_tap.py LOG -- COMMAND [ARG ...]

Put in front of an agent's command (in robota's config, or as the raw client's command), it
starts COMMAND with the same environment, working directory, stderr and process group (so the
client's group signals reach both), copies stdin to the agent and the agent's stdout back, line
by line, and appends to LOG one JSON object per line that crossed:

    {"t": 12.345678, "event": "start", "pid": 123}            when the tap started
    {"t": ..., "dir": ">", "id": 3, "method": "turn/start"}   client -> agent
    {"t": ..., "dir": "<", "id": 3}                           agent -> client (a response)

``t`` is ``time.perf_counter()`` (CLOCK_MONOTONIC on Linux, the same clock in every process),
taken the moment the line was read, before it is forwarded; the line is parsed and logged after
forwarding, so the tap adds one pipe hop each way and nothing more to the path. Standard library
only; ``-I -S`` keeps its start to a few milliseconds. Exits with the agent's exit code.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any


def record(log: IO[str], lock: threading.Lock, stamp: float, direction: str, line: bytes) -> None:
    entry: dict[str, Any] = {"t": stamp, "dir": direction}
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if isinstance(message, dict):
        for key in ("id", "method"):
            if key in message:
                entry[key] = message[key]
    with lock:
        log.write(json.dumps(entry) + "\n")
        log.flush()


def relay(
    source: IO[bytes], sink: IO[bytes], direction: str, log: IO[str], lock: threading.Lock
) -> None:
    try:
        for line in iter(source.readline, b""):
            stamp = time.perf_counter()
            try:
                sink.write(line)
                sink.flush()
            except (BrokenPipeError, ValueError):
                break  # the other side is gone
            record(log, lock, stamp, direction, line)
    finally:
        try:
            sink.close()
        except (BrokenPipeError, ValueError):
            pass  # already closed


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        sys.stderr.write("usage: wire_tap.py LOG -- COMMAND [ARG ...]\n")
        return 2
    started = time.perf_counter()
    lock = threading.Lock()
    with Path(argv[0]).open("a", encoding="utf-8") as log:
        agent = subprocess.Popen(argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        with lock:
            log.write(json.dumps({"t": started, "event": "start", "pid": agent.pid}) + "\n")
            log.flush()
        assert agent.stdin is not None and agent.stdout is not None
        inbound = threading.Thread(
            target=relay, args=(sys.stdin.buffer, agent.stdin, ">", log, lock), daemon=True
        )
        inbound.start()
        relay(agent.stdout, sys.stdout.buffer, "<", log, lock)
        return agent.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
