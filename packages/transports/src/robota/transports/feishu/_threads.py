"""A topic thread started from a turn's message continues that turn's conversation.

In Feishu a person can start a thread from any message; the thread is a route of its own
(``feishu:chat_id:<oc_...>:thread_id:<omt_...>``). When its root is a message of a turn (the
person's message the turn answered, its progress card, or a message of its final answer) and the
thread has no task yet, its first prompt runs on a fork of that turn's task at that turn: the
engine's ``ForkTask(turn_id=..., prompt=...)``, which refuses, saying why, when the turn did not
complete or the agent cannot fork there, and then drops the prompt: a thread never continues from
another point than the one it was started from. A thread from any other message (or one that
already has its task) is an ordinary route.

``ThreadForks`` looks at a thread once during this host's life (its first message decides; a
second may arrive before the fork is bound in the store) and the messages whose fork reply is
still to come: the service anchors that reply to the person's message; a made fork's leaves the
message's reaction running for the turn, a refused one settles it and forgets the dropped
prompt.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import trio

from robota.core.engine import ForkTask, UserInput
from robota.core.store import TurnAttempt, open_reader, route_binding, turn_of_chat_message

from ._inbound import InboundMessage

__all__ = ["ThreadForks"]


class ThreadForks:
    def __init__(self, db_path: Path, card_suffix: str) -> None:
        self._db_path = db_path
        self._card_suffix = card_suffix
        self._seen: set[str] = set()
        """Topic routes already looked at (this host's life): a thread's first message decides
        whether it forks, so later ones read nothing (a fork asked is in the store after)."""
        self._replies: set[str] = set()
        """Person's messages whose fork reply (made or refused) has not come back yet."""

    async def fork_for(self, message: InboundMessage, prompt: UserInput) -> ForkTask | None:
        """The fork ``message``'s thread starts with (``prompt`` on it), else ``None``."""
        root, route_key = message.root_id, message.route_key
        if message.thread_id is None or root is None or route_key in self._seen:
            return None
        self._seen.add(route_key)
        source = await trio.to_thread.run_sync(self._source, route_key, root)
        if source is None:
            return None
        self._replies.add(message.message_id)
        return ForkTask(source.task_id, turn_id=source.id, prompt=prompt)

    def _source(self, route_key: str, root: str) -> TurnAttempt | None:
        with closing(open_reader(self._db_path)) as db:
            binding = route_binding(db, route_key)
            if binding is not None and binding.current_task_id is not None:
                return None
            return turn_of_chat_message(db, root, self._card_suffix)

    def fork_reply(self, anchor: str | None) -> bool:
        """Whether the route's reply anchored to ``anchor`` answers its thread's fork (made, or
        refused with the prompt dropped); ``True`` once per fork."""
        if anchor is None or anchor not in self._replies:
            return False
        self._replies.discard(anchor)
        return True
