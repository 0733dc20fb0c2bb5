"""A chat message's inbox row is consumed by the write that gives it its effect, by table: the
turn's attempt, the queued prompt, a steer's or a command's own write; a turn continued after a
restart takes its messages along, and one continued too often ends failed (``_recovery``)."""

from __future__ import annotations

from typing import Any

import pytest

from robota.core.engine import (
    MAX_RECOVERIES,
    ClaimFinal,
    Notify,
    Recover,
    TurnBegan,
    UserInput,
    Write,
)
from robota.core.store import (
    ConsumeInbox,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    Together,
)

from ._route import GEMINI, attempt, of, route, running_turn, task


def written(effects: list[Any]) -> list[object]:
    return [e.op for e in of(effects, Write)]


def test_a_prompt_consumes_its_message_in_the_attempts_write() -> None:
    core = route(current=task())
    effects = core.handle(UserInput("hello", message_id="om_1", inbox=7))
    (insert,) = [op for op in written(effects) if isinstance(op, InsertTurnAttempt)]
    assert (insert.inbox, insert.anchor_message_id, insert.id) == (7, "om_1", "a1")
    notices = [e.notice for e in of(list(of(effects, Write)[-1].then), Notify)]
    # told after the commit, naming the message it answers
    assert [n.message_id for n in notices if isinstance(n, TurnBegan)] == ["om_1"]


@pytest.mark.parametrize(
    ("text", "steers", "expected"),
    [
        # A steer goes into the running turn: consumed, naming it.
        ("also this", True, ConsumeInbox(7, "a1")),
        # A command (here while a turn runs) is its own write.
        ("/status", True, ConsumeInbox(7)),
    ],
)
def test_a_message_that_starts_no_turn_is_consumed_by_a_write_of_its_own(
    text: str, steers: bool, expected: ConsumeInbox
) -> None:
    core = route(current=task())
    running_turn(core, steers=steers)
    effects = core.handle(UserInput(text, message_id="om_2", inbox=7))
    assert expected in written(effects)


def test_a_queued_message_is_consumed_by_the_prompts_write() -> None:
    core = route(GEMINI, current=task(agent="gemini"))
    running_turn(core, steers=False)
    effects = core.handle(UserInput("later", message_id="om_2", inbox=8))
    (queued,) = [op for op in written(effects) if isinstance(op, EnqueuePrompt)]
    assert (queued.inbox, queued.message_id, queued.text) == (8, "om_2", "later")


def test_input_from_no_chat_consumes_nothing() -> None:
    core = route(current=task())
    effects = core.handle(UserInput("hello"))
    (insert,) = [op for op in written(effects) if isinstance(op, InsertTurnAttempt)]
    assert insert.inbox is None and insert.takes_over is None
    assert not [op for op in written(effects) if isinstance(op, ConsumeInbox)]


@pytest.mark.parametrize("count", [0, MAX_RECOVERIES - 1])
def test_a_continued_turn_answers_its_predecessors_message(count: int) -> None:
    cut = attempt(
        "old", status="running", prompt="build it", anchor_message_id="om_1", recovery_count=count
    )
    core = route(current=task())
    effects = core.handle(Recover("continue", cut))
    (together,) = [op for op in written(effects) if isinstance(op, Together)]
    insert = together.ops[-1]
    assert isinstance(insert, InsertTurnAttempt)
    assert (insert.takes_over, insert.anchor_message_id, insert.recovery_count) == (
        "old",
        "om_1",
        count + 1,
    )


def test_a_turn_continued_too_often_ends_failed_and_the_person_is_told() -> None:
    cut = attempt("old", status="running", recovery_count=MAX_RECOVERIES)
    core = route(current=task())
    effects = core.handle(Recover("continue", cut))
    (finish,) = written(effects)
    assert isinstance(finish, FinishTurnAttempt) and finish.status == "failed"
    assert finish.error is not None and f"{MAX_RECOVERIES + 1} times" in finish.error
    (claim,) = of(effects, ClaimFinal)
    assert claim.finished.status == "failed" and claim.finished.attempt_id == "old"
    assert claim.finished.error is not None and claim.finished.error.message == finish.error
    assert not [op for op in written(effects) if isinstance(op, InsertTurnAttempt)]
