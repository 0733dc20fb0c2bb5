"""The host's published state and the decision "is a host running?", as tables."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from robota.core.control import HostState, Presence, judge_presence, parse_host_state

STATE = HostState(
    pid=4242,
    started_at="2026-12-01T21:30:00+00:00",
    version="0.3.0",
    profile="/home/u/.config/robota",
    socket="/home/u/.local/share/robota/run/control.sock",
)
GOOD: dict[str, Any] = json.loads(STATE.to_json())


def test_the_state_round_trips() -> None:
    assert parse_host_state(STATE.to_json()) == STATE
    assert GOOD == {
        "pid": 4242,
        "started_at": "2026-12-01T21:30:00+00:00",
        "version": "0.3.0",
        "profile": "/home/u/.config/robota",
        "socket": "/home/u/.local/share/robota/run/control.sock",
    }


def test_this_process_state_is_utc_to_the_second() -> None:
    now = datetime(2026, 12, 1, 23, 30, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    state = HostState.of_this_process(
        version="1", profile=Path("/p"), socket=Path("/p/run/control.sock"), now=now
    )
    assert state.started_at == "2026-12-01T21:30:05+00:00"
    assert datetime.fromisoformat(state.started_at).tzinfo == UTC
    assert (state.profile, state.socket) == ("/p", "/p/run/control.sock")
    assert state.pid > 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not JSON"),
        ("[]", "expected a JSON object, found list"),
        (json.dumps({**GOOD, "pid": "4242"}), "field 'pid' must be int, found str"),
        (json.dumps({**GOOD, "pid": True}), "field 'pid' must be int, found bool"),
        (json.dumps({**GOOD, "pid": 0}), "field 'pid' must be positive, found 0"),
        (
            json.dumps({k: v for k, v in GOOD.items() if k != "socket"}),
            "field 'socket' must be str, found nothing",
        ),
        (
            json.dumps({**GOOD, "started_at": "yesterday"}),
            "field 'started_at' must be an ISO 8601 time, found 'yesterday'",
        ),
    ],
)
def test_a_bad_state_file_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_host_state(text)


@pytest.mark.parametrize(
    ("observed", "presence", "reason"),
    [
        ((False, None, None, False), Presence.NOT_RUNNING, "no host holds the lock"),
        ((False, STATE, None, True), Presence.NOT_RUNNING, "state left by pid 4242 is stale"),
        ((False, STATE, None, False), Presence.NOT_RUNNING, "state left by pid 4242 is stale"),
        ((False, None, "host.json: not JSON", False), Presence.NOT_RUNNING, "no host holds"),
        ((True, None, None, False), Presence.STARTING, "has published no state yet"),
        ((True, None, "host.json: not JSON", False), Presence.STARTING, "host.json: not JSON"),
        ((True, STATE, None, False), Presence.STARTING, "pid 4242 is gone"),
        ((True, STATE, None, True), Presence.RUNNING, "pid 4242 holds the host lock"),
    ],
)
def test_presence_table(
    observed: tuple[bool, HostState | None, str | None, bool], presence: Presence, reason: str
) -> None:
    """``observed``: the lock is held, the state read, why none was, the state's pid lives."""
    lock_held, state, problem, alive = observed
    verdict = judge_presence(
        lock_held=lock_held, state=state, state_problem=problem, state_pid_alive=alive
    )
    assert verdict.presence is presence
    assert verdict.running is (presence is Presence.RUNNING)
    assert verdict.state == (state if presence is Presence.RUNNING else None)
    assert reason in verdict.reason


def test_a_zombie_is_not_alive_and_a_running_process_is() -> None:
    """A detached host's parent may never reap it: its zombie must not keep a stale state
    file looking alive (the next ``server start`` would take it for a running host)."""
    import subprocess
    import time

    from robota.core.control import pid_alive

    running = subprocess.Popen(["sleep", "30"])
    ended = subprocess.Popen(["true"])
    try:
        assert pid_alive(running.pid)
        deadline = time.monotonic() + 30
        while pid_alive(ended.pid) and time.monotonic() < deadline:
            time.sleep(0.01)  # not reaped: it stays a zombie until ``wait`` below
        assert not pid_alive(ended.pid)
        assert Path(f"/proc/{ended.pid}").exists(), "the zombie is still there, unreaped"
    finally:
        running.kill()
        running.wait()
        ended.wait()
