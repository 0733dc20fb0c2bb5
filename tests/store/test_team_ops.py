"""Team registry rows and the decision audit, through a real writer on a real file."""

from __future__ import annotations

import pytest

from robota.core.store import (
    AppendTeamAudit,
    CountHeldTeamMessage,
    SaveTeamState,
    SetTeamPaused,
    TeamAuditEvent,
    latest_team_audit,
    open_reader,
    team_audit,
    team_row,
    team_rows,
)


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def test_state_saves_are_versioned_and_never_rolled_back(store, reader) -> None:
    write = store.client.write_sync
    assert team_row(reader, "web") is None
    assert write(SaveTeamState("web", 1, '{"queue": [1]}', "[]", at=1.0), timeout=5) is True
    assert write(SaveTeamState("web", 4, '{"queue": [4]}', '[{"p": 1}]', at=2.0), timeout=5)
    assert write(SaveTeamState("web", 3, '{"queue": [3]}', "[]", at=3.0), timeout=5) is False
    row = team_row(reader, "web")
    assert row is not None
    assert (row.version, row.scheduler_json, row.confirmations_json, row.updated_at) == (
        4,
        '{"queue": [4]}',
        '[{"p": 1}]',
        2.0,
    )
    assert not row.paused and row.held_count == 0


def test_pause_counts_held_messages_and_resume_returns_and_clears_them(store, reader) -> None:
    write = store.client.write_sync
    assert write(SetTeamPaused("web", True, at=5.0), timeout=5) == 0
    assert write(CountHeldTeamMessage("web", at=6.0), timeout=5) == 1
    assert write(CountHeldTeamMessage("web", at=7.0), timeout=5) == 2
    assert write(SetTeamPaused("web", True, at=8.0), timeout=5) == 2  # already paused: kept
    row = team_row(reader, "web")
    assert row is not None and (row.paused, row.paused_at, row.held_count) == (True, 5.0, 2)
    assert write(SetTeamPaused("web", False, at=9.0), timeout=5) == 2
    row = team_row(reader, "web")
    assert row is not None and (row.paused, row.paused_at, row.held_count) == (False, None, 0)
    assert write(SetTeamPaused("web", False, at=10.0), timeout=5) == 0
    # Pausing keeps the saved registry.
    write(SaveTeamState("api", 2, '{"x": 1}', "[]", at=1.0), timeout=5)
    write(SetTeamPaused("api", True, at=2.0), timeout=5)
    assert [(r.name, r.paused, r.scheduler_json) for r in team_rows(reader)] == [
        ("api", True, '{"x": 1}'),
        ("web", False, "{}"),
    ]


T = {"timeout": 5}


def test_audit_is_per_team_in_order_and_pages(store, reader) -> None:
    write = store.client.write_sync
    ids = [
        write(AppendTeamAudit("web", "ou_a", "deploy", "admin", "reject", at=1.0), timeout=5),
        write(AppendTeamAudit("api", "ou_b", "ask", "public", "allow", at=2.0), timeout=5),
        write(AppendTeamAudit("web", "ou_c", "switch", "group-rejected", "group-rejected"), **T),
    ]
    events = team_audit(reader, "web")
    assert [e.id for e in events] == [ids[0], ids[2]]
    assert events[0] == TeamAuditEvent(ids[0], "web", "ou_a", "deploy", "admin", "reject", 1.0)
    assert [e.id for e in team_audit(reader, "web", after_id=ids[0])] == [ids[2]]
    assert [e.id for e in team_audit(reader, "web", limit=1)] == [ids[0]]
    assert [e.id for e in latest_team_audit(reader, "web", limit=1)] == [ids[2]]
    assert [e.id for e in latest_team_audit(reader, "web", limit=5)] == [ids[0], ids[2]]
    columns = [row[1] for row in reader.execute("PRAGMA table_info(team_audit)")]
    assert columns == ["id", "team", "sender", "intent", "level", "decision", "created_at"]
