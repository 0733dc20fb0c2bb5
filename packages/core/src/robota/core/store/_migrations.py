"""Versioned schema migrations.

The schema is whatever the ordered list ``MIGRATIONS`` builds, one version at a time. Each
migration runs in its own ``BEGIN IMMEDIATE`` transaction together with the row that records its
version in ``schema_versions``, so a crash or an error leaves the database at the previous version,
never between two. Inside the transaction the current version is read again, so two processes
that open the same file at once apply each migration exactly once.

A database whose version is newer than the last migration this code knows is refused: its tables
may mean something this code cannot honour, and writing to it could lose data a newer robota
relies on.

Rules for adding one: append, never edit or reorder a released migration; a migration only moves
the schema forward (no down migrations: restore the backup instead); add sample rows for every new
table to ``tests/store/test_migrations.py``, whose guard test fails until you do. Write it with
sqlite-utils (``schema_change``: ``create_table``, ``create_index``, ``add_column``, and
``transform`` for what ``ALTER TABLE`` cannot do) rather than hand-written DDL; ``_statements``
is the form the released ones 1-5 have, kept as they are so old and new files stay identical
(6 on are ``schema_change``).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._errors import StoreError
from ._database import Database
from ._tables import schema_change

if TYPE_CHECKING:
    import sqlite_utils

__all__ = ["MIGRATIONS", "Migration", "migrate", "schema_version"]

_VERSIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_versions (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of the schema: ``apply`` moves a database from ``version - 1`` to ``version``.

    ``apply`` runs inside the migration's transaction; it must not commit, roll back or change
    pragmas that cannot change inside a transaction.
    """

    version: int
    name: str
    apply: Callable[[Database], None]


def _statements(*sql: str) -> Callable[[Database], None]:
    """A migration body from plain DDL, run statement by statement inside the transaction.

    ``executescript`` is not an option: the sqlite3 driver commits before running a script.
    """

    def apply(db: Database) -> None:
        for statement in sql:
            db.execute(statement)

    return apply


_V1_CONVERSATIONS = _statements(
    """
    CREATE TABLE routes (
        route_key TEXT PRIMARY KEY,
        current_task_id TEXT,
        previous_task_id TEXT,
        default_agent TEXT,
        project_cwd TEXT,
        updated_at REAL NOT NULL
    )
    """,
    """
    CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        cwd TEXT NOT NULL,
        runtime_kind TEXT NOT NULL,
        remote_id TEXT,
        title TEXT,
        model TEXT,
        effort TEXT,
        permission_mode TEXT,
        provider TEXT,
        last_turn_id TEXT,
        last_turn_status TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
    "CREATE INDEX tasks_by_remote_id ON tasks (runtime_kind, remote_id)",
    """
    CREATE TABLE inbound_event_receipts (
        event_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        received_at REAL NOT NULL
    )
    """,
    "CREATE INDEX inbound_event_receipts_by_time ON inbound_event_receipts (received_at)",
    """
    CREATE TABLE turn_attempts (
        id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        route_key TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN
            ('accepted', 'running', 'recovering', 'interrupted', 'completed', 'failed')),
        prompt TEXT NOT NULL,
        images_json TEXT NOT NULL DEFAULT '[]',
        anchor_message_id TEXT,
        remote_turn_id TEXT,
        retry_count INTEGER NOT NULL DEFAULT 0,
        recovery_count INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        heartbeat_at REAL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
    "CREATE INDEX turn_attempts_by_status_heartbeat ON turn_attempts (status, heartbeat_at)",
    "CREATE INDEX turn_attempts_by_task ON turn_attempts (task_id, created_at)",
    """
    CREATE TABLE queued_prompts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        route_key TEXT NOT NULL,
        task_id TEXT,
        text TEXT NOT NULL,
        display_text TEXT,
        images_json TEXT NOT NULL DEFAULT '[]',
        message_id TEXT,
        status TEXT NOT NULL DEFAULT 'pending'
            CHECK (status IN ('pending', 'cancelled', 'taken')),
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX queued_prompts_by_route ON queued_prompts (route_key, status, id)",
    """
    CREATE TABLE route_states (
        route_key TEXT PRIMARY KEY,
        state_json TEXT NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
)

_V2_PRESENTATION_AND_AUDIT = _statements(
    """
    CREATE TABLE turn_snapshots (
        turn_id TEXT PRIMARY KEY,
        task_id TEXT NOT NULL,
        activities_json TEXT NOT NULL DEFAULT '[]',
        updated_at REAL NOT NULL
    )
    """,
    """
    CREATE TABLE message_bindings (
        message_id TEXT PRIMARY KEY,
        route_key TEXT NOT NULL,
        task_id TEXT,
        turn_id TEXT
    )
    """,
    "CREATE INDEX message_bindings_by_turn ON message_bindings (turn_id)",
    """
    CREATE TABLE final_deliveries (
        turn_id TEXT PRIMARY KEY,
        progress_message_id TEXT,
        final_message_ids_json TEXT NOT NULL DEFAULT '[]',
        final_delivered_at REAL,
        last_card_hash TEXT
    )
    """,
    """
    CREATE TABLE card_action_bindings (
        token TEXT PRIMARY KEY,
        message_id TEXT NOT NULL,
        route_key TEXT NOT NULL,
        payload_json TEXT NOT NULL,
        created_at REAL NOT NULL,
        expires_at REAL,
        used_at REAL
    )
    """,
    "CREATE INDEX card_action_bindings_by_expiry ON card_action_bindings (expires_at)",
    """
    CREATE TABLE audit_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        event_type TEXT NOT NULL,
        payload_json TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX audit_events_by_type ON audit_events (event_type, created_at)",
    """
    CREATE TABLE message_reactions (
        message_id TEXT NOT NULL,
        emoji TEXT NOT NULL,
        reaction_id TEXT,
        created_at REAL NOT NULL,
        PRIMARY KEY (message_id, emoji)
    )
    """,
    """
    CREATE TABLE chat_contexts (
        chat_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        title TEXT,
        context_json TEXT NOT NULL DEFAULT '{}',
        updated_at REAL NOT NULL
    )
    """,
    """
    CREATE TABLE turn_parent_links (
        turn_id TEXT PRIMARY KEY,
        parent_turn_id TEXT NOT NULL,
        relation TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX turn_parent_links_by_parent ON turn_parent_links (parent_turn_id)",
)

_V3_TASK_LINEAGE_AND_OUTCOMES = _statements(
    # A fork names its source; a task keeps the instructions it was started with, so a fork or
    # a resume in a new process opens the agent session the same way.
    "ALTER TABLE tasks ADD COLUMN forked_from TEXT",
    "ALTER TABLE tasks ADD COLUMN fork_turn_id TEXT",
    "ALTER TABLE tasks ADD COLUMN developer_instructions TEXT",
    "CREATE INDEX tasks_by_cwd ON tasks (cwd, updated_at)",
    # What a finished attempt produced, so recovery can deliver a final answer it never sent.
    "ALTER TABLE turn_attempts ADD COLUMN final_text TEXT",
    "ALTER TABLE turn_attempts ADD COLUMN usage_json TEXT",
    "ALTER TABLE turn_attempts ADD COLUMN finished_at REAL",
)

_V4_TURN_LINEAGE = _statements(
    # The agent session (App Server thread) a turn ran in: a reset forks *that* session
    # through the turn, whatever the task is bound to since.
    "ALTER TABLE turn_attempts ADD COLUMN remote_session_id TEXT",
    # The completed attempt the conversation stood at when this one began: the turn graph.
    "ALTER TABLE turn_attempts ADD COLUMN parent_id TEXT",
    # Where the conversation stands: the latest completed turn, or the one it was reset to.
    "ALTER TABLE tasks ADD COLUMN head_attempt_id TEXT",
)

_V5_TEAMS = _statements(
    # One row per configured team: whether the operator paused it, how many messages arrived
    # while paused, and its scheduler and pending confirmations as the team actor last saved
    # them (JSON from robota.core.policy; ``version`` only grows, so a late save from a dead
    # incarnation cannot roll a newer one back).
    """
    CREATE TABLE teams (
        name TEXT PRIMARY KEY,
        paused INTEGER NOT NULL DEFAULT 0,
        paused_at REAL,
        held_count INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 0,
        scheduler_json TEXT NOT NULL DEFAULT '{}',
        confirmations_json TEXT NOT NULL DEFAULT '[]',
        updated_at REAL NOT NULL
    )
    """,
    # Every permission decision in a team group; never the message's content.
    """
    CREATE TABLE team_audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        team TEXT NOT NULL,
        sender TEXT NOT NULL,
        intent TEXT NOT NULL,
        level TEXT NOT NULL,
        decision TEXT NOT NULL,
        created_at REAL NOT NULL
    )
    """,
    "CREATE INDEX team_audit_by_team ON team_audit (team, id)",
)


def _v6_team_requests(db: sqlite_utils.Database) -> None:
    # A team request's prompt and settings from the moment it is submitted until it ends, so a
    # request queued (or started but not yet begun) when the host died runs after the restart,
    # once and in order (the scheduler's registry in ``teams`` keeps its place).
    db.create_table(
        "team_requests",
        {
            "id": str,
            "team": str,
            "route": str,
            "anchor": str,
            "text": str,
            "permission_mode": str,
            "title": str,
            "new_task": int,
            "started_at": float,
            "created_at": float,
        },
        pk="id",
        not_null={"team", "route", "anchor", "text", "new_task", "created_at"},
        defaults={"new_task": 1},
    )
    db.table("team_requests").create_index(
        ["team", "created_at"], index_name="team_requests_by_team"
    )
    # The route of the team's last started request: whose task the notes' context bar shows.
    db.table("teams").add_column("last_route", str)


_V7_TASK_OWNERS = _statements(
    # The one process that drives each task (the host, a background session, the daemon) and
    # how to reach it; ``generation`` grows with every change of owner (``_owners``).
    """
    CREATE TABLE task_owners (
        task_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        pid INTEGER NOT NULL,
        process_start INTEGER,
        socket TEXT NOT NULL,
        token TEXT NOT NULL DEFAULT '',
        generation INTEGER NOT NULL,
        claimed_at REAL NOT NULL
    )
    """,
)

_V8_MESH_MARKS = _statements(
    # The highest sequence of each signed mesh list (``roster``, ``revocations``) this device
    # has accepted: a list below it is refused as rolled back, whatever restarts in between
    # (``_mesh``; the lists themselves are robota.mesh's).
    """
    CREATE TABLE mesh_marks (
        list TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "conversation state", _V1_CONVERSATIONS),
    Migration(2, "presentation and audit", _V2_PRESENTATION_AND_AUDIT),
    Migration(3, "task lineage and turn outcomes", _V3_TASK_LINEAGE_AND_OUTCOMES),
    Migration(4, "turn lineage", _V4_TURN_LINEAGE),
    Migration(5, "teams", _V5_TEAMS),
    Migration(6, "team requests", schema_change(_v6_team_requests)),
    Migration(7, "task owners", _V7_TASK_OWNERS),
    Migration(8, "mesh marks", _V8_MESH_MARKS),
)
"""Every migration this code knows, oldest first; the last one's version is the schema's."""


def schema_version(db: Database) -> int:
    """The version the database is at: 0 for an empty one."""
    if not db.table_exists("schema_versions"):
        return 0
    row = db.execute("SELECT max(version) FROM schema_versions").fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def migrate(
    db: Database,
    migrations: Sequence[Migration] = MIGRATIONS,
    *,
    target: int | None = None,
) -> int:
    """Bring ``db`` to version ``target`` (default: the last migration) and return it.

    ``db`` must be in driver autocommit mode (as the store's connections are) and outside a
    transaction. Raises ``StoreError`` when the database is newer than ``migrations`` know, and
    re-raises a failing migration's error after rolling it back.
    """
    _check_sequence(migrations)
    latest = migrations[-1].version if migrations else 0
    goal = latest if target is None else target
    if not 0 <= goal <= latest:
        raise ValueError(f"target version {goal} is outside 0..{latest}")
    if db.conn.in_transaction:
        raise StoreError("migrate() needs a connection outside a transaction")
    _refuse_newer(db, latest)
    for migration in migrations:
        if migration.version > goal:
            break
        _apply_one(db, migration, latest)
    return schema_version(db)


def _apply_one(db: Database, migration: Migration, latest: int) -> None:
    conn = db.conn
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as error:
        raise StoreError(f"cannot start migration {migration.version}: {error}") from error
    try:
        # Read again under the write lock: another process may have migrated meanwhile.
        _refuse_newer(db, latest)
        if schema_version(db) >= migration.version:
            conn.execute("COMMIT")
            return
        db.execute(_VERSIONS_TABLE)
        migration.apply(db)
        _still_in_transaction(db, migration)
        db.execute(
            "INSERT INTO schema_versions (version, name, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.name, time.time()),
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _still_in_transaction(db: Database, migration: Migration) -> None:
    if not db.conn.in_transaction:
        raise StoreError(f"migration {migration.version} ended its own transaction")


def _refuse_newer(db: Database, latest: int) -> None:
    found = schema_version(db)
    if found > latest:
        raise StoreError(
            f"the store's schema is at version {found}, newer than this robota knows "
            f"(up to {latest}); upgrade robota or point it at another data directory"
        )


def _check_sequence(migrations: Sequence[Migration]) -> None:
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migration versions must be 1, 2, 3 ... in order, got {versions}")
