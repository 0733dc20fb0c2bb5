"""What a route does with a line of user input: the turn-and-message rules, as a pure function.

* plain text with no current task starts one (its first prompt is the text);
* plain text while a turn runs steers it when the agent can take input mid-turn (App Server),
  and is queued otherwise (ACP);
* plain text while prompts wait in the queue joins the queue, so nothing overtakes them;
* ``/nosteer TEXT`` always queues (and runs at once when nothing is ahead of it);
* any other resolved command is the engine's to run; a rejected command line is answered with
  its reason and never reaches the agent;
* a steer that lost the race with the turn's end comes back as ``SteerRefused`` and becomes
  the *next* prompt, ahead of older queued ones, because the user typed it during that turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._commands import COMMANDS, CommandSpec, Invocation, NotACommand, Rejected, resolve

__all__ = [
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


@dataclass(frozen=True, slots=True)
class RouteState:
    has_task: bool
    running_turn: str | None
    """The id of the turn running on the route's current task, if any."""
    agent_steers: bool
    queued: int = 0
    busy: bool = False
    """A turn is starting or finishing: there is nothing to steer, and a prompt must wait."""


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    new_task: bool = False


@dataclass(frozen=True, slots=True)
class SteerRunningTurn:
    turn_id: str
    text: str


@dataclass(frozen=True, slots=True)
class Enqueue:
    text: str
    front: bool = False


@dataclass(frozen=True, slots=True)
class RunCommand:
    invocation: Invocation


@dataclass(frozen=True, slots=True)
class Say:
    """Answer on the route, touch nothing else."""

    text: str


Decision = Prompt | SteerRunningTurn | Enqueue | RunCommand | Say


def decide(state: RouteState, text: str, commands: tuple[CommandSpec, ...] = COMMANDS) -> Decision:
    resolved = resolve(text, commands)
    if isinstance(resolved, Rejected):
        return Say(resolved.message)
    if isinstance(resolved, Invocation):
        if resolved.name != "nosteer":
            return RunCommand(resolved)
        if not resolved.args:
            return Say("/nosteer needs the text to queue")
        return Enqueue(resolved.args)
    return _plain(state, resolved)


def _plain(state: RouteState, text: NotACommand) -> Decision:
    if not text.text.strip():
        return Say("nothing to send")
    if not state.has_task:
        return Prompt(text.text, new_task=True)
    if state.running_turn is not None:
        if state.agent_steers:
            return SteerRunningTurn(state.running_turn, text.text)
        return Enqueue(text.text)
    if state.queued or state.busy:
        return Enqueue(text.text)
    return Prompt(text.text)


def after_steer_refused(text: str) -> Enqueue:
    """The steer arrived after its turn ended: the text is the next prompt."""
    return Enqueue(text, front=True)
