"""What each slash command does to a route; replies go to the route's front end only.

Functions of ``RouteData``, pure: commands read the store through the route's read port and
write as effects; none waits for an agent. Settings commands (``/model``, ``/thinking``,
``/permissions``, ``/provider``) change the task, and forks inherit them.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._commands import COMMANDS, Invocation
from .._records import replace
from ..agents import PERMISSION_MODES
from ..store import CancelPrompt, UpdateTask
from ._requests import TaskSettings
from ._route_history import sessions, switch, turns
from ._route_state import RouteData
from ._route_tasks import fork_task, projectless_cwd
from ._route_turns import begin, interrupt

__all__ = ["run_command"]

EFFORTS = ("minimal", "low", "medium", "high", "xhigh")


def run_command(route: RouteData, invocation: Invocation) -> None:
    handler = _HANDLERS.get(invocation.name)
    if handler is None:  # a command the resolver knows but this engine does not run
        route.reply(f"/{invocation.name} is not available here", error=True)
        return
    handler(route, invocation.args)


def _help(route: RouteData, _args: str) -> None:
    width = max(len(c.name) + len(c.usage) for c in COMMANDS) + 2
    lines = [f"/{(c.name + ' ' + c.usage).strip():<{width}} {c.summary}" for c in COMMANDS]
    lines.append("Text that starts with // is sent to the agent with one slash.")
    route.reply("\n".join(lines))


def _new(route: RouteData, args: str) -> None:
    try:
        words = shlex.split(args)
    except ValueError as error:
        route.reply(f"/new: {error}", error=True)
        return
    cwd: Path | None = None
    agent: str | None = None
    prompt: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("--dir", "--agent"):
            if index + 1 >= len(words):
                route.reply(f"/new: {word} needs a value", error=True)
                return
            value = words[index + 1]
            index += 2
            if word == "--agent":
                agent = value
                continue
            cwd = Path(value).expanduser()
            if not cwd.is_absolute() and route.task is not None:
                cwd = Path(route.task.cwd) / cwd
            if not route.reads.is_dir(cwd):
                route.reply(f"/new: {cwd} is not a directory", error=True)
                return
            continue
        if word == "--nodir":
            cwd = projectless_cwd(route)
        else:
            prompt.append(word)
        index += 1
    task = route.new_task(TaskSettings(agent=agent, cwd=cwd))
    if task is not None and prompt:
        begin(route, " ".join(prompt))


def _status(route: RouteData, _args: str) -> None:
    task = route.task
    if task is None:
        route.reply("no task yet: type a prompt to start one, or /new")
        return
    turn = route.turn
    running = "idle" if turn is None else f"turn {turn.attempt_id[:8]} running"
    lines = [
        f"task {task.id}{f' ({task.title})' if task.title else ''}",
        f"agent {task.agent} ({task.runtime_kind}), session {task.remote_id or 'not opened yet'}",
        f"cwd {task.cwd}",
        f"model {task.model or 'agent default'}, effort {task.effort or 'default'}, "
        f"permissions {task.permission_mode or 'default'}",
        f"{running}; {route.queued} queued",
    ]
    if task.forked_from:
        lines.append(f"forked from {task.forked_from}")
    route.reply("\n".join(lines))


def _stop(route: RouteData, _args: str) -> None:
    interrupt(route)


def _fork(route: RouteData, args: str) -> None:
    if route.task is None:
        route.reply("no task to fork", error=True)
        return
    fork_task(route, route.task.id, args.strip() or None)


def _setting(
    field: str, allowed: tuple[str, ...] | None, note: str = ""
) -> Callable[[RouteData, str], None]:
    def run(route: RouteData, args: str) -> None:
        task = route.task
        if task is None:
            route.reply("no task yet: settings belong to a task", error=True)
            return
        value = args.strip()
        current = getattr(task, field) or "default"
        if not value:
            choices = f" (one of: {', '.join(allowed)})" if allowed else ""
            route.reply(f"{field.replace('_', ' ')}: {current}{choices}")
            return
        if allowed is not None and value not in allowed:
            route.reply(f"{value!r} is not one of: {', '.join(allowed)}", error=True)
            return
        change: dict[str, Any] = {field: value}
        route.write(UpdateTask(task.id, **change))
        route.task = replace(task, **change)
        route.update_session(route.task)
        per_turn = field in _PER_TURN and route.can(task).per_turn_settings
        when = " (from the next turn, and in forks)" if per_turn else note
        route.reply(f"{field.replace('_', ' ')}: {current} -> {value}{when}")

    return run


_NEXT_SESSION = " (from the next time the task's session opens, and in forks)"
_PER_TURN = ("model", "effort")
"""Settings an agent with ``per_turn_settings`` takes with each turn."""


def _queue(route: RouteData, args: str) -> None:
    words = args.split()
    if words and words[0] == "cancel":
        if len(words) != 2 or not words[1].lstrip("-").isdigit():
            route.reply("usage: /queue cancel N (N from /queue)", error=True)
            return
        prompt_id = int(words[1])
        route.write(CancelPrompt(prompt_id))
        if prompt_id in route.pending:
            route.pending.remove(prompt_id)
        route.reply(f"cancelled queued prompt {words[1]} (if it had not started yet)")
        return
    pending = route.reads.pending_prompts()
    route.pending = [p.id for p in pending]
    if not pending:
        route.reply("the queue is empty")
        return
    lines = [f"{p.id}: {' '.join(p.text.split())[:70]}" for p in pending]
    lines.append("/queue cancel N removes one")
    route.reply("\n".join(lines))


def _rename(route: RouteData, args: str) -> None:
    if route.task is None:
        route.reply("no task to rename", error=True)
        return
    title = args.strip()
    if not title:
        route.reply("/rename needs a title", error=True)
        return
    route.write(UpdateTask(route.task.id, title=title))
    route.task = replace(route.task, title=title)
    route.reply(f"task {route.task.id} is now {title!r}")


_HANDLERS: dict[str, Callable[[RouteData, str], None]] = {
    "help": _help,
    "new": _new,
    "status": _status,
    "stop": _stop,
    "sessions": sessions,
    "switch": switch,
    "fork": _fork,
    "turns": turns,
    "model": _setting("model", None, _NEXT_SESSION),
    "thinking": _setting("effort", EFFORTS, _NEXT_SESSION),
    "permissions": _setting("permission_mode", PERMISSION_MODES, _NEXT_SESSION),
    "provider": _setting("provider", None, _NEXT_SESSION),
    "queue": _queue,
    "rename": _rename,
}
