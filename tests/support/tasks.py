"""Task records for tests that need a ``Task`` without a store."""

from __future__ import annotations

from robota.core.store import Task


def make_task(task_id: str, *, title: str | None = None, remote_id: str | None = None) -> Task:
    return Task(
        id=task_id,
        agent="codex",
        cwd="/w",
        runtime_kind="acp",
        title=title,
        remote_id=remote_id,
        model=None,
        effort=None,
        permission_mode=None,
        provider=None,
        forked_from=None,
        fork_turn_id=None,
        developer_instructions=None,
        last_turn_id=None,
        last_turn_status=None,
        created_at=0.0,
        updated_at=0.0,
    )
