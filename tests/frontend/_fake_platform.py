"""An in-memory chat platform (``robota.core.frontend.Platform``) for the chat service's shared
suite: no network; what the service asks of it is recorded in ``said``, and the test plays the
platform's side (its events through ``hear``/``deliver``, its link's fate through ``link_*``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from robota.core.engine import ForkTask, RouteReply, UserInput
from robota.core.frontend import (
    Card,
    ChatRoute,
    ChatService,
    ChatTurn,
    Hearing,
    Identified,
    IdentifyFailed,
    Ignore,
    InboxLeft,
    LinkStatus,
    Opening,
    Pending,
    PlatformRefused,
    Prepared,
    Reaction,
    Refused,
)
from robota.core.store import ActionBinding, TurnAttempt


class LinkRefused(Exception):
    """The fake platform refusing the link for good."""


class Sink:
    """The card sink: nothing is drawn in these tests."""

    async def send_card(self, route: str, payload: Any, *, key: str) -> str:
        return f"card-{key}"

    async def update_card(self, message_id: str, payload: Any) -> None:
        pass

    async def send_final(
        self, route: str, chunks: Sequence[Any], *, keys: Sequence[str]
    ) -> list[str]:
        return []


@dataclass
class FakePlatform:
    """See the module docstring. ``identities``: what each try to identify the bot says, in
    order (the last one repeats); ``link_refusal``: the link is refused with it."""

    identities: list[Identified | IdentifyFailed | PlatformRefused] = field(
        default_factory=lambda: [Identified()]
    )
    link_refusal: str | None = None
    teams: Mapping[str, Any] = field(default_factory=dict)
    fetched: Prepared | Refused | None = None
    name: str = "fake"
    route_prefix: str = "fake:"
    card_suffix: str = ":fake"
    restart_texts: Mapping[str, str] = field(default_factory=dict)
    team_owner: str | None = "owner"
    team_prefix: str = "/"
    identify_first: bool = True
    own_actions: frozenset[str] = frozenset()
    cards_outlive_turns: bool = False
    said: list[tuple[object, ...]] = field(default_factory=list)
    service: ChatService | None = None
    linked: trio.Event = field(default_factory=trio.Event)
    quiet: int = 0
    """How many times the service said its chats went quiet (``went_quiet``)."""

    def bind(self, service: ChatService) -> None:
        self.service = service

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Sink]:
        yield Sink()

    async def identify(self) -> Identified | IdentifyFailed | PlatformRefused:
        found = self.identities[0]
        if len(self.identities) > 1:
            self.identities.pop(0)
        return found

    async def link(
        self, status: LinkStatus, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        if self.link_refusal is not None:
            status("connecting", "handshake refused; next attempt within 1 s")
            raise LinkRefused(self.link_refusal)
        status("connected", None)
        task_status.started()
        self.linked.set()
        await trio.sleep_forever()

    def refusal(self, error: BaseException) -> str | None:
        return str(error) if isinstance(error, LinkRefused) else None

    def serving(self) -> None:
        self.said.append(("serving",))

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        pass

    async def resuming(self, left: InboxLeft) -> None:
        pass

    async def divert(self, hearing: Hearing, request: UserInput) -> ForkTask | None:
        del hearing, request  # no message of Slack's is told anything else
        return None

    async def reply(self, route: ChatRoute, anchor: Pending | None, reply: RouteReply) -> bool:
        del route, anchor, reply
        return False

    # -- the events: ``{"id", "chat", "text", "from", "at", "files", "command"}`` as JSON ------

    def hear(self, payload: str) -> Hearing | Ignore | None:
        event = json.loads(payload)
        if event.get("kind") != "message":
            return None
        if event.get("from") != "owner":
            return Ignore("the sender is not the owner")
        chat = event["chat"]
        return Hearing(
            event,
            f"fake:{chat}",
            chat,
            event["id"],
            f"fake-event:{event['event']}",
            self.message_key(chat, event["id"]),
            payload,
            event["text"],
            event["at"],
            "fake:chat",
            {"id": event["id"]},
            team=chat in self.teams,
            attachments=bool(event.get("files")),
        )

    def message_key(self, chat: str, message_id: str) -> str:
        return f"fake-message:{chat}:{message_id}"

    def chat_of(self, route_key: str) -> str | None:
        return route_key.removeprefix("fake:") if route_key.startswith("fake:") else None

    def chat_route(self, chat: str) -> str:
        return f"fake:{chat}"

    def allowed(self, user: str) -> Ignore | None:
        return None if user == "owner" else Ignore("not the owner")

    def team_of(self, route_key: str) -> Any:
        return self.teams.get(self.chat_of(route_key) or "")

    def team_message(self, hearing: Hearing) -> Any:
        return ("team", hearing.text)

    def team_say(self, door: Any) -> Callable[[Any], Awaitable[None]]:
        async def say(effect: Any) -> None:
            self.said.append(("team_say", effect))

        return say

    def reacted(self, hearing: Hearing) -> bool:
        return ("react", hearing.chat, hearing.message_id, "working") in self.said

    async def react(self, chat: str, message_id: str, name: Reaction) -> None:
        self.said.append(("react", chat, message_id, name))

    async def unreact(self, chat: str, message_id: str, name: Reaction) -> None:
        self.said.append(("unreact", chat, message_id, name))

    async def send(
        self, route_key: str, chat: str, text: str, thread: str | None, *, reply_to: str | None
    ) -> None:
        self.said.append(("send", chat, text, reply_to))

    def command(self, hearing: Hearing) -> object | None:
        command: object | None = hearing.item.get("command")
        return command

    async def run_command(self, route: ChatRoute, hearing: Hearing, command: object) -> None:
        self.said.append(("command", command))

    async def fetch(self, route: ChatRoute, hearing: Hearing) -> Prepared | Refused:
        assert self.fetched is not None
        return self.fetched

    def card(self, route: ChatRoute, opening: Opening) -> Card:
        raise AssertionError("no turn is opened in these tests")

    def card_bindings(self, attempt_id: str, turn: ChatTurn) -> tuple[ActionBinding, ...]:
        return ()

    def card_done(self, turn: ChatTurn) -> None:
        pass

    async def went_quiet(self) -> None:
        self.quiet += 1

    async def post_note(
        self,
        route_key: str,
        chat: str,
        thread: str | None,
        text: str,
        button: tuple[str, str],
        *,
        reply_to: str | None,
    ) -> str:
        self.said.append(("note", chat, text, reply_to))
        return "note-1"

    async def update_note(self, message_id: str, text: str) -> None:
        self.said.append(("note_updated", message_id, text))

    async def send_restart_note(
        self, route_key: str, text: str, token: str | None, earlier: str | None, anchor: str | None
    ) -> str | None:
        return None

    async def startup_notes(self) -> None:
        self.said.append(("online",))


def event(
    message_id: str,
    text: str = "hello",
    *,
    chat: str = "c1",
    sender: str = "owner",
    at: float,
    files: bool = False,
    command: str | None = None,
    event_id: str | None = None,
) -> str:
    """A message event as the fake platform sends it (``hear``'s payload)."""
    return json.dumps(
        {
            "kind": "message",
            "event": event_id or f"e-{message_id}",
            "id": message_id,
            "chat": chat,
            "text": text,
            "from": sender,
            "at": at,
            "files": files,
            "command": command,
        }
    )


def image(tmp: Path) -> tuple[Path, ...]:
    path = tmp / "a.png"
    path.write_bytes(b"png")
    return (path,)
