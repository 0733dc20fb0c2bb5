"""The inbound decisions, as tables: parsing, the filters in their order, routes, the stale
guard."""

from __future__ import annotations

from typing import Any

import pytest

from robota.transports.slack import (
    Admit,
    ButtonClick,
    Ignore,
    InboundMessage,
    Malformed,
    Screen,
    Unsupported,
    bang,
    chat_route,
    freshness,
    parse_envelope,
    route_chat,
    screen,
)

from ...support.fake_slack import BOT_USER, dm, events_api

OWNER = "U0ALICE"
SCREEN = Screen(owner=OWNER, bot_user_id=BOT_USER)


def channel_message(text: str, **extra: Any) -> dict[str, Any]:
    event = {**dm(text), "channel": "C0GENERAL", "channel_type": "channel"}
    event.update(extra)
    return event


def parsed(event: dict[str, Any]) -> InboundMessage:
    envelope = events_api(event)
    result = parse_envelope(envelope["type"], envelope["payload"])
    assert isinstance(result, InboundMessage), result
    return result


@pytest.mark.parametrize(
    ("kind", "payload", "expected"),
    [
        ("events_api", None, Malformed),
        ("events_api", {"type": "event_callback"}, Malformed),
        ("events_api", {"type": "url_verification"}, Unsupported),
        ("slash_commands", {"command": "/new"}, Unsupported),
        ("interactive", {"type": "block_actions"}, Malformed),
        ("interactive", {"type": "view_submission"}, Unsupported),
        (
            "interactive",
            {"type": "block_actions", "user": {"id": "U1"}, "container": {}},
            Malformed,
        ),
        (
            "events_api",
            {"type": "event_callback", "event_id": "Ev1", "event": {"type": "reaction_added"}},
            Unsupported,
        ),
        (
            "events_api",
            {"type": "event_callback", "event_id": "Ev1", "event": {"type": "message"}},
            Malformed,
        ),
        (
            "events_api",
            {
                "type": "event_callback",
                "event_id": "Ev1",
                "event": {"type": "message", "channel": "D1", "ts": "not a ts"},
            },
            Malformed,
        ),
        (
            "events_api",
            {
                "type": "event_callback",
                "event_id": "Ev1",
                "event": {"type": "message", "channel": "D1", "ts": "1.2", "text": "x" * 100_001},
            },
            Malformed,
        ),
    ],
)
def test_what_is_dropped_and_why(kind: str, payload: Any, expected: type) -> None:
    assert isinstance(parse_envelope(kind, payload), expected)


def test_a_dm_parses_with_its_route_and_thread() -> None:
    message = parsed(dm("hello", ts="1796015967.000100"))
    assert (message.channel, message.user, message.text) == ("D0ALICE", OWNER, "hello")
    assert message.is_dm and message.route_key == "slack:D0ALICE"
    assert message.reply_thread == "1796015967.000100", "a top-level message: its own thread"
    reply = parsed({**dm("more"), "thread_ts": "1796015967.000100", "ts": "1796015967.000200"})
    assert reply.route_key == "slack:D0ALICE:1796015967.000100"
    assert reply.reply_thread == "1796015967.000100"
    assert route_chat(reply.route_key) == ("D0ALICE", "1796015967.000100")
    assert route_chat(chat_route("C0X")) == ("C0X", None)
    assert route_chat("feishu:chat_id:oc_1") is None


@pytest.mark.parametrize(
    ("event", "screen_", "outcome"),
    [
        # what no person wrote to the bot
        ({**dm("hi"), "subtype": "message_changed"}, SCREEN, "ignore"),
        ({**dm("hi"), "subtype": "message_deleted"}, SCREEN, "ignore"),
        ({**dm("hi"), "subtype": "bot_message", "bot_id": "B9"}, SCREEN, "ignore"),
        ({**dm("hi"), "subtype": "channel_join"}, SCREEN, "ignore"),
        ({**dm("hi"), "bot_id": "B0BOT"}, SCREEN, "ignore"),
        ({**dm("hi"), "user": BOT_USER}, SCREEN, "ignore"),
        # the owner filter
        (dm("hi"), SCREEN, "hi"),
        (dm("hi", user="U0BOB"), SCREEN, "ignore"),
        (dm("hi", user="U0BOB"), Screen(owner=None, owner_only=False), "hi"),
        (dm("hi"), Screen(owner=None), "ignore"),
        # the mention filter: DMs always, channels only with the bot's mention
        (dm(f"<@{BOT_USER}> hi"), SCREEN, "hi"),
        (channel_message("hi all"), SCREEN, "ignore"),
        (channel_message(f"<@{BOT_USER}> what now?"), SCREEN, "what now?"),
        (channel_message(f"ask <@{BOT_USER}|robota> this"), SCREEN, "ask this"),
        (channel_message("<@U0CAROL> see this"), SCREEN, "ignore"),
        (
            channel_message("<@U0CAROL> see this"),
            Screen(owner=OWNER, bot_user_id=BOT_USER, all_channel_messages=True),
            "ignore",
        ),
        (
            channel_message("hi all"),
            Screen(owner=OWNER, bot_user_id=BOT_USER, all_channel_messages=True),
            "hi all",
        ),
        (
            channel_message(f"<@{BOT_USER}> go", type="app_mention", channel_type=None),
            SCREEN,
            "go",
        ),
        (channel_message(f"<@{BOT_USER}> go", user="U0BOB"), SCREEN, "ignore"),
    ],
)
def test_the_filters_in_their_order(event: dict[str, Any], screen_: Screen, outcome: str) -> None:
    decision = screen(parsed(event), screen_)
    if outcome == "ignore":
        assert isinstance(decision, Ignore), decision
    else:
        assert isinstance(decision, Admit), decision
        assert decision.text == outcome


def test_a_mention_in_a_channel_thread_is_the_threads_route() -> None:
    event = channel_message(f"<@{BOT_USER}> go", thread_ts="1796015967.000001")
    decision = screen(parsed(event), SCREEN)
    assert isinstance(decision, Admit)
    assert decision.message.route_key == "slack:C0GENERAL:1796015967.000001"


@pytest.mark.parametrize(
    ("age", "started_ago", "expected"),
    [
        (10.0, 0.0, "run"),
        (301.0, 0.0, "stale"),
        (301.0, 400.0, "run"),  # written after the host started: a slow turn, not a backlog
        (3600.0, 1.0, "stale"),
    ],
)
def test_the_stale_guard(age: float, started_ago: float, expected: str) -> None:
    now = 1_800_000_000.0
    message = parsed(dm("hi", ts=f"{now - age:.6f}"))
    assert freshness(message, now=now, started_at=now - started_ago) == expected


def test_a_button_click_parses_with_its_token_or_none() -> None:
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": OWNER, "username": "alice"},
        "container": {"type": "message", "message_ts": "1796015967.000002", "channel_id": "D1"},
        "actions": [{"action_id": "a_allow", "value": "tok-1", "type": "button"}],
    }
    assert parse_envelope("interactive", payload) == ButtonClick(
        OWNER, "D1", "1796015967.000002", "tok-1"
    )
    assert parse_envelope("interactive", {**payload, "actions": []}) == ButtonClick(
        OWNER, "D1", "1796015967.000002", None
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("!new", "/new"),
        ("!stop", "/stop"),
        ("!NEW --agent codex fix it", "/NEW --agent codex fix it"),
        ("!ns later", "/ns later"),
        ("!important: read this", "!important: read this"),
        ("!!", "!!"),
        ("! new", "! new"),
        ("/new", "/new"),
        ("hello!", "hello!"),
    ],
)
def test_bang_commands_are_the_engines_commands(text: str, expected: str) -> None:
    assert bang(text, {"new", "stop", "ns", "nosteer"}) == expected
