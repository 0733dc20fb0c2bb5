"""robota.core.engine: conversations as actors (routes, tasks, turns, queues, commands).

Being built; today it offers the pure parts: the command resolver and the input policy.
"""

from ._commands import COMMANDS, CommandSpec, Invocation, NotACommand, Rejected, resolve
from ._policy import (
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

__all__ = [
    "COMMANDS",
    "CommandSpec",
    "Invocation",
    "NotACommand",
    "Rejected",
    "resolve",
    # the input policy
    "Decision",
    "Enqueue",
    "Prompt",
    "RouteState",
    "RunCommand",
    "Say",
    "SteerRunningTurn",
    "after_steer_refused",
    "decide",
]
