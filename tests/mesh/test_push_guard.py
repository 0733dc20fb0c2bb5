"""The push's check and the offer's record are one store transaction (robota.host._mesh_push's
``OfferIdle``, issue 30 §3): on a real store, a task still as it was sealed is recorded
``offered`` (and moving); a turn that began, a prompt queued, or a turn that ran to its end
since the push read it refuses the push naming which, and nothing is recorded; a task already
moving is not offered twice. The other way round, a turn's attempt written after the offer
committed is refused (``TaskImmobile``): one of the two writes always sees the other."""

from __future__ import annotations

import re
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from robota.core.store import (
    BindRouteTask,
    CreateTask,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    OfferHandoff,
    TaskImmobile,
    handoff_rows,
    open_reader,
    task_mobility,
    write_once,
)
from robota.host._mesh_push import OfferIdle
from robota.mesh import HandoffBusy, MeshError

ROUTE = "cli:r1"


def _offer(handoff: str = "0123456789abcdef") -> OfferHandoff:
    return OfferHandoff(
        handoff=handoff,
        task="t1",
        peer="DESK",
        payload=b"{}",
        manifest_length=2,
        manifest_sha256=bytes(32),
        manifest={"inventory": {}, "origin": None, "head": None, "title": "build"},
        grant=b"grant",
        expires_at=2_000.0,
        at=1_000.0,
    )


def _store(tmp_path: Path) -> Path:
    """A task with one completed turn, bound to its route: what the push sealed."""
    path = tmp_path / "robota.db"
    write_once(path, CreateTask("t1", "codex", "/p", "acp", title="build", at=1.0))
    write_once(path, BindRouteTask(ROUTE, "t1", at=1.0))
    write_once(path, InsertTurnAttempt("a1", "t1", ROUTE, "HELLO", at=2.0))
    write_once(path, FinishTurnAttempt("a1", "completed", final_text="hi", at=2.5))
    return path


def _read(path: Path, query: Callable[[Any], Any]) -> Any:
    with closing(open_reader(path)) as db:
        return query(db)


def _began(path: Path) -> None:
    write_once(path, InsertTurnAttempt("a2", "t1", ROUTE, "SLOW long one", at=3.0))


def _queued(path: Path) -> None:
    write_once(path, EnqueuePrompt(ROUTE, "after it", task_id="t1"))


def _ran(path: Path) -> None:
    _began(path)
    write_once(path, FinishTurnAttempt("a2", "completed", final_text="done", at=3.5))


def _nothing(_path: Path) -> None:
    return None


@pytest.mark.parametrize(
    ("since", "refused", "says"),
    [
        (_nothing, None, ""),
        (_began, HandoffBusy, "a turn is running"),
        (_queued, HandoffBusy, "a prompt is queued"),
        (_ran, MeshError, "ran a turn after it was sealed (2 turns, 1 sealed)"),
    ],
    ids=["idle", "a turn began", "a prompt queued", "a turn ran to its end"],
)
def test_the_offer_is_recorded_only_while_the_task_is_as_sealed(
    tmp_path: Path, since: Callable[[Path], None], refused: type[Exception] | None, says: str
) -> None:
    path = _store(tmp_path)
    since(path)  # between the push's read and its write
    op = OfferIdle(offer=_offer(), turns=1)
    if refused is None:
        assert write_once(path, op) is True
        [row] = _read(path, handoff_rows)
        assert (row.id, row.side, row.phase, row.task) == (
            _offer().handoff,
            "source",
            "offered",
            "t1",
        )
        assert _read(path, lambda db: task_mobility(db, "t1")) is not None
        return
    with pytest.raises(refused, match=re.escape(says)):
        write_once(path, op)
    assert _read(path, handoff_rows) == []
    assert _read(path, lambda db: task_mobility(db, "t1")) is None  # it takes input still


def test_a_task_already_moving_is_not_offered_twice(tmp_path: Path) -> None:
    path = _store(tmp_path)
    assert write_once(path, OfferIdle(offer=_offer(), turns=1)) is True
    assert write_once(path, OfferIdle(offer=_offer("fedcba9876543210"), turns=1)) is False
    assert [row.id for row in _read(path, handoff_rows)] == [_offer().handoff]


def test_a_busy_refusal_names_the_most_pressing(tmp_path: Path) -> None:
    path = _store(tmp_path)
    _began(path)
    _queued(path)
    with pytest.raises(HandoffBusy) as busy:
        write_once(path, OfferIdle(offer=_offer(), turns=1))
    assert busy.value.busy == "turn-running"


def test_a_turn_after_the_offer_is_refused_and_the_task_frozen_as_sealed(tmp_path: Path) -> None:
    path = _store(tmp_path)
    assert write_once(path, OfferIdle(offer=_offer(), turns=1)) is True
    with pytest.raises(TaskImmobile, match="is moving to device DESK"):
        _began(path)  # the route admitted it on a read before the offer committed
    count = "SELECT count(*) FROM turn_attempts WHERE task_id = 't1'"
    assert _read(path, lambda db: db.execute(count).fetchone()[0]) == 1  # the sealed turn only
