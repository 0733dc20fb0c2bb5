"""What ``robota server start`` must do with a chat transport that cannot connect, whatever
the platform: return within seconds with exit 0 (the host serves), name the transport with
its state and reason (no secret in it), ``server status`` showing the same, and ``task send
--wait`` answering meanwhile. The platform tests set the fault up and call this."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from .robota import Robota

START_WITHIN = 25.0
"""Seconds ``server start`` may take here: the host's own start on a loaded machine plus the
short settle wait; it used to take 45 s and fail."""


def start_serve_and_stop(
    robota: Robota,
    name: str,
    state: str,
    reason: str,
    secrets: Sequence[str],
    *,
    human: bool = False,
) -> None:
    """Start (``human``: as a person reads it, else ``--json``), check the transport ``name``
    is ``state`` with ``reason`` in its detail and none of ``secrets`` shown, that a turn
    answers, then stop (blocking: run it in a thread)."""
    began = time.monotonic()
    started = robota.run("server", "start", *(() if human else ("--json",)))
    took = time.monotonic() - began
    assert started.returncode == 0, (started.stdout, started.stderr)
    assert took < START_WITHIN, took
    assert not any(secret in started.stdout + started.stderr for secret in secrets)
    if human:
        serving, transports = started.stdout.splitlines()
        assert serving.startswith("host started (pid ") and serving.endswith("), serving")
        assert transports.startswith(f"transports: {name} {state} ("), transports
        assert reason in transports, transports
    else:
        answer = json.loads(started.stdout)
        assert (answer["started"], answer["running"], answer["ready"]) == (True, True, False)
        named(answer, name, state, reason, secrets)

    named(status(robota), name, state, reason, secrets)
    human = robota.run("server", "status")
    assert f"{name} {state} (" in human.stdout, human.stdout
    assert not any(secret in human.stdout for secret in secrets)

    created = robota.run("task", "new", "--json")
    assert created.returncode == 0, created.stderr
    task = json.loads(created.stdout)["task"]["id"]
    began = time.monotonic()
    sent = robota.run("task", "send", task, "hello", "--wait")
    assert (sent.returncode, sent.stdout) == (0, "ECHO: hello\n"), sent.stderr
    assert time.monotonic() - began < START_WITHIN

    named(status(robota), name, state, reason, secrets)  # it stays so, the host serving on
    stopped = robota.run("server", "stop", "--json")
    assert stopped.returncode == 0, stopped.stderr


def status(robota: Robota) -> dict[str, Any]:
    completed = robota.run("server", "status", "--json")
    assert completed.returncode == 0, completed.stderr
    return dict(json.loads(completed.stdout))


def named(
    status: dict[str, Any], name: str, state: str, reason: str, secrets: Sequence[str]
) -> None:
    (transport,) = status["transports"]
    assert (transport["name"], transport["state"]) == (name, state), status
    assert reason in transport["detail"], transport
    shown = json.dumps(status)
    assert not any(secret in shown for secret in secrets), "no secret in the status"
