"""The lists' high-water marks in the profile's store (``mesh_marks``, migration 8).

What every holder of a device's lists reads before it verifies one and raises once it took one:
a command (``robota mesh``: a short-lived process writes with ``write_once``) and the host's
mesh service alike (the host sends ``marks_op`` through its one ``StoreWriter``, never a second
writer of its own). The marks only rise (``RaiseMeshMark``).
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from ._lists import Marks

if TYPE_CHECKING:
    from robota.core.store import Together

__all__ = ["marks_op", "raise_marks", "stored_marks"]


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


def marks_op(marks: Marks) -> Together:
    """The store op that raises both marks to ``marks`` in one transaction (a mark never goes
    down): what a writer applies, the host's ``StoreWriter`` or a command's ``write_once``."""
    from robota.core.store import RaiseMeshMark, Together  # noqa: PLC0415

    return Together(
        (RaiseMeshMark("roster", marks.roster), RaiseMeshMark("revocations", marks.revocations))
    )


def raise_marks(store_path: Path, marks: Marks) -> None:
    """Raise the store's marks to ``marks`` from a short-lived command (``write_once``)."""
    from robota.core.store import write_once  # noqa: PLC0415

    write_once(store_path, marks_op(marks))
