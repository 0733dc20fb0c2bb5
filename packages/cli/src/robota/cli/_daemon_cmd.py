"""``robota daemon``: the workspace's daemon, a background session marked so, at most one per
workspace (the git repository's root, or the directory) even when starts race.

``start`` hands over the daemon already running when there is one (and both agree on
Restricted), with ``--json`` printing ``{"id", "url", "started"}``: the daemon's loopback
WebSocket (the ``--serve`` protocol) and its token, asked of the daemon over its owner-only
control socket; else takes the workspace's start lock, starts one and releases the lock once it
is ready; a start that finds the lock taken waits for the winner's daemon. ``status`` shows
it, ``stop`` stops it (its verified start), ``unlock`` removes a start lock whose start died.
Exit codes: 0 done, 1 refused or failed, 2 a usage or configuration error.

Only click is imported at import time.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from robota.core.config import Profile
    from robota.core.control import Registration

__all__ = ["daemon_group"]

HANDOVER_WAIT = 60.0
"""Seconds a start that lost the race waits for the winner's daemon."""


@click.group("daemon")
def daemon_group() -> None:
    """The workspace's daemon: one background session per workspace that clients reuse."""


def _here() -> tuple[Profile, Path]:
    from robota.host import workspace_of  # noqa: PLC0415

    from ._profile import load_profile  # noqa: PLC0415

    return load_profile()[1], workspace_of(Path.cwd())


def _report(registration: Registration, *, started: bool, as_json: bool) -> None:
    if as_json:
        from ._session_cmd import surface_url  # noqa: PLC0415

        # To this caller alone (its stdout): the URL carries the daemon's token.
        url = surface_url(registration)
        click.echo(json.dumps({"id": registration.id, "url": url, "started": started}))
    elif started:
        click.echo(f"daemon {registration.id} started")
    else:
        click.echo(f"daemon {registration.id} already runs for this workspace")


def _handed(registration: Registration, restricted: bool) -> Registration:
    """``registration`` when it may be handed to this start; exit 1 when Restricted differs."""
    if registration.restricted and not restricted:
        click.echo(
            f"robota: the daemon {registration.id} of this workspace runs Restricted; a plain "
            "start is not handed it (stop it first: robota daemon stop)",
            err=True,
        )
        sys.exit(1)
    if restricted and not registration.restricted:
        click.echo(
            f"robota: the daemon {registration.id} of this workspace runs with the project's "
            "configuration; a --restricted start is not handed it (stop it first)",
            err=True,
        )
        sys.exit(1)
    return registration


def _gate(profile: Profile, workspace: Path, restricted: bool) -> None:
    """Exit 2 in a workspace nobody trusted unless ``--restricted`` (before any handover:
    an untrusted workspace's daemon is never handed to a plain start)."""
    from robota.core.trust import decide  # noqa: PLC0415
    from robota.host import WorkspaceRefused, trust_store  # noqa: PLC0415

    from ._trust_ask import refused_exit  # noqa: PLC0415

    decision = decide(trust_store(profile), workspace)
    if decision.restricted and not restricted:
        refused_exit(WorkspaceRefused(decision, "daemon"))


@daemon_group.command("start")
@click.option(
    "--json", "as_json", is_flag=True, help='Print {"id", "url"} (its WebSocket) on stdout.'
)
@click.option("--restricted", is_flag=True, help="Run Restricted (permission mode plan).")
@click.option("--agent", metavar="AGENT", help="The configured agent (default: the profile's).")
def start_command(as_json: bool, restricted: bool, agent: str | None) -> None:
    """Start the workspace's daemon, or hand over the one already running."""
    from robota.host import find_daemon, start_lock_holder, take_start_lock  # noqa: PLC0415

    from ._session_cmd import start_background  # noqa: PLC0415

    profile, workspace = _here()
    _gate(profile, workspace, restricted)
    running = find_daemon(profile, workspace)
    if running is not None:
        _report(_handed(running, restricted), started=False, as_json=as_json)
        return
    lock = take_start_lock(profile, workspace)
    if lock is None:
        deadline = time.monotonic() + HANDOVER_WAIT
        while time.monotonic() < deadline:
            running = find_daemon(profile, workspace)
            holder = start_lock_holder(profile, workspace)
            if running is not None and holder is None:
                _report(_handed(running, restricted), started=False, as_json=as_json)
                return
            if holder is not None and not holder[1]:
                break
            if holder is None and running is None:
                lock = take_start_lock(profile, workspace)  # the winner failed: try again
                if lock is not None:
                    break
            time.sleep(0.1)
        if lock is None:
            holder = start_lock_holder(profile, workspace)
            who = f"pid {holder[0]}" if holder is not None else "another start"
            click.echo(
                f"robota: {who} holds this workspace's daemon start lock and no daemon came "
                "up; if that start is gone: robota daemon unlock",
                err=True,
            )
            sys.exit(1)
    try:
        running = find_daemon(profile, workspace)  # one finished between our two looks
        if running is not None:
            _report(_handed(running, restricted), started=False, as_json=as_json)
            return
        registration = start_background(
            name="daemon", agent=agent, cwd=workspace, daemon=True, restricted=restricted
        )
    finally:
        lock.release()
    _report(registration, started=True, as_json=as_json)


@daemon_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def status_command(as_json: bool) -> None:
    """Whether the workspace's daemon runs (and whether it is Restricted)."""
    from robota.host import find_daemon, status_of  # noqa: PLC0415

    profile, workspace = _here()
    running = find_daemon(profile, workspace)
    status = status_of(running) if running is not None else None
    result: dict[str, object] = {"running": running is not None}
    if running is not None:
        state = status.get("state") if status is not None else "unknown"
        result |= {"id": running.id, "state": state, "restricted": running.restricted}
    if as_json:
        click.echo(json.dumps(result))
    elif running is None:
        click.echo("no daemon runs for this workspace")
    else:
        restricted = ", Restricted" if running.restricted else ""
        click.echo(f"daemon {running.id}: {result['state']}{restricted}")


@daemon_group.command("stop")
def stop_command() -> None:
    """Stop the workspace's daemon and wait until its process is gone."""
    from robota.host import find_daemon  # noqa: PLC0415

    from ._session_cmd import stop_session  # noqa: PLC0415

    profile, workspace = _here()
    running = find_daemon(profile, workspace)
    if running is None:
        click.echo("no daemon runs for this workspace")
        return
    stop_session(running)
    click.echo(f"daemon {running.id} stopped")


@daemon_group.command("unlock")
def unlock_command() -> None:
    """Remove the workspace's daemon start lock (left by a start that died)."""
    from robota.host import unlock  # noqa: PLC0415

    profile, workspace = _here()
    if unlock(profile, workspace):
        click.echo("the daemon start lock was removed")
    else:
        click.echo("no daemon start lock was held")
