"""What a destination keeps of a handoff it takes (``_handoff_staged``): the folder its operator
chose, written with ``transferring``, and the staged payload's path, written with ``staged``,
each in that move's one compare-and-set transaction."""

from __future__ import annotations

import pytest

from robota.core.store import (
    AnswerHandoff,
    ReceiveHandoff,
    StageHandoff,
    accepted_cwd,
    handoff_row,
    open_reader,
    staged_payloads,
)

PATH = "/p/data/handoffs/h1.staged"


@pytest.fixture
def reader(store):
    db = open_reader(store.path)
    yield db
    db.close()


def _received(store) -> None:
    offer = ReceiveHandoff(
        handoff="h1",
        task="t1",
        peer="SRC",
        nonce=b"\x01" * 16,
        manifest_length=7,
        manifest_sha256=b"\x07" * 32,
        manifest={},
        grant=b"grant",
        expires_at=100.0,
    )
    assert store.client.write_sync(offer, timeout=5) == "recorded"


def test_the_answer_and_the_staging_are_recorded_with_their_moves(store, reader) -> None:
    write = store.client.write_sync
    _received(store)
    assert write(StageHandoff(handoff="h1", path=PATH), timeout=5) is False  # not accepted yet
    assert staged_payloads(reader) == {} and accepted_cwd(reader, "h1") is None
    assert write(AnswerHandoff(handoff="h1", cwd="/here/p"), timeout=5) is True
    assert write(AnswerHandoff(handoff="h1", cwd="/elsewhere"), timeout=5) is False
    assert accepted_cwd(reader, "h1") == "/here/p"
    assert staged_payloads(reader) == {}  # transferring: nothing staged yet
    assert write(StageHandoff(handoff="h1", path=PATH), timeout=5) is True
    assert write(StageHandoff(handoff="h1", path="/other"), timeout=5) is False
    assert staged_payloads(reader) == {"h1": PATH}
    assert handoff_row(reader, "h1", "destination").phase == "staged"  # type: ignore[union-attr]
    assert accepted_cwd(reader, "h1") == "/here/p"


def test_an_answer_with_no_folder_leaves_the_sources(store, reader) -> None:
    _received(store)
    assert store.client.write_sync(AnswerHandoff(handoff="h1"), timeout=5) is True
    assert accepted_cwd(reader, "h1") is None
    assert accepted_cwd(reader, "nope") is None
