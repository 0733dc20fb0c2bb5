"""Team registry rows and the decision audit, through a real writer on a real file."""

from __future__ import annotations

import pytest

from robota.core.store import (
    AppendTeamAudit,
    BindRouteTask,
    CountHeldTeamMessage,
    CreateTask,
    DropTeamRequest,
    LoadTeamLastTask,
    LoadTeamRequests,
    SaveTeamRequest,
    SaveTeamState,
    SetTeamPaused,
    StartTeamRequest,
    TeamAuditEvent,
    TeamLastTask,
    latest_team_audit,
    open_reader,
    team_audit,
    team_requests,
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


class _Attempt:
    """A turn attempt row as the engine leaves it (only the columns these tests read)."""

    def __init__(self, id: str, task: str, route: str, status: str, usage: str | None) -> None:
        self.row = (id, task, route, status, usage)

    def apply(self, db, /) -> None:
        db.execute(
            "INSERT INTO turn_attempts (id, task_id, route_key, status, prompt, usage_json,"
            " created_at, updated_at) VALUES (?, ?, ?, ?, 'p', ?, 1.0, 1.0)",
            self.row,
        )


def _request(id: str, route: str, at: float) -> SaveTeamRequest:
    return SaveTeamRequest("web", id, route, id, f"text of {id}", "plan", "web: t", True, at=at)


def test_team_requests_are_kept_until_dropped_and_say_whether_their_route_began(
    store, reader
) -> None:
    write = store.client.write_sync
    assert write(_request("r1#a", "r1", 1.0), timeout=5) is True
    assert write(_request("r1#a", "r1", 9.0), timeout=5) is False  # a redelivered event
    assert write(_request("r2#b", "r2", 2.0), timeout=5) is True
    assert write(_request("r3#c", "r3", 3.0), timeout=5) is True
    write(StartTeamRequest("web", "r1#a", at=4.0), timeout=5)
    write(StartTeamRequest("web", "r2#b", at=5.0), timeout=5)
    write(_Attempt("a1", "t1", "r1", "running", None), timeout=5)  # type: ignore[arg-type]
    write(_Attempt("a2", "t2", "r2", "interrupted", None), timeout=5)  # type: ignore[arg-type]
    loaded = write(LoadTeamRequests("web"), timeout=5)
    assert [(row.id, row.started_at, began, live) for row, began, live in loaded] == [
        ("r1#a", 4.0, True, True),
        ("r2#b", 5.0, True, False),
        ("r3#c", None, False, False),
    ]
    first = loaded[0][0]
    assert (first.text, first.permission_mode, first.title, first.new_task) == (
        "text of r1#a",
        "plan",
        "web: t",
        True,
    )
    write(DropTeamRequest("r1#a"), timeout=5)
    assert [row.id for row in team_requests(reader, "web")] == ["r2#b", "r3#c"]
    assert team_requests(reader, "other") == []


def test_the_last_task_of_a_team_is_its_last_started_requests(store, reader) -> None:
    write = store.client.write_sync
    assert write(LoadTeamLastTask("web"), timeout=5) == TeamLastTask()
    write(_request("r1#a", "r1", 1.0), timeout=5)
    write(StartTeamRequest("web", "r1#a", at=2.0), timeout=5)
    write(CreateTask("t1", "codex", "/p", "acp", model="gpt-5", at=2.0), timeout=5)
    write(BindRouteTask("r1", "t1", at=2.0), timeout=5)
    assert write(LoadTeamLastTask("web"), timeout=5) == TeamLastTask("gpt-5", None)
    usage = '{"total_tokens": 300, "context_window": 1000}'
    write(_Attempt("a1", "t1", "r1", "completed", usage), timeout=5)  # type: ignore[arg-type]
    write(_Attempt("a2", "t1", "r1", "running", None), timeout=5)  # type: ignore[arg-type]
    assert write(LoadTeamLastTask("web"), timeout=5) == TeamLastTask(
        "gpt-5", {"total_tokens": 300, "context_window": 1000}
    )
