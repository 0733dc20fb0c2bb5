"""The mesh's file offers in the store (``robota.core.store._mesh_offers``): written whole,
keyed by the proven peer, the direction and the offer's id; a phase change keeps what the
offer was."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from robota.core.store import Database, MeshOffer, SaveMeshOffer, mesh_offer, mesh_offers, migrate
from robota.core.store._connection import open_writer

A = "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA"
B = "BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB"


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = open_writer(tmp_path / "s.sqlite")
    migrate(database)
    return database


def offer(peer: str = A, direction: str = "in", oid: str = "0123abcd") -> MeshOffer:
    return MeshOffer(
        peer=peer,
        direction="in" if direction == "in" else "out",
        id=oid,
        name="a.txt",
        size=3,
        sha256="ab" * 32,
        expires_at=610.0,
    )


def test_a_phase_is_written_and_what_was_offered_stays(db: Database) -> None:
    first = SaveMeshOffer(offer(), at=10.0).apply(db)
    assert (first.phase, first.created_at, first.updated_at) == ("offered", 10.0, 10.0)
    changed = dataclasses.replace(first, name="b.txt", size=99, phase="done", path="/p/a.txt")
    saved = SaveMeshOffer(changed, at=20.0).apply(db)
    assert (saved.name, saved.size, saved.phase, saved.path) == ("a.txt", 3, "done", "/p/a.txt")
    assert (saved.created_at, saved.updated_at) == (10.0, 20.0)


def test_peers_and_directions_never_share_an_offer(db: Database) -> None:
    for peer, direction in ((A, "in"), (B, "in"), (A, "out")):
        SaveMeshOffer(offer(peer, direction), at=1.0).apply(db)
    assert mesh_offer(db, B, "in", "0123abcd") is not None
    assert [o.peer for o in mesh_offers(db, "in")] == [A, B]
    assert [o.direction for o in mesh_offers(db, "out", phase="offered")] == ["out"]
    assert mesh_offers(db, "in", phase="done") == []


@pytest.mark.parametrize(
    "bad", [dataclasses.replace(offer(), peer=""), dataclasses.replace(offer(), size=-1)]
)
def test_a_row_without_its_key_or_with_a_negative_size_is_refused(
    db: Database, bad: MeshOffer
) -> None:
    with pytest.raises(ValueError, match="not an offer"):
        SaveMeshOffer(bad).apply(db)
