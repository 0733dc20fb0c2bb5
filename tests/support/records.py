"""Store records built for tests: every field has a plain default, a test names what matters."""

from __future__ import annotations

from typing import Any

from robota.core.store import Task

__all__ = ["make_task"]


def make_task(task_id: str, **fields: Any) -> Task:
    """A ``Task`` with ``task_id`` and ``fields``; the rest an App Server task in ``/w``."""
    defaults: dict[str, Any] = {
        "agent": "codex",
        "cwd": "/w",
        "runtime_kind": "app-server",
        "remote_id": None,
        "title": None,
        "model": None,
        "effort": None,
        "permission_mode": None,
        "provider": None,
        "forked_from": None,
        "fork_turn_id": None,
        "developer_instructions": None,
        "last_turn_id": None,
        "last_turn_status": None,
        "created_at": 0.0,
        "updated_at": 0.0,
    }
    return Task(id=task_id, **{**defaults, **fields})
