"""A session handoff between two devices, sans-IO: its phases and both sides' state machines.

A handoff moves one task from the device whose operator pushes it (the **source**) to a linked
device (the **destination**). Each side keeps the handoff in its store in one of the phases
``offered -> transferring -> staged -> committed | abandoned``; every move is one store
transaction on that side (the shell writes ``RecordPhase`` effects, and ``CommitHeld``,
``ReleaseCopy`` and ``LetGo`` each as one transaction with what they change), a move to the
phase a handoff is already in is a no-op (idempotent by handoff id: a re-sent message changes
nothing twice), and a move the tables below do not list is refused (``IllegalTransition``),
never ignored.

The rule that makes a crash at any moment safe: **only the destination's signed
acknowledgement that it saved the task moves authority.**

- The source freezes the task from the push on (new input is refused, saying it is moving).
  It abandons only while the offer is unanswered (its operator's window passed) or when the
  destination says it abandoned; once the payload travels it waits for the destination's
  outcome, so a destination that saved the task is never left with a copy the source also runs.
- The destination saves the task *held* (listed, not startable) in the transaction that makes
  the handoff ``committed``, then sends the acknowledgement. It never abandons after that.
- The source, on a verified acknowledgement, marks the task moved and lets its session go in
  the transaction that makes its side ``committed`` (``LetGo``), then sends
  ``HandoffReleased``; only then does the destination's copy become startable (``ReleaseCopy``).

So at most one device can run the task at any time, and after a committed acknowledgement the
task is never lost: the destination holds it and the source, whatever it crashed at, will
commit when the acknowledgement comes again. Every message is sent again after a reconnect
until the other side's next message shows it arrived (``LinkReconnected``).

The grant and acknowledgement signatures are the shell's to verify (``_grant``) before an
event reaches these machines; the payload's check is ``_manifest.Staging``. Nothing here asks
for a session: there is no such message, and a frame asking for one is refused by the codec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal, get_args

from ._errors import MeshError

__all__ = [
    "DESTINATION_MOVES",
    "HANDOFF_PHASES",
    "SOURCE_MOVES",
    "HandoffAbandoned",
    "HandoffAccepted",
    "AckArrived",
    "Chunked",
    "HandoffClosed",
    "CommitHeld",
    "HandoffDeclined",
    "DestinationEvent",
    "DiscardStaging",
    "HandoffEffect",
    "OfferExpired",
    "Handoff",
    "IllegalTransition",
    "LetGo",
    "HandoffMessage",
    "OfferArrived",
    "OperatorAnswered",
    "HandoffPhase",
    "PayloadChecked",
    "LinkReconnected",
    "RecordPhase",
    "RefuseEvent",
    "ReleaseCopy",
    "HandoffReleased",
    "HandoffSaved",
    "SendMessage",
    "SendOffer",
    "SendPayload",
    "SendSaved",
    "HandoffSide",
    "SourceEvent",
    "HandoffStaged",
    "HandoffStep",
    "TellOperator",
    "Unfreeze",
    "destination_step",
    "handoff_move",
    "source_step",
]

HandoffPhase = Literal["offered", "transferring", "staged", "committed", "abandoned"]
HANDOFF_PHASES: tuple[HandoffPhase, ...] = get_args(HandoffPhase)
HandoffSide = Literal["source", "destination"]

SOURCE_MOVES: Mapping[HandoffPhase | None, frozenset[HandoffPhase]] = {
    None: frozenset({"offered"}),
    "offered": frozenset({"transferring", "abandoned"}),
    # The "staged" report may be lost: an acknowledgement alone commits.
    "transferring": frozenset({"staged", "committed", "abandoned"}),
    "staged": frozenset({"committed", "abandoned"}),
    "committed": frozenset(),
    "abandoned": frozenset(),
}
"""The source's legal moves (module docstring: abandoned after the offer only on the
destination's word, which the events below enforce)."""

DESTINATION_MOVES: Mapping[HandoffPhase | None, frozenset[HandoffPhase]] = {
    None: frozenset({"offered"}),
    "offered": frozenset({"transferring", "abandoned"}),
    "transferring": frozenset({"staged", "abandoned"}),
    "staged": frozenset({"committed", "abandoned"}),
    "committed": frozenset(),
    "abandoned": frozenset(),
}

_MOVES: Mapping[HandoffSide, Mapping[HandoffPhase | None, frozenset[HandoffPhase]]] = {
    "source": SOURCE_MOVES,
    "destination": DESTINATION_MOVES,
}


class IllegalTransition(MeshError):
    """A move the phase tables do not allow (it is refused, and nothing is written)."""

    def __init__(
        self, side: HandoffSide, current: HandoffPhase | None, target: HandoffPhase
    ) -> None:
        super().__init__(f"a {side} handoff cannot move from {current or 'nothing'} to {target}")
        self.side: HandoffSide = side
        self.current = current
        self.target: HandoffPhase = target


def handoff_move(side: HandoffSide, current: HandoffPhase | None, target: HandoffPhase) -> bool:
    """Whether going to ``target`` changes anything: ``True`` for a legal move (write it),
    ``False`` when the handoff is already there (idempotent), ``IllegalTransition`` else."""
    if current == target:
        return False
    if target not in _MOVES[side][current]:
        raise IllegalTransition(side, current, target)
    return True


@dataclass(frozen=True, slots=True)
class Handoff:
    """One side's durable view of a handoff (what its store row holds)."""

    id: str
    task: str
    peer: str
    """The other device's id."""
    phase: HandoffPhase
    released: bool = False
    """Source: the destination confirmed ``HandoffReleased``. Destination: its copy may start."""


# Messages between the two sides (the link's frames carry them; ``_frames`` owns the codec).


@dataclass(frozen=True, slots=True)
class HandoffAccepted:
    """Destination -> source: its operator said yes; send the payload (again)."""

    handoff: str


@dataclass(frozen=True, slots=True)
class HandoffDeclined:
    """Destination -> source: its operator said no."""

    handoff: str


@dataclass(frozen=True, slots=True)
class HandoffStaged:
    """Destination -> source: the payload's length and digest matched."""

    handoff: str


@dataclass(frozen=True, slots=True)
class HandoffSaved:
    """Destination -> source: the signed acknowledgement that the task is saved (held)."""

    handoff: str
    ack: bytes


@dataclass(frozen=True, slots=True)
class HandoffReleased:
    """Source -> destination: the source let the task go; the destination's copy may start."""

    handoff: str


@dataclass(frozen=True, slots=True)
class HandoffClosed:
    """Destination -> source: ``HandoffReleased`` arrived; nothing more to send."""

    handoff: str


@dataclass(frozen=True, slots=True)
class HandoffAbandoned:
    """Either way: this side abandoned the handoff, and why."""

    handoff: str
    reason: str


HandoffMessage = (
    HandoffAccepted
    | HandoffDeclined
    | HandoffStaged
    | HandoffSaved
    | HandoffReleased
    | HandoffClosed
    | HandoffAbandoned
)


# Effects: what the shell does, in order.


@dataclass(frozen=True, slots=True)
class RecordPhase:
    """Write the handoff's new phase (one store transaction)."""

    phase: HandoffPhase


@dataclass(frozen=True, slots=True)
class SendMessage:
    message: HandoffMessage


@dataclass(frozen=True, slots=True)
class SendOffer:
    """SendMessage (again) the offer: grant, manifest and inventory, as sealed at the push."""


@dataclass(frozen=True, slots=True)
class SendPayload:
    """Stream the sealed payload from its first byte (a restart replaces a partial one)."""


@dataclass(frozen=True, slots=True)
class SendSaved:
    """SendMessage (again) the stored signed acknowledgement."""


@dataclass(frozen=True, slots=True)
class CommitHeld:
    """Destination, one transaction: save the task held (not startable), record ``committed``
    and store the signed acknowledgement that ``SendSaved`` then sends."""


@dataclass(frozen=True, slots=True)
class ReleaseCopy:
    """Destination, one transaction: the held copy becomes startable; ``released`` is set."""


@dataclass(frozen=True, slots=True)
class LetGo:
    """Source, one transaction: record ``committed``, mark the task moved to the peer; then
    end its session's process."""


@dataclass(frozen=True, slots=True)
class Unfreeze:
    """Source: the task takes input again (the handoff ended without moving it)."""


@dataclass(frozen=True, slots=True)
class DiscardStaging:
    """Destination: remove whatever of the payload was staged."""


@dataclass(frozen=True, slots=True)
class TellOperator:
    """Say this to the operator (and in ``mesh handoffs``)."""

    text: str


@dataclass(frozen=True, slots=True)
class RefuseEvent:
    """A message that has no place in this phase: log it with the reason, change nothing."""

    reason: str


HandoffEffect = (
    RecordPhase
    | SendMessage
    | SendOffer
    | SendPayload
    | SendSaved
    | CommitHeld
    | ReleaseCopy
    | LetGo
    | Unfreeze
    | DiscardStaging
    | TellOperator
    | RefuseEvent
)


@dataclass(frozen=True, slots=True)
class HandoffStep:
    handoff: Handoff
    effects: tuple[HandoffEffect, ...] = ()


# Events that are not messages.


@dataclass(frozen=True, slots=True)
class LinkReconnected:
    """The link to the peer is up again: send what it may have missed."""


@dataclass(frozen=True, slots=True)
class OfferExpired:
    """The offer's window passed with no answer from the destination's operator."""


@dataclass(frozen=True, slots=True)
class AckArrived:
    """Source: a ``HandoffSaved`` whose acknowledgement the shell verified
    (``_grant.verify_ack``)."""


@dataclass(frozen=True, slots=True)
class OfferArrived:
    """Destination: an offer whose grant the shell verified (``_grant.verify_grant``)."""


@dataclass(frozen=True, slots=True)
class OperatorAnswered:
    """Destination: its operator's yes or no, asked on the controlling terminal."""

    yes: bool


@dataclass(frozen=True, slots=True)
class Chunked:
    """Destination: a chunk of payload arrived (the shell feeds ``Staging`` when this says so)."""


@dataclass(frozen=True, slots=True)
class PayloadChecked:
    """Destination: the staged payload is complete; ``problem`` is why it does not match the
    manifest (length, then digest, then content), or empty when it does."""

    problem: str = ""


SourceEvent = (
    HandoffAccepted
    | HandoffDeclined
    | HandoffStaged
    | AckArrived
    | HandoffClosed
    | HandoffAbandoned
    | LinkReconnected
    | OfferExpired
)
DestinationEvent = (
    OfferArrived
    | OperatorAnswered
    | Chunked
    | PayloadChecked
    | HandoffReleased
    | HandoffAbandoned
    | LinkReconnected
    | OfferExpired
)


def _to(
    side: HandoffSide, handoff: Handoff, target: HandoffPhase, *effects: HandoffEffect
) -> HandoffStep:
    if not handoff_move(side, handoff.phase, target):
        return HandoffStep(handoff)
    return HandoffStep(replace(handoff, phase=target), effects)


def source_step(handoff: Handoff, event: SourceEvent) -> HandoffStep:
    """The source's next state and effects for ``event`` (module docstring)."""
    phase = handoff.phase
    waiting = phase in ("transferring", "staged")
    match event:
        case HandoffAccepted() if phase == "offered":
            return _to(
                "source", handoff, "transferring", RecordPhase("transferring"), SendPayload()
            )
        case HandoffAccepted() if phase == "transferring":
            return HandoffStep(handoff, (SendPayload(),))  # the destination restarted its staging
        case HandoffDeclined() | HandoffAbandoned() if phase == "offered" or waiting:
            why = event.reason if isinstance(event, HandoffAbandoned) else "its operator said no"
            return _to(
                "source",
                handoff,
                "abandoned",
                RecordPhase("abandoned"),
                Unfreeze(),
                TellOperator(
                    f"the handoff of {handoff.task} was abandoned by {handoff.peer}: {why}"
                ),
            )
        case HandoffStaged() if phase == "transferring":
            return _to("source", handoff, "staged", RecordPhase("staged"))
        case AckArrived() if waiting:
            return _to(
                "source",
                handoff,
                "committed",
                LetGo(),
                SendMessage(HandoffReleased(handoff.id)),
                TellOperator(f"task {handoff.task} moved to {handoff.peer}"),
            )
        case AckArrived() if phase == "committed":
            return HandoffStep(
                handoff, (SendMessage(HandoffReleased(handoff.id)),)
            )  # HandoffReleased was lost
        case HandoffClosed() if phase == "committed":
            if handoff.released:
                return HandoffStep(handoff)  # a repeated confirmation
            return HandoffStep(replace(handoff, released=True), (RecordPhase("committed"),))
        case OfferExpired() if phase == "offered":
            return _to(
                "source",
                handoff,
                "abandoned",
                RecordPhase("abandoned"),
                Unfreeze(),
                SendMessage(HandoffAbandoned(handoff.id, "the offer expired")),
                TellOperator(f"the offer of {handoff.task} to {handoff.peer} expired"),
            )
        case LinkReconnected():
            return HandoffStep(handoff, _source_resend(handoff))
        case HandoffAccepted() | AckArrived() | HandoffStaged() if phase == "abandoned":
            # The destination acted on an offer this side gave up: tell it again.
            return HandoffStep(
                handoff, (SendMessage(HandoffAbandoned(handoff.id, "the source abandoned it")),)
            )
    return HandoffStep(handoff, (RefuseEvent(f"{type(event).__name__} in phase {phase}"),))


def _source_resend(handoff: Handoff) -> tuple[HandoffEffect, ...]:
    match handoff.phase:
        case "offered":
            return (SendOffer(),)
        # transferring: the destination says HandoffAccepted again, and that restarts the payload
        # (one restart, not one from each side); staged: it says HandoffSaved again.
        case "committed" if not handoff.released:
            return (SendMessage(HandoffReleased(handoff.id)),)
        case "abandoned":
            return (SendMessage(HandoffAbandoned(handoff.id, "the source abandoned it")),)
    return ()


def destination_step(
    handoff: Handoff | None, event: DestinationEvent, *, new: Handoff
) -> HandoffStep:
    """The destination's next state and effects for ``event``; ``handoff`` is ``None`` until
    an offer is recorded, and ``new`` is the handoff an ``OfferArrived`` creates."""
    if handoff is None:
        if isinstance(event, OfferArrived):
            handoff_move("destination", None, "offered")
            return HandoffStep(
                new,
                (
                    RecordPhase("offered"),
                    TellOperator(
                        f"{new.peer} offers task {new.task}: `robota mesh accept {new.id}`"
                    ),
                ),
            )
        return HandoffStep(new, (RefuseEvent(f"{type(event).__name__} for an unknown handoff"),))
    phase = handoff.phase
    match event:
        case OfferArrived():
            return HandoffStep(handoff, _destination_resend(handoff))  # the source re-sent it
        case OperatorAnswered(yes=True) if phase == "offered":
            return _to(
                "destination",
                handoff,
                "transferring",
                RecordPhase("transferring"),
                SendMessage(HandoffAccepted(handoff.id)),
            )
        case OperatorAnswered(yes=False) if phase == "offered":
            return _to(
                "destination",
                handoff,
                "abandoned",
                RecordPhase("abandoned"),
                SendMessage(HandoffDeclined(handoff.id)),
            )
        case OfferExpired() if phase == "offered":
            return _abandon(handoff, "the offer expired before its operator answered")
        case Chunked() if phase == "transferring":
            return HandoffStep(handoff)  # the shell feeds it to Staging; nothing to record
        case PayloadChecked(problem="") if phase == "transferring":
            step = _to(
                "destination",
                handoff,
                "staged",
                RecordPhase("staged"),
                SendMessage(HandoffStaged(handoff.id)),
            )
            # Saving the task held and recording committed is the next transaction.
            done = _to("destination", step.handoff, "committed", CommitHeld(), SendSaved())
            return HandoffStep(done.handoff, step.effects + done.effects)
        case PayloadChecked(problem=problem) if phase in ("transferring", "staged"):
            if problem:
                return _abandon(handoff, problem)
            # Restarted in staged: the staged payload checked again, commit now.
            return _to("destination", handoff, "committed", CommitHeld(), SendSaved())
        case HandoffReleased() if phase == "committed":
            if handoff.released:
                return HandoffStep(handoff, (SendMessage(HandoffClosed(handoff.id)),))
            return HandoffStep(
                replace(handoff, released=True),
                (
                    ReleaseCopy(),
                    SendMessage(HandoffClosed(handoff.id)),
                    TellOperator(f"task {handoff.task} arrived from {handoff.peer} and can start"),
                ),
            )
        case HandoffAbandoned() if phase in ("offered", "transferring", "staged"):
            return _abandon(handoff, event.reason, tell_peer=False)
        case HandoffAbandoned() if phase == "committed":
            # By the protocol a source never abandons after the payload travelled; a peer
            # that says so is wrong, and the saved task is not given up on its word.
            return HandoffStep(handoff, (RefuseEvent("abandoned after the task was saved"),))
        case LinkReconnected():
            return HandoffStep(handoff, _destination_resend(handoff))
    return HandoffStep(handoff, (RefuseEvent(f"{type(event).__name__} in phase {phase}"),))


def _abandon(handoff: Handoff, why: str, *, tell_peer: bool = True) -> HandoffStep:
    effects: list[HandoffEffect] = [RecordPhase("abandoned"), DiscardStaging()]
    if tell_peer:
        effects.append(SendMessage(HandoffAbandoned(handoff.id, why)))
    effects.append(TellOperator(f"the handoff of {handoff.task} from {handoff.peer} ended: {why}"))
    return _to("destination", handoff, "abandoned", *effects)


def _destination_resend(handoff: Handoff) -> tuple[HandoffEffect, ...]:
    match handoff.phase:
        case "transferring":
            return (DiscardStaging(), SendMessage(HandoffAccepted(handoff.id)))
        case "committed" if not handoff.released:
            return (SendSaved(),)
        case "abandoned":
            return (SendMessage(HandoffAbandoned(handoff.id, "the destination abandoned it")),)
    return ()
