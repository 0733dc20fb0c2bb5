"""``robota team list|status|audit``: the configured team groups, read from config and the store.

Read-only and content-free: a team's registry (what runs, what waits) and its decision audit
hold ids, senders, intents, tags, times and decisions, never what anyone wrote. Safe beside a
running host: the store is read on its own connection and never created or migrated (a store
from before teams existed reads as teams that never ran). ``--json`` for scripts.

``robota team pause|resume NAME`` go through the running host's control endpoint (``team.pause``
/ ``team.resume``: it stops reacting, tells the group, counts what arrives meanwhile and says
how many on resume); with no host they set the switch in the store for the next one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._agents_cmd import load_profile

if TYPE_CHECKING:
    from robota.core.config import Config, TeamConfig
    from robota.core.policy import SchedulerState
    from robota.core.store import Database, TeamAuditEvent, TeamRow

__all__ = ["team_group"]


@click.group("team")
def team_group() -> None:
    """Team groups: a group chat as the front door of one project (teams.<name>)."""


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at))


def _open(path: Path) -> Database | None:
    """A reader on the store, or ``None`` when there is no store or it predates teams."""
    import sqlite3  # noqa: PLC0415 (keeps --help fast)

    from robota.core import StoreError  # noqa: PLC0415
    from robota.core.store import open_reader  # noqa: PLC0415

    if not path.exists():
        return None
    try:
        db = open_reader(path)
        has_teams = db.table_exists("teams")
    except (StoreError, sqlite3.Error) as error:
        raise click.ClickException(f"cannot read the store {path}: {error}") from None
    if not has_teams:
        db.close()
        return None
    return db


def _team(config: Config, name: str) -> TeamConfig:
    team = config.teams.get(name)
    if team is None:
        configured = ", ".join(config.teams) or "none"
        raise click.ClickException(
            f"no team {name!r} in {config.file} (configured teams: {configured})"
        )
    return team


def _rows(db: Database | None) -> dict[str, TeamRow]:
    from robota.core.store import team_rows  # noqa: PLC0415

    return {} if db is None else {row.name: row for row in team_rows(db)}


def _state(row: TeamRow | None) -> SchedulerState:
    from robota.core.policy import SchedulerState, scheduler_from_json  # noqa: PLC0415

    if row is None:
        return SchedulerState()
    try:
        return scheduler_from_json(row.scheduler_json)
    except ValueError as error:
        raise click.ClickException(f"team {row.name!r}: {error}") from None


@team_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def list_command(as_json: bool) -> None:
    """The configured teams: transport, chat, project, paused or not, running and queued."""
    config, _ = load_profile()
    db = _open(config.storage.sqlite_path)
    try:
        rows = _rows(db)
    finally:
        if db is not None:
            db.close()
    listed = []
    for team in config.teams.values():
        row = rows.get(team.name)
        state = _state(row)
        listed.append(
            {
                "name": team.name,
                "transport": team.transport,
                "chat": team.chat,
                "project": str(team.project),
                "paused": bool(row and row.paused),
                "slots": team.slots,
                "running": len(state.running),
                "queued": len(state.queue),
            }
        )
    if as_json:
        click.echo(json.dumps({"teams": listed}, indent=2))
        return
    if not listed:
        click.echo(f"no teams in {config.file} (add a teams.<name> section)")
        return
    for item in listed:
        switch = "paused" if item["paused"] else "on"
        click.echo(
            f"{item['name']}  {item['transport']} {item['chat']}  {item['project']}  {switch}"
            f"  running {item['running']}/{item['slots']}, queued {item['queued']}"
        )


def _status(team: TeamConfig, row: TeamRow | None) -> dict[str, Any]:
    state = _state(row)
    return {
        "name": team.name,
        "paused": bool(row and row.paused),
        "paused_at": row.paused_at if row else None,
        "held_while_paused": row.held_count if row else 0,
        "slots": team.slots,
        "queue_limit": team.queue_limit,
        "max_turn_minutes": team.max_turn_minutes,
        "running": [
            {
                "request": r.request.id,
                "sender": r.request.sender,
                "intent": r.request.intent,
                "tags": list(r.request.tags),
                "started_at": r.started_at,
            }
            for r in state.running
        ],
        "queue": [
            {
                "position": position,
                "request": w.request.id,
                "sender": w.request.sender,
                "intent": w.request.intent,
                "tags": list(w.request.tags),
                "queued_at": w.queued_at,
                "reason": w.reason,
            }
            for position, w in enumerate(state.queue, start=1)
        ],
    }


def _status_lines(status: dict[str, Any]) -> list[str]:
    switch = "paused" if status["paused"] else "on"
    if status["paused"] and status["held_while_paused"]:
        switch += f" ({status['held_while_paused']} messages held)"
    lines = [
        f"team {status['name']}: {switch}",
        f"  slots {len(status['running'])}/{status['slots']}, queue "
        f"{len(status['queue'])}/{status['queue_limit']}, turns end after "
        f"{status['max_turn_minutes']} min",
    ]
    lines += [
        f"  running {r['request']}  {r['sender']}  {r['intent']}  {' '.join(r['tags'])}"
        f"  since {_when(r['started_at'])}"
        for r in status["running"]
    ]
    lines += [
        f"  queued #{w['position']} {w['request']}  {w['sender']}  {w['intent']}"
        f"  {' '.join(w['tags'])}  since {_when(w['queued_at'])} ({w['reason']})"
        for w in status["queue"]
    ]
    return lines


@team_group.command("status")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def status_command(name: str, as_json: bool) -> None:
    """A team's slots, its running requests and its queue (content-free)."""
    from robota.core.store import team_row  # noqa: PLC0415

    config, _ = load_profile()
    team = _team(config, name)
    db = _open(config.storage.sqlite_path)
    try:
        row = None if db is None else team_row(db, name)
    finally:
        if db is not None:
            db.close()
    status = _status(team, row)
    if as_json:
        click.echo(json.dumps(status, indent=2))
    else:
        for line in _status_lines(status):
            click.echo(line)


def _event_json(event: TeamAuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "sender": event.sender,
        "intent": event.intent,
        "level": event.level,
        "decision": event.decision,
        "at": event.created_at,
    }


@team_group.command("audit")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.option(
    "--limit",
    type=click.IntRange(1, 10_000),
    default=100,
    show_default=True,
    help="At most this many decisions, the newest.",
)
def audit_command(name: str, as_json: bool, limit: int) -> None:
    """A team's permission decisions, oldest first: sender, intent, level, decision, time."""
    from robota.core.store import latest_team_audit  # noqa: PLC0415

    config, _ = load_profile()
    _team(config, name)
    db = _open(config.storage.sqlite_path)
    try:
        events = [] if db is None else latest_team_audit(db, name, limit=limit)
    finally:
        if db is not None:
            db.close()
    if as_json:
        click.echo(json.dumps({"team": name, "events": [_event_json(e) for e in events]}, indent=2))
        return
    if not events:
        click.echo(f"team {name}: no decisions recorded")
    for event in events:
        click.echo(
            f"{_when(event.created_at)}  {event.sender}  {event.intent}  {event.level}"
            f"  -> {event.decision}"
        )


def _switch(name: str, paused: bool) -> dict[str, Any]:
    """Pause or resume ``name``: through the running host (it tells the group), else in the
    store (the next host starts the team paused, or resumed)."""
    from robota.core.control import (  # noqa: PLC0415
        ControlClient,
        HostRefused,
        HostUnreachable,
        NoHostRunning,
    )

    config, profile = load_profile()
    _team(config, name)
    try:
        with ControlClient(profile.control_socket, timeout=30.0) as client:
            answer = client.call("team.pause" if paused else "team.resume", {"name": name})
            return {**answer, "host": True}
    except NoHostRunning:
        pass
    except HostRefused as refused:
        raise click.ClickException(f"team {name}: {refused.message}") from None
    except HostUnreachable as error:
        raise click.ClickException(f"team {name}: {error}") from None
    from robota.core.store import SetTeamPaused, StoreClient, StoreWriter  # noqa: PLC0415

    writer = StoreWriter.start(config.storage.sqlite_path)
    try:
        held = StoreClient(writer).write_sync(SetTeamPaused(name, paused), timeout=30.0)
    finally:
        writer.stop(timeout=30)
    answer = {"team": name, "paused": paused, "host": False}
    return answer if paused else {**answer, "held": held}


@team_group.command("pause")
@click.argument("name")
def pause_command(name: str) -> None:
    """Pause a team group: its messages are recorded, not run, until resume."""
    answer = _switch(name, True)
    where = "the group is told" if answer["host"] else "no host runs: recorded in the store"
    click.echo(f"team {name} paused ({where})")


@team_group.command("resume")
@click.argument("name")
def resume_command(name: str) -> None:
    """Resume a paused team group; the group is told how many messages arrived meanwhile."""
    answer = _switch(name, False)
    click.echo(f"team {name} resumed; {answer.get('held', 0)} messages arrived while paused")
