"""The mesh's high-water marks (``robota.core.store._mesh``): raised, never lowered."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from robota.core.store import (
    Database,
    RaiseMeshMark,
    mesh_marks,
    migrate,
    open_reader,
    schema_version,
    write_once,
)
from robota.core.store._connection import open_writer


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = open_writer(tmp_path / "s.sqlite")
    migrate(database)
    return database


@pytest.mark.parametrize(
    ("raises", "after"),
    [
        ([], {"roster": 0, "revocations": 0}),
        ([("roster", 3)], {"roster": 3, "revocations": 0}),
        ([("roster", 3), ("roster", 5)], {"roster": 5, "revocations": 0}),
        ([("roster", 5), ("roster", 3)], {"roster": 5, "revocations": 0}),
        ([("revocations", 2), ("roster", 1), ("revocations", 2)], {"roster": 1, "revocations": 2}),
    ],
)
def test_a_mark_only_rises(
    db: Database, raises: list[tuple[str, int]], after: dict[str, int]
) -> None:
    for name, seq in raises:
        db.execute("BEGIN")
        RaiseMeshMark(name, seq, at=1.0).apply(db)  # type: ignore[arg-type]
        db.execute("COMMIT")
    assert mesh_marks(db) == after


def test_the_op_returns_the_mark_as_it_stands(db: Database) -> None:
    assert RaiseMeshMark("roster", 7, at=1.0).apply(db) == 7
    assert RaiseMeshMark("roster", 4, at=2.0).apply(db) == 7


@pytest.mark.parametrize(("name", "seq"), [("rosters", 1), ("roster", -1)])
def test_an_unknown_list_or_negative_sequence_is_refused(db: Database, name: str, seq: int) -> None:
    with pytest.raises(ValueError):
        RaiseMeshMark(name, seq).apply(db)  # type: ignore[arg-type]


def test_the_marks_survive_reopening(tmp_path: Path) -> None:
    first = open_writer(tmp_path / "s.sqlite")
    migrate(first)
    RaiseMeshMark("revocations", 9).apply(first)
    first.close()
    second = open_writer(tmp_path / "s.sqlite")
    assert mesh_marks(second)["revocations"] == 9
    with pytest.raises(sqlite3.IntegrityError):
        second.execute("INSERT INTO mesh_marks (list, seq, updated_at) VALUES ('roster', NULL, 1)")


def test_write_once_creates_migrates_applies_and_closes(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    assert write_once(path, RaiseMeshMark("roster", 2)) == 2
    assert write_once(path, RaiseMeshMark("roster", 1)) == 2
    reader = open_reader(path)
    assert schema_version(reader) >= 8
    assert mesh_marks(reader) == {"roster": 2, "revocations": 0}


def test_write_once_rolls_back_an_op_that_fails(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    write_once(path, RaiseMeshMark("roster", 2))

    class Fails:
        def apply(self, db: Database, /) -> None:
            RaiseMeshMark("roster", 9).apply(db)
            raise RuntimeError("after the write")

    with pytest.raises(RuntimeError):
        write_once(path, Fails())
    assert mesh_marks(open_reader(path))["roster"] == 2
