"""The inbound decision core, by tables: parsing, the owner and mention filters, the stale
guard and the transport's own commands (``robota.transports.feishu._inbound``)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from robota.transports.feishu._inbound import (
    MAX_TEXT,
    NO_OWNER,
    Admit,
    CardClick,
    ChatCommand,
    Ignore,
    InboundMessage,
    Malformed,
    Mention,
    Resource,
    Screen,
    Unsupported,
    allowed,
    chat_route,
    command,
    freshness,
    is_team_route,
    parse_event,
    route_chat,
    screen,
    team_chat,
    team_route,
)

OWNER = "ou_owner"
BOT = "ou_bot"


def envelope(event: dict[str, Any], event_type: str = "im.message.receive_v1") -> bytes:
    header = {"event_id": "ev1", "event_type": event_type, "create_time": "1796015960024"}
    return json.dumps({"schema": "2.0", "header": header, "event": event}).encode()


def message(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "message_id": "om_1",
        "chat_id": "oc_1",
        "chat_type": "p2p",
        "thread_id": "",
        "message_type": "text",
        "content": json.dumps({"text": "run the tests"}),
        "create_time": "1796015960024",
        "mentions": [],
    }
    base.update(fields)
    return {
        "sender": {"sender_id": {"open_id": OWNER}, "sender_type": "user"},
        "message": base,
    }


def test_a_text_message_is_parsed_verbatim() -> None:
    parsed = parse_event(envelope(message(content=json.dumps({"text": "  a\n\nb  "}))))
    assert isinstance(parsed, InboundMessage)
    assert (parsed.event_id, parsed.message_id, parsed.chat_id) == ("ev1", "om_1", "oc_1")
    assert parsed.text == "  a\n\nb  "
    assert parsed.created_at == pytest.approx(1796015960.024)
    assert parsed.route_key == "feishu:chat_id:oc_1"


@pytest.mark.parametrize(
    ("payload", "kind", "reason"),
    [
        (b"\x00\xff not json", Malformed, "not JSON"),
        (b"[1, 2]", Malformed, "not a JSON object"),
        (json.dumps({"header": {}, "event": {}}).encode(), Malformed, "no event_id"),
        (json.dumps({"header": {"event_id": "e"}}).encode(), Malformed, "no header or no event"),
        (envelope({"message": message()["message"]}), Malformed, "no sender or no message"),
        (envelope({"sender": message()["sender"]}), Malformed, "no sender or no message"),
        (envelope(message(chat_id="")), Malformed, "lacks"),
        (envelope(message(content="{not json")), Malformed, "content is not JSON"),
        (envelope(message(content=json.dumps({"text": "x" * (MAX_TEXT + 1)}))), Malformed, "more"),
        (envelope(message(create_time="yesterday")), Malformed, "create_time"),
        (envelope(message(), "im.chat.disbanded_v1"), Unsupported, "event type"),
        (envelope(message(message_type="sticker", content="{}")), Unsupported, "sticker"),
        (envelope(message(chat_type="channel")), Unsupported, "chat type"),
        (envelope(message(message_type="image", content="{}")), Malformed, "image_key"),
        (envelope(message(message_type="file", content='{"file_name": "a"}')), Malformed, "file"),
    ],
)
def test_what_is_dropped_and_why(payload: bytes, kind: type, reason: str) -> None:
    parsed = parse_event(payload)
    assert isinstance(parsed, kind)
    assert reason in parsed.reason  # type: ignore[attr-defined]


def test_a_post_gives_its_words() -> None:
    post = {
        "title": "T",
        "content": [[{"tag": "text", "text": "line "}, {"tag": "a", "text": "x"}]],
    }
    parsed = parse_event(envelope(message(message_type="post", content=json.dumps(post))))
    assert isinstance(parsed, InboundMessage) and parsed.text == "T\nline x"


def test_a_card_click() -> None:
    event = {
        "operator": {"open_id": OWNER},
        "action": {"value": {"token": "tok"}, "tag": "button"},
        "context": {"open_message_id": "om_card", "open_chat_id": "oc_1"},
    }
    assert parse_event(envelope(event, "card.action.trigger")) == CardClick(
        "ev1", OWNER, "om_card", "oc_1", "tok"
    )
    del event["action"]
    parsed = parse_event(envelope(event, "card.action.trigger"))
    assert isinstance(parsed, CardClick) and parsed.token is None
    del event["operator"]
    assert isinstance(parse_event(envelope(event, "card.action.trigger")), Malformed)


def inbound(**fields: Any) -> InboundMessage:
    base = InboundMessage(
        event_id="ev1",
        message_id="om_1",
        chat_id="oc_1",
        chat_type="p2p",
        thread_id=None,
        sender_open_id=OWNER,
        sender_type="user",
        message_type="text",
        text="hi",
        mentions=(),
        created_at=1000.0,
    )
    return replace(base, **fields)


AT_BOT = Mention("@_user_1", BOT, "Bot")
AT_ALICE = Mention("@_user_2", "ou_alice", "Alice")
SCREEN = Screen(owner=OWNER, bot_open_id=BOT)


@pytest.mark.parametrize(
    ("message", "screen_", "muted", "expected"),
    [
        # the owner filter, first
        (inbound(), SCREEN, False, "hi"),
        (inbound(sender_open_id="ou_x"), SCREEN, False, "not the owner"),
        (inbound(), Screen(owner=None), False, NO_OWNER),
        (inbound(sender_open_id="ou_x"), Screen(owner=None, owner_only=False), False, "hi"),
        (inbound(sender_type="app"), SCREEN, False, "not a person"),
        # a stranger is refused before the mention filter would have let them through
        (
            inbound(
                chat_type="group", sender_open_id="ou_x", text="@_user_1 hi", mentions=(AT_BOT,)
            ),
            SCREEN,
            False,
            "not the owner",
        ),
        # groups: every message by default, mention-only when muted or configured so
        (inbound(chat_type="group"), SCREEN, False, "hi"),
        (inbound(chat_type="group"), SCREEN, True, "mention-only"),
        (
            inbound(chat_type="group"),
            replace(SCREEN, all_group_messages=False),
            False,
            "mention-only",
        ),
        (inbound(chat_type="group", text="@_user_1 hi", mentions=(AT_BOT,)), SCREEN, True, "hi"),
        # someone else mentioned and not the bot: not for us, muted or not
        (
            inbound(chat_type="group", text="@_user_2 hi", mentions=(AT_ALICE,)),
            SCREEN,
            False,
            "mentions someone else",
        ),
        (
            inbound(chat_type="group", text="@_user_1 ask @_user_2", mentions=(AT_BOT, AT_ALICE)),
            SCREEN,
            False,
            "ask @Alice",
        ),
        # a private chat is never muted, and its text is verbatim
        (inbound(text="  keep  spaces "), SCREEN, True, "  keep  spaces "),
    ],
)
def test_the_owner_filter_then_the_mention_filter(
    message: InboundMessage, screen_: Screen, muted: bool, expected: str
) -> None:
    decision = screen(message, screen_, muted=muted)
    if isinstance(decision, Admit):
        assert decision.text == expected
    else:
        assert isinstance(decision, Ignore) and expected in decision.reason


def test_a_card_operator_is_checked_like_a_sender() -> None:
    assert allowed(OWNER, SCREEN) is None
    assert isinstance(allowed("ou_x", SCREEN), Ignore)
    assert allowed("ou_x", Screen(owner=None, owner_only=False)) is None


@pytest.mark.parametrize(
    ("message_type", "content", "text", "resources"),
    [
        ("image", {"image_key": "img_1"}, "", (Resource("image", "img_1"),)),
        (
            "file",
            {"file_key": "file_1", "file_name": "t.csv"},
            "",
            (Resource("file", "file_1", "t.csv"),),
        ),
        (
            "post",
            {
                "title": "",
                "content": [
                    [{"tag": "text", "text": "look"}],
                    [{"tag": "img", "image_key": "img_a"}, {"tag": "img", "image_key": "img_b"}],
                    [{"tag": "img"}],
                ],
            },
            "look\n\n",
            (Resource("image", "img_a"), Resource("image", "img_b")),
        ),
        ("text", {"text": "plain"}, "plain", ()),
    ],
)
def test_images_and_files_are_parsed_as_resources(
    message_type: str, content: dict[str, Any], text: str, resources: tuple[Resource, ...]
) -> None:
    event = message(message_type=message_type, content=json.dumps(content))
    parsed = parse_event(envelope(event))
    assert isinstance(parsed, InboundMessage)
    assert (parsed.text, parsed.resources) == (text, resources)


@pytest.mark.parametrize(
    ("created", "now", "started", "expected"),
    [
        (1000.0, 1001.0, 900.0, "run"),  # after the start
        (1000.0, 1299.0, 1100.0, "run"),  # before the start, under 5 minutes old
        (1000.0, 1301.0, 1100.0, "stale"),  # before the start and over 5 minutes old
        (1000.0, 5000.0, 900.0, "run"),  # old but after the start: a slow turn's queue
    ],
)
def test_the_stale_guard(created: float, now: float, started: float, expected: str) -> None:
    assert freshness(inbound(created_at=created), now=now, started_at=started) == expected


@pytest.mark.parametrize(
    ("text", "chat_type", "expected"),
    [
        ("/mute", "group", ChatCommand("mute")),
        ("/mute on", "group", ChatCommand("mute", "on")),
        ("/MUTE off", "group", ChatCommand("mute", "off")),
        ("/mute maybe", "group", "usage"),
        ("/mute", "p2p", "for group chats"),
        ("/restart", "p2p", ChatCommand("restart")),
        ("/restart --force", "group", ChatCommand("restart", "--force")),
        ("/restart now", "p2p", "usage: /restart or /restart --force"),
        ("/restart --force now", "p2p", "usage"),
        ("/newgroup", "p2p", ChatCommand("newgroup")),
        ("/ng  Project   X", "group", ChatCommand("newgroup", "Project X")),
        ("/forkgroup", "p2p", ChatCommand("forkgroup")),
        ("/FG a fork", "p2p", ChatCommand("forkgroup", "a fork")),
        ("/new", "p2p", None),
        ("mute", "group", None),
        ("", "p2p", None),
    ],
)
def test_the_transports_own_commands(text: str, chat_type: str, expected: object) -> None:
    got = command(Admit(inbound(chat_type=chat_type, text=text), text))
    if isinstance(expected, str):
        assert got is not None and got.refusal is not None and expected in got.refusal
    else:
        assert got == expected


def test_route_keys() -> None:
    assert chat_route("oc_1") == "feishu:chat_id:oc_1"
    assert chat_route("oc_1", "omt_2") == "feishu:chat_id:oc_1:thread_id:omt_2"
    assert route_chat("feishu:chat_id:oc_1:thread_id:omt_2") == ("oc_1", "omt_2")
    assert route_chat("feishu:chat_id:oc_1") == ("oc_1", None)
    assert route_chat("slack:C1") is None


@pytest.mark.parametrize(
    ("route_key", "team", "chat"),
    [
        (team_route("oc_1", "om_2"), "oc_1", ("oc_1", None)),
        ("feishu:chat_id:oc_1:request:om_2", "oc_1", ("oc_1", None)),
        ("feishu:chat_id:oc_1", None, ("oc_1", None)),
        ("feishu:chat_id:oc_1:thread_id:omt_2", None, ("oc_1", "omt_2")),
        ("feishu:chat_id:oc_1:request:", None, None),
        ("feishu:chat_id:oc_1:request:om_2:more", None, None),
        ("slack:C1", None, None),
    ],
)
def test_a_team_requests_route_key(
    route_key: str, team: str | None, chat: tuple[str, str | None] | None
) -> None:
    """A request thread of a team's group: its chat (``team_chat``), a reply in its thread
    (``is_team_route``), and to ``route_chat`` the group's own timeline."""
    assert team_chat(route_key) == team
    assert is_team_route(route_key) is (team is not None)
    assert route_chat(route_key) == chat
