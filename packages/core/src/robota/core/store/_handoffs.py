"""Session handoffs between devices: ``mesh_handoffs`` and ``mesh_handoff_nonces`` (migration 10).

A handoff moves one task to another of the user's devices (robota.mesh's ``_handoff`` holds the
protocol; this is what each side keeps). A row per handoff and side (``source``: this device
pushes; ``destination``: it receives) holds its phase, the manifest (length, SHA-256, what
both operators are shown), the source's sealed payload (sent again after a reconnect until the
destination's word comes), the grant, and the destination's signed acknowledgement.

Every move is one op, hence one transaction, and a compare-and-set: ``MoveHandoff`` changes a
row only from the phase its caller saw, so a stale or repeated step changes nothing twice. The
two moves that carry authority write it in the same statement batch: ``CommitHeldTask`` saves
the destination's copy of the task and its transcript *held* with the phase ``committed`` and
the acknowledgement; ``LetGoTask`` makes the source's side ``committed``, which is what marks
the task moved. A grant's nonce is kept (``mesh_handoff_nonces``) in the transaction that
records the offer it came with, so a replayed grant is refused across restarts.

What a task's handoffs mean for it (moving, moved, held) is ``_mobility``'s.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Literal, cast, get_args

from .._records import Record
from ._database import Database
from ._mobility import task_mobility
from ._records import stamp

__all__ = [
    "HANDOFF_SIDES",
    "CommitHeldTask",
    "HandoffRow",
    "HandoffSide",
    "HeldTask",
    "LetGoTask",
    "MarkPrimed",
    "MarkReleased",
    "MoveHandoff",
    "OfferHandoff",
    "ReceiveHandoff",
    "handoff_payload",
    "handoff_row",
    "handoff_rows",
    "imported_transcript",
    "transcript_to_prime",
]

HandoffSide = Literal["source", "destination"]
HANDOFF_SIDES: tuple[HandoffSide, ...] = get_args(HandoffSide)

_PHASES = ("offered", "transferring", "staged", "committed", "abandoned")


@dataclass(frozen=True, slots=True)
class HandoffRow:
    """One side's handoff as stored (``mesh handoffs`` lists these)."""

    id: str
    side: HandoffSide
    task: str
    """The task's id (the source's; the destination keeps the same id for its copy)."""
    peer: str
    """The other device's id."""
    phase: str
    released: bool
    manifest_length: int
    manifest_sha256: bytes
    manifest: dict[str, object]
    """What the operators are shown: the inventory, the source's checkout (origin, head)."""
    grant: bytes | None
    ack: bytes | None
    expires_at: float | None
    created_at: float
    updated_at: float

    def to_json(self, me: str) -> dict[str, object]:
        """The ``mesh handoffs --json`` item (``me``: this device's id)."""
        return {
            "id": self.id,
            "task": self.task,
            "from": self.peer if self.side == "destination" else me,
            "to": me if self.side == "destination" else self.peer,
            "phase": self.phase,
            "updatedAt": self.updated_at,
        }

    @classmethod
    def from_row(cls, row: dict[str, object]) -> HandoffRow:
        expires = row["expires_at"]
        return cls(
            id=str(row["id"]),
            side=cast(HandoffSide, row["side"]),
            task=str(row["task_id"]),
            peer=str(row["peer"]),
            phase=str(row["phase"]),
            released=bool(row["released"]),
            manifest_length=int(cast(int, row["manifest_length"])),
            manifest_sha256=bytes(cast(bytes, row["manifest_sha256"])),
            manifest=json.loads(str(row["manifest_json"])),
            grant=None if row["grant_blob"] is None else bytes(cast(bytes, row["grant_blob"])),
            ack=None if row["ack_blob"] is None else bytes(cast(bytes, row["ack_blob"])),
            expires_at=None if expires is None else float(cast(float, expires)),
            created_at=float(cast(float, row["created_at"])),
            updated_at=float(cast(float, row["updated_at"])),
        )


_COLUMNS = (
    "id, side, task_id, peer, phase, released, manifest_length, manifest_sha256, manifest_json, "
    "grant_blob, ack_blob, expires_at, created_at, updated_at"
)


def handoff_row(db: Database, handoff: str, side: HandoffSide) -> HandoffRow | None:
    """The handoff ``handoff`` as ``side`` keeps it, or ``None``."""
    rows = db.query(
        f"SELECT {_COLUMNS} FROM mesh_handoffs WHERE id = ? AND side = ?", (handoff, side)
    )
    for row in rows:
        return HandoffRow.from_row(row)
    return None


def handoff_rows(db: Database, *, live_only: bool = False) -> list[HandoffRow]:
    """Every handoff this device keeps (``live_only``: those not yet ended, or committed and
    not yet confirmed released: what a reconnect sends again), newest first."""
    where = (
        "WHERE phase IN ('offered', 'transferring', 'staged') OR "
        "(phase = 'committed' AND released = 0) OR "
        "(phase = 'abandoned' AND updated_at > strftime('%s', 'now') - 86400)"
        if live_only
        else ""
    )
    rows = db.query(f"SELECT {_COLUMNS} FROM mesh_handoffs {where} ORDER BY created_at DESC, id")
    return [HandoffRow.from_row(row) for row in rows]


def handoff_payload(db: Database, handoff: str) -> bytes | None:
    """The source's sealed payload for ``handoff`` (``None`` once it is no longer kept)."""
    row = db.execute(
        "SELECT payload FROM mesh_handoffs WHERE id = ? AND side = 'source'", (handoff,)
    ).fetchone()
    return None if row is None or row[0] is None else bytes(row[0])


def imported_transcript(db: Database, task_id: str) -> list[dict[str, object]] | None:
    """The turns a task arrived with from another device (its new agent session is primed
    with them), or ``None`` for a task that did not arrive by a handoff."""
    return _transcript(db, task_id, "")


def transcript_to_prime(db: Database, task_id: str) -> list[dict[str, object]] | None:
    """The turns a task arrived with while no agent session of it has been primed with them
    yet (``MarkPrimed``), else ``None``."""
    return _transcript(db, task_id, " AND primed_at IS NULL")


def _transcript(db: Database, task_id: str, condition: str) -> list[dict[str, object]] | None:
    row = db.execute(
        f"SELECT transcript_json FROM task_transcripts WHERE task_id = ?{condition}", (task_id,)
    ).fetchone()
    return None if row is None else [dict(turn) for turn in json.loads(str(row[0]))]


class MarkPrimed(Record):
    """The task's imported transcript went before its first prompt (written with that turn's
    attempt): no later session is primed again."""

    task_id: str
    at: float | None = None

    def apply(self, db: Database, /) -> None:
        db.execute(
            "UPDATE task_transcripts SET primed_at = ? WHERE task_id = ? AND primed_at IS NULL",
            (stamp(self.at), self.task_id),
        )

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("at", "task_id")
    __match_args__ = ("task_id", "at")

    def __init__(self, task_id: str, at: float | None = None) -> None:
        object.__setattr__(self, "task_id", task_id)
        object.__setattr__(self, "at", at)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(task_id={self.task_id!r}, at={self.at!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MarkPrimed) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.task_id, self.at) == (other.task_id, other.at)

    def __hash__(self) -> int:
        return hash((self.task_id, self.at))

    del at


def _manifest_json(manifest: dict[str, object]) -> str:
    return json.dumps(manifest, sort_keys=True, separators=(",", ":"))


class OfferHandoff(Record, kw_only=True):
    """Source: record the push of ``task`` to ``peer`` as ``offered``, with its sealed payload
    and grant. ``False`` (nothing written) when the task is already moving or has moved."""

    handoff: str
    task: str
    peer: str
    payload: bytes
    manifest_length: int
    manifest_sha256: bytes
    manifest: dict[str, object]
    grant: bytes
    expires_at: float
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        if task_mobility(db, self.task) is not None:
            return False
        now = stamp(self.at)
        db.execute(
            "INSERT INTO mesh_handoffs (id, side, task_id, peer, phase, released, payload, "
            "manifest_length, manifest_sha256, manifest_json, grant_blob, expires_at, "
            "created_at, updated_at) VALUES (?, 'source', ?, ?, 'offered', 0, ?, ?, ?, ?, ?, "
            "?, ?, ?)",
            (
                self.handoff,
                self.task,
                self.peer,
                self.payload,
                self.manifest_length,
                self.manifest_sha256,
                _manifest_json(self.manifest),
                self.grant,
                self.expires_at,
                now,
                now,
            ),
        )
        return True

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = (
        "at",
        "expires_at",
        "grant",
        "handoff",
        "manifest",
        "manifest_length",
        "manifest_sha256",
        "payload",
        "peer",
        "task",
    )
    __match_args__ = ()

    def __init__(
        self,
        *,
        handoff: str,
        task: str,
        peer: str,
        payload: bytes,
        manifest_length: int,
        manifest_sha256: bytes,
        manifest: dict[str, object],
        grant: bytes,
        expires_at: float,
        at: float | None = None,
    ) -> None:
        object.__setattr__(self, "handoff", handoff)
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "peer", peer)
        object.__setattr__(self, "payload", payload)
        object.__setattr__(self, "manifest_length", manifest_length)
        object.__setattr__(self, "manifest_sha256", manifest_sha256)
        object.__setattr__(self, "manifest", manifest)
        object.__setattr__(self, "grant", grant)
        object.__setattr__(self, "expires_at", expires_at)
        object.__setattr__(self, "at", at)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(handoff={self.handoff!r}, task={self.task!r}, "
            f"peer={self.peer!r}, payload={self.payload!r}, "
            f"manifest_length={self.manifest_length!r}, "
            f"manifest_sha256={self.manifest_sha256!r}, manifest={self.manifest!r}, "
            f"grant={self.grant!r}, expires_at={self.expires_at!r}, at={self.at!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OfferHandoff) or other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.handoff,
            self.task,
            self.peer,
            self.payload,
            self.manifest_length,
            self.manifest_sha256,
            self.manifest,
            self.grant,
            self.expires_at,
            self.at,
        ) == (
            other.handoff,
            other.task,
            other.peer,
            other.payload,
            other.manifest_length,
            other.manifest_sha256,
            other.manifest,
            other.grant,
            other.expires_at,
            other.at,
        )

    def __hash__(self) -> int:
        return hash(
            (
                self.handoff,
                self.task,
                self.peer,
                self.payload,
                self.manifest_length,
                self.manifest_sha256,
                self.manifest,
                self.grant,
                self.expires_at,
                self.at,
            )
        )

    del at


class ReceiveHandoff(Record, kw_only=True):
    """Destination: record an offer whose grant verified, with the grant's nonce, as
    ``offered``. ``"recorded"``; ``"again"`` when this handoff is already recorded (the source
    sent its offer again); ``"replayed"`` when the nonce came with another handoff before."""

    handoff: str
    task: str
    peer: str
    nonce: bytes
    manifest_length: int
    manifest_sha256: bytes
    manifest: dict[str, object]
    grant: bytes
    expires_at: float
    at: float | None = None

    def apply(self, db: Database, /) -> Literal["recorded", "again", "replayed"]:
        seen = db.execute(
            "SELECT handoff FROM mesh_handoff_nonces WHERE nonce = ?", (self.nonce,)
        ).fetchone()
        if seen is not None:
            return "again" if seen[0] == self.handoff else "replayed"
        if handoff_row(db, self.handoff, "destination") is not None:
            return "again"
        now = stamp(self.at)
        db.execute(
            "INSERT INTO mesh_handoff_nonces (nonce, handoff, seen_at) VALUES (?, ?, ?)",
            (self.nonce, self.handoff, now),
        )
        db.execute(
            "INSERT INTO mesh_handoffs (id, side, task_id, peer, phase, released, "
            "manifest_length, manifest_sha256, manifest_json, grant_blob, expires_at, "
            "created_at, updated_at) VALUES (?, 'destination', ?, ?, 'offered', 0, ?, ?, ?, ?, "
            "?, ?, ?)",
            (
                self.handoff,
                self.task,
                self.peer,
                self.manifest_length,
                self.manifest_sha256,
                _manifest_json(self.manifest),
                self.grant,
                self.expires_at,
                now,
                now,
            ),
        )
        return "recorded"

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = (
        "at",
        "expires_at",
        "grant",
        "handoff",
        "manifest",
        "manifest_length",
        "manifest_sha256",
        "nonce",
        "peer",
        "task",
    )
    __match_args__ = ()

    def __init__(
        self,
        *,
        handoff: str,
        task: str,
        peer: str,
        nonce: bytes,
        manifest_length: int,
        manifest_sha256: bytes,
        manifest: dict[str, object],
        grant: bytes,
        expires_at: float,
        at: float | None = None,
    ) -> None:
        object.__setattr__(self, "handoff", handoff)
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "peer", peer)
        object.__setattr__(self, "nonce", nonce)
        object.__setattr__(self, "manifest_length", manifest_length)
        object.__setattr__(self, "manifest_sha256", manifest_sha256)
        object.__setattr__(self, "manifest", manifest)
        object.__setattr__(self, "grant", grant)
        object.__setattr__(self, "expires_at", expires_at)
        object.__setattr__(self, "at", at)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(handoff={self.handoff!r}, task={self.task!r}, "
            f"peer={self.peer!r}, nonce={self.nonce!r}, "
            f"manifest_length={self.manifest_length!r}, "
            f"manifest_sha256={self.manifest_sha256!r}, manifest={self.manifest!r}, "
            f"grant={self.grant!r}, expires_at={self.expires_at!r}, at={self.at!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReceiveHandoff) or other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.handoff,
            self.task,
            self.peer,
            self.nonce,
            self.manifest_length,
            self.manifest_sha256,
            self.manifest,
            self.grant,
            self.expires_at,
            self.at,
        ) == (
            other.handoff,
            other.task,
            other.peer,
            other.nonce,
            other.manifest_length,
            other.manifest_sha256,
            other.manifest,
            other.grant,
            other.expires_at,
            other.at,
        )

    def __hash__(self) -> int:
        return hash(
            (
                self.handoff,
                self.task,
                self.peer,
                self.nonce,
                self.manifest_length,
                self.manifest_sha256,
                self.manifest,
                self.grant,
                self.expires_at,
                self.at,
            )
        )

    del at


def _move(
    db: Database, handoff: str, side: HandoffSide, expected: tuple[str, ...], *, to: str, at: float
) -> bool:
    if to not in _PHASES:
        raise ValueError(f"no handoff phase {to!r}")
    if set(expected) & {"committed", "abandoned"}:
        raise ValueError("a handoff never leaves committed or abandoned")
    marks = ", ".join("?" for _ in expected)
    cursor = db.execute(
        f"UPDATE mesh_handoffs SET phase = ?, updated_at = ? WHERE id = ? AND side = ? "
        f"AND phase IN ({marks})",
        (to, at, handoff, side, *expected),
    )
    return cursor.rowcount == 1


class MoveHandoff(Record, kw_only=True):
    """Move ``side``'s handoff to ``to`` from one of ``expected`` (the phases its caller saw);
    ``False``, nothing written, when the row is elsewhere (a stale or repeated step). A move
    that ends the source's side drops its sealed payload (nothing will send it again)."""

    handoff: str
    side: HandoffSide
    expected: tuple[str, ...]
    to: str
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        moved = _move(db, self.handoff, self.side, self.expected, to=self.to, at=stamp(self.at))
        if moved and self.side == "source" and self.to == "abandoned":
            db.execute(
                "UPDATE mesh_handoffs SET payload = NULL WHERE id = ? AND side = 'source'",
                (self.handoff,),
            )
        return moved

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("at", "expected", "handoff", "side", "to")
    __match_args__ = ()

    def __init__(
        self,
        *,
        handoff: str,
        side: HandoffSide,
        expected: tuple[str, ...],
        to: str,
        at: float | None = None,
    ) -> None:
        object.__setattr__(self, "handoff", handoff)
        object.__setattr__(self, "side", side)
        object.__setattr__(self, "expected", expected)
        object.__setattr__(self, "to", to)
        object.__setattr__(self, "at", at)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(handoff={self.handoff!r}, side={self.side!r}, "
            f"expected={self.expected!r}, to={self.to!r}, at={self.at!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MoveHandoff) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.handoff, self.side, self.expected, self.to, self.at) == (
            other.handoff,
            other.side,
            other.expected,
            other.to,
            other.at,
        )

    def __hash__(self) -> int:
        return hash((self.handoff, self.side, self.expected, self.to, self.at))

    del at


@dataclass(frozen=True, slots=True)
class HeldTask:
    """The destination's copy of a task, as it is saved held (the source's settings, with the
    agent and working folder this device runs it with)."""

    id: str
    agent: str
    runtime_kind: str
    cwd: str
    title: str | None = None
    model: str | None = None
    effort: str | None = None
    permission_mode: str | None = None


class CommitHeldTask(Record, kw_only=True):
    """Destination, one transaction: save the task held with the transcript it arrived with,
    store the signed acknowledgement, and move the handoff from ``staged`` to ``committed``.
    ``False`` (nothing written) when the handoff is not ``staged`` or a task of that id already
    lives here."""

    handoff: str
    task: HeldTask
    transcript: tuple[dict[str, object], ...]
    ack: bytes
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        now = stamp(self.at)
        if db.execute("SELECT 1 FROM tasks WHERE id = ?", (self.task.id,)).fetchone():
            return False
        if not _move(db, self.handoff, "destination", ("staged",), to="committed", at=now):
            return False
        task = self.task
        try:
            db.execute(
                "INSERT INTO tasks (id, agent, cwd, runtime_kind, title, model, effort, "
                "permission_mode, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    task.id,
                    task.agent,
                    task.cwd,
                    task.runtime_kind,
                    task.title,
                    task.model,
                    task.effort,
                    task.permission_mode,
                    now,
                    now,
                ),
            )
        except sqlite3.IntegrityError as error:
            raise ValueError(f"the arriving task {task.id} cannot be saved: {error}") from None
        db.execute(
            "INSERT INTO task_transcripts (task_id, handoff, transcript_json, created_at) "
            "VALUES (?, ?, ?, ?)",
            (task.id, self.handoff, json.dumps(list(self.transcript)), now),
        )
        db.execute(
            "UPDATE mesh_handoffs SET ack_blob = ? WHERE id = ? AND side = 'destination'",
            (self.ack, self.handoff),
        )
        return True

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("ack", "at", "handoff", "task", "transcript")
    __match_args__ = ()

    def __init__(
        self,
        *,
        handoff: str,
        task: HeldTask,
        transcript: tuple[dict[str, object], ...],
        ack: bytes,
        at: float | None = None,
    ) -> None:
        object.__setattr__(self, "handoff", handoff)
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "transcript", transcript)
        object.__setattr__(self, "ack", ack)
        object.__setattr__(self, "at", at)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(handoff={self.handoff!r}, task={self.task!r}, "
            f"transcript={self.transcript!r}, ack={self.ack!r}, at={self.at!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CommitHeldTask) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.handoff, self.task, self.transcript, self.ack, self.at) == (
            other.handoff,
            other.task,
            other.transcript,
            other.ack,
            other.at,
        )

    def __hash__(self) -> int:
        return hash((self.handoff, self.task, self.transcript, self.ack, self.at))

    del at


class LetGoTask(Record, kw_only=True):
    """Source, one transaction: the destination's acknowledgement verified, the handoff is
    ``committed`` (the task has moved: ``task_mobility``) and its payload is dropped. ``False``
    when it was not waiting for that acknowledgement."""

    handoff: str
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        moved = _move(
            db,
            self.handoff,
            "source",
            ("transferring", "staged"),
            to="committed",
            at=stamp(self.at),
        )
        if moved:
            db.execute(
                "UPDATE mesh_handoffs SET payload = NULL WHERE id = ? AND side = 'source'",
                (self.handoff,),
            )
        return moved

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("at", "handoff")
    __match_args__ = ()

    def __init__(self, *, handoff: str, at: float | None = None) -> None:
        object.__setattr__(self, "handoff", handoff)
        object.__setattr__(self, "at", at)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(handoff={self.handoff!r}, at={self.at!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LetGoTask) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.handoff, self.at) == (other.handoff, other.at)

    def __hash__(self) -> int:
        return hash((self.handoff, self.at))

    del at


class MarkReleased(Record, kw_only=True):
    """The release, on either side: the destination's held copy may start (its source let it
    go), or the source heard the destination confirm it (nothing is sent again). ``False``
    when it already was, or the handoff is not ``committed``."""

    handoff: str
    side: HandoffSide
    at: float | None = None

    def apply(self, db: Database, /) -> bool:
        cursor = db.execute(
            "UPDATE mesh_handoffs SET released = 1, updated_at = ? WHERE id = ? AND side = ? "
            "AND phase = 'committed' AND released = 0",
            (stamp(self.at), self.handoff, self.side),
        )
        return cursor.rowcount == 1

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("at", "handoff", "side")
    __match_args__ = ()

    def __init__(self, *, handoff: str, side: HandoffSide, at: float | None = None) -> None:
        object.__setattr__(self, "handoff", handoff)
        object.__setattr__(self, "side", side)
        object.__setattr__(self, "at", at)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(handoff={self.handoff!r}, side={self.side!r}, "
            f"at={self.at!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MarkReleased) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.handoff, self.side, self.at) == (other.handoff, other.side, other.at)

    def __hash__(self) -> int:
        return hash((self.handoff, self.side, self.at))

    del at

    # Generated by tools/gen_records.py from the fields above: do not edit below.
