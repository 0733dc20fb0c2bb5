"""The route's surfaces and approvals as tables: who may answer, first answer wins, what the
last driving surface leaving does to a pending question. No threads, no store (see
``_route.py``'s ports)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from robota.core.agents import DecideApproval, SessionEvent
from robota.core.engine import (
    AnswerApproval,
    Effect,
    Notify,
    Restored,
    RouteCore,
    RouteReply,
    SurfaceJoined,
    SurfaceLeft,
    TaskDefaults,
    Tell,
    TurnUpdate,
)
from robota.core.events import (
    ApprovalDecision,
    ApprovalKind,
    ApprovalRequested,
    ApprovalResolved,
    TurnCompleted,
)

from ._route import CODEX, CWD, KEY, Reads, ids, route, running_turn, task

ASKED = ApprovalRequested("ap1", "command", "Run ls?")
QUESTION = ApprovalRequested("ap1", "other", "Which file?", decisions=("accept", "cancel"))


def decided(decision: ApprovalDecision, approval_id: str = "ap1") -> Tell:
    return Tell("codex", DecideApproval("t0", approval_id, decision))


def told(effects: Sequence[Effect]) -> list[Tell]:
    return [e for e in effects if isinstance(e, Tell)]


def notices(effects: Sequence[Effect]) -> list[object]:
    return [e.notice for e in effects if isinstance(e, Notify)]


def asking(*surfaces: tuple[str, bool], asked: ApprovalRequested = ASKED) -> RouteCore:
    """A running turn on ``t0`` with ``surfaces`` joined, and the agent's question asked."""
    core = route(current=task())
    running_turn(core)
    for surface, drives in surfaces:
        core.handle(SurfaceJoined(surface, drives))
    core.handle(SessionEvent("t0", asked))
    return core


def resolve(core: RouteCore, decision: ApprovalDecision) -> ApprovalResolved:
    """The agent's resolution as every surface sees it."""
    effects = core.handle(SessionEvent("t0", ApprovalResolved("ap1", decision)))
    (update,) = [n for n in notices(effects) if isinstance(n, TurnUpdate)]
    assert isinstance(update.event, ApprovalResolved)
    return update.event


def test_a_route_no_surface_joined_sends_every_answer_as_before() -> None:
    core = asking()
    assert told(core.handle(AnswerApproval("ap1", "accept"))) == [decided("accept")]
    assert resolve(core, "accept").answerer is None
    # An approval the route never saw (asked outside its turn) still reaches the agent.
    assert told(core.handle(AnswerApproval("zz", "decline"))) == [decided("decline", "zz")]


def test_the_first_answer_wins_and_every_surface_hears_who_gave_it() -> None:
    core = asking(("ws:1", True), ("attach:2", True))
    first = core.handle(AnswerApproval("ap1", "accept", surface="attach:2"))
    assert first == [decided("accept")]
    second = core.handle(AnswerApproval("ap1", "decline", surface="ws:1"))
    assert second == [
        Notify(
            RouteReply(
                KEY, "approval ap1 was already answered by attach:2", "error", surface="ws:1"
            )
        )
    ]
    assert resolve(core, "accept") == ApprovalResolved("ap1", "accept", answerer="attach:2")
    # Once resolved, a late answer is refused by name too, and nothing goes to the agent.
    late = core.handle(AnswerApproval("ap1", "accept", surface="ws:1"))
    assert told(late) == []
    assert [n.text for n in notices(late) if isinstance(n, RouteReply)] == [
        "approval ap1 was already answered by attach:2"
    ]


def test_an_observing_surface_cannot_answer() -> None:
    core = asking(("ws:1", True), ("attach:2", False))
    effects = core.handle(AnswerApproval("ap1", "accept", surface="attach:2"))
    assert told(effects) == []
    assert notices(effects) == [
        RouteReply(
            KEY, "this surface only observes: its answer was not sent", "error", surface="attach:2"
        )
    ]
    assert core.handle(AnswerApproval("ap1", "decline", surface="ws:1")) == [decided("decline")]


@pytest.mark.parametrize(
    ("asked", "decision", "said"),
    [
        (ASKED, "decline", "declined"),
        (ApprovalRequested("ap1", "file_change", "Edit a.py?"), "decline", "declined"),
        (QUESTION, "cancel", "cancelled"),
        (ApprovalRequested("ap1", "command", "Run?", decisions=("accept",)), "cancel", "cancelled"),
    ],
)
def test_the_last_driving_surface_leaving_settles_a_pending_question(
    asked: ApprovalRequested, decision: ApprovalDecision, said: str
) -> None:
    core = asking(("ws:1", True), ("attach:2", True), ("attach:3", False), asked=asked)
    assert core.handle(SurfaceLeft("ws:1")) == []  # another driver is still there
    assert core.handle(SurfaceLeft("attach:3")) == []  # an observer leaving changes nothing
    effects = core.handle(SurfaceLeft("attach:2"))
    assert effects == [
        decided(decision),
        Notify(
            RouteReply(KEY, f"approval ap1 ({asked.title}) {said}: the last driving surface left")
        ),
    ]
    assert resolve(core, decision).answerer == "policy"
    # A surface joining afterwards finds nothing left to answer.
    core.handle(SurfaceJoined("ws:4", True))
    assert told(core.handle(AnswerApproval("ap1", "accept", surface="ws:4"))) == []


def test_an_answered_question_is_not_settled_again_when_the_driver_leaves() -> None:
    core = asking(("ws:1", True))
    core.handle(AnswerApproval("ap1", "accept", surface="ws:1"))
    assert core.handle(SurfaceLeft("ws:1")) == []
    assert resolve(core, "accept").answerer == "ws:1"


@pytest.mark.parametrize(
    ("joined", "kind", "decision"),
    [
        ((("attach:1", False),), "command", "decline"),
        ((("attach:1", False),), "other", "cancel"),
    ],
)
def test_a_question_asked_with_no_driving_surface_is_settled_by_policy(
    joined: tuple[tuple[str, bool], ...], kind: ApprovalKind, decision: ApprovalDecision
) -> None:
    core = route(current=task())
    running_turn(core)
    for surface, drives in joined:
        core.handle(SurfaceJoined(surface, drives))
    asked = ApprovalRequested("ap1", kind, "Go?")
    effects = core.handle(SessionEvent("t0", asked))
    assert isinstance(notices(effects)[0], TurnUpdate)  # every surface still sees the question
    assert told(effects) == [decided(decision)]
    assert resolve(core, decision).answerer == "policy"


def test_a_question_asked_once_every_surface_left_is_declined() -> None:
    core = route(current=task())
    running_turn(core)
    core.handle(SurfaceJoined("attach:1", True))
    core.handle(SurfaceLeft("attach:1"))
    effects = core.handle(SessionEvent("t0", ASKED))
    assert told(effects) == [decided("decline")]
    assert "no driving surface is attached" in notices(effects)[-1].text  # type: ignore[attr-defined]


def test_a_question_the_turn_ended_with_cannot_be_answered_after() -> None:
    core = asking(("ws:1", True))
    core.handle(SessionEvent("t0", TurnCompleted("turn-1", "interrupted")))
    effects = core.handle(AnswerApproval("ap1", "accept", surface="ws:1"))
    assert told(effects) == []
    assert core.handle(SurfaceLeft("ws:1")) == []


def test_the_agents_own_policy_answer_names_policy_and_an_unknown_leave_is_only_logged() -> None:
    core = asking(("ws:1", True))
    effects = core.handle(SessionEvent("t0", ApprovalResolved("ap1", "accept", by="policy")))
    (update,) = [n for n in notices(effects) if isinstance(n, TurnUpdate)]
    assert update.event == ApprovalResolved("ap1", "accept", by="policy", answerer="policy")
    assert told(core.handle(SurfaceLeft("never"))) == []


def test_a_passivated_route_keeps_its_surfaces_and_pending_question() -> None:
    core = asking(("ws:1", True), ("attach:2", False))
    core.handle(AnswerApproval("ap1", "accept", surface="ws:1"))
    kept = core.kept()
    reads = Reads()
    reads.tasks_by_id["t0"] = task()
    again = RouteCore(
        KEY,
        {"codex": CODEX},
        TaskDefaults(agent="codex", cwd=CWD),
        reads,
        restored=Restored(task(), kept=kept),
        ids=ids(),
    )
    again.start()
    assert again.state.surfaces == {"ws:1": True, "attach:2": False}
    refused = again.handle(AnswerApproval("ap1", "decline", surface="attach:2"))
    assert told(refused) == []
    late = again.handle(AnswerApproval("ap1", "decline", surface="ws:1"))
    assert [n.text for n in notices(late) if isinstance(n, RouteReply)] == [
        "approval ap1 was already answered by ws:1"
    ]
