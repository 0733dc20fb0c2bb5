"""The door's pure core, branch by branch: a state and one event in, the new state and the
effects out, in order. Tables; no store, no actor, no threads."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from robota.core.engine import TaskSettings
from robota.core.policy import (
    Cancelled,
    Complete,
    Confirmed,
    Ended,
    Expired,
    Pending,
    Queued,
    Rejected,
    Request,
    Running,
    SchedulerState,
    Started,
    Submit,
    Waiting,
    Withdrawn,
)
from robota.core.store import (
    AppendTeamAudit,
    CountHeldTeamMessage,
    DropTeamRequest,
    SaveTeamRequest,
    StartTeamRequest,
    TeamLastTask,
    TeamRequestRow,
)
from robota.core.teams import (
    AnswerConfirmation,
    AskConfirmation,
    FollowUpInput,
    GroupNote,
    StartRequest,
    ThreadReply,
)
from robota.core.teams._core import (
    BACKLOG_LIMIT,
    Attach,
    CoreEffect,
    Decided,
    Detach,
    DoorEvent,
    DoorSetup,
    DoorState,
    Dropped,
    Facts,
    Incoming,
    InterruptTurn,
    Learned,
    OperatorTurns,
    PauseStored,
    RefreshLast,
    Restore,
    ResumeStored,
    Say,
    SettleRecovered,
    Tell,
    TurnEnded,
    Write,
    recovered_routes,
    step,
)

from ._door import ADMIN, MEMBER, TEAM, message

SETUP = DoorSetup(TEAM, agent="codex", robota_version="1.2.3")
NOW = 1000.0
FACTS = Facts(NOW, agent_version="0.9")
ATTACHED = DoorState(attached=True, prefix="!")
SETTINGS = TaskSettings(cwd=Path("/p"))


def start(n: int, *, new_task: bool = True) -> StartRequest:
    return StartRequest(f"slack:C1:{n}", f"m{n}", f"question {n}", SETTINGS, new_task)


def rid(n: int) -> str:
    return f"slack:C1:{n}#m{n}"


def req(n: int, sender: str = MEMBER, tags: tuple[str, ...] = ("read:/p",)) -> Request:
    return Request(rid(n), sender, "ask", tags)


def run(
    event: DoorEvent, state: DoorState = ATTACHED, facts: Facts = FACTS
) -> tuple[DoorState, list[CoreEffect]]:
    before = dataclasses.replace(state)
    after, effects = step(SETUP, state, event, facts)
    assert state == before, "the step changed its input"
    return after, effects


def shape(effects: list[CoreEffect]) -> list[tuple[str, ...]]:
    """Each effect as (kind, type, where): enough to read a table row."""
    out: list[tuple[str, ...]] = []
    for effect in effects:
        if isinstance(effect, Say):
            said = effect.effect
            where = getattr(said, "anchor", "group")
            out.append(("say", type(said).__name__, where))
        elif isinstance(effect, Write):
            out.append(("write", type(effect.op).__name__))
        elif isinstance(effect, Tell):
            out.append(("tell", type(effect.message).__name__))
        elif isinstance(effect, InterruptTurn):
            out.append(("interrupt", effect.route))
        elif isinstance(effect, RefreshLast):
            out.append(("refresh",))
        else:
            assert isinstance(effect, Dropped)
            out.append(("dropped", effect.kind))
    return out


def said(effects: list[CoreEffect]) -> list[Any]:
    return [e.effect for e in effects if isinstance(e, Say)]


# -- a message of the group -----------------------------------------------------------------

PENDING = {("slack:C1:1", ADMIN): "m1"}
AUDIT = ("write", "AppendTeamAudit")

INCOMING = [
    # (case, state, message, effects)
    (
        "paused: counted, nothing said",
        dataclasses.replace(ATTACHED, paused=True),
        message(1, "hello", MEMBER),
        [("write", "CountHeldTeamMessage")],
    ),
    (
        "the asker's next message in the thread answers",
        dataclasses.replace(ATTACHED, pending=PENDING),
        message(2, "yes", ADMIN, thread=1),
        [("tell", "AnswerConfirmation")],
    ),
    (
        "someone else in that thread is an ordinary follow-up",
        dataclasses.replace(ATTACHED, pending=PENDING),
        message(2, "more", MEMBER, thread=1),
        [AUDIT, ("say", "FollowUpInput", "m2")],
    ),
    (
        "the asker outside a thread is a new message",
        dataclasses.replace(ATTACHED, pending=PENDING),
        message(2, "!help", ADMIN),
        [AUDIT, ("say", "ThreadReply", "m2")],
    ),
    (
        "a stranger when members are listed: ignored",
        ATTACHED,
        message(1, "hi", "ou_stranger"),
        [],
    ),
    (
        "help: answered",
        ATTACHED,
        message(1, "!help", MEMBER),
        [AUDIT, ("say", "ThreadReply", "m1")],
    ),
    (
        "a refusal: answered",
        ATTACHED,
        message(1, "turn off the bot", ADMIN),
        [AUDIT, ("say", "ThreadReply", "m1")],
    ),
    (
        "an admin-confirm intent: asked",
        ATTACHED,
        message(1, "!release v1", ADMIN),
        [AUDIT, ("tell", "AskConfirmation"), ("say", "ThreadReply", "m1")],
    ),
    ("/queue", ATTACHED, message(1, "!queue", MEMBER), [AUDIT, ("say", "ThreadReply", "m1")]),
    ("/status", ATTACHED, message(1, "!status", MEMBER), [AUDIT, ("say", "ThreadReply", "m1")]),
    (
        "an engine command: to the thread's task",
        ATTACHED,
        message(1, "!stop", ADMIN),
        [AUDIT, ("say", "FollowUpInput", "m1")],
    ),
    (
        "an acknowledgement in a thread: acked, then passed on",
        ATTACHED,
        message(2, "ok", MEMBER, thread=1),
        [AUDIT, ("say", "ThreadReply", "m2"), ("say", "FollowUpInput", "m2")],
    ),
    (
        "thanks in a thread: passed on, no ack",
        ATTACHED,
        message(2, "thanks", MEMBER, thread=1),
        [AUDIT, ("say", "FollowUpInput", "m2")],
    ),
    (
        "a request: stored before the registry hears of it",
        ATTACHED,
        message(1, "question 1", MEMBER),
        [AUDIT, ("write", "SaveTeamRequest"), ("tell", "Submit")],
    ),
    (
        "no transport: what is said waits in the backlog",
        DoorState(prefix="!"),
        message(1, "!help", MEMBER),
        [AUDIT],
    ),
]


@pytest.mark.parametrize(
    ("case", "state", "incoming", "expected"), INCOMING, ids=[row[0] for row in INCOMING]
)
def test_a_message_of_the_group(case: str, state: DoorState, incoming: Any, expected: Any) -> None:
    members = dataclasses.replace(TEAM, members=frozenset({ADMIN, MEMBER}))
    setup = dataclasses.replace(SETUP, team=members)
    before = dataclasses.replace(state)
    after, effects = step(setup, state, Incoming(incoming), FACTS)
    assert state == before
    assert shape(effects) == expected
    if not state.attached and expected:
        assert [type(e) for e in after.backlog] == [ThreadReply]


def test_a_request_opens_a_task_on_its_route_once() -> None:
    after, effects = run(Incoming(message(1, "question 1", MEMBER)))
    assert after.tasks == {"slack:C1:1"}
    first = after.requests[rid(1)]
    assert (first.text, first.new_task, first.settings.permission_mode) == (
        "question 1",
        True,
        "plan",
    )
    assert first.settings.title == "web: question 1" and first.settings.cwd == Path("/p")
    save = next(e.op for e in effects if isinstance(e, Write) and isinstance(e.op, SaveTeamRequest))
    assert (save.id, save.route, save.anchor, save.new_task) == (rid(1), "slack:C1:1", "m1", True)
    (submit,) = [e.message for e in effects if isinstance(e, Tell)]
    assert isinstance(submit, Submit) and submit.now == NOW
    assert (submit.request.id, submit.request.sender, submit.request.intent) == (
        rid(1),
        MEMBER,
        "ask",
    )
    # A second request in the same thread continues its task.
    again, _ = run(Incoming(message(2, "question 2", ADMIN, thread=1)), after)
    assert again.requests == after.requests  # a follow-up in a thread is no new request
    second, _ = run(Incoming(message(3, "!release v2", ADMIN)), after)
    assert second.pending == {("slack:C1:3", ADMIN): "m3"}


def test_a_confirmation_is_asked_with_its_pending_and_the_answer_carries_the_text() -> None:
    asked, effects = run(Incoming(message(1, "!release v1", ADMIN)))
    (tell,) = [e.message for e in effects if isinstance(e, Tell)]
    assert tell == AskConfirmation(Pending("slack:C1:1", ADMIN, "release", "v1", NOW))
    assert asked.pending == {("slack:C1:1", ADMIN): "m1"}
    answered, effects = run(Incoming(message(2, "yes", ADMIN, thread=1)), asked)
    assert [e.message for e in effects if isinstance(e, Tell)] == [
        AnswerConfirmation("slack:C1:1", ADMIN, "yes", NOW)
    ]
    assert answered.pending == {("slack:C1:1", ADMIN): "m2"}


def test_status_and_queue_show_the_registry_given_with_the_message() -> None:
    registry = SchedulerState(
        running=(Running(req(1), NOW),), queue=(Waiting(req(2, ADMIN), NOW, "slot_full"),)
    )
    _, effects = run(Incoming(message(5, "!queue", MEMBER), registry))
    (queue,) = said(effects)
    assert queue.text.startswith("#1 ask · ou_admin")
    paused_status = dataclasses.replace(ATTACHED, paused=False)
    _, effects = run(Incoming(message(6, "!status", MEMBER), registry), paused_status)
    (status,) = said(effects)
    assert status.text.splitlines()[0] == "● Online"
    assert "1/3" in status.text and "codex v0.9" in status.text


def test_the_backlog_keeps_the_newest_and_says_what_it_dropped() -> None:
    full = DoorState(prefix="!", backlog=tuple(GroupNote(str(n)) for n in range(BACKLOG_LIMIT)))
    after, effects = run(Incoming(message(1, "!help", MEMBER)), full)
    assert shape(effects) == [AUDIT, ("dropped", "GroupNote")]
    assert len(after.backlog) == BACKLOG_LIMIT
    assert after.backlog[0] == GroupNote("1") and isinstance(after.backlog[-1], ThreadReply)


# -- the registry's decisions, after their commit ---------------------------------------------

WAITING = dataclasses.replace(ATTACHED, requests={rid(1): start(1)})
RUNNING = dataclasses.replace(ATTACHED, running={"slack:C1:1": rid(1)})
OPERATOR_BUSY = dataclasses.replace(WAITING, operator=frozenset({"a1"}))
CONFLICT = "conflict:path-overlap:write:/p~read:/p"
ASKED = dataclasses.replace(ATTACHED, pending={("slack:C1:1", ADMIN): "m2"})
RELEASE = Pending("slack:C1:1", ADMIN, "release", "v1", NOW)
OP = Request("operator:a1", "operator", "operator", ("read:/p",))

COMMITTED = [
    # (case, state, effect, effects, text in the reply)
    ("the operator's start holds a slot only", ATTACHED, Started(OP), [], None),
    ("the operator's wait likewise", ATTACHED, Queued(OP, 1, 3, "slot_full"), [], None),
    (
        "a start: stored as started, then started",
        WAITING,
        Started(req(1)),
        [("write", "StartTeamRequest"), ("say", "StartRequest", "m1")],
        None,
    ),
    (
        "a start whose text was lost: completed",
        ATTACHED,
        Started(req(1)),
        [("tell", "Complete")],
        None,
    ),
    (
        "a wait: the queued reply",
        WAITING,
        Queued(req(1), 2, 3, "slot_full"),
        [("say", "ThreadReply", "m1")],
        "Queued (position 2)",
    ),
    (
        "a write behind the operator: the busy placeholder",
        OPERATOR_BUSY,
        Queued(req(1, tags=("write:/p",)), 1, 1, CONFLICT),
        [("say", "ThreadReply", "m1")],
        "developer is working",
    ),
    (
        "the placeholder at most once per five minutes",
        dataclasses.replace(OPERATOR_BUSY, placeholder_at=NOW - 60),
        Queued(req(1, tags=("write:/p",)), 1, 1, CONFLICT),
        [("say", "ThreadReply", "m1")],
        "Queued (position 1)",
    ),
    (
        "a wait of an unknown request: nothing",
        ATTACHED,
        Queued(req(1), 1, 3, "slot_full"),
        [],
        None,
    ),
    (
        "a rejection: dropped and told",
        WAITING,
        Rejected(req(1)),
        [("write", "DropTeamRequest"), ("say", "ThreadReply", "m1")],
        "Queue full",
    ),
    (
        "a rejection unknown: dropped",
        ATTACHED,
        Rejected(req(1)),
        [("write", "DropTeamRequest")],
        None,
    ),
    ("withdrawn: dropped", WAITING, Withdrawn(rid(1)), [("write", "DropTeamRequest")], None),
    ("the operator's end: nothing", ATTACHED, Ended("operator:a1"), [], None),
    ("an end: dropped", RUNNING, Ended(rid(1)), [("write", "DropTeamRequest")], None),
    (
        "a timeout: dropped, interrupted, told",
        RUNNING,
        Ended(rid(1), timed_out=True),
        [("write", "DropTeamRequest"), ("interrupt", "slack:C1:1"), ("say", "ThreadReply", "m1")],
        "Timed out after 30 minutes",
    ),
    (
        "confirmed: audited and submitted in its thread",
        ASKED,
        Confirmed(RELEASE),
        [("write", "AppendTeamAudit"), ("write", "SaveTeamRequest"), ("tell", "Submit")],
        None,
    ),
    (
        "confirmed by one no longer heard: nothing",
        dataclasses.replace(ASKED, pending={}),
        Confirmed(dataclasses.replace(RELEASE, sender="ou_gone")),
        [],
        None,
    ),
    (
        "confirmed for an intent no longer configured: told",
        ASKED,
        Confirmed(dataclasses.replace(RELEASE, intent="gone")),
        [("say", "ThreadReply", "m2")],
        "no such action",
    ),
    (
        "cancelled: told at the answer",
        ASKED,
        Cancelled(RELEASE),
        [("say", "ThreadReply", "m2")],
        "release cancelled",
    ),
    (
        "expired with no answer: told at the thread",
        ATTACHED,
        Expired(RELEASE),
        [("say", "ThreadReply", "slack:C1:1")],
        "within 15 minutes",
    ),
]


@pytest.mark.parametrize(
    ("case", "state", "effect", "expected", "text"), COMMITTED, ids=[row[0] for row in COMMITTED]
)
def test_a_committed_decision(
    case: str, state: DoorState, effect: Any, expected: Any, text: str | None
) -> None:
    members = dataclasses.replace(TEAM, members=frozenset({ADMIN, MEMBER}))
    setup = dataclasses.replace(SETUP, team=members)
    after, effects = step(setup, state, Decided(effect), FACTS)
    assert shape(effects) == expected
    replies = [e.text for e in said(effects) if isinstance(e, ThreadReply)]
    if text is not None:
        assert text in replies[-1]
    if state.pending:  # the question is answered, whatever the answer
        assert after.pending == {}


def test_committed_decisions_keep_the_door_state() -> None:
    started, effects = run(Decided(Started(req(1))), WAITING)
    assert started.requests == {} and started.running == {"slack:C1:1": rid(1)}
    (stored,) = [e.op for e in effects if isinstance(e, Write)]
    assert stored == StartTeamRequest("web", rid(1))
    _, effects = run(Decided(Started(req(1))))
    assert [e.message for e in effects if isinstance(e, Tell)] == [Complete(rid(1), NOW)]
    rejected, _ = run(Decided(Rejected(req(1))), WAITING)
    withdrawn, _ = run(Decided(Withdrawn(rid(1))), WAITING)
    assert rejected.requests == {} == withdrawn.requests
    timed_out, _ = run(Decided(Ended(rid(1), timed_out=True)), RUNNING)
    assert timed_out.running == {}
    other = dataclasses.replace(RUNNING, running={"slack:C1:1": rid(9)})
    kept, _ = run(Decided(Ended(rid(1), timed_out=True)), other)
    assert kept.running == {"slack:C1:1": rid(9)}  # the route runs a newer request
    placeholder, _ = run(Decided(Queued(req(1, tags=("write:/p",)), 1, 1, CONFLICT)), OPERATOR_BUSY)
    assert placeholder.placeholder_at == NOW
    confirmed, effects = run(Decided(Confirmed(RELEASE)), ASKED)
    assert confirmed.pending == {}
    (new,) = confirmed.requests.values()
    assert (new.anchor, new.text, new.settings.permission_mode) == ("m2", "release v1", None)
    audit = next(e.op for e in effects if isinstance(e, Write))
    assert isinstance(audit, AppendTeamAudit) and audit.decision == "confirmed"


# -- turns, the operator, the transport, the switch ---------------------------------------------

RECOVERED = dataclasses.replace(RUNNING, recovered=frozenset({rid(1)}))

EVENTS = [
    # (case, state, event, effects, what the state then says)
    (
        "a request's turn ends: completed, the last task read again",
        RECOVERED,
        TurnEnded("slack:C1:1"),
        [("tell", "Complete"), ("refresh",)],
        {"running": {}, "recovered": frozenset()},
    ),
    ("a turn the door does not run: nothing", ATTACHED, TurnEnded("slack:C1:9"), [], {}),
    (
        "the operator starts a turn: it holds a slot",
        ATTACHED,
        OperatorTurns(frozenset({"a1"})),
        [("tell", "Submit")],
        {"operator": frozenset({"a1"})},
    ),
    (
        "one ends, another starts",
        dataclasses.replace(ATTACHED, operator=frozenset({"a1"})),
        OperatorTurns(frozenset({"a2"})),
        [("tell", "Submit"), ("tell", "Complete")],
        {"operator": frozenset({"a2"})},
    ),
    (
        "the same turns again: nothing",
        dataclasses.replace(ATTACHED, operator=frozenset({"a1"})),
        OperatorTurns(frozenset({"a1"})),
        [],
        {},
    ),
    (
        "a recovered turn still live: nothing",
        RECOVERED,
        SettleRecovered(frozenset({"slack:C1:1"})),
        [],
        {"recovered": frozenset({rid(1)})},
    ),
    (
        "a recovered turn that ended unheard: completed",
        RECOVERED,
        SettleRecovered(frozenset()),
        [("tell", "Complete"), ("refresh",)],
        {"recovered": frozenset(), "running": {}},
    ),
    (
        "a transport attaches: online, then what waited",
        DoorState(backlog=(start(1),)),
        Attach("ou_owner", "!"),
        [("say", "GroupNote", "group"), ("say", "StartRequest", "m1")],
        {"attached": True, "owner": "ou_owner", "prefix": "!", "backlog": ()},
    ),
    (
        "attaching while paused: no online note",
        DoorState(paused=True, backlog=(start(1),)),
        Attach(None),
        [("say", "StartRequest", "m1")],
        {"attached": True, "backlog": ()},
    ),
    ("the transport leaves", ATTACHED, Detach(), [], {"attached": False}),
    (
        "paused: the offline note",
        ATTACHED,
        PauseStored(),
        [("say", "GroupNote", "group")],
        {"paused": True},
    ),
    (
        "paused again: nothing",
        dataclasses.replace(ATTACHED, paused=True),
        PauseStored(),
        [],
        {"paused": True},
    ),
    (
        "resumed with held messages: online and how many",
        dataclasses.replace(ATTACHED, paused=True),
        ResumeStored(2),
        [("say", "GroupNote", "group"), ("say", "GroupNote", "group")],
        {"paused": False},
    ),
    (
        "resumed with none held: online",
        dataclasses.replace(ATTACHED, paused=True),
        ResumeStored(0),
        [("say", "GroupNote", "group")],
        {"paused": False},
    ),
    ("resumed while not paused: nothing", ATTACHED, ResumeStored(3), [], {"paused": False}),
    (
        "the last task learned",
        ATTACHED,
        Learned(TeamLastTask("gpt-5")),
        [],
        {"last": TeamLastTask("gpt-5")},
    ),
]


@pytest.mark.parametrize(
    ("case", "state", "event", "expected", "fields"), EVENTS, ids=[row[0] for row in EVENTS]
)
def test_an_event(
    case: str, state: DoorState, event: Any, expected: Any, fields: dict[str, Any]
) -> None:
    after, effects = run(event, state)
    assert shape(effects) == expected
    assert {name: getattr(after, name) for name in fields} == fields


def test_the_notes_name_the_versions_the_model_and_the_context() -> None:
    last = TeamLastTask("gpt-5", {"total_tokens": 3000, "context_window": 10000})
    _, effects = run(Attach(None), DoorState(last=last))
    (online,) = said(effects)
    assert online.text.splitlines() == [
        "● Online",
        "robota v1.2.3 · codex v0.9",
        "Model · gpt-5",
        "Context · ███░░░░░░░ 30%",
    ]
    _, effects = run(PauseStored(), dataclasses.replace(ATTACHED, last=last))
    assert said(effects) == [GroupNote("○ Offline\nContext · ███░░░░░░░ 30%")]
    _, effects = run(ResumeStored(2), dataclasses.replace(ATTACHED, paused=True))
    assert "2 messages arrived while paused" in said(effects)[-1].text


def test_a_detached_door_keeps_what_it_says_for_the_next_transport() -> None:
    detached, _ = run(Detach())
    after, effects = run(Decided(Started(req(1))), dataclasses.replace(detached, **_waiting()))
    assert shape(effects) == [("write", "StartTeamRequest")]
    assert after.backlog == (start(1),)


def _waiting() -> dict[str, Any]:
    return {"requests": {rid(1): start(1)}}


# -- a restart -------------------------------------------------------------------------------


def row(n: int, *, new_task: bool = True) -> TeamRequestRow:
    return TeamRequestRow(
        rid(n), "web", f"slack:C1:{n}", f"m{n}", f"question {n}", "plan", f"web: {n}", new_task,
        None, 1.0,
    )  # fmt: skip


def test_a_restart_takes_each_stored_request_back_by_what_became_of_it() -> None:
    registry = SchedulerState(
        running=(
            Running(req(1), NOW),  # never began: started again
            Running(req(2), NOW),  # its turn is live: the recovery's end ends it
            Running(req(3), NOW),  # ended while the host was down: completed
            Running(Request("operator:a7", "operator", "operator", ("read:/p",)), NOW),
        ),
        queue=(Waiting(req(4), NOW, "slot_full"),),  # waits again, with its text
    )
    rows = (
        (row(1), False, False),
        (row(2), True, True),
        (row(3), True, False),
        (row(4), False, False),
        (row(5), False, False),  # the registry never took it: nobody was told
    )
    restore = Restore(rows, registry, (RELEASE,), paused=True, last=TeamLastTask("gpt-5"))
    after, effects = run(restore, DoorState())
    assert shape(effects) == [("write", "DropTeamRequest"), ("tell", "Complete")]
    assert [e.op for e in effects if isinstance(e, Write)] == [DropTeamRequest(rid(5))]
    assert [e.message for e in effects if isinstance(e, Tell)] == [Complete(rid(3), NOW)]
    assert [(s.route, s.text) for s in after.backlog] == [("slack:C1:1", "question 1")]  # type: ignore[union-attr]
    assert list(after.requests) == [rid(4)] and after.requests[rid(4)].settings.permission_mode
    assert after.running == {"slack:C1:1": rid(1), "slack:C1:2": rid(2)}
    assert after.recovered == {rid(2)} and recovered_routes(after) == ["slack:C1:2"]
    assert after.operator == {"a7"} and after.pending == {("slack:C1:1", ADMIN): ""}
    assert after.tasks == {f"slack:C1:{n}" for n in range(1, 6)}
    assert after.paused and after.last == TeamLastTask("gpt-5")


def test_after_a_restart_an_answer_to_a_restored_question_replies_at_its_thread() -> None:
    restored, _ = run(Restore(pending=(RELEASE,)), ATTACHED)
    _, effects = run(Decided(Cancelled(RELEASE)), restored)
    (cancelled,) = said(effects)
    assert cancelled == ThreadReply("slack:C1:1", "slack:C1:1", "release cancelled.")


def test_held_messages_and_follow_ups_are_not_requests() -> None:
    _, effects = run(
        Incoming(message(1, "question", MEMBER)), dataclasses.replace(ATTACHED, paused=True)
    )
    assert [e.op for e in effects if isinstance(e, Write)] == [CountHeldTeamMessage("web")]
    _, effects = run(Incoming(message(2, "more", MEMBER, thread=1)))
    assert said(effects) == [FollowUpInput("slack:C1:1", "m2", "more")]
