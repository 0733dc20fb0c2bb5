"""``ChatTurns`` lets a quiet route go: its lane, reader and subscription end once nothing of
it is in flight for ``RETIRE_AFTER`` seconds, and the next message follows it again (with the
agent its last ``TaskOpened`` named). A ``ChatTurns`` over a real ``FrontEndPort`` with minimal
hooks (``TurnHooks``); the hub stands in for the engine (it records the routes' deliver
callbacks)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from robota.core.engine import InputQueued, RouteReply, TaskOpened, TurnBegan
from robota.core.frontend import (
    ChatRoute,
    ChatTurn,
    ChatTurns,
    FrontEndPort,
    Opening,
    Outcome,
    Pending,
    QueueNote,
    RecoveredTurn,
    TransportContext,
)
from robota.core.frontend._chat import RETIRE_AFTER
from robota.core.store import InboxRow, TurnAttempt
from robota.core.testing import wait_until

from ._chat_served import Hub


class Card:
    def tell(self, message: object) -> None:
        pass


class Hooks:
    """The platform's part (``TurnHooks``): a lane's items admitted behind ``gate``, a turn's
    card that takes anything, every route this transport's; nothing else is said."""

    def __init__(self) -> None:
        self.admitted: list[Any] = []
        self.quiet = 0
        self.gate = trio.Event()
        self.gate.set()

    async def admit(self, route: ChatRoute, item: Any) -> None:
        self.admitted.append(item)
        await self.gate.wait()

    def item_extra(self, item: Any) -> Mapping[str, object]:
        return {}

    def chat_of(self, route_key: str) -> str | None:
        return ""

    def open_turn(self, route: ChatRoute, opening: Opening) -> ChatTurn:
        return ChatTurn(opening.card_id, route.key, Card(), "stop")  # type: ignore[arg-type]

    async def route_reply(
        self, route: ChatRoute, anchor: Pending | None, reply: RouteReply
    ) -> None:
        pass

    def turn_ended(self, route_key: str) -> None:
        pass

    def input_queued(self, note: QueueNote) -> None:
        pass

    async def settle_note(self, note: QueueNote) -> None:
        pass

    def card_posted(self, attempt_id: str, turn: ChatTurn, message_id: str) -> None:
        pass

    def answer_done(self, turn: ChatTurn, outcome: Outcome) -> None:
        pass

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        pass

    def recovered(self, plan: Sequence[RecoveredTurn]) -> None:
        pass

    def fed_again(self, row: InboxRow) -> None:
        pass

    async def settle_left(self, row: InboxRow, outcome: Outcome) -> None:
        pass

    async def went_quiet(self) -> None:
        self.quiet += 1


def chat_turns(port: FrontEndPort, nursery: trio.Nursery, hooks: Hooks) -> ChatTurns:
    context = TransportContext(
        name="test",
        settings=None,
        port=port,
        store=None,  # type: ignore[arg-type]  (nothing here writes)
        db_path=Path("/nonexistent"),
        config=None,  # type: ignore[arg-type]
        profile=None,  # type: ignore[arg-type]
        report=lambda _status: None,
        started_at=0.0,
    )
    turns = ChatTurns(
        context,
        hooks,
        name="test",
        route_prefix="test:",
        card_suffix=":card",
        log=logging.getLogger("tests.chat"),
    )
    turns.attach(nursery)  # as a service's ``run`` does
    return turns


@asynccontextmanager
async def shell_on_a_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[ChatTurns, Hooks, Hub, list[float]]]:
    """A shell (``ChatTurns``) and its hooks in a nursery of their own, and ``time.monotonic``
    as the test sets it (``now[0]``) inside the chat shell; the nursery is cancelled at the
    end."""
    now = [1000.0]
    monkeypatch.setattr("robota.core.frontend._chat.time.monotonic", lambda: now[0])
    hub = Hub()
    hooks = Hooks()
    async with trio.open_nursery() as nursery:
        yield chat_turns(FrontEndPort(hub), nursery, hooks), hooks, hub, now
        nursery.cancel_scope.cancel()


async def settle() -> None:
    await trio.testing.wait_all_tasks_blocked()


KEY = "test:chat-1"


@pytest.mark.parametrize(
    ("under_way", "kept"),
    [
        ("nothing", False),
        ("a message waiting for its turn", True),
        ("a command waiting for its reply", True),
        ("an item being admitted", True),
        ("an open card", True),
        ("a queued note", True),
    ],
)
async def test_a_quiet_route_goes_unless_something_is_in_flight(
    monkeypatch: pytest.MonkeyPatch, under_way: str, kept: bool
) -> None:
    async with shell_on_a_clock(monkeypatch) as (shell, hooks, hub, now):
        route = shell.route(KEY)
        deliver = hub.connected[KEY]
        if under_way == "a message waiting for its turn":
            route.pending.append(Pending("m1", "hello"))
        elif under_way == "a command waiting for its reply":
            route.commands.append(Pending("m2", "/status"))
        elif under_way == "an item being admitted":
            hooks.gate = trio.Event()
            shell.hand_to_lane(route, "held")
        elif under_way == "an open card":
            deliver(TurnBegan(KEY, "t1", "a1", "hello"))
        elif under_way == "a queued note":
            deliver(InputQueued(KEY, 1, "later", 0))
        await settle()

        now[0] += RETIRE_AFTER - 1
        assert shell.retire_quiet(now[0]) == []
        now[0] += 1
        gone = shell.retire_quiet(now[0])
        await settle()
        assert gone == ([] if kept else [KEY])
        assert (KEY in hub.connected) is kept, "a route let go is no longer subscribed"
        assert shell.route_of(KEY) is not None  # whatever is asked follows it (again)
        hooks.gate.set()


async def test_a_route_asked_for_is_not_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """A handler that asks for a route and awaits something (a reaction) before it tells the
    route anything must find it still followed."""
    async with shell_on_a_clock(monkeypatch) as (shell, _hooks, hub, now):
        shell.route(KEY)
        now[0] += RETIRE_AFTER + 1
        asked = shell.route(KEY)
        assert shell.retire_quiet(now[0] + RETIRE_AFTER - 1) == []
        assert asked is shell.route(KEY) and KEY in hub.connected


async def test_a_route_let_go_is_followed_again_with_its_agent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with shell_on_a_clock(monkeypatch) as (shell, hooks, hub, now):
        first = shell.route(KEY)
        hub.connected[KEY](TaskOpened(KEY, "t1", "codex", "/w", "r1", resumed=False))
        shell.hand_to_lane(first, "one")
        await settle()
        assert first.agent == "codex"

        now[0] += RETIRE_AFTER / 2  # the lane's item made it busy just now
        assert shell.retire_quiet(now[0]) == []
        now[0] += RETIRE_AFTER
        assert shell.retire_quiet(now[0]) == [KEY]
        await settle()
        assert KEY not in hub.connected

        # A message held from before (a handler that looked the route up earlier) and the
        # next one both reach a route followed again, in order, with the agent it had.
        shell.hand_to_lane(first, "two")
        again = shell.route(KEY)
        shell.hand_to_lane(again, "three")
        await settle()
        assert again is not first and again.agent == "codex"
        assert KEY in hub.connected
        assert hooks.admitted == ["one", "two", "three"]


async def test_the_shell_keeps_only_the_routes_that_speak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with shell_on_a_clock(monkeypatch) as (shell, _hooks, hub, now):
        for i in range(200):
            shell.hand_to_lane(shell.route(f"test:chat-{i}"), i)
        await settle()
        now[0] += RETIRE_AFTER
        shell.hand_to_lane(shell.route("test:chat-7"), "still talking")
        await settle()
        assert shell.retire_quiet(now[0]) == [f"test:chat-{i}" for i in range(200) if i != 7]
        assert list(hub.connected) == ["test:chat-7"]


async def test_a_burst_of_chats_let_go_leaves_the_shell_as_it_was_and_gives_memory_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 28 s.3: after 50 chats spoke and went quiet, ``follow_routes`` lets them all go:
    the shell's tasks (a lane and a reader per chat), its routes and the port's subscriptions
    return to what they were before the burst, and what they held is given back once."""
    async with shell_on_a_clock(monkeypatch) as (shell, hooks, hub, now):
        nursery = shell._nursery
        assert nursery is not None
        released: list[int] = []
        nursery.start_soon(shell.follow_routes, 0.01, lambda: released.append(len(shell._routes)))
        await settle()
        tasks = len(nursery.child_tasks)
        for i in range(50):
            shell.hand_to_lane(shell.route(f"test:chat-{i}"), i)
        await settle()
        assert len(nursery.child_tasks) == tasks + 100  # a lane and a reader each
        assert len(hub.connected) == 50 and len(hooks.admitted) == 50

        now[0] += RETIRE_AFTER
        await wait_until(lambda: released == [0], timeout=10.0)
        assert hooks.quiet == 1  # the platform was told, once, before the release
        assert len(nursery.child_tasks) == tasks
        assert hub.connected == {} and shell.context.port.listeners("test:chat-0") == 0
