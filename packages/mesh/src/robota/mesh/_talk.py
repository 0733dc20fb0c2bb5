"""Peer conversations, sans-IO: their frames and the decisions that keep them bounded
(issue 30 §1).

``robota mesh send DEVICE TEXT`` begins a conversation: ``PeerSay`` carries the text, the task it
should run in on that device (``""``: a new one) and the task the sender speaks for
(attribution only). The receiving device runs it as a turn of its own; the turn's answer is its
*reply* (``PeerReply``), which the first device delivers to its own task, whose answer is in turn a
reply, and so on. ``PeerEnd`` tells the other side no more comes (a limit held a reply back, a turn
gave no answer, the message was refused).

Each side counts, from what it sent and received only (never from a count the peer states):
``hops``, the conversation's messages both ways, and ``replies``, the replies it sent. The
reply that would take ``hops`` past ``TalkLimits.max_hops`` or ``replies`` past
``TalkLimits.max_replies`` is not sent (``may_reply``); a message from a peer that went past the
bound anyway, or in a conversation this side ended, is not run (``take``). Every change of a
count is one store write before the message it counts goes out (the host's ``_mesh_talk``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, Literal

from robota.core.store import MeshConversation

__all__ = [
    "END_REASONS",
    "MAX_TEXT",
    "PeerEnd",
    "TalkLimits",
    "RefuseMessage",
    "PeerReply",
    "RunMessage",
    "PeerSay",
    "ReplyGoes",
    "ReplyHeld",
    "TalkFrame",
    "began",
    "ended",
    "may_reply",
    "received",
    "replied",
    "take",
]

MAX_TEXT = 256 * 1024
"""The longest text one message carries, in characters (a frame's bound is 1 MiB)."""

END_REASONS = frozenset(
    {"max-hops", "max-replies", "no-answer", "no-task", "refused", "unknown-conversation"}
)
"""Why a side ends a conversation (``PeerEnd.reason``), a closed set that logs and listings name."""


@dataclass(frozen=True, slots=True)
class PeerSay:
    """The first message of conversation ``conversation`` (the sender chose the id)."""

    TYPE: ClassVar[str] = "peer.say"
    conversation: str
    text: str
    task: str
    """The task to run it in on the receiving device, as ``robota task`` names one; ``""``:
    a new task there, on a route of its own named for the sender."""
    sender_task: str
    """The sender's task id (``""``: none): attribution, never a permission."""


@dataclass(frozen=True, slots=True)
class PeerReply:
    """A reply in a conversation either side began."""

    TYPE: ClassVar[str] = "peer.reply"
    conversation: str
    text: str


@dataclass(frozen=True, slots=True)
class PeerEnd:
    """No more messages come from this side (``reason``: one of ``END_REASONS``)."""

    TYPE: ClassVar[str] = "peer.end"
    conversation: str
    reason: str


TalkFrame = PeerSay | PeerReply | PeerEnd


@dataclass(frozen=True, slots=True)
class TalkLimits:
    """``mesh.limits``."""

    max_hops: int = 8
    max_replies: int = 4


@dataclass(frozen=True, slots=True)
class ReplyGoes:
    """The reply may go: this row (its counts raised) is written first."""

    conversation: MeshConversation


@dataclass(frozen=True, slots=True)
class ReplyHeld:
    """The reply is held back: this row (stopped, ``reason``) is written and the operator told."""

    conversation: MeshConversation
    reason: Literal["max-hops", "max-replies"]


@dataclass(frozen=True, slots=True)
class RunMessage:
    """The peer's message runs: this row (its count raised) is written first."""

    conversation: MeshConversation


@dataclass(frozen=True, slots=True)
class RefuseMessage:
    """The peer's message is not run (``reason``: one of ``END_REASONS``); the peer is told."""

    reason: str


def began(
    peer: str, conversation: str, *, task_id: str | None, peer_task: str = "", me: bool
) -> MeshConversation:
    """A conversation as it stands once its first message went (``me``: this side sent it)
    or came (the peer sent it): one hop."""
    return MeshConversation(
        peer=peer,
        id=conversation,
        began="me" if me else "peer",
        task_id=task_id,
        peer_task=peer_task,
        hops=1,
    )


def received(conversation: MeshConversation) -> MeshConversation:
    return dataclasses.replace(conversation, hops=conversation.hops + 1)


def replied(conversation: MeshConversation) -> MeshConversation:
    return dataclasses.replace(
        conversation, hops=conversation.hops + 1, replies=conversation.replies + 1
    )


def ended(conversation: MeshConversation, reason: str) -> MeshConversation:
    """No more messages in it (this side's decision or the peer's ``PeerEnd``)."""
    if conversation.state != "open":
        return conversation  # the first reason stays
    return dataclasses.replace(conversation, state="ended", reason=reason)


def may_reply(conversation: MeshConversation, limits: TalkLimits) -> ReplyGoes | ReplyHeld | None:
    """Whether this side's reply in ``conversation`` goes out; ``None`` when the conversation
    is no longer open (nothing is sent and nothing more is said)."""
    if conversation.state != "open":
        return None
    if conversation.hops + 1 > limits.max_hops:
        stopped = dataclasses.replace(conversation, state="stopped", reason="max-hops")
        return ReplyHeld(stopped, "max-hops")
    if conversation.replies + 1 > limits.max_replies:
        stopped = dataclasses.replace(conversation, state="stopped", reason="max-replies")
        return ReplyHeld(stopped, "max-replies")
    return ReplyGoes(replied(conversation))


def take(
    peer: str, conversation: MeshConversation | None, frame: PeerSay | PeerReply, limits: TalkLimits
) -> RunMessage | RefuseMessage:
    """Whether ``peer``'s message (``peer``: the device its link proved) runs, from this side's
    own row for it (``None``: none yet).

    A ``PeerSay`` begins a conversation, so its id must be new; a ``PeerReply`` continues one
    this side holds and that is open. A message that takes this side's count past
    ``max_hops`` is not run: the peer went past a bound it should have kept."""
    if isinstance(frame, PeerSay):
        if conversation is not None:
            return RefuseMessage("refused")  # an id already used: a replay or a confused peer
        return RunMessage(
            began(peer, frame.conversation, task_id=None, peer_task=frame.sender_task, me=False)
        )
    if conversation is None:
        return RefuseMessage("unknown-conversation")
    if conversation.state != "open":
        return RefuseMessage("refused")
    counted = received(conversation)
    if counted.hops > limits.max_hops:
        return RefuseMessage("max-hops")
    return RunMessage(counted)
