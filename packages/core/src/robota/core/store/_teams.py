"""Team groups' state: the registry row of each team and the audit of its decisions.

``teams`` holds one row per team, created on first write: ``paused`` (the operator's switch,
``robota team pause|resume``), ``held_count`` (messages claimed while paused: on resume the group
is told how many, and they are not replayed), and the team actor's last saved scheduler and
pending confirmations as JSON text (encoded by ``robota.core.policy``, which this layer does not
import). ``version`` only grows: ``SaveTeamState`` refuses an older one, so a save from an
incarnation that died late never rolls back its successor's registry.

``team_audit`` records every permission decision: sender, intent, level, decision and time, and
never what the message said.

``team_requests`` (migration 6) holds what starts each request of a team, its prompt included,
from its submission until it ends: a request queued, or started but not yet begun, when the
host died runs after the restart, once (``StartTeamRequest`` marks it started; the door drops it
when it ends). ``teams.last_route`` is the route of the team's last started request: its task's
model and context usage are what the online and offline notes show (``LoadTeamLastTask``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._database import Database
from ._records import JSONValue, load_json, stamp

__all__ = [
    "AppendTeamAudit",
    "CountHeldTeamMessage",
    "DropTeamRequest",
    "LoadTeamLastTask",
    "LoadTeamRequests",
    "LoadTeamRow",
    "SaveTeamRequest",
    "StartTeamRequest",
    "TeamLastTask",
    "TeamRequestRow",
    "SaveTeamState",
    "SetTeamPaused",
    "TeamAuditEvent",
    "TeamRow",
    "latest_team_audit",
    "team_audit",
    "team_requests",
    "team_row",
    "team_rows",
]


def _ensure(db: Database, name: str, at: float) -> None:
    db.execute(
        "INSERT INTO teams (name, updated_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        (name, at),
    )


@dataclass(frozen=True, slots=True)
class TeamRow:
    name: str
    paused: bool
    paused_at: float | None
    held_count: int
    version: int
    scheduler_json: str
    confirmations_json: str
    updated_at: float

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> TeamRow:
        return cls(
            name=str(row["name"]),
            paused=bool(row["paused"]),
            paused_at=None if row["paused_at"] is None else float(row["paused_at"]),
            held_count=int(row["held_count"]),
            version=int(row["version"]),
            scheduler_json=str(row["scheduler_json"]),
            confirmations_json=str(row["confirmations_json"]),
            updated_at=float(row["updated_at"]),
        )


@dataclass(frozen=True, slots=True)
class TeamAuditEvent:
    id: int
    team: str
    sender: str
    intent: str
    level: str
    decision: str
    created_at: float


@dataclass(frozen=True, slots=True)
class SaveTeamState:
    """Store a team's scheduler and confirmations; ``False`` when a newer version is stored."""

    name: str
    version: int
    scheduler_json: str
    confirmations_json: str
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        at = stamp(self.at)
        _ensure(db, self.name, at)
        cursor = db.execute(
            "UPDATE teams SET version = :version, scheduler_json = :scheduler,"
            " confirmations_json = :confirmations, updated_at = :at"
            " WHERE name = :name AND version <= :version",
            {
                "version": self.version,
                "scheduler": self.scheduler_json,
                "confirmations": self.confirmations_json,
                "at": at,
                "name": self.name,
            },
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class SetTeamPaused:
    """Pause or resume a team; returns how many messages were held while it was paused.

    Resuming clears the count (the group is told it once); pausing a paused team keeps the
    original ``paused_at``, and both are idempotent.
    """

    name: str
    paused: bool
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        at = stamp(self.at)
        _ensure(db, self.name, at)
        row = db.execute("SELECT paused, held_count FROM teams WHERE name = ?", (self.name,))
        was_paused, held = row.fetchone()
        if self.paused and not was_paused:
            db.execute(
                "UPDATE teams SET paused = 1, paused_at = ?, held_count = 0, updated_at = ?"
                " WHERE name = ?",
                (at, at, self.name),
            )
            return 0
        if not self.paused and was_paused:
            db.execute(
                "UPDATE teams SET paused = 0, paused_at = NULL, held_count = 0, updated_at = ?"
                " WHERE name = ?",
                (at, self.name),
            )
        return int(held)


@dataclass(frozen=True, slots=True)
class CountHeldTeamMessage:
    """One more message arrived while the team is paused; returns the new count."""

    name: str
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        at = stamp(self.at)
        _ensure(db, self.name, at)
        db.execute(
            "UPDATE teams SET held_count = held_count + 1, updated_at = ? WHERE name = ?",
            (at, self.name),
        )
        row = db.execute("SELECT held_count FROM teams WHERE name = ?", (self.name,))
        return int(row.fetchone()[0])


@dataclass(frozen=True, slots=True)
class AppendTeamAudit:
    """Record one permission decision; returns its id. No content, by construction."""

    team: str
    sender: str
    intent: str
    level: str
    decision: str
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        cursor = db.execute(
            "INSERT INTO team_audit (team, sender, intent, level, decision, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (self.team, self.sender, self.intent, self.level, self.decision, stamp(self.at)),
        )
        if cursor.lastrowid is None:
            raise RuntimeError("sqlite3 reported no rowid for an INSERT")
        return cursor.lastrowid


def team_rows(db: Database) -> list[TeamRow]:
    return [TeamRow.from_row(row) for row in db.query("SELECT * FROM teams ORDER BY name")]


def team_row(db: Database, name: str) -> TeamRow | None:
    rows = list(db.query("SELECT * FROM teams WHERE name = ?", (name,)))
    return TeamRow.from_row(rows[0]) if rows else None


def team_audit(
    db: Database, team: str, *, after_id: int = 0, limit: int = 100
) -> list[TeamAuditEvent]:
    """``team``'s decisions with ``id > after_id``, oldest first; page with the last id seen."""
    rows = db.query(
        "SELECT * FROM team_audit WHERE team = ? AND id > ? ORDER BY id LIMIT ?",
        (team, after_id, limit),
    )
    return [TeamAuditEvent(**row) for row in rows]


def latest_team_audit(db: Database, team: str, *, limit: int = 100) -> list[TeamAuditEvent]:
    """``team``'s newest ``limit`` decisions, oldest of them first."""
    rows = db.query(
        "SELECT * FROM (SELECT * FROM team_audit WHERE team = ? ORDER BY id DESC LIMIT ?)"
        " ORDER BY id",
        (team, limit),
    )
    return [TeamAuditEvent(**row) for row in rows]


@dataclass(frozen=True, slots=True)
class LoadTeamRow:
    """Read a team's row through the writer: after every write queued before it, so a new
    incarnation of a team actor restores what its predecessor last committed."""

    name: str

    def apply(self, db: Database, /) -> TeamRow | None:
        return team_row(db, self.name)


@dataclass(frozen=True, slots=True)
class TeamRequestRow:
    """What starts one team request (``SaveTeamRequest``); ``started_at`` once it started."""

    id: str
    team: str
    route: str
    anchor: str
    text: str
    permission_mode: str | None
    title: str | None
    new_task: bool
    started_at: float | None
    created_at: float

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> TeamRequestRow:
        return cls(
            id=str(row["id"]),
            team=str(row["team"]),
            route=str(row["route"]),
            anchor=str(row["anchor"]),
            text=str(row["text"]),
            permission_mode=None if row["permission_mode"] is None else str(row["permission_mode"]),
            title=None if row["title"] is None else str(row["title"]),
            new_task=bool(row["new_task"]),
            started_at=None if row["started_at"] is None else float(row["started_at"]),
            created_at=float(row["created_at"]),
        )


@dataclass(frozen=True, slots=True)
class SaveTeamRequest:
    """Keep what starts a request before the scheduler hears of it (the same writer, so the
    request is stored before the registry that names it). A second save of the same id is a
    no-op (a redelivered event); returns whether it was new."""

    team: str
    id: str
    route: str
    anchor: str
    text: str
    permission_mode: str | None
    title: str | None
    new_task: bool
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "INSERT INTO team_requests (id, team, route, anchor, text, permission_mode, title,"
            " new_task, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO NOTHING",
            (
                self.id,
                self.team,
                self.route,
                self.anchor,
                self.text,
                self.permission_mode,
                self.title,
                int(self.new_task),
                stamp(self.at),
            ),
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True)
class StartTeamRequest:
    """The request was handed to its transport to run: marked started (a restart runs it again
    only if its route never began a turn) and its route becomes the team's last one."""

    team: str
    id: str
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        at = stamp(self.at)
        db.execute(
            "UPDATE team_requests SET started_at = COALESCE(started_at, ?) WHERE id = ?",
            (at, self.id),
        )
        _ensure(db, self.team, at)
        db.execute(
            "UPDATE teams SET last_route = (SELECT route FROM team_requests WHERE id = ?),"
            " updated_at = ? WHERE name = ? AND EXISTS (SELECT 1 FROM team_requests WHERE id = ?)",
            (self.id, at, self.team, self.id),
        )


@dataclass(frozen=True, slots=True)
class DropTeamRequest:
    """The request ended (run, withdrawn, refused, timed out): its prompt is no longer kept."""

    id: str

    def apply(self, db: Database, /) -> None:
        db.execute("DELETE FROM team_requests WHERE id = ?", (self.id,))


def team_requests(db: Database, team: str) -> list[TeamRequestRow]:
    """``team``'s requests not yet ended, oldest first."""
    rows = db.query(
        "SELECT * FROM team_requests WHERE team = ? ORDER BY created_at, rowid", (team,)
    )
    return [TeamRequestRow.from_row(row) for row in rows]


@dataclass(frozen=True, slots=True)
class LoadTeamRequests:
    """``team_requests`` through the writer, with whether each one's route ever began a turn
    and whether one runs there now: ``(row, began, live)``, oldest first."""

    team: str

    def apply(self, db: Database, /) -> list[tuple[TeamRequestRow, bool, bool]]:
        out = []
        for row in team_requests(db, self.team):
            statuses = [
                str(r["status"])
                for r in db.query(
                    "SELECT status FROM turn_attempts WHERE route_key = ?", (row.route,)
                )
            ]
            live = any(s in ("accepted", "running", "recovering") for s in statuses)
            out.append((row, bool(statuses), live))
        return out


@dataclass(frozen=True, slots=True)
class TeamLastTask:
    """The model and the last reported usage of a team's last task (either may be unknown)."""

    model: str | None = None
    usage: JSONValue = None


@dataclass(frozen=True, slots=True)
class LoadTeamLastTask:
    """``TeamLastTask`` of ``teams.last_route``'s current task (``None`` fields when unknown)."""

    team: str

    def apply(self, db: Database, /) -> TeamLastTask:
        rows = list(
            db.query(
                "SELECT t.id, t.model FROM teams m JOIN routes r ON r.route_key = m.last_route"
                " JOIN tasks t ON t.id = r.current_task_id WHERE m.name = ?",
                (self.team,),
            )
        )
        if not rows:
            return TeamLastTask()
        task_id, model = rows[0]["id"], rows[0]["model"]
        usage = list(
            db.query(
                "SELECT usage_json FROM turn_attempts WHERE task_id = ? AND usage_json IS NOT NULL"
                " ORDER BY created_at DESC, rowid DESC LIMIT 1",
                (task_id,),
            )
        )
        return TeamLastTask(
            None if model is None else str(model),
            load_json(str(usage[0]["usage_json"])) if usage else None,
        )
