"""Inbound envelopes as decisions, pure: what an envelope is, and what is done with it, in order.

The order is the Feishu transport's (docs/architecture/chat-transports.md §10), and nothing here
does I/O, so each step is tested with tables:

1. ``parse_envelope`` turns an acknowledged ``events_api`` envelope into an ``InboundMessage``,
   or a ``Malformed`` / ``Unsupported`` that is logged and dropped (the socket keeps working).
   Its ``files`` (``_files.parse_files``) come along: a message with files has the subtype
   ``file_share``, a new message like one without.
2. ``screen`` drops what no person wrote to the bot (bot messages, the bot's own posts, the
   ``message_changed`` / ``message_deleted`` / ``bot_message`` subtypes), then applies the owner
   filter, then the mention filter (in a channel only messages with ``<@BOTID>``, unless
   ``respondToAllChannelMessages``; a message that mentions someone else and not the bot is
   ignored; a DM is always read), before anything is written.
3. The shell claims the event id and the message (``channel`` + ``ts``) durably: a redelivery
   (``retry_attempt`` > 0) and the ``message`` + ``app_mention`` pair of one channel message
   run one turn.
4. ``freshness`` is the stale guard: written before this host started and more than
   ``STALE_AFTER`` ago, the message is recorded and not run.
5. The shell awaits the ``eyes`` reaction, then the route gets the text, the bot's mention
   removed, and ``!new`` ... as ``/new`` (``bang``: Slack keeps a leading ``/`` for its own
   slash commands, so the engine's commands are also typed with ``!``).

Route keys: ``slack:<channel>`` for a DM and a channel's timeline, ``slack:<channel>:<thread_ts>``
for a thread; answers go to the thread of the message that started the turn (its
``thread_ts``, or its own ``ts`` for a top-level message).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from robota.core.frontend import (
    GROUP_COMMANDS,
    STALE_AFTER,
    Heard,
    Ignore,
    ScreenRules,
    freshness,
    owner_filter,
)
from robota.core.frontend import screen as screen_heard

from ._files import SlackFile, parse_files

__all__ = [
    "MAX_TEXT",
    "NO_OWNER",
    "STALE_AFTER",
    "Admit",
    "ButtonClick",
    "Ignore",
    "InboundMessage",
    "Malformed",
    "Screen",
    "Unsupported",
    "allowed",
    "GroupCommand",
    "Restart",
    "bang",
    "group_command",
    "restart_command",
    "chat_route",
    "freshness",
    "parse_envelope",
    "route_chat",
    "screen",
]

MAX_TEXT = 100_000
"""Characters of text one message may bring; beyond it the message is dropped and logged."""

_IGNORED_SUBTYPES = frozenset(
    {"bot_message", "message_changed", "message_deleted", "message_replied"}
)
FILE_SHARE = "file_share"
"""The subtype of a message a person shared files with: a new message like any other."""
_MENTION = re.compile(r"<@([A-Z0-9]+)(?:\|[^>]*)?>")


@dataclass(frozen=True, slots=True)
class InboundMessage:
    event_id: str
    kind: Literal["message", "app_mention"]
    channel: str
    channel_type: str
    """``im`` (a DM), ``channel``, ``group``, ``mpim``; ``""`` for ``app_mention`` (Slack sends
    none: it is always a channel message)."""
    user: str
    text: str
    ts: str
    thread_ts: str | None
    bot_id: str | None = None
    subtype: str | None = None
    retry_attempt: int = 0
    files: tuple[SlackFile, ...] = ()
    """What the person shared with the message (``_files``)."""

    @property
    def is_dm(self) -> bool:
        return self.channel_type == "im"

    @property
    def route_key(self) -> str:
        return chat_route(self.channel, self.thread_ts)

    @property
    def reply_thread(self) -> str:
        """The thread the turn's messages go to."""
        return self.thread_ts or self.ts

    @property
    def created_at(self) -> float:
        return float(self.ts)


@dataclass(frozen=True, slots=True)
class Malformed:
    reason: str


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A well-formed envelope robota does not act on (another event type, a slash command)."""

    reason: str


@dataclass(frozen=True, slots=True)
class ButtonClick:
    """A ``block_actions`` payload: someone pressed a button of one of the bot's messages."""

    user: str
    channel: str
    message_ts: str
    token: str | None
    """The button's opaque token (its ``value``); ``None``: not one of robota's buttons."""


Parsed = InboundMessage | ButtonClick | Malformed | Unsupported


def chat_route(channel: str, thread_ts: str | None = None) -> str:
    return f"slack:{channel}:{thread_ts}" if thread_ts else f"slack:{channel}"


_ROUTE = re.compile(r"^slack:([A-Z0-9]+)(?::([0-9]+\.[0-9]+))?$")


def route_chat(route_key: str) -> tuple[str, str | None] | None:
    """``(channel, thread_ts)`` of a route key of this transport, else ``None``."""
    match = _ROUTE.match(route_key)
    return None if match is None else (match[1], match[2])


# -- 1. parsing ------------------------------------------------------------------------------


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


_TS = re.compile(r"^[0-9]{1,12}\.[0-9]{1,8}$")


def parse_envelope(
    kind: str, payload: Mapping[str, Any] | None, *, retry_attempt: int = 0
) -> Parsed:
    """The message in an envelope of type ``kind`` (its ``payload``), or why it is dropped."""
    if kind == "interactive":
        return _click(payload)
    if kind != "events_api":
        return Unsupported(f"envelope type {kind[:40]!r} is not handled")
    if not isinstance(payload, Mapping):
        return Malformed("the envelope has no payload object")
    if payload.get("type") != "event_callback":
        return Unsupported(f"payload type {str(payload.get('type'))[:40]!r} is not handled")
    event_id = _text(payload.get("event_id"))
    event = payload.get("event")
    if event_id is None or not isinstance(event, Mapping):
        return Malformed("the event_callback has no event_id or no event object")
    event_type = event.get("type")
    if event_type not in ("message", "app_mention"):
        return Unsupported(f"event type {str(event_type)[:40]!r} is not handled")
    channel = _text(event.get("channel"))
    ts = _text(event.get("ts"))
    if channel is None or ts is None or not _TS.match(ts):
        return Malformed("the message event lacks its channel or a valid ts")
    text = event.get("text")
    if text is not None and not isinstance(text, str):
        return Malformed("the message's text is not a string")
    if text is not None and len(text) > MAX_TEXT:
        return Malformed(f"the text has {len(text)} characters, more than {MAX_TEXT}")
    thread_ts = _text(event.get("thread_ts"))
    if thread_ts is not None and not _TS.match(thread_ts):
        return Malformed("the message's thread_ts is not a Slack ts")
    files = parse_files(event.get("files"))
    if isinstance(files, str):
        return Malformed(files)
    return InboundMessage(
        event_id=event_id,
        kind=event_type,
        channel=channel,
        channel_type=str(event.get("channel_type") or ""),
        user=str(event.get("user") or ""),
        text=text or "",
        ts=ts,
        thread_ts=thread_ts,
        bot_id=_text(event.get("bot_id")),
        subtype=_text(event.get("subtype")),
        retry_attempt=retry_attempt,
        files=files,
    )


def _click(payload: Mapping[str, Any] | None) -> Parsed:
    if not isinstance(payload, Mapping):
        return Malformed("the envelope has no payload object")
    if payload.get("type") != "block_actions":
        return Unsupported(f"interactive type {str(payload.get('type'))[:40]!r} is not handled")
    user, container = payload.get("user"), payload.get("container")
    user_id = _text(user.get("id")) if isinstance(user, Mapping) else None
    if user_id is None or not isinstance(container, Mapping):
        return Malformed("the block_actions payload lacks its user or container")
    channel = _text(container.get("channel_id"))
    ts = _text(container.get("message_ts"))
    if channel is None or ts is None:
        return Malformed("the block_actions container lacks channel_id or message_ts")
    actions = payload.get("actions")
    action = actions[0] if isinstance(actions, list) and actions else None
    token = _text(action.get("value")) if isinstance(action, Mapping) else None
    return ButtonClick(user_id, channel, ts, token)


# -- 2. the owner and mention filters ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Screen:
    """What the filters know: the settings, and the bot's user id (``auth.test``)."""

    owner: str | None
    owner_only: bool = True
    bot_user_id: str | None = None
    all_channel_messages: bool = False


@dataclass(frozen=True, slots=True)
class Admit:
    message: InboundMessage
    text: str
    """The text for the route: the bot's mention removed."""


NO_OWNER = (
    "no owner is configured, so every message is ignored: set transports.slack.userId "
    "(SLACK_USER_ID in the profile's .env) to your Slack user id, or respondToOwnerOnly: false"
)


def allowed(user: str, screen_: Screen) -> Ignore | None:
    """The owner filter, for a sender and a button's clicker alike."""
    return owner_filter(user, screen_.owner, owner_only=screen_.owner_only, no_owner=NO_OWNER)


def screen(message: InboundMessage, screen_: Screen) -> Admit | Ignore:
    """Not a person's message -> the owner filter -> the mention filter (core's ``screen``)."""
    bot = screen_.bot_user_id
    mentioned = _MENTION.findall(message.text)
    ignored = screen_heard(
        Heard(
            message.user,
            not_a_person=_not_a_person(message, bot),
            group=not message.is_dm,
            mentions_bot=bot is not None and bot in mentioned,
            mentions_other=any(user != bot for user in mentioned),
        ),
        ScreenRules(
            screen_.owner,
            owner_only=screen_.owner_only,
            no_owner=NO_OWNER,
            mention_only=not screen_.all_channel_messages,
            where="in channels",
        ),
    )
    if ignored is not None:
        return ignored
    if bot is None:
        return Admit(message, message.text.strip())
    text = _MENTION.sub(lambda m: "" if m[1] == bot else m[0], message.text)
    return Admit(message, re.sub(r"[ \t]{2,}", " ", text).strip())


def _not_a_person(message: InboundMessage, bot: str | None) -> str | None:
    if message.subtype in _IGNORED_SUBTYPES:
        return f"a {message.subtype} event, not a new message"
    if message.subtype is not None and message.subtype != FILE_SHARE:
        return f"message subtype {message.subtype[:40]!r} is not handled"
    if message.bot_id is not None or (bot is not None and message.user == bot):
        return "sent by a bot, not a person"
    if not message.user:
        return "the message has no user"
    return None


def bang(text: str, commands: Collection[str]) -> str:
    """``!name args`` as ``/name args`` when ``name`` is one of ``commands`` exactly (so
    ``!important`` and ``!!`` stay text); any other text as it is."""
    if not text.startswith("!"):
        return text
    word, _, _ = text[1:].partition(" ")
    return "/" + text[1:] if word.lower() in commands else text


# -- what the transport answers itself ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Restart:
    """The owner's ``/restart`` (``--force``: the immediate one); ``refusal``: a usage error."""

    force: bool = False
    refusal: str | None = None


def restart_command(text: str) -> Restart | None:
    """The transport's ``/restart`` in ``text`` (after ``bang``), or ``None``: the route's."""
    words = text.split()
    if not words or words[0].lower() != "/restart":
        return None
    argument = " ".join(words[1:]) or None
    if argument not in (None, "--force"):
        return Restart(refusal="usage: /restart or /restart --force (or !restart)")
    return Restart(force=argument == "--force")


@dataclass(frozen=True, slots=True)
class GroupCommand:
    """``/newgroup [title]`` or ``/forkgroup [title]`` (``fork``): a private channel for a
    new task set up as the conversation's, or for a fork of it."""

    fork: bool
    title: str | None = None


def group_command(text: str) -> GroupCommand | None:
    """The transport's ``/newgroup`` or ``/forkgroup`` in ``text`` (after ``bang``), or
    ``None``: the route's."""
    words = text.split()
    fork = GROUP_COMMANDS.get(words[0].lower().removeprefix("/")) if words else None
    if fork is None or not words[0].startswith("/"):
        return None
    return GroupCommand(fork, " ".join(words[1:]) or None)
