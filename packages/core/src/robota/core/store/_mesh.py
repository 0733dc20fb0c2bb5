"""The device mesh's high-water marks: ``mesh_marks`` (migration 8), one row per signed list.

A device refuses a roster or revocation list whose sequence is below the highest it has
accepted (robota.mesh's ``rolled-back``); the marks are kept here so that no restart, crash or
second process resets them. ``RaiseMeshMark`` only ever raises a mark (``max`` of the stored
and the new sequence, in the one statement): two processes that accept lists at once cannot
lower each other's, and the op returns the mark as it stands after.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._database import Database
from ._records import stamp

__all__ = ["MESH_LISTS", "MeshList", "RaiseMeshMark", "mesh_marks"]

MeshList = Literal["roster", "revocations"]
MESH_LISTS: tuple[MeshList, ...] = ("roster", "revocations")


def mesh_marks(db: Database) -> dict[MeshList, int]:
    """Each list's high-water mark (0 for a list never accepted)."""
    marks: dict[MeshList, int] = dict.fromkeys(MESH_LISTS, 0)
    for name, seq in db.execute("SELECT list, seq FROM mesh_marks").fetchall():
        if name in marks:
            marks[name] = int(seq)
    return marks


@dataclass(frozen=True, slots=True)
class RaiseMeshMark:
    """Raise ``list``'s mark to ``seq`` (never lower it); the mark after."""

    list: MeshList
    seq: int
    at: float | None = None

    def apply(self, db: Database, /) -> int:
        if self.list not in MESH_LISTS or self.seq < 0:
            raise ValueError(f"no mesh list {self.list!r} with sequence {self.seq}")
        db.execute(
            "INSERT INTO mesh_marks (list, seq, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (list) DO UPDATE SET seq = max(seq, excluded.seq), "
            "updated_at = excluded.updated_at",
            (self.list, self.seq, stamp(self.at)),
        )
        row = db.execute("SELECT seq FROM mesh_marks WHERE list = ?", (self.list,)).fetchone()
        return int(row[0])
