"""The real engine in a process of its own, for the tests that SIGKILL it (``test_sigkill.py``).

    python engine_process.py DB TMP [--agent-delay SECONDS] [--agent-env NAME=VALUE ...]

Runs ``Engine`` on the SQLite file DB with one agent, the fault ACP agent
(``tests/support/fault_agent.py``, its pids file ``TMP/pids``, its state and home under TMP),
and recovery on for the one route it serves, ``ROUTE`` (a stable key, so every start takes over
what the last one left).

* stdin: one JSON object per line, ``{"input": "text"}``; each becomes ``UserInput(text)`` on
  the route. End of input stops the engine cleanly and the process exits 0.
* stdout: one JSON object per line, written and flushed before the engine's delivery returns,
  so whatever the engine delivered before a SIGKILL is in the pipe. First ``{"type": "Ready"}``
  once recovery was planned and input is accepted, then every notice of the route:
  ``{"type": "<notice class>", "at": <time.time()>, ...its fields}``; a ``TurnUpdate`` carries
  only its event's class name (``"event"``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

import trio

from robota.core import AgentLaunch, fields_of, is_value
from robota.core.engine import Engine, EngineAgent, TaskDefaults, TurnUpdate, UserInput
from robota.core.testing import FAST_BACKOFF
from robota.runtimes import agent_host

ROUTE = "console:sigkill"
FAULT_AGENT = Path(__file__).resolve().parents[1] / "support" / "fault_agent.py"

_out = threading.Lock()


def emit(kind: str, **fields: Any) -> None:
    line = json.dumps({"type": kind, "at": time.time(), **fields}, default=str)
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def plain(value: Any) -> Any:
    """``dataclasses.asdict`` for records and dataclasses alike (the engine's notices are
    records): nested ones as dicts, tuples and lists item by item."""
    if is_value(value):
        return {name: plain(getattr(value, name)) for name, _ in fields_of(type(value))}
    if isinstance(value, list | tuple):
        return type(value)(plain(item) for item in value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


def deliver(notice: object) -> None:
    """The route's front end: called on actor threads, returns once the line is in the pipe."""
    if isinstance(notice, TurnUpdate):
        emit(
            "TurnUpdate",
            task_id=notice.task_id,
            attempt_id=notice.attempt_id,
            event=type(notice.event).__name__,
        )
    elif is_value(notice):
        emit(type(notice).__name__, **plain(notice))
    else:
        emit("Unknown", repr=repr(notice))


def build(db: Path, tmp: Path, agent_env: dict[str, str]) -> Engine:
    launch = AgentLaunch(
        name="fault",
        kind="acp",
        command=sys.executable,
        args=(str(FAULT_AGENT),),
        env={
            "FAULT_AGENT_PIDS": str(tmp / "pids"),
            "FAULT_AGENT_STATE": str(tmp / "state"),
            **agent_env,
        },
        home=tmp / "home",
        config_path=tmp / "config.yaml",
    )
    host = agent_host(launch, acp=True, backoff=FAST_BACKOFF)
    return Engine(
        db,
        [EngineAgent("acp", host)],
        TaskDefaults(agent="fault", cwd=tmp),
        backoff=FAST_BACKOFF,
        recover=lambda key: key == ROUTE,
    )


def read_inputs(engine: Engine) -> None:
    for line in sys.stdin:
        if line.strip():
            engine.tell(ROUTE, UserInput(str(json.loads(line)["input"])))


async def serve(engine: Engine) -> None:
    engine.connect(ROUTE, deliver)
    async with trio.open_nursery() as nursery:
        await nursery.start(engine.run)
        emit("Ready")
        await trio.to_thread.run_sync(read_inputs, engine, abandon_on_cancel=True)
        nursery.cancel_scope.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("tmp", type=Path)
    parser.add_argument("--agent-delay", type=float, default=0.0)
    parser.add_argument("--agent-env", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    agent_env = dict(entry.split("=", 1) for entry in args.agent_env)
    if args.agent_delay:
        agent_env["FAULT_AGENT_DELAY"] = str(args.agent_delay)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    trio.run(serve, build(args.db, args.tmp, agent_env))


if __name__ == "__main__":
    main()
