"""``robota session``: background sessions (``start --background``, ``list``, ``attach``,
``stop``, ``rename``; ``run`` is what a start runs detached, hidden from help).

Every command but ``run`` is a client: it reads the registrations in the profile's owner-only
rendezvous directory and talks to a session over its own control socket. ``stop`` and
``rename`` act only on the process start they read: they verify its owner live (pid and start
time) and send its generation, which a session restarted under the same id refuses. Exit
codes: 0 done, 1 the session failed or did not do it, 2 a usage or configuration error, or no
verified session of that id.

Only click is imported at import time; each command imports what it uses in its body.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from robota.core.config import Profile
    from robota.core.control import Registration

__all__ = ["attach_session", "session_group", "start_background", "stop_session"]


@click.group("session")
def session_group() -> None:
    """Background sessions: one session each, alive without a terminal.

    SESSION is an id from `robota session list`, a session's name when one session has it, or
    a unique id prefix (4 digits or more).
    """


def _echo_json(value: object) -> None:
    click.echo(json.dumps(value, ensure_ascii=False))


def _profile() -> Profile:
    from ._profile import load_profile  # noqa: PLC0415 (keeps --help fast)

    return load_profile()[1]


def start_background(
    *,
    name: str | None,
    agent: str | None,
    cwd: Path | None,
    daemon: bool = False,
    restricted: bool = False,
    task: str | None = None,
) -> Registration:
    """Start a background session detached and wait until it is ready; exit 1 (with the
    reason and its log) when it is not. Shared with ``robota daemon start``."""
    import secrets  # noqa: PLC0415

    from robota.core import ConfigError  # noqa: PLC0415
    from robota.host import (  # noqa: PLC0415
        READY_TIMEOUT,
        SessionSpec,
        WorkspaceRefused,
        headless_workspace,
        session_logs,
        spawn_session,
        wait_session_ready,
        workspace_of,
    )

    from ._profile import load_profile  # noqa: PLC0415
    from ._trust_ask import refused_exit  # noqa: PLC0415

    config, profile = load_profile()
    directory = (cwd or Path.cwd()).resolve()
    if not directory.is_dir():
        click.echo(f"robota: --cwd {directory}: not a directory", err=True)
        sys.exit(2)
    try:
        config = headless_workspace(
            config,
            profile,
            directory,
            restricted=restricted,
            mode="daemon" if daemon else "background session",
        ).config
    except WorkspaceRefused as refused:
        refused_exit(refused)
    except ConfigError as invalid:
        click.echo(f"robota: {invalid}", err=True)
        sys.exit(2)
    agent_name = agent or config.defaults.agent
    if agent_name not in config.agents:
        known = ", ".join(sorted(config.agents)) or "none"
        click.echo(f"robota: no agent {agent_name!r} is configured (configured: {known})", err=True)
        sys.exit(2)
    session_id = secrets.token_hex(6)
    spec = SessionSpec(
        session_id=session_id,
        name=" ".join((name or f"session-{session_id[:6]}").split()),
        agent=agent_name,
        cwd=directory,
        workspace=workspace_of(directory),
        daemon=daemon,
        restricted=restricted,
        task=task,
    )
    process = spawn_session(profile, spec)
    outcome = wait_session_ready(profile, session_id, process, READY_TIMEOUT)
    if outcome.kind == "ready" and outcome.registration is not None:
        return outcome.registration
    _, stderr_log = session_logs(profile, session_id)
    if outcome.kind == "timeout":
        # Not ready: never left running half-started (nobody was told its id).
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        error = f"the session was not ready after {READY_TIMEOUT:.0f} s; it was stopped"
    else:
        error = f"the session exited with {outcome.code} before it was ready"
    click.echo(f"robota: {error}; see {stderr_log}", err=True)
    sys.exit(1)


@session_group.command("start")
@click.option("--background", is_flag=True, help="Run it detached (required for now).")
@click.option("--name", metavar="NAME", help="Its name in the list (default: session-ID).")
@click.option("--agent", metavar="AGENT", help="The configured agent (default: the profile's).")
@click.option(
    "--cwd",
    type=click.Path(file_okay=False, path_type=Path),
    help="Its working directory (default: this one).",
)
@click.option("--json", "as_json", is_flag=True, help='Print {"id", "name"} on stdout.')
@click.option(
    "--restricted",
    is_flag=True,
    help="Run Restricted (project settings ignored, permission mode plan); needed in an "
    "untrusted workspace.",
)
@click.option(
    "--task",
    metavar="TASK",
    help="Continue this task (id or title; it works in --cwd's workspace) instead of a new one.",
)
def start_command(  # noqa: PLR0917 (click passes the options positionally)
    background: bool,
    name: str | None,
    agent: str | None,
    cwd: Path | None,
    as_json: bool,
    restricted: bool,
    task: str | None,
) -> None:
    """Start a background session and print its id once it is ready."""
    if not background:
        raise click.UsageError("only background sessions start here: add --background")
    registration = start_background(
        name=name, agent=agent, cwd=cwd, restricted=restricted, task=task
    )
    if as_json:
        _echo_json({"id": registration.id, "name": registration.name})
    else:
        click.echo(registration.id)


@session_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array on stdout.")
def list_command(as_json: bool) -> None:
    """Every registered session: id, name, state, start time, agent (no content)."""
    from robota.host import session_rows  # noqa: PLC0415

    rows = session_rows(_profile())
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        click.echo("no background sessions")
        return
    for row in rows:
        if "unavailable" in row:
            click.echo(f"{row['id']}  unavailable: {row['unavailable']}")
            continue
        mark = "  (daemon)" if row.get("daemon") else ""
        click.echo(
            f"{row['id']}  {row['state']:<11}  {row['name']}  {row['agent']}  "
            f"since {row['started_at']}{mark}"
        )


def _verified(profile: Profile, session_id: str) -> Registration:
    from robota.host import SessionUnverified, verified_session  # noqa: PLC0415

    try:
        return verified_session(profile, session_id)
    except SessionUnverified as refused:
        click.echo(f"robota: {refused}", err=True)
        sys.exit(2)


def _call(registration: Registration, type_name: str, fields: dict[str, object]) -> object:
    from robota.core.control import ControlClient, ControlError  # noqa: PLC0415

    try:
        with ControlClient(Path(registration.socket), timeout=30.0) as client:
            return client.call(type_name, {"generation": registration.generation, **fields})
    except ControlError as error:
        click.echo(f"robota: session {registration.id}: {error}", err=True)
        sys.exit(1)


def surface_url(registration: Registration) -> str:
    """The session's WebSocket URL (its token in it), asked of the verified start over its
    owner-only control socket: the token is never on disk, in argv or in an environment."""
    result = _call(registration, "session.surface", {})
    url = result.get("url") if isinstance(result, dict) else None
    if not isinstance(url, str):
        click.echo(f"robota: session {registration.id} serves no WebSocket", err=True)
        sys.exit(1)
    return url


def stop_session(registration: Registration) -> None:
    """Stop the verified start and wait until its process is gone; exit 1 if it is not."""
    from robota.host import STOP_TIMEOUT, wait_gone  # noqa: PLC0415

    _call(registration, "session.stop", {})
    if not wait_gone(registration.pid, STOP_TIMEOUT):
        click.echo(
            f"robota: session {registration.id} (pid {registration.pid}) is still running "
            f"after {STOP_TIMEOUT:.0f} s",
            err=True,
        )
        sys.exit(1)


@session_group.command("stop")
@click.argument("session_id", metavar="SESSION")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def stop_command(session_id: str, as_json: bool) -> None:
    """Stop SESSION (the start registered now) and wait until its process is gone."""
    profile = _profile()
    registration = _verified(profile, session_id)
    stop_session(registration)
    if as_json:
        _echo_json({"id": registration.id, "stopped": True})
    else:
        click.echo(f"session {registration.id} stopped")


@session_group.command("url")
@click.argument("session_id", metavar="SESSION")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def url_command(session_id: str, as_json: bool) -> None:
    """Print SESSION's WebSocket URL (loopback, with this start's token): a WebSocket
    client drives the session with it beside any attached terminal. Keep it to yourself."""
    profile = _profile()
    registration = _verified(profile, session_id)
    url = surface_url(registration)
    if as_json:
        _echo_json({"id": registration.id, "url": url})
    else:
        click.echo(url)


@session_group.command("rename")
@click.argument("session_id", metavar="SESSION")
@click.argument("name", metavar="NAME")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def rename_command(session_id: str, name: str, as_json: bool) -> None:
    """Give SESSION a new name."""
    profile = _profile()
    registration = _verified(profile, session_id)
    result = _call(registration, "session.rename", {"name": name})
    if as_json:
        _echo_json(result)
    else:
        click.echo(f"session {registration.id} renamed")


def attach_session(registration: Registration, *, observe: bool) -> None:
    """Ask on the controlling terminal, then run the TUI on the session; exits."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        click.echo(
            "robota: attaching needs an interactive terminal; in one, run: "
            f"robota session attach {registration.id}",
            err=True,
        )
        sys.exit(2)
    if not _confirm_on_terminal(f"Attach to session {registration.name}? [y/N] "):
        click.echo("not attached", err=True)
        sys.exit(1)
    from ._tui import attach_tui  # noqa: PLC0415 (Textual loads only here)

    sys.exit(
        attach_tui(
            Path(registration.socket),
            registration.generation,
            mode="observe" if observe else "drive",
            session_id=registration.id,
            agent=registration.agent,
        )
    )


def _confirm_on_terminal(question: str) -> bool:
    """Ask on the controlling terminal (``/dev/tty``, never standard input)."""
    from ._trust_ask import ask_terminal  # noqa: PLC0415

    return ask_terminal(question) in ("y", "yes")


@session_group.command("attach")
@click.argument("session_id", metavar="SESSION")
@click.option("--observe", is_flag=True, help="Only watch: what this terminal types is refused.")
def attach_command(session_id: str, observe: bool) -> None:
    """Drive (or watch) SESSION from this terminal; /exit or Ctrl-D only detaches."""
    profile = _profile()
    attach_session(_verified(profile, session_id), observe=observe)


@session_group.command("run", hidden=True)
@click.option("--id", "session_id", required=True)
@click.option("--name", required=True)
@click.option("--agent", required=True)
@click.option("--cwd", required=True, type=click.Path(file_okay=False, path_type=Path))
@click.option("--daemon", is_flag=True)
@click.option("--restricted", is_flag=True)
@click.option("--task")
def run_command(  # noqa: PLR0917 (click passes the options positionally)
    session_id: str,
    name: str,
    agent: str,
    cwd: Path,
    daemon: bool,
    restricted: bool,
    task: str | None,
) -> None:
    """Serve one background session in this process (what ``start`` runs detached)."""
    from robota.core.control import SESSION_ID  # noqa: PLC0415
    from robota.host import SessionSpec, run_session, workspace_of  # noqa: PLC0415

    from ._parsed_text import parsed_cache_on  # noqa: PLC0415

    parsed_cache_on()  # the session reads config.yaml through the script's cache (``_profile``)

    if not SESSION_ID.fullmatch(session_id):
        raise click.UsageError("--id must be 12 hex digits")
    directory = cwd.resolve()
    spec = SessionSpec(
        session_id=session_id,
        name=name,
        agent=agent,
        cwd=directory,
        workspace=workspace_of(directory),
        daemon=daemon,
        restricted=restricted,
        task=task,
    )
    sys.exit(run_session(spec))


@session_group.command("push")
@click.argument("session_id", metavar="SESSION")
@click.option(
    "--to", "to", required=True, metavar="DEVICE", help="The device (id, prefix or name)."
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def push_command(session_id: str, to: str, as_json: bool) -> None:
    """Move SESSION's task to another of your devices (it must be idle); the session
    ends once the other device saved it. What stays on this device is printed."""
    from ._handoff_push_cmd import say_pushed  # noqa: PLC0415
    from ._task_cmd import PUSH_TIMEOUT  # noqa: PLC0415
    from ._task_cmd import _call as call_host  # noqa: PLC0415

    registration = _verified(_profile(), session_id)
    fields: dict[str, object] = {"session": registration.id, "to": to}
    say_pushed(call_host("push", "mesh.push", fields, PUSH_TIMEOUT, group="session"), as_json)
