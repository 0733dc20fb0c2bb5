"""A turn's attempt is refused in its own transaction when the task's handoffs say it takes no
input (``refuse_immobile``, issue 30 §3): the route admits a prompt on an earlier read, and an
offer recorded in between is seen here, on the one store writer. By table, on a real store:
moving, moved and held refuse (nothing written, the refusal's text the admission's), an ended
or released handoff does not; a queued prompt's turn is refused as one, its prompt kept."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import pytest

from robota.core.store import (
    CommitHeldTask,
    CreateTask,
    EnqueuePrompt,
    HeldTask,
    InsertTurnAttempt,
    LetGoTask,
    MarkReleased,
    MoveHandoff,
    TakeQueuedTurn,
    TaskImmobile,
    WriteOp,
    mobility_refusal,
    open_reader,
    pending_prompts,
    task_mobility,
    write_once,
)

from ..support.handoff_ops import offered, received

ROUTE = "cli:r1"


def _move(side: str, expected: str, to: str) -> MoveHandoff:
    return MoveHandoff(handoff="h1", side=side, expected=(expected,), to=to)  # type: ignore[arg-type]


_CREATED = CreateTask("t1", "codex", "/p", "acp", title="build", at=1.0)
_HELD = (
    received("t1"),
    _move("destination", "offered", "transferring"),
    _move("destination", "transferring", "staged"),
    CommitHeldTask(
        handoff="h1",
        task=HeldTask(id="t1", agent="codex", runtime_kind="acp", cwd="/p"),
        transcript=({"prompt": "HELLO", "answer": "hi"},),
        ack=b"ack",
    ),
)

STATES: dict[str, tuple[WriteOp[object], ...]] = {
    "a task like any other": (_CREATED,),
    "moving": (_CREATED, offered("t1")),
    "moved": (
        _CREATED,
        offered("t1"),
        _move("source", "offered", "transferring"),
        LetGoTask(handoff="h1"),
    ),
    "push abandoned": (_CREATED, offered("t1"), _move("source", "offered", "abandoned")),
    "held": _HELD,
    "released here": (*_HELD, MarkReleased(handoff="h1", side="destination")),
}


def _store(tmp_path: Path, ops: Sequence[WriteOp[object]]) -> Path:
    path = tmp_path / "robota.db"
    for op in ops:
        write_once(path, op)
    return path


def _attempts(path: Path) -> int:
    with closing(open_reader(path)) as db:
        return int(db.execute("SELECT count(*) FROM turn_attempts").fetchone()[0])


@pytest.mark.parametrize(
    ("state", "refused"),
    [
        ("a task like any other", False),
        ("moving", True),
        ("moved", True),
        ("push abandoned", False),
        ("held", True),
        ("released here", False),
    ],
)
def test_a_turns_attempt_is_refused_while_the_task_takes_no_input(
    tmp_path: Path, state: str, refused: bool
) -> None:
    path = _store(tmp_path, STATES[state])
    insert = InsertTurnAttempt("a1", "t1", ROUTE, "HELLO", at=20.0)
    if not refused:
        write_once(path, insert)
        assert _attempts(path) == 1
        return
    with closing(open_reader(path)) as db:
        says = mobility_refusal("t1", task_mobility(db, "t1"))
    assert says is not None
    with pytest.raises(TaskImmobile) as immobile:
        write_once(path, insert)
    # The text the route's admission gives, so the person reads one refusal either way.
    assert (immobile.value.refusal, str(immobile.value), immobile.value.task_id) == (
        says,
        says,
        "t1",
    )
    assert _attempts(path) == 0


def test_a_queued_prompt_is_not_taken_into_a_moving_task(tmp_path: Path) -> None:
    """Taking it and recording its attempt are one savepoint: refused, the prompt stays."""
    path = _store(tmp_path, (_CREATED,))
    write_once(path, EnqueuePrompt(ROUTE, "after it", task_id="t1"))
    write_once(path, offered("t1"))
    with pytest.raises(TaskImmobile):
        write_once(path, TakeQueuedTurn(ROUTE, "a1", "t1"))
    assert _attempts(path) == 0
    with closing(open_reader(path)) as db:
        assert [p.text for p in pending_prompts(db, ROUTE)] == ["after it"]
