"""The chat service (``robota.core.frontend.ChatService``) against an in-memory platform
(``_fake_platform``): the shell every chat transport runs on, with a real store and a real
front-end port whose engine side is a recording hub. Its connection reports, a message's way
in (accepted, then reacted and told; a redelivery, a stale message, the transport's own
command, a refused or a fetched attachment, a team's chat), a command's reply settling the
message, and what a crash left in the inbox fed again on the next start."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from robota.core.engine import AnswerApproval, Interrupt, RouteReply, UserInput
from robota.core.frontend import (
    Identified,
    IdentifyFailed,
    PlatformRefused,
    Prepared,
    Refused,
    TransportStatus,
)
from robota.core.frontend._clicks import STOP
from robota.core.store import (
    ActionBinding,
    BindCardActions,
    CardAction,
    StoreClient,
    StoreWriter,
    audit_events,
    open_reader,
)

from ._chat_served import START, inbox_left, served, settle
from ._fake_platform import FakePlatform, event, image


@dataclass
class Door:
    """A team's door: what it was handed."""

    handled: list[object] = field(default_factory=list)

    def handle(self, message: object) -> None:
        self.handled.append(message)

    def attach(self, replies: object, *, owner: str | None, prefix: str) -> None:
        pass

    def detach(self) -> None:
        return None


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[Path, StoreClient]]:
    path = tmp_path / "robota.sqlite"
    ref = StoreWriter.start(path)
    client = StoreClient(ref)
    client.ready_sync(timeout=10)
    yield path, client
    ref.stop(timeout=10)


# -- the connection -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("identities", "link_refusal", "expected"),
    [
        ([Identified()], None, [TransportStatus("connected")]),
        (
            [IdentifyFailed("auth failed (timeout)"), Identified()],
            None,
            [
                TransportStatus("connecting", "auth failed (timeout); next attempt within 1 s"),
                TransportStatus("connected"),
            ],
        ),
        (
            [PlatformRefused("the bot token was refused")],
            None,
            [TransportStatus("failed", "the bot token was refused")],
        ),
        (
            [Identified()],
            "the app token was refused",
            [
                TransportStatus("connecting", "handshake refused; next attempt within 1 s"),
                TransportStatus("failed", "the app token was refused"),
            ],
        ),
    ],
)
async def test_the_service_starts_before_the_platform_answers_and_reports_its_connection(
    store: tuple[Path, StoreClient],
    identities: list[Any],
    link_refusal: str | None,
    expected: list[TransportStatus],
) -> None:
    platform = FakePlatform(identities=identities, link_refusal=link_refusal)
    async with served(store, platform, linked=False) as s:
        with trio.fail_after(10):
            while len(s.statuses) < len(expected):
                await trio.sleep(0.01)
        await trio.testing.wait_all_tasks_blocked()
        assert s.statuses == expected
        online = ("online",) in platform.said
        assert online == (expected[-1].state == "connected")


# -- a message's way in ---------------------------------------------------------------------


async def test_a_message_is_accepted_reacted_to_and_told_to_its_route(
    store: tuple[Path, StoreClient],
) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        await s.service.heard(platform.hear(event("m1", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: bool(s.told()))
        ((route, text, message_id, inbox),) = s.told()
        assert (route, text, message_id) == ("fake:c1", "hello", "m1")
        assert inbox is not None
        assert ("react", "c1", "m1", "working") in platform.said


async def test_a_redelivery_is_told_once(store: tuple[Path, StoreClient]) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        payload = event("m1", at=time.time())
        await s.service.heard(platform.hear(payload))  # type: ignore[arg-type]
        await s.service.heard(platform.hear(payload))  # type: ignore[arg-type]
        other_event = event("m1", at=time.time(), event_id="e-other")  # the same message
        await s.service.heard(platform.hear(other_event))  # type: ignore[arg-type]
        await settle(s, lambda: bool(s.told()))
        await trio.sleep(0.2)
        assert len(s.told()) == 1


async def test_messages_keep_their_order(store: tuple[Path, StoreClient]) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        for n in range(5):
            await s.service.heard(platform.hear(event(f"m{n}", f"text {n}", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: len(s.told()) == 5)
        assert [text for _, text, _, _ in s.told()] == [f"text {n}" for n in range(5)]


async def test_an_ignored_message_writes_nothing(store: tuple[Path, StoreClient]) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        ignored = platform.hear(event("m1", sender="stranger", at=time.time()))
        await s.service.heard(ignored)  # type: ignore[arg-type]
        await trio.sleep(0.2)
        assert s.told() == []
        assert inbox_left(store[0]) == []
        assert platform.said == [("serving",), ("online",)]


async def test_a_stale_message_is_recorded_not_run(store: tuple[Path, StoreClient]) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        old = START - 3600
        await s.service.heard(platform.hear(event("m1", at=old)))  # type: ignore[arg-type]

        def recorded() -> bool:
            with closing(open_reader(store[0])) as db:
                return any(e.event_type == "fake.stale_message" for e in audit_events(db))

        await settle(s, recorded)
        assert s.told() == []
        assert inbox_left(store[0]) == []
        assert not any(said[0] == "react" for said in platform.said)


async def test_the_transports_own_command_is_answered_by_the_adapter(
    store: tuple[Path, StoreClient],
) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        payload = event("m1", "/restart", at=time.time(), command="restart")
        await s.service.heard(platform.hear(payload))  # type: ignore[arg-type]
        await settle(s, lambda: ("command", "restart") in platform.said)
        assert s.told() == []
        await settle(s, lambda: inbox_left(store[0]) == [])


async def test_a_refused_attachment_is_said_and_settled(store: tuple[Path, StoreClient]) -> None:
    platform = FakePlatform(fetched=Refused("the file is too big"))
    async with served(store, platform) as s:
        await s.service.heard(platform.hear(event("m1", at=time.time(), files=True)))  # type: ignore[arg-type]
        await settle(s, lambda: ("unreact", "c1", "m1", "working") in platform.said)
        assert ("send", "c1", "the file is too big", "m1") in platform.said
        assert ("react", "c1", "m1", "failed") in platform.said
        assert s.told() == []
        await settle(s, lambda: inbox_left(store[0]) == [])


async def test_a_fetched_attachment_goes_to_the_route_with_its_images(
    store: tuple[Path, StoreClient], tmp_path: Path
) -> None:
    images = image(tmp_path)
    platform = FakePlatform(fetched=Prepared("hello [a.png]", images))
    async with served(store, platform) as s:
        await s.service.heard(platform.hear(event("m1", at=time.time(), files=True)))  # type: ignore[arg-type]
        await settle(s, lambda: bool(s.told()))
        ((_, request),) = s.hub.told
        assert isinstance(request, UserInput)
        assert (request.text, request.images) == ("hello [a.png]", images)


async def test_a_teams_chat_goes_to_its_door(store: tuple[Path, StoreClient]) -> None:
    door = Door()
    platform = FakePlatform(teams={"t1": door})
    async with served(store, platform, teams={"t1": door}) as s:
        await s.service.heard(platform.hear(event("m1", chat="t1", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: bool(door.handled))
        assert door.handled == [("team", "hello")]
        assert s.told() == []
        assert not any(said[0] == "react" for said in platform.said)
        await settle(s, lambda: inbox_left(store[0]) == [])


async def test_a_commands_reply_is_said_and_settles_its_message(
    store: tuple[Path, StoreClient],
) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        await s.service.heard(platform.hear(event("m1", "/status", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: bool(s.told()))
        s.hub.connected["fake:c1"](RouteReply("fake:c1", "all quiet"))
        await settle(s, lambda: ("unreact", "c1", "m1", "working") in platform.said)
        assert ("send", "c1", "all quiet", "m1") in platform.said
        assert ("react", "c1", "m1", "completed") in platform.said


# -- how many chats at once --------------------------------------------------------------------


async def test_past_the_busy_limit_a_chat_waits_its_turn_in_order(
    store: tuple[Path, StoreClient],
) -> None:
    """Two chats busy (a command each, unanswered) and a limit of two: a third chat's messages
    are accepted (claimed, kept in the inbox) but wait, a redelivery among them claimed once;
    a busy chat is still heard at once; once a busy chat's reply settles it, the waiting
    chat's messages reach its route in order, once each."""
    platform = FakePlatform()
    async with served(store, platform, max_busy_chats=2) as s:
        for message_id, chat in (("m1", "c1"), ("m2", "c2")):
            await s.service.heard(
                platform.hear(event(message_id, "/status", chat=chat, at=time.time()))
            )  # type: ignore[arg-type]
        await settle(s, lambda: len(s.told()) == 2)
        for message_id, text in (("m3", "first"), ("m4", "second"), ("m3", "first")):
            # m3 twice: the platform delivered it again; the second is claimed before
            await s.service.heard(platform.hear(event(message_id, text, chat="c3", at=time.time())))  # type: ignore[arg-type]
        await s.service.heard(platform.hear(event("m5", "more", chat="c2", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: len(s.told()) == 3)
        await trio.sleep(0.3)
        assert [(route, text) for route, text, _, _ in s.told()] == [
            ("fake:c1", "/status"),
            ("fake:c2", "/status"),
            ("fake:c2", "more"),
        ]
        assert s.service.turns.gate.waiting == 1
        assert {"m3", "m4"} <= set(inbox_left(store[0]))  # accepted: a crash loses neither
        assert ("react", "c3", "m3", "working") not in platform.said

        s.hub.connected["fake:c1"](RouteReply("fake:c1", "all quiet"))
        await settle(s, lambda: len(s.told()) == 5)
        await trio.sleep(0.2)
        assert [(route, text) for route, text, _, _ in s.told()[3:]] == [
            ("fake:c3", "first"),
            ("fake:c3", "second"),
        ]
        assert ("react", "c3", "m3", "working") in platform.said
        assert s.service.turns.gate.waiting == 0


async def test_a_waiting_message_that_cannot_be_heard_again_is_logged_and_the_next_served(
    store: tuple[Path, StoreClient], caplog: pytest.LogCaptureFixture
) -> None:
    """A limit of one, two chats waiting; the first one's event fails to be heard again when
    its turn comes (the platform's parser raises): that is logged, its row stays for the next
    start, and the chat after it is served."""
    platform = FakePlatform()
    async with served(store, platform, max_busy_chats=1) as s:
        await s.service.heard(platform.hear(event("m1", "/status", chat="c1", at=time.time())))  # type: ignore[arg-type]
        await s.service.heard(platform.hear(event("m2", "broken", chat="c2", at=time.time())))  # type: ignore[arg-type]
        await s.service.heard(platform.hear(event("m3", "fine", chat="c3", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: len(s.told()) == 1)
        hear = platform.hear

        def fragile(payload: str) -> object:
            if '"broken"' in payload:
                raise ValueError("no longer parses")
            return hear(payload)

        platform.hear = fragile  # type: ignore[method-assign,assignment]
        s.hub.connected["fake:c1"](RouteReply("fake:c1", "all quiet"))
        await settle(s, lambda: len(s.told()) == 2)
        assert s.told()[1][:2] == ("fake:c3", "fine")
        assert "a waiting message could not be served" in caplog.text
        assert "m2" in inbox_left(store[0])


async def test_what_waited_when_the_host_stopped_is_fed_again_through_the_gate(
    store: tuple[Path, StoreClient],
) -> None:
    """A run stopped while a chat waited: the next run feeds its rows again, and they wait
    their turn there too (a limit of one, the first chat busy again first)."""
    first = FakePlatform()
    async with served(store, first, max_busy_chats=1) as s:
        await s.service.heard(first.hear(event("m1", "/status", chat="c1", at=time.time())))  # type: ignore[arg-type]
        await s.service.heard(first.hear(event("m2", "waiting", chat="c2", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: len(s.told()) == 1)
        assert s.service.turns.gate.waiting == 1
    assert inbox_left(store[0]) == ["m1", "m2"]
    again = FakePlatform()
    async with served(store, again, max_busy_chats=1) as s:
        await settle(s, lambda: len(s.told()) == 1)
        await trio.sleep(0.3)
        assert [(route, text) for route, text, _, _ in s.told()] == [("fake:c1", "/status")]
        s.hub.connected["fake:c1"](RouteReply("fake:c1", "all quiet"))
        await settle(s, lambda: len(s.told()) == 2)
        assert s.told()[1][:2] == ("fake:c2", "waiting")


# -- after a crash ----------------------------------------------------------------------------


async def test_what_no_route_took_in_is_fed_again_in_order_on_the_next_start(
    store: tuple[Path, StoreClient],
) -> None:
    """The engine never consumed the rows (the hub is no engine): the next run feeds them to
    their routes again, in the order they came, before the platform's new events."""
    first = FakePlatform()
    async with served(store, first) as s:
        for n in range(3):
            await s.service.heard(first.hear(event(f"m{n}", f"text {n}", at=time.time())))  # type: ignore[arg-type]
        await settle(s, lambda: len(s.told()) == 3)
    assert inbox_left(store[0]) == ["m0", "m1", "m2"]
    again = FakePlatform()
    async with served(store, again) as s:
        await settle(s, lambda: len(s.told()) == 3)
        assert [text for _, text, _, _ in s.told()] == ["text 0", "text 1", "text 2"]


# -- clicks -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "user", "token", "action", "expected", "told"),
    [
        ("Stop", "owner", "t1", ("card-1", STOP, "cancel"), "stopping", Interrupt),
        ("an approval", "owner", "t1", ("card-1", "ap-1", "accept"), "answered", AnswerApproval),
        ("a stranger", "stranger", "t1", ("card-1", STOP, "cancel"), "not_owner", None),
        ("no token", "owner", None, ("card-1", STOP, "cancel"), "not_ours", None),
        ("an unknown token", "owner", "t-other", ("card-1", STOP, "cancel"), "refused", None),
        ("the platform's own", "owner", "t1", ("card-1", "reset", "a1"), "claimed", None),
    ],
)
async def test_a_click_is_checked_claimed_once_and_acted_on(
    store: tuple[Path, StoreClient],
    *,
    case: str,
    user: str,
    token: str | None,
    action: tuple[str, str, str],
    expected: str,
    told: type | None,
) -> None:
    platform = FakePlatform(own_actions=frozenset({"reset"}))
    async with served(store, platform) as s:
        binding = ActionBinding("t1", CardAction(*action))
        await store[1].write(BindCardActions("msg-card", "fake:c1", (binding,)), timeout=10)
        clicked = await s.service.clicked("msg-card", user, token, "c1")
        assert clicked.verdict == expected, case
        assert [type(r) for _, r in s.hub.told] == ([told] if told else []), case
        if expected == "claimed":
            assert clicked.action == CardAction(*action)
            assert clicked.route_key == "fake:c1"
        again = await s.service.clicked("msg-card", user, token, "c1")
        if expected in ("stopping", "answered", "claimed"):
            assert again.verdict == "refused", "a token is spent by its first click"


async def test_a_clicks_event_is_claimed_once(store: tuple[Path, StoreClient]) -> None:
    platform = FakePlatform()
    async with served(store, platform) as s:
        binding = ActionBinding("t1", CardAction("card-1", STOP, "cancel"))
        await store[1].write(BindCardActions("msg-card", "fake:c1", (binding,)), timeout=10)
        first = await s.service.clicked("msg-card", "owner", "t1", "c1", event_key="ev-1")
        again = await s.service.clicked("msg-card", "owner", "t1", "c1", event_key="ev-1")
        assert (first.verdict, again.verdict) == ("stopping", "duplicate")
