"""The lists' high-water marks in the profile's store (``mesh_marks``, migration 8).

What every holder of a device's lists reads before it verifies one and raises once it took one:
a command (``robota mesh``: a short-lived process writes with ``write_once``) and the host's
mesh service alike. The marks only rise (``RaiseMeshMark``).
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from ._lists import Marks

__all__ = ["raise_marks", "stored_marks"]


def stored_marks(store_path: Path) -> Marks:
    """The marks kept in the store at ``store_path`` (none before it exists or is migrated)."""
    from robota.core.store import mesh_marks, open_reader, schema_version  # noqa: PLC0415

    if not store_path.exists():
        return Marks()
    with closing(open_reader(store_path)) as db:
        if schema_version(db) < 8:  # the mesh's marks came with migration 8
            return Marks()
        marks = mesh_marks(db)
    return Marks(roster=marks["roster"], revocations=marks["revocations"])


def raise_marks(store_path: Path, marks: Marks) -> None:
    """Raise the store's marks to ``marks`` (a mark never goes down)."""
    from robota.core.store import RaiseMeshMark, Together, write_once  # noqa: PLC0415

    write_once(
        store_path,
        Together(
            (RaiseMeshMark("roster", marks.roster), RaiseMeshMark("revocations", marks.revocations))
        ),
    )
