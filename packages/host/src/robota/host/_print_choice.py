"""Print mode's task and where its turns run, as decisions shared by the terminal's own
engine (``robota.cli._print``) and a warm host's (``_print_turns``).

``choose_print_task`` is print mode's task: a new one by default, ``-c`` the latest in the
directory (for the agent, when named), ``-r`` one by id or title, ``--fork-session`` a new task
from either; what is wrong with the options is said, never raised, and both callers report it
as print mode's usage error (exit 2). ``print_placement`` is pure (a table in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import trio

from robota.core.engine import ForkTask, NewTask, TaskSettings, UseTask
from robota.core.frontend import TaskNotResolved, resolve_task

if TYPE_CHECKING:
    from robota.core.agents import PermissionMode
    from robota.core.engine import Engine, FrontEndRequest

__all__ = [
    "PRINT_KIND",
    "PRINT_ROUTES",
    "Placement",
    "PrintTask",
    "TaskChoice",
    "choose_print_task",
    "print_placement",
]

PRINT_KIND = "print"
"""Print mode's routes (``print:<hex>``): a terminal's or a ``print.run``'s, never adopted nor
recovered by a host (``_routing``)."""
PRINT_ROUTES = frozenset({PRINT_KIND})
"""The route kinds whose agents keep a session opened ahead for them (one-shot runs)."""
Placement = Literal["host", "local", "refused"]


@dataclass(frozen=True, slots=True)
class PrintTask:
    """What print mode asks of its task (its ``-c``/``-r``/``--fork-session`` and a new
    task's settings)."""

    agent: str | None = None
    cwd: Path | None = None
    model: str | None = None
    permission_mode: PermissionMode | None = None
    name: str | None = None
    append_system_prompt: str | None = None
    continue_: bool = False
    resume: str | None = None
    fork: bool = False


@dataclass(frozen=True, slots=True)
class TaskChoice:
    """The request that puts the route on its task, the agent print mode names meanwhile, and
    whether input must wait for the task to open (a resumed or forked one)."""

    request: FrontEndRequest | None
    """``None``: already asked for (a warm host chose the task, ``print.run``)."""
    agent: str | None
    await_task: bool


def print_placement(
    *,
    untrusted: bool,
    restricted: bool,
    project_applies: bool,
    uses_task: bool = False,
    forced: bool = False,
) -> Placement:
    """Where print mode's turns run when a host (or the workspace's daemon) is up.

    The host's engine runs a directory Restricted exactly when its workspace is untrusted
    (a daemon started ``--restricted``, ``forced``: every directory), and with the settings it
    was built from (``project_applies``: print mode's own would differ), so it runs the turn
    as print mode would only when the two agree. An untrusted directory runs Restricted either
    way. A task taken up again as it is (``-c``, ``-r`` without ``--fork-session``:
    ``uses_task``) runs in print mode's own process: in the host, the task's agent session may
    still be open on the route that ran it last, and a second route opening it is only rebound
    to it, never told it opened."""
    if untrusted and not restricted:
        return "refused"
    if uses_task:
        return "local"
    if untrusted:
        return "host"
    if project_applies or restricted != forced:
        return "local"
    return "host"


async def choose_print_task(engine: Engine, task: PrintTask) -> TaskChoice | str:
    """Print mode's task (the module docstring), or what is wrong with the options."""
    if task.fork and not (task.continue_ or task.resume):
        return "--fork-session needs -c/--continue or -r/--resume"
    if task.continue_ and task.resume:
        return "-c/--continue and -r/--resume cannot be combined"
    if task.agent is not None and task.agent not in engine.agent_names:
        known = ", ".join(engine.agent_names)
        return f"no agent {task.agent!r} (configured: {known})"
    cwd = (task.cwd or engine.defaults.cwd).resolve()
    if not cwd.is_dir():
        return f"--cwd {cwd}: not a directory"
    source = None
    if task.resume is not None:
        found = await trio.to_thread.run_sync(engine.find_tasks, task.resume)
        try:
            source = resolve_task(task.resume, found)
        except TaskNotResolved as error:
            return str(error)
    elif task.continue_:
        source = await trio.to_thread.run_sync(engine.latest_task, cwd, task.agent)
    if source is None:
        settings = TaskSettings(
            agent=task.agent,
            cwd=cwd,
            model=task.model,
            permission_mode=task.permission_mode,
            title=task.name,
            developer_instructions=task.append_system_prompt,
        )
        agent = task.agent or engine.defaults.agent
        return TaskChoice(NewTask(settings, announce=False), agent, await_task=False)
    request: FrontEndRequest = ForkTask(source.id, task.name) if task.fork else UseTask(source.id)
    return TaskChoice(request, source.agent, await_task=True)
