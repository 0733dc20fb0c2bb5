"""How many chats a chat transport serves at once: the others' messages wait their turn.

A chat is *busy* while anything of it is under way (``ChatTurns.in_flight``: a message in its
lane or waiting for its answer, an open card, a queued note). A busy chat holds its lane and
its reader, its route actor and agent session, its turn's card and what the platform calls
for it: about 60 KB at a burst's height, most of it in small objects. What a hundred chats
speaking at once leave is not the objects (they all go) but the allocator's arenas they were
spread over, each kept by whatever the idle host allocates next (issue 28 s.3,
``docs/memory-after-a-burst.md``); and on two cores a hundred turns at once answer no sooner
than thirty (8.2 against 9.8 messages a second, ``tools/bench/feishu.py``).

So at most ``limit`` chats are busy (``MAX_BUSY_CHATS``). A message of another chat waits here,
already accepted (claimed, its inbox row written, the platform acknowledged), its chat's later
messages behind it; as busy chats settle, the chat that has waited longest is served, all its
messages in order. A busy chat's messages never wait: a person steering or stopping a running
turn is heard at once. A crash loses nothing that waits: its rows are in the inbox, fed again
on the next start, through the gate as well. The team groups' own ``slots`` bound their turns
the same way, one group at a time.

A waiting message costs next to nothing: the shell keeps its event as the platform sent it
(``Waiting``), not what was made of it, and makes its lane item again from it once served.

``ChatGate`` is pure: the shell (``ChatTurns.offer``, ``ChatTurns.serve_waiting``) says whether
the message's chat is busy and how many are; items are the shell's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from ._chat_inbox import Accepted

__all__ = ["MAX_BUSY_CHATS", "ChatGate", "Waiting"]

MAX_BUSY_CHATS = 32
"""Chats a transport serves at once, unless its settings say otherwise (``maxBusyChats``
of Feishu's and Slack's). A person's own chats rarely number more; a burst beyond
it (a hundred group chats at once) waits in order, and the host's memory after it stays within
10 % of before (``docs/performance.md``)."""

Item = TypeVar("Item")


class ChatGate(Generic[Item]):
    """The chats waiting to be served, longest waiting first, each with its items in order."""

    __slots__ = ("_waiting", "limit")

    def __init__(self, limit: int = MAX_BUSY_CHATS) -> None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        self.limit = limit
        self._waiting: dict[str, list[Item]] = {}

    def offer(self, chat: str, item: Item, *, busy: bool, busy_chats: int) -> bool:
        """Whether ``item`` of ``chat`` goes to its chat's lane now (``busy``: the chat is busy
        already; ``busy_chats``: how many are); else it waits, behind its chat's earlier
        items."""
        waiting = self._waiting.get(chat)
        if waiting is not None:
            waiting.append(item)
            return False
        if busy or busy_chats < self.limit:
            return True
        self._waiting[chat] = [item]
        return False

    def release(self, busy_chats: int) -> list[tuple[str, list[Item]]]:
        """The chats to serve now (as many as ``busy_chats`` leaves room for), longest waiting
        first, each with its items in order; they wait no more."""
        room = self.limit - busy_chats
        served: list[tuple[str, list[Item]]] = []
        while room > 0 and self._waiting:
            chat = next(iter(self._waiting))
            served.append((chat, self._waiting.pop(chat)))
            room -= 1
        return served

    @property
    def waiting(self) -> int:
        """The chats waiting."""
        return len(self._waiting)

    def __contains__(self, chat: object) -> bool:
        return chat in self._waiting


@dataclass(slots=True, eq=False)
class Waiting:
    """A message waiting at the gate, as the shell keeps it: its chat's ``channel``, the event
    as the platform sent it (``payload``, heard again once served) and, until its accept is
    written, the lane item whose write the platform's handler awaits (``accepted``, holding no
    heard message); then only the inbox row's id (``None``: claimed before, or never
    written: nothing to serve) and whether it was fed again after a restart (``again``)."""

    channel: str
    payload: str
    accepted: Accepted | None
    inbox: int | None = None
    again: bool = False

    def landed(self) -> None:
        """The accept's write is back: only its row's id is kept."""
        if self.accepted is not None and self.accepted.written.is_set():
            self.inbox = self.accepted.inbox
            self.again = self.accepted.again
            self.accepted = None
