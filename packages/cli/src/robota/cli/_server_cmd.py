"""``robota server``: the host of this profile (``run`` in the foreground, ``start`` detached,
``stop``, ``status``, ``restart``).

Every command but ``run`` is a client: it reads the profile's host lock and state file
(``robota.core.control.probe_host``) and talks to the host over its control socket. One host
per profile: ``start`` or ``run`` while one runs starts nothing, reports the running one and
exits 0. Exit codes: 0 done, 1 the host failed or did not do what was asked in time, 2 a
configuration error; ``run`` exits with the host's own code (0 stopped, 75 replaced by a
restart, 1 crashed).

Only click is imported at import time (``robota --help`` stays fast); each command imports
what it uses in its body.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from robota.core.config import Config, Profile
    from robota.core.control import HostState

__all__ = ["server_group", "status_lines"]


@click.group("server")
def server_group() -> None:
    """The host: one long-lived process serving this profile's chats, tasks and agents."""


def _echo_json(value: object) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def _profile() -> tuple[Config, Profile]:
    from ._profile import load_profile  # noqa: PLC0415 (keeps --help fast)

    return load_profile()


def _host_status(profile: Profile, timeout: float = 10.0) -> dict[str, Any] | None:
    """The running host's ``server.status``, or ``None`` when none answers."""
    from robota.core.control import ControlClient, ControlError  # noqa: PLC0415

    try:
        with ControlClient(profile.control_socket, timeout=timeout) as client:
            result = client.call("server.status")
    except ControlError:
        return None
    return result if isinstance(result, dict) else None


def _offline_status(config: Config, profile: Profile) -> dict[str, Any]:
    """``status`` without a host: the configured agents, the routes the store knows."""
    from contextlib import closing  # noqa: PLC0415

    from robota.core.store import open_reader  # noqa: PLC0415
    from robota.host import count_routes, status_json  # noqa: PLC0415

    known = 0
    if config.storage.sqlite_path.exists():
        with closing(open_reader(config.storage.sqlite_path)) as db:
            known = count_routes(db)
    return status_json(
        None,
        running=False,
        ready=False,
        agents=[{"name": name, "pid": None, "version": None} for name in config.agents],
        known_routes=known,
        active_routes=0,
        turns_running=0,
        profile=str(profile.home),
    )


# -- run -----------------------------------------------------------------------------------------


@server_group.command("run")
def run_command() -> None:
    """Run the host in the foreground until SIGTERM or SIGINT (what systemd and launchd use)."""
    from robota.host import run_host  # noqa: PLC0415

    from ._parsed_text import parsed_cache_on  # noqa: PLC0415

    parsed_cache_on()  # the host reads config.yaml through the script's cache (``_profile``)

    def running(state: HostState | None, _message: str) -> None:
        pid = state.pid if state is not None else "unknown"
        click.echo(f"a host already runs for this profile (pid {pid}); nothing started")

    sys.exit(run_host(on_running=running))


# -- start ---------------------------------------------------------------------------------------


@server_group.command("start")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def start_command(as_json: bool) -> None:
    """Start the host detached and wait until it serves (its transports: a few seconds)."""
    from robota.host import READY_TIMEOUT, host_logs, running_state, spawn_host, wait_ready  # noqa: PLC0415

    _config, profile = _profile()
    state = running_state(profile)
    if state is not None:
        status = _host_status(profile)
        if as_json:
            _echo_json({"started": False, **(status or {"running": True, "pid": state.pid})})
        else:
            click.echo(f"a host already runs for this profile (pid {state.pid}); nothing started")
        return
    process = spawn_host(profile)
    outcome = wait_ready(profile, process, READY_TIMEOUT)
    _, stderr_log = host_logs(profile)
    if outcome.kind in ("ready", "serving", "other"):
        status = outcome.status or {}
        if as_json:
            _echo_json({"started": outcome.kind != "other", **status})
        elif outcome.kind == "ready":
            click.echo(f"host started (pid {status.get('pid')}), ready")
        elif outcome.kind == "serving":
            # It serves: a transport that failed or still connects is named, not a failure.
            click.echo(f"host started (pid {status.get('pid')}), serving")
        else:
            click.echo(f"another host started first (pid {status.get('pid')}); nothing started")
        if not as_json and outcome.kind != "other" and status.get("transports"):
            click.echo(_transports_line(status))
        return
    if outcome.kind == "timeout":
        error = f"the host (pid {process.pid}) did not answer within {READY_TIMEOUT:.0f} s"
        if outcome.status is not None:
            error = f"the host (pid {process.pid}) answered, then stopped answering"
        error += "; it keeps starting"
    else:
        error = f"the host exited with {outcome.code} before it served"
    if as_json:
        _echo_json({"started": False, "error": error, "log": str(stderr_log)})
    else:
        click.echo(f"robota: {error}; see {stderr_log}", err=True)
    sys.exit(1)


# -- stop ----------------------------------------------------------------------------------------


@server_group.command("stop")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def stop_command(as_json: bool) -> None:
    """Stop the host and wait until its process is gone (at most 30 s)."""
    from robota.core.control import ControlClient, ControlError  # noqa: PLC0415
    from robota.host import STOP_TIMEOUT, running_state, wait_gone  # noqa: PLC0415

    _config, profile = _profile()
    state = running_state(profile)
    if state is None:
        if as_json:
            _echo_json({"stopped": False, "running": False, "pid": None})
        else:
            click.echo("no host runs for this profile")
        return
    refused = ""
    try:
        with ControlClient(profile.control_socket, timeout=10.0) as client:
            client.call("server.stop")
    except ControlError as error:
        # It may be stopping already (a signal, a restart): its process going away decides.
        refused = f"; it did not take the stop request ({error})"
    if not wait_gone(state.pid, STOP_TIMEOUT):
        still = f"the host is still running after {STOP_TIMEOUT:.0f} s{refused}"
        _stop_failed(as_json, state.pid, still)
    if as_json:
        _echo_json({"stopped": True, "running": False, "pid": state.pid})
    else:
        click.echo(f"host stopped (pid {state.pid})")


def _stop_failed(as_json: bool, pid: int, error: str) -> None:
    if as_json:
        _echo_json({"stopped": False, "running": True, "pid": pid, "error": error})
    else:
        click.echo(f"robota: {error} (pid {pid})", err=True)
    sys.exit(1)


# -- status --------------------------------------------------------------------------------------


@server_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def status_command(as_json: bool) -> None:
    """Show whether the host runs, and its transports, agents, routes and turns."""
    from robota.core.control import probe_host  # noqa: PLC0415

    config, profile = _profile()
    presence = probe_host(profile.host_lock, profile.host_state_file)
    status = _host_status(profile) if presence.running else None
    if status is None:
        status = _offline_status(config, profile)
    if as_json:
        _echo_json(status)
    else:
        for line in status_lines(status, presence.reason):
            click.echo(line)


def status_lines(status: dict[str, Any], reason: str) -> list[str]:
    """``server status`` for a person: a few short lines."""
    if not status.get("running"):
        lines = [f"host: not running ({reason})"]
    else:
        ready = "ready" if status.get("ready") else "not ready"
        lines = [
            f"host: running, {ready} (pid {status.get('pid')}, robota {status.get('version')}, "
            f"since {status.get('started_at')})"
        ]
    lines.append(f"profile: {status.get('profile')}")
    lines.append(_transports_line(status))
    agents = []
    for agent in status.get("agents") or []:
        if agent.get("pid") is None:
            agents.append(f"{agent['name']} (not started)")
        else:
            version = f", {agent['version']}" if agent.get("version") else ""
            agents.append(f"{agent['name']} (pid {agent['pid']}{version})")
    lines.append("agents: " + (", ".join(agents) if agents else "none configured"))
    routes = status.get("routes") or {}
    lines.append(
        f"routes: {routes.get('known', 0)} known, {routes.get('active', 0)} active; "
        f"turns running: {status.get('turns_running', 0)}"
    )
    return lines


def _transports_line(status: dict[str, Any]) -> str:
    """``transports: feishu failed (why), slack connected`` (each with its detail)."""
    transports = status.get("transports") or []
    if not transports:
        return "transports: none configured"
    shown = []
    for t in transports:
        detail = f" ({t['detail']})" if t.get("detail") else ""
        shown.append(f"{t['name']} {t['state']}{detail}")
    return "transports: " + ", ".join(shown)


# -- restart -------------------------------------------------------------------------------------


@server_group.command("restart")
@click.option("--force", is_flag=True, help="Restart now: do not wait for running turns.")
@click.option("--immediate", is_flag=True, help="The same as --force.")
@click.option("--reason", metavar="TEXT", help="Why: kept with the restart, shown in its notes.")
@click.option(
    "--task",
    "task",
    metavar="TASK",
    help="Enroll this task's conversation (TASK as robota task takes it: number, id, title).",
)
@click.option("--cancel", is_flag=True, help="Cancel the pending restart instead.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def restart_command(  # noqa: PLR0917 (click passes the options positionally)
    force: bool, immediate: bool, reason: str | None, task: str | None, cancel: bool, as_json: bool
) -> None:
    """Restart the host safely: once running turns ended, their answers were delivered and
    no message came for 15 s; then a new host replaces it. --force skips the waits."""
    from robota.core.control import ControlClient, ControlError, HostRefused  # noqa: PLC0415
    from robota.host import READY_TIMEOUT, STOP_TIMEOUT, running_state, wait_gone  # noqa: PLC0415

    if cancel and (force or immediate or reason is not None or task is not None):
        raise click.UsageError("--cancel takes no other option")
    _config, profile = _profile()
    state = running_state(profile)
    if state is None:
        click.echo(
            "robota: no host runs for this profile; start one: robota server start", err=True
        )
        sys.exit(2)
    fields: dict[str, object] = (
        {} if cancel else {"force": force or immediate, "reason": reason, "task": task}
    )
    try:
        with ControlClient(profile.control_socket, timeout=30.0) as client:
            result = client.call("server.restart.cancel" if cancel else "server.restart", fields)
    except HostRefused as refused:
        from ._task_cmd import USAGE_CODES  # noqa: PLC0415 (a --task naming no task: exit 2)

        click.echo(f"robota: the host refused: {refused}", err=True)
        sys.exit(2 if refused.code in USAGE_CODES else 1)
    except ControlError as error:
        click.echo(f"robota: {error}", err=True)
        sys.exit(1)
    if cancel:
        if as_json:
            _echo_json(result)
        elif result.get("cancelled"):
            click.echo(f"restart {result.get('schedule_id')} cancelled")
        else:
            click.echo("no restart was pending (or it is already under way)")
        return
    if not result.get("force"):
        if as_json:
            _echo_json({"scheduled": True, **result})
        else:
            click.echo(
                f"restart {result.get('schedule_id')} scheduled: once running turns ended and "
                "15 s passed without a message (cancel: robota server restart --cancel)"
            )
        return
    # Forced: wait until the old host is gone and a new one serves.
    replaced = wait_gone(state.pid, STOP_TIMEOUT + READY_TIMEOUT)
    status = _host_status(profile) if replaced else None
    if as_json:
        _echo_json({"scheduled": True, **result, "replaced": replaced, "status": status})
    elif replaced and status is not None:
        click.echo(f"host restarted: pid {state.pid} replaced by pid {status.get('pid')}")
    else:
        click.echo(f"robota: the host (pid {state.pid}) was not replaced in time", err=True)
    if not replaced or status is None:
        sys.exit(1)


# The service-manager registration is its own module (``_autostart_cmd``: systemd, launchd).
from ._autostart_cmd import autostart_group  # noqa: E402

server_group.add_command(autostart_group)
