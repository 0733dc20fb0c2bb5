"""The rows callers get back, as frozen dataclasses instead of dictionaries.

A row dictionary would leak column names and JSON encodings into every caller; these types make
the store's read side as checked as its write side. Each knows how to build itself from a row.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypeAlias, cast, get_args

__all__ = [
    "ACTIVE_TURN_STATUSES",
    "TURN_STATUSES",
    "AuditEvent",
    "FinalDelivery",
    "JSONValue",
    "PromptStatus",
    "QueuedPrompt",
    "TurnAttempt",
    "TurnStatus",
    "dump_json",
    "load_json",
]


def stamp(at: float | None) -> float:
    """``at``, or now: the time a write records when its op was given none (tests pass one)."""
    return time.time() if at is None else at


JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
"""What ``json.loads`` can return, as a type mypy can follow."""

TurnStatus: TypeAlias = Literal[
    "accepted", "running", "recovering", "interrupted", "completed", "failed"
]
"""Where a turn attempt is; the same set as the ``turn_attempts.status`` CHECK constraint."""

PromptStatus: TypeAlias = Literal["pending", "cancelled", "taken"]
"""Where a queued prompt is; the same set as the ``queued_prompts.status`` CHECK constraint."""

TURN_STATUSES: frozenset[str] = frozenset(get_args(TurnStatus))
ACTIVE_TURN_STATUSES: tuple[TurnStatus, ...] = ("accepted", "running", "recovering")

_Row = Mapping[str, object]


def dump_json(value: object) -> str:
    """Compact, key-ordered JSON: equal values give equal text, which hashes and diffs cleanly."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def load_json(text: str) -> JSONValue:
    return cast(JSONValue, json.loads(text))


def _text(row: _Row, key: str) -> str:
    return str(row[key])


def _opt_text(row: _Row, key: str) -> str | None:
    value = row[key]
    return None if value is None else str(value)


def _opt_float(row: _Row, key: str) -> float | None:
    value = row[key]
    return None if value is None else float(cast(float, value))


def _strings(text: object) -> tuple[str, ...]:
    value = json.loads(str(text))
    if not isinstance(value, list):
        raise TypeError(f"expected a JSON list, got {type(value).__name__}")
    return tuple(str(item) for item in value)


@dataclass(frozen=True, slots=True)
class TurnAttempt:
    """One attempt at running a turn: what recovery after a crash or restart starts from."""

    id: str
    task_id: str
    route_key: str
    status: TurnStatus
    prompt: str
    images: tuple[str, ...]
    anchor_message_id: str | None
    remote_turn_id: str | None
    retry_count: int
    recovery_count: int
    error: str | None
    heartbeat_at: float | None
    created_at: float
    updated_at: float
    final_text: str | None = None
    """What the agent answered, once the attempt completed."""
    usage: JSONValue = None
    finished_at: float | None = None
    remote_session_id: str | None = None
    """The agent's session the turn ran in, once it started."""
    parent_id: str | None = None
    """The completed attempt the conversation stood at when this one began."""

    @classmethod
    def from_row(cls, row: _Row) -> TurnAttempt:
        status = _text(row, "status")
        if status not in TURN_STATUSES:
            raise ValueError(f"unknown turn status {status!r}")
        return cls(
            id=_text(row, "id"),
            task_id=_text(row, "task_id"),
            route_key=_text(row, "route_key"),
            status=cast(TurnStatus, status),
            prompt=_text(row, "prompt"),
            images=_strings(row["images_json"]),
            anchor_message_id=_opt_text(row, "anchor_message_id"),
            remote_turn_id=_opt_text(row, "remote_turn_id"),
            retry_count=int(cast(int, row["retry_count"])),
            recovery_count=int(cast(int, row["recovery_count"])),
            error=_opt_text(row, "error"),
            heartbeat_at=_opt_float(row, "heartbeat_at"),
            created_at=float(cast(float, row["created_at"])),
            updated_at=float(cast(float, row["updated_at"])),
            final_text=_opt_text(row, "final_text"),
            usage=None if row["usage_json"] is None else load_json(_text(row, "usage_json")),
            finished_at=_opt_float(row, "finished_at"),
            remote_session_id=_opt_text(row, "remote_session_id"),
            parent_id=_opt_text(row, "parent_id"),
        )


@dataclass(frozen=True, slots=True)
class QueuedPrompt:
    """A prompt that arrived while its route was busy; taken in ``id`` order (FIFO)."""

    id: int
    route_key: str
    task_id: str | None
    text: str
    display_text: str | None
    images: tuple[str, ...]
    message_id: str | None
    status: PromptStatus
    created_at: float

    @classmethod
    def from_row(cls, row: _Row) -> QueuedPrompt:
        return cls(
            id=int(cast(int, row["id"])),
            route_key=_text(row, "route_key"),
            task_id=_opt_text(row, "task_id"),
            text=_text(row, "text"),
            display_text=_opt_text(row, "display_text"),
            images=_strings(row["images_json"]),
            message_id=_opt_text(row, "message_id"),
            status=cast(PromptStatus, _text(row, "status")),
            created_at=float(cast(float, row["created_at"])),
        )


@dataclass(frozen=True, slots=True)
class FinalDelivery:
    """The final-delivery ledger entry of one turn: what was sent, and whether it is done."""

    turn_id: str
    progress_message_id: str | None
    final_message_ids: tuple[str, ...]
    final_delivered_at: float | None
    last_card_hash: str | None

    @property
    def delivered(self) -> bool:
        return self.final_delivered_at is not None

    @classmethod
    def from_row(cls, row: _Row) -> FinalDelivery:
        return cls(
            turn_id=_text(row, "turn_id"),
            progress_message_id=_opt_text(row, "progress_message_id"),
            final_message_ids=_strings(row["final_message_ids_json"]),
            final_delivered_at=_opt_float(row, "final_delivered_at"),
            last_card_hash=_opt_text(row, "last_card_hash"),
        )


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One line of the audit trail, in append order (``id``)."""

    id: int
    event_type: str
    payload: JSONValue
    created_at: float

    @classmethod
    def from_row(cls, row: _Row) -> AuditEvent:
        return cls(
            id=int(cast(int, row["id"])),
            event_type=_text(row, "event_type"),
            payload=load_json(_text(row, "payload_json")),
            created_at=float(cast(float, row["created_at"])),
        )
