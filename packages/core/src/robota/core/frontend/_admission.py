"""A chat message's admission, pure: each step of a chat transport's way in mapped to effects
(docs/architecture/chat-transports.md §10).

The chat service (``_service``) is the shell that performs them; a platform adapter only says
what its event is (``Heard``, ``Arrived``), never what to do with it. The steps, in order:

1. ``screen`` (the platform's handler, before any write): not a person's message, the owner
   filter, the mention filter. ``Ignore`` with the reason, or ``None``: heard.
2. ``accepted`` (still before the platform is acknowledged): a heard message tells the host it
   came (``NoteInbound``, a pending safe restart waits another quiet window) and is accepted
   (``Accept``: the claims of its event and of the message and its inbox row in one write).
3. ``admission`` (its route's lane, once that write is done): a message claimed before (a
   redelivery) is dropped; a stale one is recorded and not run; a team's chat goes to its
   door; else the ``working`` reaction (not again when a message fed again after a restart
   has it already), the chat noted, then the transport's own command, or the attachments to
   fetch first, or the route told.
4. ``fetched`` (after ``Fetch``): a refused attachment is said and settled ``failed``; else the
   route told with what the agent gets.

Every path that does not tell the route consumes the message's inbox row (``Consume``): the
inbox keeps a message until something took it in (``_chat_inbox``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ._inbound import Ignore, freshness, owner_filter

__all__ = [
    "Accept",
    "Arrived",
    "Consume",
    "Effect",
    "Fetch",
    "Heard",
    "NoteChat",
    "NoteInbound",
    "React",
    "RecordStale",
    "Reply",
    "RunCommand",
    "ScreenRules",
    "Settle",
    "Tell",
    "ToDoor",
    "accepted",
    "admission",
    "fetched",
    "screen",
]

# -- what a platform says of a message ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Heard:
    """What the filters need of a message, in no platform's words."""

    sender: str
    """The sender's id on the platform."""
    not_a_person: str | None = None
    """Why it is not a person's new message (a bot's, an edit...), or ``None``: it is."""
    group: bool = False
    """Written in a group or channel, not a private chat."""
    mentions_bot: bool = False
    mentions_other: bool = False
    """It mentions someone, and not (only) the bot."""


@dataclass(frozen=True, slots=True)
class ScreenRules:
    """The filters' settings: the owner (``owner_only``: nobody else is heard; ``no_owner``:
    the reason when none is configured) and whether a group is heard without a mention."""

    owner: str | None
    owner_only: bool = True
    no_owner: str = "no owner is configured, so every message is ignored"
    mention_only: bool = False
    where: str = "in this group"
    """How the mention rule names the place (``in channels``, ``in this group``)."""


@dataclass(frozen=True, slots=True)
class Arrived:
    """A heard message in its route's lane, once its accept was written."""

    claimed: bool
    """Its claims were new (``False``: a redelivery, or another event of the same message)."""
    text: str
    """The text for the route (the bot's mention removed)."""
    created_at: float
    now: float
    started_at: float
    """When the platform says it was written, now, and when this host started (epoch)."""
    again: bool = False
    """Fed again from the inbox after a restart (it passed the stale guard once)."""
    reacted: bool = False
    """Its ``working`` reaction is known to be on it already."""
    team: bool = False
    """Its chat is a team's: its door decides."""
    command: object | None = None
    """The transport's own command in it (the platform's parse), or ``None``."""
    attachments: bool = False


# -- effects --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NoteInbound:
    """Tell the host a message came (its safe restart waits for a quiet window)."""


@dataclass(frozen=True, slots=True)
class Accept:
    """The claims and the inbox row in one write, awaited before the platform's ack."""


@dataclass(frozen=True, slots=True)
class RecordStale:
    """The stale message recorded in the audit trail and its row consumed, in one write."""


@dataclass(frozen=True, slots=True)
class ToDoor:
    """Hand the message to its team's door (its effects come back through the door)."""


@dataclass(frozen=True, slots=True)
class Consume:
    """The inbox row taken in by the transport (``door``: by a team's door)."""

    door: bool = False


@dataclass(frozen=True, slots=True)
class React:
    """The ``working`` reaction on the message, awaited."""


@dataclass(frozen=True, slots=True)
class NoteChat:
    """The chat noted as known (its kind, for the start-up notes)."""


@dataclass(frozen=True, slots=True)
class RunCommand:
    """The transport's own command, answered by the platform adapter."""

    command: object


@dataclass(frozen=True, slots=True)
class Fetch:
    """Download the message's attachments, then ask ``fetched``."""


@dataclass(frozen=True, slots=True)
class Reply:
    """Say ``text`` where the message would be answered."""

    text: str


Outcome = Literal["completed", "failed", "interrupted"]


@dataclass(frozen=True, slots=True)
class Settle:
    """The message's reaction goes from ``working`` to ``outcome``'s."""

    outcome: Outcome


@dataclass(frozen=True, slots=True)
class Tell:
    """Tell the route ``text`` (``command``: an engine command, answered by a reply; else a
    prompt, answered by a turn); the inbox row is consumed by the engine's write."""

    text: str
    command: bool


Effect = (
    NoteInbound
    | Accept
    | RecordStale
    | ToDoor
    | Consume
    | React
    | NoteChat
    | RunCommand
    | Fetch
    | Reply
    | Settle
    | Tell
)

# -- the decisions --------------------------------------------------------------------------


def screen(heard: Heard, rules: ScreenRules) -> Ignore | None:
    """Not a person's message -> the owner filter -> the mention filter (in a group)."""
    if heard.not_a_person is not None:
        return Ignore(heard.not_a_person)
    refused = owner_filter(
        heard.sender, rules.owner, owner_only=rules.owner_only, no_owner=rules.no_owner
    )
    if refused is not None:
        return refused
    if heard.group and not heard.mentions_bot:
        if heard.mentions_other:
            return Ignore("the message mentions someone else, not the bot")
        if rules.mention_only:
            return Ignore(f"mention-only {rules.where}, and the bot is not mentioned")
    return None


def accepted(verdict: Ignore | None) -> list[Effect | Ignore]:
    """The handler's effects for a screened message, before the platform's ack."""
    if verdict is not None:
        return [verdict]
    return [NoteInbound(), Accept()]


def admission(message: Arrived) -> list[Effect | Ignore]:
    """The lane's effects for an accepted message (see the module docstring)."""
    if not message.claimed:
        return [Ignore("already claimed: a redelivery")]
    if (
        not message.again
        and freshness(message, now=message.now, started_at=message.started_at) == "stale"
    ):
        return [RecordStale()]
    if message.team:
        return [ToDoor(), Consume(door=True)]
    effects: list[Effect | Ignore] = []
    if not (message.again and message.reacted):
        effects.append(React())
    effects.append(NoteChat())
    if message.command is not None:
        return [*effects, Consume(), RunCommand(message.command)]
    if message.attachments:
        return [*effects, Fetch()]
    return [*effects, _tell(message.text)]


def fetched(text: str, refusal: str | None) -> list[Effect | Ignore]:
    """After ``Fetch``: ``refusal`` said and settled, or the route told ``text`` (the prompt
    with what the agent gets of the attachments)."""
    if refusal is not None:
        return [Reply(refusal), Settle("failed"), Consume()]
    return [_tell(text)]


def _tell(text: str) -> Tell:
    return Tell(text, command=text.startswith("/"))
