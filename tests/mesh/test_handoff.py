"""The handoff's phases and both sides' machines: tables, then the protocol under loss and
crashes."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

import pytest

from robota.mesh import (
    HANDOFF_PHASES,
    AckArrived,
    CommitHeld,
    DiscardStaging,
    Handoff,
    HandoffAbandoned,
    HandoffAccepted,
    HandoffClosed,
    HandoffDeclined,
    HandoffEffect,
    HandoffMessage,
    HandoffPhase,
    HandoffReleased,
    HandoffSaved,
    HandoffStaged,
    IllegalTransition,
    LetGo,
    LinkReconnected,
    OfferArrived,
    OfferExpired,
    OperatorAnswered,
    PayloadChecked,
    RecordPhase,
    RefuseEvent,
    ReleaseCopy,
    SendMessage,
    SendOffer,
    SendPayload,
    SendSaved,
    Unfreeze,
    destination_step,
    handoff_move,
    source_step,
)

LEGAL = {
    "source": {
        (None, "offered"),
        ("offered", "transferring"),
        ("offered", "abandoned"),
        ("transferring", "staged"),
        ("transferring", "committed"),
        ("transferring", "abandoned"),
        ("staged", "committed"),
        ("staged", "abandoned"),
    },
    "destination": {
        (None, "offered"),
        ("offered", "transferring"),
        ("offered", "abandoned"),
        ("transferring", "staged"),
        ("transferring", "abandoned"),
        ("staged", "committed"),
        ("staged", "abandoned"),
    },
}


@pytest.mark.parametrize("side", ["source", "destination"])
@pytest.mark.parametrize("current", [None, *HANDOFF_PHASES])
@pytest.mark.parametrize("target", HANDOFF_PHASES)
def test_every_move_is_legal_idempotent_or_refused(
    side: str, current: HandoffPhase | None, target: HandoffPhase
) -> None:
    if current == target:
        assert handoff_move(side, current, target) is False  # type: ignore[arg-type]
    elif (current, target) in LEGAL[side]:
        assert handoff_move(side, current, target) is True  # type: ignore[arg-type]
    else:
        with pytest.raises(IllegalTransition) as refused:
            handoff_move(side, current, target)  # type: ignore[arg-type]
        assert target in str(refused.value)


def test_nothing_leaves_committed_or_abandoned() -> None:
    for side in ("source", "destination"):
        for end in ("committed", "abandoned"):
            for target in HANDOFF_PHASES:
                if target != end:
                    with pytest.raises(IllegalTransition):
                        handoff_move(side, end, target)  # type: ignore[arg-type]


H = "h1"


def _at(phase: HandoffPhase, released: bool = False) -> Handoff:
    return Handoff(H, "t1", "PEER", phase, released)


def _kinds(effects: tuple[HandoffEffect, ...]) -> list[str]:
    out = []
    for effect in effects:
        if isinstance(effect, SendMessage):
            out.append(type(effect.message).__name__)
        elif isinstance(effect, RecordPhase):
            out.append(f"record {effect.phase}")
        else:
            out.append(type(effect).__name__)
    return [kind for kind in out if kind != "TellOperator"]


SOURCE_TABLE = [
    # (phase, released, event, new phase, new released, effects)
    (
        "offered",
        False,
        HandoffAccepted(H),
        "transferring",
        False,
        ["record transferring", "SendPayload"],
    ),
    ("transferring", False, HandoffAccepted(H), "transferring", False, ["SendPayload"]),
    ("offered", False, HandoffDeclined(H), "abandoned", False, ["record abandoned", "Unfreeze"]),
    (
        "transferring",
        False,
        HandoffAbandoned(H, "x"),
        "abandoned",
        False,
        ["record abandoned", "Unfreeze"],
    ),
    (
        "staged",
        False,
        HandoffAbandoned(H, "x"),
        "abandoned",
        False,
        ["record abandoned", "Unfreeze"],
    ),
    ("transferring", False, HandoffStaged(H), "staged", False, ["record staged"]),
    ("transferring", False, AckArrived(), "committed", False, ["LetGo", "HandoffReleased"]),
    ("staged", False, AckArrived(), "committed", False, ["LetGo", "HandoffReleased"]),
    ("committed", False, AckArrived(), "committed", False, ["HandoffReleased"]),
    ("committed", False, HandoffClosed(H), "committed", True, ["record committed"]),
    ("committed", True, HandoffClosed(H), "committed", True, []),
    (
        "offered",
        False,
        OfferExpired(),
        "abandoned",
        False,
        ["record abandoned", "Unfreeze", "HandoffAbandoned"],
    ),
    # once the payload travels, the source waits for the destination's word
    ("transferring", False, OfferExpired(), "transferring", False, ["RefuseEvent"]),
    ("staged", False, OfferExpired(), "staged", False, ["RefuseEvent"]),
    # after the acknowledgement nothing takes the task back
    ("committed", False, HandoffAbandoned(H, "x"), "committed", False, ["RefuseEvent"]),
    ("committed", False, HandoffDeclined(H), "committed", False, ["RefuseEvent"]),
    ("offered", False, AckArrived(), "offered", False, ["RefuseEvent"]),
    ("abandoned", False, HandoffAccepted(H), "abandoned", False, ["HandoffAbandoned"]),
    ("abandoned", False, AckArrived(), "abandoned", False, ["HandoffAbandoned"]),
    # what a reconnect sends again
    ("offered", False, LinkReconnected(), "offered", False, ["SendOffer"]),
    ("transferring", False, LinkReconnected(), "transferring", False, []),
    ("staged", False, LinkReconnected(), "staged", False, []),
    ("committed", False, LinkReconnected(), "committed", False, ["HandoffReleased"]),
    ("committed", True, LinkReconnected(), "committed", True, []),
    ("abandoned", False, LinkReconnected(), "abandoned", False, ["HandoffAbandoned"]),
]


@pytest.mark.parametrize("row", SOURCE_TABLE)
def test_the_source_machine(row: tuple[object, ...]) -> None:
    phase, released, event, after, now_released, effects = row
    step = source_step(_at(phase, released), event)  # type: ignore[arg-type]
    assert (step.handoff.phase, step.handoff.released) == (after, now_released)
    assert _kinds(step.effects) == effects


DESTINATION_TABLE = [
    (None, False, OfferArrived(), "offered", False, ["record offered"]),
    ("offered", False, OfferArrived(), "offered", False, []),
    (
        "offered",
        False,
        OperatorAnswered(yes=True),
        "transferring",
        False,
        ["record transferring", "HandoffAccepted"],
    ),
    (
        "offered",
        False,
        OperatorAnswered(yes=False),
        "abandoned",
        False,
        ["record abandoned", "HandoffDeclined"],
    ),
    (
        "offered",
        False,
        OfferExpired(),
        "abandoned",
        False,
        ["record abandoned", "DiscardStaging", "HandoffAbandoned"],
    ),
    ("transferring", False, OperatorAnswered(yes=True), "transferring", False, ["RefuseEvent"]),
    (
        "transferring",
        False,
        PayloadChecked(),
        "committed",
        False,
        ["record staged", "HandoffStaged", "CommitHeld", "SendSaved"],
    ),
    ("staged", False, PayloadChecked(), "committed", False, ["CommitHeld", "SendSaved"]),
    (
        "transferring",
        False,
        PayloadChecked("digest"),
        "abandoned",
        False,
        ["record abandoned", "DiscardStaging", "HandoffAbandoned"],
    ),
    (
        "staged",
        False,
        PayloadChecked("content"),
        "abandoned",
        False,
        ["record abandoned", "DiscardStaging", "HandoffAbandoned"],
    ),
    ("offered", False, PayloadChecked(), "offered", False, ["RefuseEvent"]),
    ("committed", False, HandoffReleased(H), "committed", True, ["ReleaseCopy", "HandoffClosed"]),
    ("committed", True, HandoffReleased(H), "committed", True, ["HandoffClosed"]),
    ("transferring", False, HandoffReleased(H), "transferring", False, ["RefuseEvent"]),
    (
        "transferring",
        False,
        HandoffAbandoned(H, "x"),
        "abandoned",
        False,
        ["record abandoned", "DiscardStaging"],
    ),
    ("committed", False, HandoffAbandoned(H, "x"), "committed", False, ["RefuseEvent"]),
    (
        "transferring",
        False,
        LinkReconnected(),
        "transferring",
        False,
        ["DiscardStaging", "HandoffAccepted"],
    ),
    ("committed", False, LinkReconnected(), "committed", False, ["SendSaved"]),
    ("committed", True, LinkReconnected(), "committed", True, []),
    ("offered", False, LinkReconnected(), "offered", False, []),
    ("abandoned", False, LinkReconnected(), "abandoned", False, ["HandoffAbandoned"]),
]


@pytest.mark.parametrize("row", DESTINATION_TABLE)
def test_the_destination_machine(row: tuple[object, ...]) -> None:
    phase, released, event, after, now_released, effects = row
    current = None if phase is None else _at(phase, released)
    step = destination_step(current, event, new=_at("offered"))  # type: ignore[arg-type]
    assert (step.handoff.phase, step.handoff.released) == (after, now_released)
    assert _kinds(step.effects) == effects


def test_an_unknown_handoff_takes_only_an_offer() -> None:
    step = destination_step(None, HandoffReleased(H), new=_at("offered"))
    assert [type(e) for e in step.effects] == [RefuseEvent]


# The protocol under loss and crashes: both machines, a link that drops what is in flight, and
# hosts that die between any two steps (a step's effects are one transaction: all or none).


@dataclass
class World:
    rng: random.Random
    source: Handoff = field(default_factory=lambda: _at("offered"))
    destination: Handoff | None = None
    to_source: list[HandoffMessage | str] = field(default_factory=list)
    to_destination: list[HandoffMessage | str] = field(default_factory=list)
    payload_sent: bool = False
    saved: bool = False  # the destination holds a copy
    moved: bool = False  # the source marked the task moved
    history: list[str] = field(default_factory=list)

    def source_runs(self) -> bool:
        return self.source.phase == "abandoned"

    def destination_runs(self) -> bool:
        return self.destination is not None and self.destination.released

    def apply_source(self, event: object) -> None:
        step = source_step(self.source, event)  # type: ignore[arg-type]
        self.history.append(f"S {type(event).__name__} {self.source.phase}->{step.handoff.phase}")
        self.source = step.handoff
        for effect in step.effects:
            if isinstance(effect, LetGo):
                self.moved = True
            elif isinstance(effect, SendMessage):
                self.to_destination.append(effect.message)
            elif isinstance(effect, SendOffer):
                self.to_destination.append("offer")
            elif isinstance(effect, SendPayload):
                self.to_destination.append("payload")
            elif isinstance(effect, Unfreeze):
                assert (
                    not self.saved
                    or self.destination is None
                    or self.destination.phase == "abandoned"
                )

    def apply_destination(self, event: object) -> None:
        step = destination_step(self.destination, event, new=_at("offered"))  # type: ignore[arg-type]
        before = self.destination.phase if self.destination else None
        self.history.append(f"D {type(event).__name__} {before}->{step.handoff.phase}")
        self.destination = step.handoff
        for effect in step.effects:
            if isinstance(effect, CommitHeld):
                self.saved = True
            elif isinstance(effect, SendSaved):
                self.to_source.append(HandoffSaved(H, b"ack"))
            elif isinstance(effect, SendMessage):
                self.to_source.append(effect.message)
            elif isinstance(effect, ReleaseCopy):
                assert self.moved, "the destination's copy started before the source let go"
            elif isinstance(effect, DiscardStaging):
                self.payload_sent = False

    def deliver_to_destination(self) -> None:
        message = self.to_destination.pop(0)
        if message == "offer":
            self.apply_destination(OfferArrived())
        elif message == "payload":
            if self.destination is not None and self.destination.phase == "transferring":
                self.apply_destination(PayloadChecked())
        else:
            if self.destination is None:
                return  # the codec drops what names an unknown handoff
            self.apply_destination(message)

    def deliver_to_source(self) -> None:
        message = self.to_source.pop(0)
        self.apply_source(AckArrived() if isinstance(message, HandoffSaved) else message)

    def cut(self) -> None:
        self.to_source.clear()
        self.to_destination.clear()

    def reconnect(self) -> None:
        self.apply_source(LinkReconnected())
        if self.destination is not None:
            self.apply_destination(LinkReconnected())

    def check(self) -> None:
        assert not (self.source_runs() and self.destination_runs()), self.history
        if self.saved:  # a held or started copy exists: the source never takes the task back
            assert self.source.phase != "abandoned", self.history


def _run(seed: int) -> World:
    rng = random.Random(seed)
    world = World(rng)
    world.to_destination.append("offer")
    for _ in range(rng.randint(5, 60)):
        choice = rng.random()
        if choice < 0.5 and (world.to_destination or world.to_source):
            if world.to_destination and (not world.to_source or rng.random() < 0.5):
                world.deliver_to_destination()
            else:
                world.deliver_to_source()
        elif (
            choice < 0.62 and world.destination is not None and world.destination.phase == "offered"
        ):
            world.apply_destination(OperatorAnswered(yes=rng.random() < 0.85))
        elif choice < 0.7:
            # a link cut, or either host killed and restarted: what was in flight is gone,
            # and only what the steps recorded survives (each step is one transaction)
            world.cut()
            world.reconnect()
        elif choice < 0.74 and world.source.phase == "offered":
            world.apply_source(OfferExpired())
        elif (
            choice < 0.76 and world.destination is not None and world.destination.phase == "offered"
        ):
            world.apply_destination(OfferExpired())
        world.check()
    # Heal: the link comes back and stays up until nothing more is sent.
    world.cut()
    world.reconnect()
    for _ in range(200):
        if not (world.to_destination or world.to_source):
            break
        if world.to_destination:
            world.deliver_to_destination()
        if world.to_source:
            world.deliver_to_source()
        world.check()
    if world.destination is not None and world.destination.phase == "offered":
        world.apply_destination(OfferExpired())  # its operator never answered
        while world.to_source:
            world.deliver_to_source()
    return world


@pytest.mark.parametrize("seed", range(400))
def test_exactly_one_device_can_run_the_task_once_the_link_heals(seed: int) -> None:
    world = _run(seed)
    assert not (world.to_source or world.to_destination), world.history
    if world.saved:
        # After the destination saved it, the task is never lost: it moved, both sides agree.
        assert world.source.phase == "committed" and world.moved, world.history
        assert world.destination is not None and world.destination.phase == "committed"
        assert world.destination_runs() and not world.source_runs()
        assert world.source.released, world.history
    elif world.source.phase != "offered":
        assert world.source_runs() and not world.destination_runs(), world.history
        assert world.destination is None or world.destination.phase == "abandoned", world.history


def test_the_random_runs_reach_both_outcomes() -> None:
    outcomes = {_run(seed).source.phase for seed in range(400)}
    assert {"committed", "abandoned"} <= outcomes


def test_a_released_copy_means_a_source_that_let_go() -> None:
    world = World(random.Random(0))
    world.to_destination.append("offer")
    world.deliver_to_destination()
    world.apply_destination(OperatorAnswered(yes=True))
    world.deliver_to_source()  # Accepted -> payload
    world.deliver_to_destination()  # payload -> staged, saved, ack
    assert world.saved and not world.moved
    world.cut()  # the acknowledgement is lost in a crash
    assert replace(world.source).phase == "transferring"
    world.reconnect()  # the destination sends the acknowledgement again
    while world.to_source or world.to_destination:
        if world.to_source:
            world.deliver_to_source()
        if world.to_destination:
            world.deliver_to_destination()
    assert world.moved and world.destination_runs() and not world.source_runs()
