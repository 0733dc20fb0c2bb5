"""Slash commands: which command a line of user text names, before anything reaches an agent.

Resolution, in order: an exact command name; else the one command whose name starts with what
was typed; else a registered initialism of a compound name (``fg`` forkgroup, ``ng`` newgroup,
``ns`` nosteer). Several prefix matches are rejected with the candidates; an unknown command is
rejected and never sent to the agent as a prompt. A line starting with ``//`` is a prompt that
starts with ``/`` (the escape for text like ``/usr/bin is where...``).

Pure: no I/O, no engine state; the engine decides what a resolved command does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "COMMANDS",
    "CommandSpec",
    "Invocation",
    "NotACommand",
    "Rejected",
    "resolve",
]


@dataclass(frozen=True, slots=True)
class CommandSpec:
    name: str
    summary: str
    usage: str = ""
    initialism: str | None = None


@dataclass(frozen=True, slots=True)
class Invocation:
    """``/name args``: the command resolved, and the rest of the line, stripped."""

    name: str
    args: str
    typed: str
    """What the user typed for the name (a prefix or an initialism), for messages."""


@dataclass(frozen=True, slots=True)
class NotACommand:
    """Plain text for the agent (``//`` already unescaped)."""

    text: str


@dataclass(frozen=True, slots=True)
class Rejected:
    message: str
    candidates: tuple[str, ...] = ()


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec("new", "start a new task", "[--dir PATH | --nodir] [--agent NAME] [PROMPT]"),
    CommandSpec("sessions", "list tasks and agent threads, newest first", "[SEARCH]"),
    CommandSpec("switch", "make another task current", "N|TASK"),
    CommandSpec("status", "the current task, its agent, settings and turn"),
    CommandSpec("stop", "interrupt the running turn"),
    CommandSpec("fork", "a new task from the latest completed turn", "[TITLE]"),
    CommandSpec(
        "turns", "completed turns, newest first; reset to one", "[PAGE | show TURN | reset TURN]"
    ),
    CommandSpec("model", "the task's model"),
    CommandSpec("thinking", "the task's reasoning effort"),
    CommandSpec("permissions", "the task's permission mode"),
    CommandSpec("provider", "the task's model provider (agents that take one)"),
    CommandSpec("nosteer", "queue TEXT for after the running turn", "TEXT", initialism="ns"),
    CommandSpec("queue", "the queued prompts; cancel one", "[cancel N]"),
    CommandSpec("rename", "rename the current task", "TITLE"),
    CommandSpec("help", "the commands"),
)


def resolve(
    text: str, commands: Iterable[CommandSpec] = COMMANDS
) -> Invocation | NotACommand | Rejected:
    """What ``text`` is: a command invocation, a prompt, or a rejected command line."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return NotACommand(text)
    if stripped.startswith("//"):
        return NotACommand(stripped[1:])
    parts = stripped[1:].split(maxsplit=1)
    word = parts[0] if parts else ""
    rest = parts[1].strip() if len(parts) > 1 else ""
    by_name: Mapping[str, CommandSpec] = {c.name: c for c in commands}
    typed = word.lower()
    if not typed:
        return Rejected("a slash needs a command name; /help lists them")
    if typed in by_name:
        return Invocation(typed, rest, word)
    prefixed = sorted(name for name in by_name if name.startswith(typed))
    if len(prefixed) == 1:
        return Invocation(prefixed[0], rest, word)
    if len(prefixed) > 1:
        listed = ", ".join(f"/{name}" for name in prefixed)
        return Rejected(f"/{word} is ambiguous: {listed}", tuple(prefixed))
    for spec in by_name.values():
        if spec.initialism == typed:
            return Invocation(spec.name, rest, word)
    return Rejected(
        f"unknown command /{word}; /help lists the commands "
        f"(to send text that starts with a slash, start it with //)"
    )
