"""``robota server autostart enable [--linger] | status | disable``: the host at login.

A click group meant for ``robota server`` (``server_group.add_command(autostart_group)``); the
logic and what the service file says are in ``_autostart``. Exit codes: 0 done, 1 the service
manager refused or the file is not robota's, 2 nothing to register (no profile, a platform
without systemd or launchd).

The service manager is reached through ``_autostart.subprocess_runner``; a caller (a test) may
pass another ``Runner`` and a ``sys.platform`` value in the context object under
``autostart_runner`` and ``autostart_platform``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from robota.core.config import Profile

    from ._autostart import Manager, Runner, ServiceSpec

__all__ = ["autostart_group"]

_json = click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")


def _fail(message: str, *, as_json: bool, code: int) -> NoReturn:
    if as_json:
        click.echo(json.dumps({"ok": False, "error": message}))
    click.echo(f"robota server autostart: {message}", err=True)
    sys.exit(code)


def _setup(as_json: bool) -> tuple[Manager, Runner, Profile, ServiceSpec]:
    from robota.core.config import resolve_profile  # noqa: PLC0415 (keeps --help fast)

    from ._autostart import (  # noqa: PLC0415
        AutostartError,
        manager_for,
        service_spec,
        subprocess_runner,
        this_robota,
    )

    obj = click.get_current_context().find_object(dict) or {}
    runner: Runner = obj.get("autostart_runner") or subprocess_runner
    try:
        manager = manager_for(obj.get("autostart_platform") or sys.platform)
        profile = resolve_profile()
        spec = service_spec(
            robota=obj.get("autostart_robota") or this_robota(),
            home=profile.home,
            config_file=profile.config_file,
            log_dir=profile.log_dir,
            pinned=profile.pinned,
            environ=os.environ,
        )
    except AutostartError as error:
        _fail(str(error), as_json=as_json, code=2)
    return manager, runner, profile, spec


def _host(profile: Profile) -> dict[str, Any]:
    from robota.core.control import probe_host  # noqa: PLC0415

    presence = probe_host(profile.host_lock, profile.host_state_file)
    state = presence.state
    return {
        "presence": presence.presence.value,
        "running": presence.running,
        "pid": state.pid if state else None,
        "version": state.version if state else None,
        "startedAt": state.started_at if state else None,
        "reason": presence.reason,
    }


@click.group("autostart")
def autostart_group() -> None:
    """Start this profile's host at login (systemd user unit, macOS LaunchAgent)."""


@autostart_group.command("enable")
@click.option(
    "--linger",
    is_flag=True,
    help="Also run `loginctl enable-linger` (systemd): the host starts at boot, without a login.",
)
@_json
def enable_command(linger: bool, as_json: bool) -> None:
    """Register `robota server run` for this profile and start it.

    The service gets a minimal environment (chat credentials come from the profile's .env) and
    is restarted only after a crash, not after a clean stop or a safe restart.
    """
    from ._autostart import AutostartError, enable  # noqa: PLC0415

    manager, runner, profile, spec = _setup(as_json)
    if not profile.config_file.is_file():
        _fail(
            f"{profile.config_file} does not exist: run `robota init` first",
            as_json=as_json,
            code=2,
        )
    host = _host(profile)
    try:
        path = enable(
            manager, spec, os.environ, runner, start_now=not host["running"], linger=linger
        )
    except AutostartError as error:
        _fail(str(error), as_json=as_json, code=1)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "ok": True,
                    "manager": manager,
                    "path": str(path),
                    "name": spec.name,
                    "started": not host["running"],
                    "linger": linger,
                    "host": host,
                }
            )
        )
        return
    click.echo(f"registered {path} ({manager})")
    if host["running"]:
        click.echo(
            f"a host already runs (pid {host['pid']}); the service runs it from the next login"
        )
    else:
        click.echo("started the host")
    if linger:
        click.echo("linger enabled: the host starts at boot, without a login")


@autostart_group.command("status")
@_json
def status_command(as_json: bool) -> None:
    """Whether autostart is registered, and whether a host runs now."""
    from ._autostart import registration  # noqa: PLC0415

    manager, runner, profile, spec = _setup(as_json)
    found = registration(manager, spec, os.environ, runner)
    host = _host(profile)
    if as_json:
        click.echo(json.dumps({"ok": True, "registration": found.to_json(), "host": host}))
        return
    words = {True: "yes", False: "no", None: "unknown"}
    click.echo(f"service:  {found.path} ({manager}): {found.state}")
    if found.state != "absent":
        click.echo(f"  enabled {words[found.enabled]}, active {words[found.active]}")
    if found.state == "outdated":
        click.echo("  differs from what `enable` would write now: run it again to update")
    running = f"running, pid {host['pid']}" if host["running"] else host["presence"]
    click.echo(f"host:     {running} ({host['reason']})")


@autostart_group.command("disable")
@_json
def disable_command(as_json: bool) -> None:
    """Stop the service's host, unregister it and remove its file."""
    from ._autostart import AutostartError, disable  # noqa: PLC0415

    manager, runner, _profile, spec = _setup(as_json)
    try:
        removed = disable(manager, spec, os.environ, runner)
    except AutostartError as error:
        _fail(str(error), as_json=as_json, code=1)
    if as_json:
        click.echo(json.dumps({"ok": True, "removed": removed, "name": spec.name}))
    else:
        click.echo(f"removed {spec.name}" if removed else "autostart is not enabled")
