"""Wiring: the route's link, the engine thread and the app; run them, stop the engine after.

``build`` is separate from ``run`` so the headless tests drive exactly what ``robota`` runs,
only under ``App.run_test`` instead of on a terminal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

from .. import _gc
from ._app import RobotaApp, Start
from ._engine_thread import EngineLike, EngineThread

if TYPE_CHECKING:
    from robota.core.engine import Engine, TaskSettings
    from robota.core.store import TaskMobility

    from ._remote import RemoteSession

__all__ = ["build", "profile_engine", "run", "run_attached"]

STOP_TIMEOUT = 30.0
"""Seconds the engine gets to stop (agents are given 0.5 s, then SIGTERM, then SIGKILL)."""


def profile_engine(
    *, cwd: Path | None = None, restricted: bool = False, owns_tasks: bool = False
) -> EngineLike:
    """The profile's engine, for a person at the terminal (approvals are theirs to answer).
    In an untrusted workspace (of ``cwd``, default the profile's) it asks first on the
    terminal: trust it, continue Restricted, or quit (exit 1)."""
    from robota.core import ConfigError  # noqa: PLC0415
    from robota.host import (  # noqa: PLC0415
        TerminalOwning,
        open_engine,
        trust_store,
        workspace_config,
    )

    from .._profile import load_profile  # noqa: PLC0415
    from .._trust_ask import ask_on_terminal  # noqa: PLC0415

    config, profile = load_profile()
    directory = (cwd or config.defaults.cwd).resolve()
    try:
        workspace = workspace_config(config, profile, directory, restricted=restricted)
        if workspace.restricted and not restricted:
            choice = ask_on_terminal(workspace.decision)
            if choice == "quit":
                print("robota: not started (the workspace is not trusted)", file=sys.stderr)
                sys.exit(1)
            if choice == "trust":
                trust_store(profile).grant(workspace.root)
            workspace = workspace_config(
                config, profile, directory, restricted=choice == "restricted"
            )
    except (ConfigError, OSError) as error:
        print(f"robota: {error}", file=sys.stderr)
        sys.exit(2)
    # One owner per task: its route takes up no task another live process drives, and owns
    # each task it binds (``robota.host._terminal_owner``).
    owning = TerminalOwning() if owns_tasks else None
    return open_engine(
        workspace.config, profile, human_approves=True, restricted=workspace.hook, owning=owning
    )


def build(
    engine: EngineLike, *, route_key: str, start: Start, owns_tasks: bool = False
) -> tuple[RobotaApp, EngineThread]:
    """The app and the thread that will run ``engine``, neither started; the route is
    subscribed already, so nothing it says once the engine runs is missed. ``owns_tasks``:
    ``engine`` is the profile's, whose store records who owns a task: this terminal claims
    the task it takes up, or refuses one another live process drives."""
    from robota.core.frontend import FrontEndPort  # noqa: PLC0415

    link = FrontEndPort(engine).subscribe(route_key)
    if not owns_tasks:
        thread = EngineThread(engine, link=link)
        return RobotaApp(thread, link, start), thread
    from robota.core.store import task_mobility  # noqa: PLC0415
    from robota.host import terminal_lets_go, terminal_takes  # noqa: PLC0415

    profiles = cast("Engine", engine)

    async def takes(task_id: str) -> str | None:
        return await terminal_takes(profiles, task_id, route_key)

    def moves(task_id: str) -> TaskMobility | None:
        with profiles.context.readers.reading() as db:
            return task_mobility(db, task_id)

    def lets_go(task_id: str) -> bool:
        return terminal_lets_go(profiles, task_id, route_key)

    thread = EngineThread(
        engine, link=link, takes=takes, moves=moves, lets_go=lets_go, names=_device_name
    )
    return RobotaApp(thread, link, start), thread


def _device_name(device: str) -> str | None:
    """``device``'s name in this profile's mesh roster (the lists as accepted), ``None`` when
    it names none or they cannot be read."""
    from robota.core import RobotaError  # noqa: PLC0415

    from .._mesh_cmd import _mesh, _read  # noqa: PLC0415 (a handoff's rare moment only)

    try:
        lists = _read(_mesh()).lists
    except (OSError, RobotaError):
        return None
    if lists is None:
        return None
    return next((c.name for c in lists.roster.devices if c.device == device), None)


def run(
    engine_factory: Callable[[], EngineLike],
    *,
    route_key: str,
    resume: str | bool | None,
    continue_: bool,
    fork: bool,
    settings: TaskSettings,
    on_turn: Callable[[], None] | None = None,
    owns_tasks: bool = False,
) -> int:
    if fork and not (continue_ or resume):
        print("robota: --fork-session needs -c/--continue or -r/--resume", file=sys.stderr)
        return 2
    if continue_ and resume:
        print("robota: -c/--continue and -r/--resume cannot be combined", file=sys.stderr)
        return 2
    if settings.cwd is not None and not settings.cwd.is_dir():
        print(f"robota: --cwd {settings.cwd}: not a directory", file=sys.stderr)
        return 2
    engine = engine_factory()  # here, so a configuration error exits before the screen changes
    start = Start(
        resume=resume or None, continue_=continue_, fork=fork, settings=settings, on_turn=on_turn
    )
    app, thread = build(engine, route_key=route_key, start=start, owns_tasks=owns_tasks)
    _gc.settle()
    thread.start()
    try:
        app.run()
    finally:
        with _signals_held():
            stopped = thread.stop(STOP_TIMEOUT)
    if app.signal_number == signal.SIGHUP:
        _detach_from_terminal()
    if not stopped:
        print(f"robota: the engine did not stop within {STOP_TIMEOUT:.0f} s", file=sys.stderr)
    if app.engine_error is not None:
        print(f"robota: the engine stopped: {app.engine_error}", file=sys.stderr)
        return 1
    if app.refused is not None:
        print(f"robota: {app.refused}", file=sys.stderr)
    return app.return_code or 0


def run_attached(session: RemoteSession, *, route_key: str, task_id: str, agent: str) -> int:
    """The TUI on a background session's route (``robota session attach``); leaving only
    closes the connection."""
    from robota.core.frontend import FrontEndPort  # noqa: PLC0415

    from ._remote import RemoteLink  # noqa: PLC0415

    link = FrontEndPort(session).subscribe(route_key)
    session.bind(link)
    app = RobotaApp(RemoteLink(session, route_key, agent), link, Start(attached=task_id))
    _gc.settle()
    try:
        app.run()
    finally:
        session.close()
    if app.signal_number == signal.SIGHUP:
        _detach_from_terminal()
    if app.engine_error is not None:
        print(f"robota: {app.engine_error}", file=sys.stderr)
        return 1
    return app.return_code or 0


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ignore Ctrl-C, SIGTERM and SIGHUP while the engine stops (bounded by STOP_TIMEOUT): the
    UI has left, and a second signal would end the process with agents still running."""
    held = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    try:
        previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in held}
    except ValueError:  # not the main thread: nothing to hold
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _detach_from_terminal() -> None:
    """The terminal hung up: point stdout and stderr at /dev/null, so the last flush at exit
    does not fail on it (Python then exits 120 instead of the status we return)."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        for fd in (1, 2):
            os.dup2(null, fd)
    finally:
        os.close(null)
