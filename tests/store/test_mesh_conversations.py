"""The mesh's conversations in the store (``robota.core.store._mesh_talks``): written whole,
keyed by the proven peer and the conversation's id, kept across a reopen."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from robota.core.store import (
    Database,
    MeshConversation,
    SaveMeshConversation,
    mesh_conversation,
    mesh_conversations,
    migrate,
    open_reader,
)
from robota.core.store._connection import open_writer

A = "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA"
B = "BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB-BBBB"


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = open_writer(tmp_path / "s.sqlite")
    migrate(database)
    return database


def test_a_conversation_is_written_whole_and_keeps_when_it_began(
    db: Database, tmp_path: Path
) -> None:
    row = MeshConversation(peer=A, id="c1", began="peer", task_id="t1", peer_task="t9", hops=1)
    first = SaveMeshConversation(row, at=10.0).apply(db)
    assert (first.created_at, first.updated_at, first.hops) == (10.0, 10.0, 1)
    later = dataclasses.replace(first, hops=2, replies=1, state="stopped", reason="max-hops")
    saved = SaveMeshConversation(later, at=12.0).apply(db)
    assert saved == dataclasses.replace(later, updated_at=12.0)
    db.conn.commit()
    reader = open_reader(tmp_path / "s.sqlite")
    assert mesh_conversation(reader, A, "c1") == saved
    assert mesh_conversation(reader, B, "c1") is None


def test_two_peers_never_share_a_conversation(db: Database) -> None:
    SaveMeshConversation(MeshConversation(peer=A, id="c1", began="me", hops=3), at=1.0).apply(db)
    SaveMeshConversation(MeshConversation(peer=B, id="c1", began="peer", hops=1), at=2.0).apply(db)
    rows = mesh_conversations(db)
    assert [(r.peer, r.id, r.hops) for r in rows] == [(B, "c1", 1), (A, "c1", 3)]


@pytest.mark.parametrize(
    "row",
    [
        MeshConversation(peer="", id="c1", began="me"),
        MeshConversation(peer=A, id="", began="me"),
        MeshConversation(peer=A, id="c1", began="me", hops=-1),
    ],
)
def test_a_row_without_its_key_or_with_a_negative_count_is_refused(
    db: Database, row: MeshConversation
) -> None:
    with pytest.raises(ValueError, match="not a conversation"):
        SaveMeshConversation(row).apply(db)
