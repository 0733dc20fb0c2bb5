"""Migrations: every path to the latest schema ends at the same schema, with the rows kept."""

from __future__ import annotations

import itertools
import sqlite3
import threading
from pathlib import Path

import pytest

from robota.core import StoreError
from robota.core.store import MIGRATIONS, Database, Migration, StoreWriter, migrate, schema_version
from robota.core.store._connection import open_writer

LATEST = MIGRATIONS[-1].version

# A few rows per table, keyed by the version that created the table. A new migration that adds
# a table must add rows here: ``test_every_table_has_sample_rows`` fails until it does.
SAMPLE_ROWS: dict[int, dict[str, list[dict[str, object]]]] = {
    1: {
        "routes": [
            {
                "route_key": "tg:42",
                "current_task_id": "t1",
                "previous_task_id": None,
                "default_agent": "codex",
                "project_cwd": "/src/app",
                "updated_at": 1.5,
            }
        ],
        "tasks": [
            {
                "id": "t1",
                "agent": "codex",
                "cwd": "/src/app",
                "runtime_kind": "app-server",
                "remote_id": "thread-9",
                "title": "fix the build",
                "model": "gpt-5",
                "effort": "high",
                "permission_mode": "ask",
                "provider": "openai",
                "last_turn_id": "turn-1",
                "last_turn_status": "completed",
                "created_at": 1.0,
                "updated_at": 2.0,
            }
        ],
        "inbound_event_receipts": [
            {"event_id": "evt-1", "kind": "message", "received_at": 3.0},
            {"event_id": "evt-2", "kind": "callback", "received_at": 4.0},
        ],
        "turn_attempts": [
            {
                "id": "a1",
                "task_id": "t1",
                "route_key": "tg:42",
                "status": "running",
                "prompt": "hello",
                "images_json": '["/tmp/a.png"]',
                "anchor_message_id": "m1",
                "remote_turn_id": "turn-1",
                "retry_count": 1,
                "recovery_count": 0,
                "error": None,
                "heartbeat_at": 5.0,
                "created_at": 4.0,
                "updated_at": 5.0,
            }
        ],
        "queued_prompts": [
            {
                "id": 7,
                "route_key": "tg:42",
                "task_id": "t1",
                "text": "next",
                "display_text": "next!",
                "images_json": "[]",
                "message_id": "m2",
                "status": "pending",
                "created_at": 6.0,
            }
        ],
        "route_states": [{"route_key": "tg:42", "state_json": '{"n":1}', "updated_at": 7.0}],
    },
    2: {
        "turn_snapshots": [
            {"turn_id": "turn-1", "task_id": "t1", "activities_json": "[]", "updated_at": 8.0}
        ],
        "message_bindings": [
            {"message_id": "m1", "route_key": "tg:42", "task_id": "t1", "turn_id": "turn-1"}
        ],
        "final_deliveries": [
            {
                "turn_id": "turn-1",
                "progress_message_id": "m3",
                "final_message_ids_json": '["m4"]',
                "final_delivered_at": 9.0,
                "last_card_hash": "abc",
            }
        ],
        "card_action_bindings": [
            {
                "token": "tok",
                "message_id": "m3",
                "route_key": "tg:42",
                "payload_json": "{}",
                "created_at": 9.0,
                "expires_at": 99.0,
                "used_at": None,
            }
        ],
        "audit_events": [
            {"id": 1, "event_type": "turn.started", "payload_json": "{}", "created_at": 9.5}
        ],
        "message_reactions": [
            {"message_id": "m1", "emoji": "eyes", "reaction_id": "r1", "created_at": 9.6}
        ],
        "chat_contexts": [
            {
                "chat_id": "tg:42",
                "kind": "p2p",
                "title": None,
                "context_json": "{}",
                "updated_at": 9.7,
            }
        ],
        "turn_parent_links": [
            {
                "turn_id": "turn-2",
                "parent_turn_id": "turn-1",
                "relation": "retry",
                "created_at": 9.8,
            }
        ],
    },
    3: {
        "tasks": [
            {
                "id": "t2",
                "agent": "codex",
                "cwd": "/src/app",
                "runtime_kind": "app-server",
                "remote_id": "thread-10",
                "title": "fork of the build fix",
                "model": None,
                "effort": None,
                "permission_mode": "default",
                "provider": None,
                "last_turn_id": None,
                "last_turn_status": None,
                "created_at": 6.0,
                "updated_at": 6.0,
                "forked_from": "t1",
                "fork_turn_id": "turn-1",
                "developer_instructions": "be brief",
            }
        ],
        "turn_attempts": [
            {
                "id": "a2",
                "task_id": "t2",
                "route_key": "tg:42",
                "status": "completed",
                "prompt": "again",
                "images_json": "[]",
                "anchor_message_id": None,
                "remote_turn_id": "turn-2",
                "retry_count": 0,
                "recovery_count": 0,
                "error": None,
                "heartbeat_at": 7.0,
                "created_at": 6.5,
                "updated_at": 7.0,
                "final_text": "done",
                "usage_json": '{"total_tokens":12}',
                "finished_at": 7.0,
            }
        ],
    },
    4: {
        "tasks": [
            {
                "id": "t3",
                "agent": "codex",
                "cwd": "/src/app",
                "runtime_kind": "app-server",
                "remote_id": "thread-11",
                "title": "reset to the first turn",
                "model": None,
                "effort": None,
                "permission_mode": "default",
                "provider": None,
                "last_turn_id": "a3",
                "last_turn_status": "completed",
                "created_at": 8.0,
                "updated_at": 9.0,
                "forked_from": None,
                "fork_turn_id": None,
                "developer_instructions": None,
                "head_attempt_id": "a3",
            }
        ],
        "turn_attempts": [
            {
                "id": "a3",
                "task_id": "t3",
                "route_key": "tg:42",
                "status": "completed",
                "prompt": "once more",
                "images_json": "[]",
                "anchor_message_id": None,
                "remote_turn_id": "turn-3",
                "retry_count": 0,
                "recovery_count": 0,
                "error": None,
                "heartbeat_at": 9.0,
                "created_at": 8.5,
                "updated_at": 9.0,
                "final_text": "done again",
                "usage_json": None,
                "finished_at": 9.0,
                "remote_session_id": "thread-11",
                "parent_id": "a2",
            }
        ],
    },
    5: {
        "teams": [
            {
                "name": "web",
                "paused": 1,
                "paused_at": 10.0,
                "held_count": 2,
                "version": 3,
                "scheduler_json": '{"running": [], "queue": []}',
                "confirmations_json": "[]",
                "updated_at": 10.5,
            }
        ],
        "team_audit": [
            {
                "id": 1,
                "team": "web",
                "sender": "ou_a",
                "intent": "deploy",
                "level": "admin",
                "decision": "reject",
                "created_at": 11.0,
            }
        ],
    },
    6: {
        "team_requests": [
            {
                "id": "slack:C1:1.5#1.5",
                "team": "web",
                "route": "slack:C1:1.5",
                "anchor": "1.5",
                "text": "what changed?",
                "permission_mode": "plan",
                "title": "web: what changed?",
                "new_task": 1,
                "started_at": None,
                "created_at": 12.0,
            }
        ],
    },
    7: {
        "task_owners": [
            {
                "task_id": "t3",
                "owner": "session:0123456789ab",
                "pid": 4242,
                "process_start": 123456,
                "socket": "/run/robota/sessions/0123456789ab.sock",
                "token": "g1",
                "generation": 1,
                "claimed_at": 13.0,
            }
        ],
    },
    8: {"mesh_marks": [{"list": "roster", "seq": 3, "updated_at": 14.0}]},
    9: {
        "chat_inbox": [
            {
                "id": 1,
                "message_key": "feishu-message:om_1",
                "source": "feishu",
                "route_key": "feishu:chat_id:oc_1",
                "message_id": "om_1",
                "payload_json": '{"header": {"event_id": "ev1"}}',
                "created_at": 13.0,
                "consumed_at": 13.5,
                "attempt_id": "a1",
                "prompt_id": None,
                "settled_at": None,
                "via": "route",
            }
        ],
    },
    10: {
        "mesh_handoffs": [
            {
                "id": "h1",
                "side": "source",
                "task_id": "t1",
                "peer": "PEER",
                "phase": "transferring",
                "released": 0,
                "payload": b'{"v":1}',
                "manifest_length": 7,
                "manifest_sha256": b"\x01" * 32,
                "manifest_json": '{"inventory": {}}',
                "grant_blob": b"grant",
                "ack_blob": None,
                "expires_at": 20.0,
                "created_at": 14.0,
                "updated_at": 14.5,
            }
        ],
        "mesh_handoff_nonces": [{"nonce": b"\x02" * 16, "handoff": "h0", "seen_at": 14.0}],
        "task_transcripts": [
            {
                "task_id": "t0",
                "handoff": "h0",
                "transcript_json": '[{"prompt": "HELLO", "answer": "hi"}]',
                "primed_at": None,
                "created_at": 14.0,
            }
        ],
    },
    11: {
        "mesh_conversations": [
            {
                "peer": "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH-IIII-JJJJ-KKKK-LLLL-MMMM",
                "id": "c1",
                "began": "peer",
                "task_id": "t3",
                "peer_task": "t9",
                "hops": 3,
                "replies": 1,
                "state": "open",
                "reason": "",
                "created_at": 15.0,
                "updated_at": 15.5,
            }
        ],
    },
    12: {
        "mesh_offers": [
            {
                "peer": "AAAA-BBBB-CCCC-DDDD-EEEE-FFFF-GGGG-HHHH-IIII-JJJJ-KKKK-LLLL-MMMM",
                "direction": "in",
                "id": "0123abcd",
                "name": "report.pdf",
                "size": 12,
                "sha256": "ab" * 32,
                "path": "",
                "task_id": None,
                "phase": "offered",
                "detail": "",
                "created_at": 16.0,
                "expires_at": 616.0,
                "updated_at": 16.0,
            }
        ],
    },
    13: {
        "mesh_handoff_landing": [
            {
                "handoff": "0123abcd",
                "cwd": "/src/p",
                "staged_path": "/p/data/handoffs/0123abcd.staged",
                "updated_at": 17.0,
            }
        ],
    },
    14: {
        "final_deliveries": [
            {
                "turn_id": "turn-2",
                "progress_message_id": "m5",
                "final_message_ids_json": "[]",
                "final_delivered_at": None,
                "last_card_hash": "def",
                "final_claimed_at": 17.0,
            }
        ],
    },
    15: {
        "final_deliveries": [
            {
                "turn_id": "turn-3",
                "progress_message_id": None,
                "final_message_ids_json": "[]",
                "final_delivered_at": None,
                "last_card_hash": None,
                "final_claimed_at": None,
                "card_claimed_at": 18.0,
            }
        ],
    },
}


def normalized_schema(db: Database) -> list[tuple[str, str, str, str]]:
    """``sqlite_master`` without SQLite's own objects, whitespace collapsed, in a fixed order."""
    rows = db.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master "
        "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"
    ).fetchall()
    return [(kind, name, table, " ".join((sql or "").split())) for kind, name, table, sql in rows]


def user_tables(db: Database) -> set[str]:
    return {t for t in db.table_names() if t != "schema_versions" and not t.startswith("sqlite_")}


def insert_samples(db: Database, up_to: int) -> dict[str, list[dict[str, object]]]:
    inserted: dict[str, list[dict[str, object]]] = {}
    db.execute("BEGIN")
    for version in range(1, up_to + 1):
        for table, rows in SAMPLE_ROWS[version].items():
            for row in rows:
                columns = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values()))
            inserted.setdefault(table, []).extend(rows)
    db.execute("COMMIT")
    return inserted


def fresh(path: Path, target: int | None = None) -> Database:
    db = open_writer(path)
    migrate(db, target=target)
    return db


def test_empty_database_migrates_to_latest(tmp_path: Path) -> None:
    db = open_writer(tmp_path / "new.db")
    try:
        assert schema_version(db) == 0
        assert migrate(db) == LATEST
        assert user_tables(db) == {t for rows in SAMPLE_ROWS.values() for t in rows}
        recorded = db.execute("SELECT version, name FROM schema_versions ORDER BY version")
        assert recorded.fetchall() == [(m.version, m.name) for m in MIGRATIONS]
        # Running it again is a no-op.
        before = normalized_schema(db)
        assert migrate(db) == LATEST
        assert normalized_schema(db) == before
    finally:
        db.close()


def test_every_table_has_sample_rows(tmp_path: Path) -> None:
    db = fresh(tmp_path / "latest.db")
    try:
        assert user_tables(db) == {t for rows in SAMPLE_ROWS.values() for t in rows}
        assert set(SAMPLE_ROWS) == {m.version for m in MIGRATIONS}
    finally:
        db.close()


@pytest.mark.parametrize(
    ("start", "target"),
    [(s, t) for s, t in itertools.combinations(range(LATEST + 1), 2)],
    ids=lambda v: f"v{v}",
)
def test_upgrade_matches_a_fresh_database_and_keeps_rows(
    tmp_path: Path, start: int, target: int
) -> None:
    reference = fresh(tmp_path / "reference.db", target)
    old = fresh(tmp_path / "old.db", start)
    try:
        assert schema_version(old) == start
        inserted = insert_samples(old, start)
        assert migrate(old, target=target) == target
        assert normalized_schema(old) == normalized_schema(reference)
        for table, rows in inserted.items():
            found = [dict(row) for row in old.query(f"SELECT * FROM {table} ORDER BY rowid")]
            # Columns a later migration added read as NULL in the rows that predate it.
            assert len(found) == len(rows), table
            assert found == [{**dict.fromkeys(f), **r} for f, r in zip(found, rows, strict=True)]
        versions = [row[0] for row in old.execute("SELECT version FROM schema_versions")]
        assert versions == list(range(1, target + 1))
    finally:
        reference.close()
        old.close()


def test_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    db = fresh(path)
    db.execute(
        "INSERT INTO schema_versions (version, name, applied_at) VALUES (?, 'x', 0)", (LATEST + 3,)
    )
    before = normalized_schema(db)
    with pytest.raises(StoreError, match=rf"version {LATEST + 3}, newer .*up to {LATEST}"):
        migrate(db)
    assert normalized_schema(db) == before
    db.close()
    # The writer refuses it in ``started``, which is a crash its supervisor reports.
    with pytest.raises(StoreError, match="newer"):
        StoreWriter(path).started()


def test_failing_migration_leaves_the_previous_version(tmp_path: Path) -> None:
    def broken(db: Database) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("migration bug")

    db = fresh(tmp_path / "s.db")
    try:
        with pytest.raises(RuntimeError, match="migration bug"):
            migrate(db, (*MIGRATIONS, Migration(LATEST + 1, "broken", broken)))
        assert schema_version(db) == LATEST
        assert "half_done" not in db.table_names()
        assert not db.conn.in_transaction
    finally:
        db.close()


def test_migration_may_not_end_its_transaction(tmp_path: Path) -> None:
    def commits(db: Database) -> None:
        db.conn.execute("COMMIT")

    db = fresh(tmp_path / "s.db")
    try:
        with pytest.raises(StoreError, match="ended its own transaction"):
            migrate(db, (*MIGRATIONS, Migration(LATEST + 1, "rogue", commits)))
        assert schema_version(db) == LATEST
    finally:
        db.close()


@pytest.mark.parametrize("versions", [[2], [1, 3], [2, 1], [1, 1]])
def test_versions_must_count_up_from_one(tmp_path: Path, versions: list[int]) -> None:
    migrations = [Migration(v, f"m{v}", lambda db: None) for v in versions]
    db = open_writer(tmp_path / "s.db")
    try:
        with pytest.raises(ValueError, match="must be 1, 2, 3"):
            migrate(db, migrations)
        assert schema_version(db) == 0
    finally:
        db.close()


def test_target_outside_known_versions_is_rejected(tmp_path: Path) -> None:
    db = open_writer(tmp_path / "s.db")
    try:
        with pytest.raises(ValueError, match="outside"):
            migrate(db, target=LATEST + 1)
    finally:
        db.close()


def test_two_processes_migrating_at_once_apply_each_migration_once(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    open_writer(path).close()  # create the file (and WAL mode) before the race
    barrier = threading.Barrier(2, timeout=10)
    results: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            db = open_writer(path, busy_timeout=10)
            try:
                barrier.wait()
                results.append(migrate(db))
            finally:
                db.close()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert errors == []
    assert results == [LATEST, LATEST]
    check = sqlite3.connect(path)
    try:
        versions = [row[0] for row in check.execute("SELECT version FROM schema_versions")]
    finally:
        check.close()
    assert versions == list(range(1, LATEST + 1))
