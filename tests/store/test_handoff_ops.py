"""Session handoffs in the store: each move one compare-and-set write, authority moved only by
the writes that carry it, a grant's nonce kept across restarts."""

from __future__ import annotations

import pytest

from robota.core.store import (
    CommitHeldTask,
    HeldTask,
    LetGoTask,
    MarkPrimed,
    MarkReleased,
    MoveHandoff,
    OfferHandoff,
    ReceiveHandoff,
    handoff_payload,
    handoff_row,
    handoff_rows,
    imported_transcript,
    open_reader,
    task_mobility,
    transcript_to_prime,
)

DIGEST = b"\x07" * 32
MANIFEST = {"inventory": {"source-local": ["notes.txt"]}, "origin": None, "head": None}


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def offer(handoff: str = "h1", task: str = "t1") -> OfferHandoff:
    return OfferHandoff(
        handoff=handoff,
        task=task,
        peer="DEST",
        payload=b'{"v":1}',
        manifest_length=7,
        manifest_sha256=DIGEST,
        manifest=MANIFEST,
        grant=b"grant",
        expires_at=100.0,
        at=10.0,
    )


def receive(handoff: str = "h1", nonce: bytes = b"\x01" * 16) -> ReceiveHandoff:
    return ReceiveHandoff(
        handoff=handoff,
        task="t1",
        peer="SRC",
        nonce=nonce,
        manifest_length=7,
        manifest_sha256=DIGEST,
        manifest=MANIFEST,
        grant=b"grant",
        expires_at=100.0,
        at=10.0,
    )


def move(handoff: str, side: str, expected: tuple[str, ...], to: str) -> MoveHandoff:
    return MoveHandoff(handoff=handoff, side=side, expected=expected, to=to)  # type: ignore[arg-type]


def test_the_source_side_moves_the_task_only_on_the_acknowledgement(store, reader) -> None:
    write = store.client.write_sync
    assert write(offer(), timeout=5) is True
    assert task_mobility(reader, "t1").state == "moving"  # type: ignore[union-attr]
    # A task moves once at a time.
    assert write(offer("h2"), timeout=5) is False
    assert handoff_row(reader, "h2", "source") is None
    assert write(move("h1", "source", ("offered",), "transferring"), timeout=5) is True
    # A repeated or stale step changes nothing.
    assert write(move("h1", "source", ("offered",), "transferring"), timeout=5) is False
    assert handoff_payload(reader, "h1") == b'{"v":1}'
    assert write(LetGoTask(handoff="h1"), timeout=5) is True
    mobility = task_mobility(reader, "t1")
    assert mobility is not None and (mobility.state, mobility.peer) == ("moved", "DEST")
    assert handoff_payload(reader, "h1") is None  # nothing will send it again
    assert write(LetGoTask(handoff="h1"), timeout=5) is False
    row = handoff_row(reader, "h1", "source")
    assert row is not None and (row.phase, row.released) == ("committed", False)
    assert [r.id for r in handoff_rows(reader, live_only=True)] == ["h1"]
    assert write(MarkReleased(handoff="h1", side="source"), timeout=5) is True
    assert write(MarkReleased(handoff="h1", side="source"), timeout=5) is False
    assert handoff_rows(reader, live_only=True) == []
    assert row.to_json("ME") == {
        "id": "h1",
        "task": "t1",
        "from": "ME",
        "to": "DEST",
        "phase": "committed",
        "updatedAt": row.updated_at,
    }


def test_an_abandoned_push_gives_the_task_back(store, reader) -> None:
    write = store.client.write_sync
    write(offer(), timeout=5)
    assert write(move("h1", "source", ("offered",), "abandoned"), timeout=5) is True
    assert task_mobility(reader, "t1") is None
    assert handoff_payload(reader, "h1") is None
    # It can be pushed again, under a new handoff.
    assert write(offer("h2"), timeout=5) is True
    # Nothing leaves an ended handoff, whatever phase the caller thought it saw.
    for ended in ("abandoned", "committed"):
        with pytest.raises(ValueError, match="never leaves"):
            write(move("h1", "source", (ended,), "staged"), timeout=5)
    assert handoff_row(reader, "h1", "source").phase == "abandoned"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="no handoff phase"):
        write(move("h1", "source", ("offered",), "sideways"), timeout=5)


@pytest.mark.parametrize(
    ("first", "second", "outcome"),
    [
        (("h1", b"\x01" * 16), ("h1", b"\x01" * 16), "again"),
        (("h1", b"\x01" * 16), ("h1", b"\x02" * 16), "again"),
        (("h1", b"\x01" * 16), ("h2", b"\x01" * 16), "replayed"),
        (("h1", b"\x01" * 16), ("h2", b"\x02" * 16), "recorded"),
    ],
)
def test_a_grants_nonce_is_used_once(store, first, second, outcome) -> None:
    write = store.client.write_sync
    assert write(receive(*first), timeout=5) == "recorded"
    assert write(receive(*second), timeout=5) == outcome


def test_the_destination_holds_the_task_until_the_source_lets_go(store, reader) -> None:
    write = store.client.write_sync
    write(receive(), timeout=5)
    held = HeldTask(id="t1", agent="codex", runtime_kind="app-server", cwd="/w", title="fix")
    transcript = ({"prompt": "HELLO", "answer": "hi"},)
    commit = CommitHeldTask(handoff="h1", task=held, transcript=transcript, ack=b"ack")
    # Not before the payload is staged.
    assert write(commit, timeout=5) is False
    assert reader.execute("SELECT count(*) FROM tasks").fetchone()[0] == 0
    write(move("h1", "destination", ("offered",), "transferring"), timeout=5)
    write(move("h1", "destination", ("transferring",), "staged"), timeout=5)
    assert write(commit, timeout=5) is True
    assert task_mobility(reader, "t1").state == "held"  # type: ignore[union-attr]
    assert imported_transcript(reader, "t1") == [{"prompt": "HELLO", "answer": "hi"}]
    row = handoff_row(reader, "h1", "destination")
    assert row is not None and (row.phase, row.ack) == ("committed", b"ack")
    assert row.to_json("ME")["from"] == "SRC" and row.to_json("ME")["to"] == "ME"
    # Saved once: a repeated commit writes nothing twice.
    assert write(commit, timeout=5) is False
    assert write(MarkReleased(handoff="h1", side="destination"), timeout=5) is True
    assert task_mobility(reader, "t1") is None  # this device's task now
    assert write(MarkReleased(handoff="h1", side="destination"), timeout=5) is False


def test_a_failed_commit_writes_nothing(store, reader) -> None:
    """The task saved, the transcript and the phase are one transaction: a task id that
    already lives here leaves the handoff staged and no transcript behind."""
    write = store.client.write_sync
    write(receive(), timeout=5)
    write(move("h1", "destination", ("offered",), "transferring"), timeout=5)
    write(move("h1", "destination", ("transferring",), "staged"), timeout=5)
    reader_task = HeldTask(id="t1", agent="codex", runtime_kind="app-server", cwd="/w")
    store.client.write_sync(
        CommitHeldTask(handoff="h1", task=reader_task, transcript=(), ack=b"a"), timeout=5
    )
    write(receive("h9", b"\x09" * 16), timeout=5)
    write(move("h9", "destination", ("offered",), "transferring"), timeout=5)
    write(move("h9", "destination", ("transferring",), "staged"), timeout=5)
    again = CommitHeldTask(handoff="h9", task=reader_task, transcript=(), ack=b"b")
    assert write(again, timeout=5) is False
    row = handoff_row(reader, "h9", "destination")
    assert row is not None and (row.phase, row.ack) == ("staged", None)


def test_an_arrived_task_is_primed_once(store, reader) -> None:
    write = store.client.write_sync
    write(receive(), timeout=5)
    write(move("h1", "destination", ("offered",), "transferring"), timeout=5)
    write(move("h1", "destination", ("transferring",), "staged"), timeout=5)
    held = HeldTask(id="t1", agent="codex", runtime_kind="app-server", cwd="/w", title="fix")
    transcript = ({"prompt": "HELLO", "answer": "hi"},)
    assert write(
        CommitHeldTask(handoff="h1", task=held, transcript=transcript, ack=b"a"), timeout=5
    )
    assert transcript_to_prime(reader, "t1") == [{"prompt": "HELLO", "answer": "hi"}]
    assert transcript_to_prime(reader, "t-other") is None
    write(MarkPrimed("t1", at=5.0), timeout=5)
    assert transcript_to_prime(reader, "t1") is None
    write(MarkPrimed("t1", at=9.0), timeout=5)  # primed once: the first time stays
    row = reader.execute("SELECT primed_at FROM task_transcripts WHERE task_id = 't1'").fetchone()
    assert row[0] == 5.0
    assert imported_transcript(reader, "t1") == [{"prompt": "HELLO", "answer": "hi"}]
