"""The turn-and-message rules: new task, prompt, steer, queue, commands, rejected lines."""

from __future__ import annotations

import pytest

from robota.core.engine import (
    Decision,
    Enqueue,
    Prompt,
    RouteState,
    RunCommand,
    Say,
    SteerRunningTurn,
    after_steer_refused,
    decide,
)

IDLE = RouteState(has_task=True, running_turn=None, agent_steers=True)
NO_TASK = RouteState(has_task=False, running_turn=None, agent_steers=True)
APP_SERVER_BUSY = RouteState(has_task=True, running_turn="t1", agent_steers=True)
ACP_BUSY = RouteState(has_task=True, running_turn="t1", agent_steers=False)
WAITING = RouteState(has_task=True, running_turn=None, agent_steers=False, queued=2)


@pytest.mark.parametrize(
    ("state", "text", "expected"),
    [
        (NO_TASK, "fix it", Prompt("fix it", new_task=True)),
        (IDLE, "fix it", Prompt("fix it")),
        (APP_SERVER_BUSY, "also this", SteerRunningTurn("t1", "also this")),
        (ACP_BUSY, "also this", Enqueue("also this")),
        (WAITING, "and this", Enqueue("and this")),
        (APP_SERVER_BUSY, "/nosteer later", Enqueue("later")),
        (APP_SERVER_BUSY, "/ns later", Enqueue("later")),
        (IDLE, "/nosteer", Say("/nosteer needs the text to queue")),
        (IDLE, "   ", Say("nothing to send")),
        (IDLE, "//etc is a directory", Prompt("/etc is a directory")),
    ],
)
def test_plain_text_and_nosteer(state: RouteState, text: str, expected: Decision) -> None:
    assert decide(state, text) == expected


def test_commands_go_to_the_engine_and_bad_lines_are_answered_not_sent() -> None:
    stop = decide(APP_SERVER_BUSY, "/stop")
    assert isinstance(stop, RunCommand) and stop.invocation.name == "stop"
    unknown = decide(APP_SERVER_BUSY, "/frobnicate")
    assert isinstance(unknown, Say) and "unknown command /frobnicate" in unknown.text
    ambiguous = decide(IDLE, "/st")
    assert isinstance(ambiguous, Say) and "/status, /stop" in ambiguous.text


def test_a_steer_that_lost_the_race_is_the_next_prompt() -> None:
    assert after_steer_refused("late words") == Enqueue("late words", front=True)
