"""A prompt admitted in the instant before a handoff's offer commits (issue 30 §3): the turn's
attempt is refused in its own transaction (``TaskImmobile``), and the route answers the prompt
as its admission would have, saying the task is moving; the chat message gets that answer,
consumed once; nothing reaches the agent. Any other failed write still ends the turn failed.
Then through the whole engine on a real store, the offer recorded between the route's
admission read and its turn's write by a hook on that read."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest

from robota.core.engine import (
    AttemptNotRecorded,
    ClaimFinal,
    Notify,
    RouteIdle,
    RouteReply,
    Tell,
    TurnBegan,
    TurnFinished,
    UserInput,
    Write,
)
from robota.core.engine._route import StoreReads
from robota.core.store import (
    ConsumeInbox,
    FinishTurnAttempt,
    TaskImmobile,
    open_reader,
    task_turn_attempts,
    write_once,
)

from ..support.handoff_ops import offered
from ._engine import ROUTE, connected, until
from ._engine import of as noticed
from ._route import of, route, task

MOVING = "task t0 is moving to device D (handoff h1); it takes no input until the handoff ends"


@pytest.mark.parametrize(
    ("error", "inbox", "refused"),
    [
        (TaskImmobile("t0", MOVING), 7, True),  # a chat message: answered, consumed once
        (TaskImmobile("t0", MOVING), None, True),  # a prompt typed here
        (OSError("disk full"), 7, False),  # any other failure ends the turn failed
    ],
)
def test_a_turn_whose_task_began_to_move_is_refused_as_the_admission_would(
    error: BaseException, inbox: int | None, refused: bool
) -> None:
    core = route(current=task())
    [began] = of(list(core.handle(UserInput("do it", message_id="om_1", inbox=inbox))), Write)
    effects = list(core.handle(AttemptNotRecorded(began.op.id, error)))
    replies = [e.notice.text for e in of(effects, Notify) if isinstance(e.notice, RouteReply)]
    writes = [e.op for e in of(effects, Write)]
    if not refused:
        assert [type(op) for op in writes] == [FinishTurnAttempt] and of(effects, ClaimFinal)
        return
    assert replies == [MOVING]
    assert writes == ([ConsumeInbox(7)] if inbox is not None else [])
    assert of(effects, ClaimFinal) == [] and of(effects, Tell) == []
    assert core.state.turn is None
    assert [e.notice for e in of(effects, Notify) if isinstance(e.notice, RouteIdle)]


async def test_a_prompt_racing_an_offer_is_refused_saying_the_task_is_moving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "robota.db"
    admitted: list[str | None] = []
    read = StoreReads.immobile

    def offer_after_the_read(reads: StoreReads, task_id: str) -> str | None:
        answer = read(reads, task_id)  # the task takes input: the prompt is admitted
        admitted.append(answer)
        write_once(path, offered(task_id))  # and the push's offer commits before its write
        return answer

    async with connected(tmp_path) as (engine, notices):
        engine.tell(ROUTE, UserInput("hello"))
        [first] = await until(notices, TurnFinished)
        await until(notices, RouteIdle)
        monkeypatch.setattr(StoreReads, "immobile", offer_after_the_read)
        engine.tell(ROUTE, UserInput("one more"))
        await until(notices, RouteReply)
        await until(notices, RouteIdle, 2)
    assert admitted == [None]
    says = f"task {first.task_id} is moving to device DEST (handoff h1)"
    assert [(r.text.startswith(says), r.level) for r in noticed(notices, RouteReply)] == [
        (True, "error")
    ]
    assert len(noticed(notices, TurnBegan)) == 1 and len(noticed(notices, TurnFinished)) == 1
    with closing(open_reader(path)) as db:
        assert [a.prompt for a in task_turn_attempts(db, first.task_id)] == ["hello"]
