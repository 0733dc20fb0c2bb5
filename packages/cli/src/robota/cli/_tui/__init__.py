"""The interactive terminal UI: ``robota`` with no arguments on a terminal.

One route (the console's ``route_key``) drives one engine. The answer streams in; the live
activity (tools with their output, reasoning summaries, the plan, approvals) is the same turn
model the chat cards use (``robota.core.presentation.TurnView``), drawn by a
``TerminalRenderer`` held for each turn; what is typed during a turn is sent as ``UserInput``
(the engine steers or queues it); slash commands complete with Tab; approvals are answered with
a key; Ctrl-C interrupts the turn and a second one (or one while idle) exits.

Threads. Textual owns the main thread and its asyncio loop; the engine's trio loop runs in one
dedicated thread (``_engine_thread``). Why not trio guest mode on Textual's loop: the engine's
work (agent I/O, decoding streamed events, the store's writes) would then share one thread with
rendering, so a big repaint would delay agent traffic and a burst of events would delay keys; a
thread keeps each loop's latency its own, and the engine runs exactly as it does under print
mode. The two meet through the front-end port (``robota.core.frontend``), without blocking
either side: the route's ``RouteLink`` wakes Textual's loop once per burst (not per text delta)
and the loop drains it; requests go through the link to the route, an actor tell that is safe
from any thread; the only thing sent into the trio loop is the cancellation that stops the
engine (through its token).

Textual is imported only when ``run_tui`` runs, so ``robota --help`` stays fast.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core.agents import PermissionMode

    from ._engine_thread import EngineLike

__all__ = ["EngineFactory", "attach_tui", "run_tui"]

EngineFactory = Callable[[], "EngineLike"]
"""Builds the engine (not yet running); called once, on the calling thread, before the UI
starts, so a configuration error ends the command the usual way (``SystemExit``)."""


def run_tui(
    engine_factory: EngineFactory | None = None,
    *,
    route_key: str | None = None,
    resume: str | bool | None = None,
    continue_: bool = False,
    fork: bool = False,
    agent: str | None = None,
    cwd: Path | None = None,
    model: str | None = None,
    permission_mode: PermissionMode | None = None,
    name: str | None = None,
    append_system_prompt: str | None = None,
    restricted: bool = False,
) -> int:
    """Run the interactive UI until the person leaves; the exit status.

    ``engine_factory``: ``None`` builds the profile's engine (``load_profile`` then
    ``open_engine(..., human_approves=True)``; a bad configuration exits 2 before the screen
    changes). ``route_key``: ``None`` is a key of this run's own (``tui:<random>``), so two
    terminals never share a route and this run adopts no other process's turns.
    ``resume``: ``None`` or ``False`` starts a new task; a task id, unique id prefix or title
    resumes that task (an ambiguous one opens the picker on it); ``True`` or ``""`` (``-r``
    without a value) shows a picker of recent tasks. ``continue_``: the most recent task in the
    working directory (of ``agent`` when given), or a new one when there is none. ``fork``
    (with ``resume`` or ``continue_``): a new task from the chosen one's latest completed turn,
    the original untouched. The rest set up a new task (``None``: the profile's default);
    ``cwd`` is also the directory ``continue_`` looks in, ``name`` also titles a fork.
    One owner per task: with the profile's engine, a task taken up as it is (``-c``, ``-r``,
    the picker; not a fork) is this terminal's while it runs (claimed, or taken over when its
    owner is gone); one a live host or background session drives is refused, naming it and
    where the task can be reached (exit 1).
    In an untrusted workspace the profile's engine asks first, on the terminal (trust it,
    continue Restricted, or quit); ``restricted`` runs Restricted without asking.

    Exit status: 0 when the person left, 1 when the engine failed or the task is another
    live process's, 2 for options that do not
    go together, 128 + N on signal N (SIGTERM, SIGHUP; the engine and its agents are stopped
    first).
    """
    from robota.core.engine import TaskSettings  # noqa: PLC0415 (keeps --help fast)

    from ._run import profile_engine, run  # noqa: PLC0415 (Textual loads only for the TUI)

    settings = TaskSettings(
        agent=agent,
        cwd=cwd.resolve() if cwd is not None else None,
        model=model,
        permission_mode=permission_mode,
        title=name,
        developer_instructions=append_system_prompt,
    )

    def factory() -> EngineLike:
        return profile_engine(cwd=settings.cwd, restricted=restricted, owns_tasks=True)

    on_turn = None
    if engine_factory is None:  # the profile's engine: its host hears of this terminal's turns
        from robota.core.config import resolve_profile  # noqa: PLC0415

        from .._beacon import HostBeacon  # noqa: PLC0415

        on_turn = HostBeacon(resolve_profile().control_socket)
    return run(
        engine_factory or factory,
        route_key=route_key or f"tui:{uuid.uuid4().hex[:12]}",
        resume=True if resume == "" else (resume or None),
        continue_=continue_,
        fork=fork,
        settings=settings,
        on_turn=on_turn,
        owns_tasks=engine_factory is None,
    )


def attach_tui(
    socket_path: Path, generation: str, *, mode: str, session_id: str, agent: str
) -> int:
    """The TUI on a background session (``robota session attach``, ``robota --attach``); exit
    1 when the session refuses (its reason on stderr), else as ``run_tui``."""
    import sys  # noqa: PLC0415

    from ._remote import AttachRefused, RemoteSession  # noqa: PLC0415
    from ._run import run_attached  # noqa: PLC0415 (Textual loads only for the TUI)

    try:
        session = RemoteSession.open(socket_path, generation, mode)
    except (AttachRefused, OSError) as refused:
        print(f"robota: session {session_id}: {refused}", file=sys.stderr)
        return 1
    task_id = str(session.hello.get("task") or "")
    return run_attached(session, route_key=f"session:{session_id}", task_id=task_id, agent=agent)
