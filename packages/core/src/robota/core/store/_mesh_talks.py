"""The device mesh's conversations: ``mesh_conversations`` (migration 11), one row per
conversation with a peer device (issue 30 §1).

A conversation is named by the device that began it (``id``) and keyed here by the peer the
link proved and that id, so two peers can never touch each other's rows. Each side keeps its
own counts of what it sent and received (``hops``) and of the replies it sent (``replies``),
never a count the peer states; the counts are in the store so no restart resets them and a
conversation stays bounded across crashes. ``robota.mesh``'s ``_talk`` decides from them; the
host writes the whole row it decided (``SaveMeshConversation``) in one transaction before the
message it counts goes out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._database import Database
from ._records import stamp

__all__ = [
    "MeshConversation",
    "SaveMeshConversation",
    "mesh_conversation",
    "mesh_conversations",
]

_COLUMNS = (
    "peer, id, began, task_id, peer_task, hops, replies, state, reason, created_at, updated_at"
)


@dataclass(frozen=True, slots=True)
class MeshConversation:
    """One conversation with ``peer`` as this device counts it."""

    peer: str
    """The device the link proved (its printed id)."""
    id: str
    """Chosen by the side that began it."""
    began: Literal["me", "peer"]
    task_id: str | None = None
    """This device's task: the one the peer's messages run in, or (``began`` ``me``) the one
    the answers are delivered to; ``None``: the answers are only shown."""
    peer_task: str = ""
    """The task the peer says it speaks for (attribution only, never a permission)."""
    hops: int = 0
    """Messages of this conversation this device sent and received."""
    replies: int = 0
    """Replies this device sent (the first message of a conversation is not one)."""
    state: Literal["open", "stopped", "ended"] = "open"
    """``stopped``: a limit held a reply back (``reason`` names it); ``ended``: no more
    messages come (no answer, a refusal, the peer stopped it)."""
    reason: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0


def _row(raw: tuple[object, ...]) -> MeshConversation:
    peer, cid, began, task_id, peer_task, hops, replies, state, reason, created, updated = raw
    return MeshConversation(
        peer=str(peer),
        id=str(cid),
        began="me" if began == "me" else "peer",
        task_id=None if task_id is None else str(task_id),
        peer_task=str(peer_task or ""),
        hops=int(hops),  # type: ignore[call-overload]
        replies=int(replies),  # type: ignore[call-overload]
        state="stopped" if state == "stopped" else "ended" if state == "ended" else "open",
        reason=str(reason or ""),
        created_at=float(created),  # type: ignore[arg-type]
        updated_at=float(updated),  # type: ignore[arg-type]
    )


def mesh_conversation(db: Database, peer: str, conversation: str) -> MeshConversation | None:
    row = db.execute(
        f"SELECT {_COLUMNS} FROM mesh_conversations WHERE peer = ? AND id = ?",
        (peer, conversation),
    ).fetchone()
    return None if row is None else _row(tuple(row))


def mesh_conversations(db: Database, *, limit: int = 100) -> list[MeshConversation]:
    """The most recently changed conversations first."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM mesh_conversations ORDER BY updated_at DESC, peer, id LIMIT ?",
        (limit,),
    ).fetchall()
    return [_row(tuple(row)) for row in rows]


@dataclass(frozen=True, slots=True)
class SaveMeshConversation:
    """Write ``conversation`` whole (insert or replace its row); the row as written."""

    conversation: MeshConversation
    at: float | None = None

    def apply(self, db: Database, /) -> MeshConversation:
        c, now = self.conversation, stamp(self.at)
        if c.hops < 0 or c.replies < 0 or not c.peer or not c.id:
            raise ValueError(f"not a conversation to save: {c!r}")
        db.execute(
            f"INSERT INTO mesh_conversations ({_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (peer, id) DO UPDATE SET task_id = excluded.task_id, "
            "peer_task = excluded.peer_task, hops = excluded.hops, replies = excluded.replies, "
            "state = excluded.state, reason = excluded.reason, updated_at = excluded.updated_at",
            (
                c.peer,
                c.id,
                c.began,
                c.task_id,
                c.peer_task,
                c.hops,
                c.replies,
                c.state,
                c.reason,
                c.created_at or now,
                now,
            ),
        )
        saved = mesh_conversation(db, c.peer, c.id)
        assert saved is not None
        return saved
