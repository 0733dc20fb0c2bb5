"""``robota team list|status|audit``: the configured team groups, read from config and the store.

Read-only and content-free: a team's registry (what runs, what waits) and its decision audit
hold ids, senders, intents, tags, times and decisions, never what anyone wrote. Safe beside a
running host: the store is read on its own connection and never created or migrated (a store
from before teams existed reads as teams that never ran). ``--json`` for scripts.

``robota team pause|resume`` are the host's to act on (it must stop reacting, tell the group,
count what arrives meanwhile); the store side is ``robota.core.store.SetTeamPaused``.
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
