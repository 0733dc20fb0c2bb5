"""A chat message's admission, by table (``robota.core.frontend._admission``): every branch of
the screen, of the accept before the platform's ack, of the lane once the accept is written,
and after the attachments were fetched."""

from __future__ import annotations

import pytest

from robota.core.frontend import STALE_AFTER, Ignore
from robota.core.frontend._admission import (
    Accept,
    Arrived,
    Consume,
    Effect,
    Fetch,
    Heard,
    NoteChat,
    NoteInbound,
    React,
    RecordStale,
    Reply,
    RunCommand,
    ScreenRules,
    Settle,
    Tell,
    ToDoor,
    accepted,
    admission,
    fetched,
    screen,
)

OWNER = "u-owner"
RULES = ScreenRules(OWNER, owner_only=True, no_owner="set an owner", where="in channels")
MENTION_ONLY = ScreenRules(OWNER, mention_only=True, where="in channels")
OPEN = ScreenRules(None, owner_only=False)
NO_OWNER = ScreenRules(None, owner_only=True, no_owner="set an owner")


@pytest.mark.parametrize(
    ("case", "heard", "rules", "reason"),
    [
        ("the owner in a private chat", Heard(OWNER), RULES, None),
        ("a bot's own message", Heard("b1", not_a_person="sent by a bot"), RULES, "sent by a bot"),
        ("an edit", Heard(OWNER, not_a_person="an edit"), OPEN, "an edit"),
        (
            "not the owner",
            Heard("u2"),
            RULES,
            "the sender is not the owner (respondToOwnerOnly)",
        ),
        ("anyone, owner_only off", Heard("u2"), OPEN, None),
        ("no owner configured", Heard(OWNER), NO_OWNER, "set an owner"),
        ("a group, mentioned", Heard(OWNER, group=True, mentions_bot=True), MENTION_ONLY, None),
        (
            "a group without a mention, mention-only",
            Heard(OWNER, group=True),
            MENTION_ONLY,
            "mention-only in channels, and the bot is not mentioned",
        ),
        ("a group without a mention, all messages", Heard(OWNER, group=True), RULES, None),
        (
            "a group, someone else mentioned",
            Heard(OWNER, group=True, mentions_other=True),
            RULES,
            "the message mentions someone else, not the bot",
        ),
        (
            "a group, the bot and someone else mentioned",
            Heard(OWNER, group=True, mentions_bot=True, mentions_other=True),
            MENTION_ONLY,
            None,
        ),
        ("a private chat mentions someone", Heard(OWNER, mentions_other=True), MENTION_ONLY, None),
        (
            "the bot's filter before the owner's",
            Heard("u2", not_a_person="sent by a bot"),
            RULES,
            "sent by a bot",
        ),
        (
            "the owner's filter before the mention's",
            Heard("u2", group=True),
            MENTION_ONLY,
            "the sender is not the owner (respondToOwnerOnly)",
        ),
    ],
)
def test_the_screen(case: str, heard: Heard, rules: ScreenRules, reason: str | None) -> None:
    found = screen(heard, rules)
    assert (found.reason if isinstance(found, Ignore) else None) == reason, case


def test_a_heard_message_is_noted_and_accepted_before_the_ack_an_ignored_one_is_not() -> None:
    assert accepted(None) == [NoteInbound(), Accept()]
    assert accepted(Ignore("no")) == [Ignore("no")]


START = 1_000_000.0
NOW = START + 10


def arrived(**changes: object) -> Arrived:
    fields: dict[str, object] = {
        "claimed": True,
        "text": "hello",
        "created_at": NOW - 1,
        "now": NOW,
        "started_at": START,
    }
    fields.update(changes)
    return Arrived(**fields)  # type: ignore[arg-type]


STALE = START - STALE_AFTER - 5
RESTART = object()


@pytest.mark.parametrize(
    ("case", "message", "effects"),
    [
        ("a prompt", arrived(), [React(), NoteChat(), Tell("hello", command=False)]),
        (
            "an engine command",
            arrived(text="/status"),
            [React(), NoteChat(), Tell("/status", command=True)],
        ),
        (
            "a duplicate event (claimed before)",
            arrived(claimed=False),
            [Ignore("already claimed: a redelivery")],
        ),
        ("a stale message", arrived(created_at=STALE), [RecordStale()]),
        (
            "old but written after the start",
            arrived(created_at=START + 1, now=START + 10 * STALE_AFTER),
            [React(), NoteChat(), Tell("hello", command=False)],
        ),
        (
            "a stale one fed again (it passed the guard once)",
            arrived(created_at=STALE, again=True),
            [React(), NoteChat(), Tell("hello", command=False)],
        ),
        (
            "fed again, its reaction there already",
            arrived(again=True, reacted=True),
            [NoteChat(), Tell("hello", command=False)],
        ),
        (
            "a reaction known but not fed again",
            arrived(reacted=True),
            [React(), NoteChat(), Tell("hello", command=False)],
        ),
        ("a team's chat", arrived(team=True), [ToDoor(), Consume(door=True)]),
        ("a team's chat, stale", arrived(team=True, created_at=STALE), [RecordStale()]),
        (
            "the transport's command",
            arrived(text="/restart", command=RESTART),
            [React(), NoteChat(), Consume(), RunCommand(RESTART)],
        ),
        ("attachments", arrived(attachments=True), [React(), NoteChat(), Fetch()]),
        (
            "a command wins over attachments",
            arrived(command=RESTART, attachments=True),
            [React(), NoteChat(), Consume(), RunCommand(RESTART)],
        ),
    ],
)
def test_the_lane(case: str, message: Arrived, effects: list[Effect | Ignore]) -> None:
    assert admission(message) == effects, case


@pytest.mark.parametrize(
    ("text", "refusal", "effects"),
    [
        ("look [image]", None, [Tell("look [image]", command=False)]),
        ("/ask [file]", None, [Tell("/ask [file]", command=True)]),
        ("look", "too big", [Reply("too big"), Settle("failed"), Consume()]),
    ],
)
def test_after_the_fetch(text: str, refusal: str | None, effects: list[Effect | Ignore]) -> None:
    assert fetched(text, refusal) == effects


def test_every_path_but_telling_the_route_consumes_the_row_or_records_it() -> None:
    """The inbox keeps a message until something took it in: a path that neither tells the
    route nor hands it to a door consumes it (or records it stale, which consumes it)."""
    cases = [
        arrived(),
        arrived(claimed=False),
        arrived(created_at=STALE),
        arrived(team=True),
        arrived(command=RESTART),
    ]
    for message in cases:
        effects = admission(message)
        taken = [e for e in effects if isinstance(e, Tell | Consume | RecordStale | Fetch)]
        assert taken or effects == [Ignore("already claimed: a redelivery")], message
    for effects in (fetched("x", None), fetched("x", "no")):
        assert any(isinstance(e, Tell | Consume) for e in effects)
