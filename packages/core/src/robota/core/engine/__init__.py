"""robota.core.engine: conversations as actors (routes, tasks, turns, queues, commands).

Being built; today it offers the pure command resolver.
"""

from ._commands import COMMANDS, CommandSpec, Invocation, NotACommand, Rejected, resolve

__all__ = [
    "COMMANDS",
    "CommandSpec",
    "Invocation",
    "NotACommand",
    "Rejected",
    "resolve",
]
