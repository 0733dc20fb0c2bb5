"""The device mesh's file offers: ``mesh_offers`` (migration 12), one row per offer this device
made (``direction`` ``out``) or received (``in``), issue 30 §2.

An offer is named by the device that made it (``id``) and keyed here by the peer the link
proved, the direction and that id, so a peer can never touch another's offers or this device's
own. Each phase (``robota.mesh``'s ``advance``: offered, accepted, done, failed, declined,
expired) is one write of the whole row (``SaveMeshOffer``), so a restart finds every offer
where its last step left it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._database import Database
from ._records import stamp

__all__ = ["MeshOffer", "SaveMeshOffer", "mesh_offer", "mesh_offers"]

_COLUMNS = (
    "peer, direction, id, name, size, sha256, path, task_id, phase, detail, "
    "created_at, expires_at, updated_at"
)


@dataclass(frozen=True, slots=True)
class MeshOffer:
    """One file offer as this device holds it."""

    peer: str
    direction: Literal["in", "out"]
    id: str
    name: str
    size: int
    sha256: str
    expires_at: float
    path: str = ""
    """``out``: the file offered (as resolved); ``in``: where it was kept, once done."""
    task_id: str | None = None
    """``out``: the task it was offered for (told the outcome)."""
    phase: str = "offered"
    detail: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0


def _row(raw: tuple[object, ...]) -> MeshOffer:
    peer, direction, oid, name, size, sha, path, task, phase, detail, made, expires, upd = raw
    return MeshOffer(
        peer=str(peer),
        direction="in" if direction == "in" else "out",
        id=str(oid),
        name=str(name),
        size=int(size),  # type: ignore[call-overload]
        sha256=str(sha),
        expires_at=float(expires),  # type: ignore[arg-type]
        path=str(path or ""),
        task_id=None if task is None else str(task),
        phase=str(phase),
        detail=str(detail or ""),
        created_at=float(made),  # type: ignore[arg-type]
        updated_at=float(upd),  # type: ignore[arg-type]
    )


def mesh_offer(db: Database, peer: str, direction: str, offer: str) -> MeshOffer | None:
    row = db.execute(
        f"SELECT {_COLUMNS} FROM mesh_offers WHERE peer = ? AND direction = ? AND id = ?",
        (peer, direction, offer),
    ).fetchone()
    return None if row is None else _row(tuple(row))


def mesh_offers(
    db: Database, direction: str, *, phase: str | None = None, limit: int = 200
) -> list[MeshOffer]:
    """This device's offers of ``direction`` (in ``phase`` when given), oldest first."""
    where, args = "direction = ?", [direction]
    if phase is not None:
        where, args = where + " AND phase = ?", [*args, phase]
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM mesh_offers WHERE {where} ORDER BY created_at, id LIMIT ?",
        (*args, limit),
    ).fetchall()
    return [_row(tuple(row)) for row in rows]


@dataclass(frozen=True, slots=True)
class SaveMeshOffer:
    """Write ``offer`` whole (insert or replace its row); the row as written."""

    offer: MeshOffer
    at: float | None = None

    def apply(self, db: Database, /) -> MeshOffer:
        o, now = self.offer, stamp(self.at)
        if not o.peer or not o.id or o.size < 0 or o.direction not in ("in", "out"):
            raise ValueError(f"not an offer to save: {o!r}")
        db.execute(
            f"INSERT INTO mesh_offers ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (peer, direction, id) DO UPDATE SET path = excluded.path, "
            "phase = excluded.phase, detail = excluded.detail, updated_at = excluded.updated_at",
            (
                o.peer,
                o.direction,
                o.id,
                o.name,
                o.size,
                o.sha256,
                o.path,
                o.task_id,
                o.phase,
                o.detail,
                o.created_at or now,
                o.expires_at,
                now,
            ),
        )
        saved = mesh_offer(db, o.peer, o.direction, o.id)
        assert saved is not None
        return saved
