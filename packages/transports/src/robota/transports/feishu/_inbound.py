"""Inbound events as decisions, pure: what an event is, and what is done with it, in order.

The order is the reference's inbound pipeline (docs/architecture/invariants.md, invariant 11 and the
transport's docstring), and nothing here does I/O, so each step is tested with tables:

1. ``parse_event`` turns the ACKed payload into an ``InboundMessage``, a ``CardClick``, or a
   ``Malformed`` / ``Unsupported`` that is logged and dropped (the connection keeps working).
2. ``screen`` is the owner filter, then the mention filter (mention-only mode or a ``/mute``d
   group; a message that mentions someone else but not the bot), before anything is written:
   a non-owner's message causes no claim, no reaction, no turn.
3. The shell claims the event id and the message id durably (``ClaimInboundEvent``).
4. ``freshness`` is the stale guard: created before this host started and more than
   ``STALE_AFTER`` old, the message is recorded and not run (no flood of old commands after an
   outage).
5. The shell awaits the ``OnIt`` reaction, then ``command`` says whether the transport answers
   the text itself (``/mute``, ``/restart``) or the route gets it, verbatim.

Route keys follow the reference's context keys: ``feishu:chat_id:<oc_...>`` for a private chat
and a group timeline, ``feishu:chat_id:<oc_...>:thread_id:<omt_...>`` for a topic, and
``feishu:chat_id:<oc_...>:request:<om_...>`` for a request thread of a team's group
(``team_route``; ``_team`` says why).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
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

__all__ = [
    "MAX_TEXT",
    "STALE_AFTER",
    "Admit",
    "CardClick",
    "ChatCommand",
    "Ignore",
    "InboundMessage",
    "Malformed",
    "Mention",
    "NO_OWNER",
    "Resource",
    "Screen",
    "Unsupported",
    "chat_route",
    "command",
    "allowed",
    "freshness",
    "is_team_route",
    "parse_event",
    "route_chat",
    "screen",
    "team_chat",
    "team_route",
]

MAX_TEXT = 100_000
"""Characters of text one message may bring (Feishu's own limit is about 150 KB of JSON):
beyond it the message is dropped and logged, never handed to an agent."""

ChatType = Literal["p2p", "group"]


@dataclass(frozen=True, slots=True)
class Mention:
    key: str
    """The placeholder in the text (``@_user_1``)."""
    open_id: str
    name: str


@dataclass(frozen=True, slots=True)
class Resource:
    """An image or a file a message carries, to download by its key (``_media``)."""

    kind: Literal["image", "file"]
    key: str
    """The ``image_key`` / ``file_key``, which belongs to the message that carries it."""
    name: str | None = None
    """A file's name as sent (``file_name``); images have none."""


@dataclass(frozen=True, slots=True)
class InboundMessage:
    event_id: str
    message_id: str
    chat_id: str
    chat_type: ChatType
    thread_id: str | None
    sender_open_id: str
    sender_type: str
    message_type: str
    text: str
    """The text as sent, mention placeholders (``@_user_1``) included."""
    mentions: tuple[Mention, ...]
    created_at: float
    """Epoch seconds (the platform's ``create_time``, milliseconds as a string)."""
    resources: tuple[Resource, ...] = ()
    """The images and files of an ``image``, ``file`` or ``post`` message."""
    root_id: str | None = None
    """The first message of the thread this one replies in (``None``: not in a thread)."""

    @property
    def route_key(self) -> str:
        return chat_route(self.chat_id, self.thread_id)


@dataclass(frozen=True, slots=True)
class CardClick:
    """A ``card.action.trigger``: someone pressed a button of one of the bot's cards."""

    event_id: str
    operator_open_id: str
    message_id: str
    chat_id: str
    token: str | None
    """The button's opaque token (``value.token``); ``None``: not one of robota's buttons."""


@dataclass(frozen=True, slots=True)
class Malformed:
    reason: str


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A well-formed event robota does not act on (another event type, a sticker...)."""

    reason: str


Parsed = InboundMessage | CardClick | Malformed | Unsupported


def chat_route(chat_id: str, thread_id: str | None = None) -> str:
    key = f"feishu:chat_id:{chat_id}"
    return f"{key}:thread_id:{thread_id}" if thread_id else key


_ROUTE = re.compile(r"^feishu:chat_id:([^:]+)(?::thread_id:([^:]+)|:request:[^:]+)?$")
"""A private chat or a group, a topic (``thread_id``), or a team's request thread
(``request``: ``team_route``, whose replies name their message)."""


def route_chat(route_key: str) -> tuple[str, str | None] | None:
    """``(chat_id, thread_id)`` of a route key of this transport, else ``None``."""
    match = _ROUTE.match(route_key)
    return None if match is None else (match[1], match[2])


_TEAM_ROUTE = re.compile(r"^feishu:chat_id:([^:]+):request:([^:]+)$")


def team_route(chat_id: str, root_message_id: str) -> str:
    """The route of a request in a team's group: its root message's thread (``_team``)."""
    return f"feishu:chat_id:{chat_id}:request:{root_message_id}"


def is_team_route(route_key: str) -> bool:
    return _TEAM_ROUTE.match(route_key) is not None


def team_chat(route_key: str) -> str | None:
    """The team group's chat id of a request's route, else ``None``."""
    match = _TEAM_ROUTE.match(route_key)
    return None if match is None else match[1]


# -- 1. parsing ------------------------------------------------------------------------------


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_event(payload: bytes) -> Parsed:
    """The event in ``payload`` (a schema 2.0 envelope), or why it is dropped."""
    try:
        envelope = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return Malformed("the payload is not JSON")
    if not isinstance(envelope, Mapping):
        return Malformed("the payload is not a JSON object")
    header = envelope.get("header")
    event = envelope.get("event")
    if not isinstance(header, Mapping) or not isinstance(event, Mapping):
        return Malformed("the envelope has no header or no event object")
    event_id = _text(header.get("event_id"))
    event_type = header.get("event_type")
    if event_id is None:
        return Malformed("the header has no event_id")
    if event_type == "im.message.receive_v1":
        return _message(event_id, event)
    if event_type == "card.action.trigger":
        return _click(event_id, event)
    return Unsupported(f"event type {str(event_type)[:80]!r} is not handled")


def _message(event_id: str, event: Mapping[str, Any]) -> Parsed:
    sender = event.get("sender")
    message = event.get("message")
    if not isinstance(sender, Mapping) or not isinstance(message, Mapping):
        return Malformed("the message event has no sender or no message")
    sender_ids = sender.get("sender_id")
    open_id = _text(sender_ids.get("open_id")) if isinstance(sender_ids, Mapping) else None
    message_id = _text(message.get("message_id"))
    chat_id = _text(message.get("chat_id"))
    chat_type = message.get("chat_type")
    if open_id is None or message_id is None or chat_id is None:
        return Malformed("the message event lacks the sender's open_id, message_id or chat_id")
    if chat_type not in ("p2p", "group"):
        return Unsupported(f"chat type {str(chat_type)[:40]!r} is not handled")
    mentions: list[Mention] = []
    raw_mentions = message.get("mentions")
    for mention in raw_mentions if isinstance(raw_mentions, list) else ():
        if not isinstance(mention, Mapping):
            continue
        key, ids = _text(mention.get("key")), mention.get("id")
        mentioned = _text(ids.get("open_id")) if isinstance(ids, Mapping) else None
        if key is not None and mentioned is not None:
            mentions.append(Mention(key, mentioned, str(mention.get("name") or "")))
    message_type = str(message.get("message_type") or "")
    content = _content(message_type, message.get("content"))
    if isinstance(content, Malformed | Unsupported):
        return content
    text, resources = content
    if len(text) > MAX_TEXT:
        return Malformed(f"the text has {len(text)} characters, more than {MAX_TEXT}")
    try:
        created = int(str(message.get("create_time") or "")) / 1000
    except ValueError:
        return Malformed("the message's create_time is not epoch milliseconds")
    return InboundMessage(
        event_id=event_id,
        message_id=message_id,
        chat_id=chat_id,
        chat_type=chat_type,
        thread_id=_text(message.get("thread_id")),
        sender_open_id=open_id,
        sender_type=str(sender.get("sender_type") or ""),
        message_type=message_type,
        text=text,
        mentions=tuple(mentions),
        created_at=created,
        resources=resources,
        root_id=_text(message.get("root_id")),
    )


def _content(
    message_type: str, content: object
) -> tuple[str, tuple[Resource, ...]] | Malformed | Unsupported:
    """A message's text and the images and files it carries."""
    if not isinstance(content, str):
        return Malformed("the message has no content string")
    try:
        body = json.loads(content)
    except ValueError:
        return Malformed("the message's content is not JSON")
    if not isinstance(body, Mapping):
        return Malformed("the message's content is not a JSON object")
    if message_type == "text":
        text = body.get("text")
        return (text, ()) if isinstance(text, str) else Malformed("a text message without text")
    if message_type == "post":
        return _post_text(body), _post_images(body)
    if message_type == "image":
        key = _text(body.get("image_key"))
        return ("", (Resource("image", key),)) if key else Malformed("an image without image_key")
    if message_type == "file":
        key, name = _text(body.get("file_key")), _text(body.get("file_name"))
        return ("", (Resource("file", key, name),)) if key else Malformed("a file without file_key")
    return Unsupported(f"message type {message_type[:40]!r} is not handled yet")


def _post_text(body: Mapping[str, Any]) -> str:
    """A rich-text message's words: its title, then each paragraph's text and links."""
    # The event carries the post without the locale level; a sent post has it.
    post = body if "content" in body else next(iter(body.values()), {})
    lines: list[str] = []
    if isinstance(post, Mapping):
        if isinstance(post.get("title"), str) and post["title"]:
            lines.append(post["title"])
        for paragraph in post.get("content") or ():
            if not isinstance(paragraph, list):
                continue
            parts = []
            for node in paragraph:
                if isinstance(node, Mapping) and isinstance(node.get("text"), str):
                    parts.append(node["text"])
                elif isinstance(node, Mapping) and node.get("tag") == "at":
                    parts.append(f"@{node.get('user_name') or node.get('user_id') or ''}")
            lines.append("".join(parts))
    return "\n".join(lines)


def _post_images(body: Mapping[str, Any]) -> tuple[Resource, ...]:
    post = body if "content" in body else next(iter(body.values()), {})
    found: list[Resource] = []
    paragraphs = post.get("content") if isinstance(post, Mapping) else None
    for paragraph in paragraphs if isinstance(paragraphs, list) else ():
        for node in paragraph if isinstance(paragraph, list) else ():
            if isinstance(node, Mapping) and node.get("tag") == "img":
                key = _text(node.get("image_key"))
                if key is not None:
                    found.append(Resource("image", key))
    return tuple(found)


def _click(event_id: str, event: Mapping[str, Any]) -> Parsed:
    operator = event.get("operator")
    context = event.get("context")
    action = event.get("action")
    open_id = _text(operator.get("open_id")) if isinstance(operator, Mapping) else None
    if open_id is None or not isinstance(context, Mapping):
        return Malformed("the card action lacks its operator or context")
    message_id = _text(context.get("open_message_id"))
    chat_id = _text(context.get("open_chat_id"))
    if message_id is None or chat_id is None:
        return Malformed("the card action lacks open_message_id or open_chat_id")
    value = action.get("value") if isinstance(action, Mapping) else None
    token = _text(value.get("token")) if isinstance(value, Mapping) else None
    return CardClick(event_id, open_id, message_id, chat_id, token)


# -- 2. the owner and mention filters ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Screen:
    """What the filters know: the settings, and the bot's open_id read at start."""

    owner: str | None
    owner_only: bool = True
    bot_open_id: str | None = None
    all_group_messages: bool = True


@dataclass(frozen=True, slots=True)
class Admit:
    message: InboundMessage
    text: str
    """The text for the route: verbatim in a private chat; the bot's mention removed."""


NO_OWNER = (
    "no owner is configured, so every message is ignored: set transports.feishu.userOpenId "
    "(FEISHU_USER_OPEN_ID in the profile's .env) to your open_id, or respondToOwnerOnly: false"
)


def allowed(open_id: str, screen_: Screen) -> Ignore | None:
    """The owner filter, for a sender and a card's operator alike."""
    return owner_filter(open_id, screen_.owner, owner_only=screen_.owner_only, no_owner=NO_OWNER)


def screen(message: InboundMessage, screen_: Screen, *, muted: bool = False) -> Admit | Ignore:
    """The owner filter, then the mention filter (core's ``screen``); ``muted``: the group is
    mention-only."""
    mentions = message.mentions
    bot = screen_.bot_open_id
    person = message.sender_type in ("user", "")
    ignored = screen_heard(
        Heard(
            message.sender_open_id,
            not_a_person=None if person else f"sent by a {message.sender_type}, not a person",
            group=message.chat_type == "group",
            mentions_bot=any(m.open_id == bot for m in mentions),
            mentions_other=any(m.open_id != bot for m in mentions),
        ),
        ScreenRules(
            screen_.owner,
            owner_only=screen_.owner_only,
            no_owner=NO_OWNER,
            mention_only=muted or not screen_.all_group_messages,
            where="in this group",
        ),
    )
    if ignored is not None:
        return ignored
    if not mentions:
        return Admit(message, message.text)  # verbatim
    text = message.text
    for mention in mentions:
        text = text.replace(mention.key, "" if mention.open_id == bot else f"@{mention.name}")
    return Admit(message, re.sub(r"[ \t]{2,}", " ", text).strip())


# -- 5. what the transport answers itself ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChatCommand:
    """A command the transport handles: ``mute`` (``on``: mention-only, ``off``, or ``None``:
    toggle), ``restart`` (``--force``: the immediate one), ``newgroup`` / ``forkgroup``
    (``argument``: the group's title, if any); ``refusal`` when it cannot be done here."""

    name: Literal["mute", "restart", "newgroup", "forkgroup"]
    argument: str | None = None
    refusal: str | None = None


def command(admit: Admit) -> ChatCommand | None:
    """The transport's own command in ``admit``'s text, or ``None`` (the route's text)."""
    words = admit.text.split()
    if not words:
        return None
    head = words[0].lower()
    if head == "/mute":
        argument = words[1].lower() if len(words) > 1 else None
        if admit.message.chat_type != "group":
            return ChatCommand(
                "mute", argument, "/mute is for group chats; a private chat is always read"
            )
        if argument not in (None, "on", "off") or len(words) > 2:
            return ChatCommand("mute", argument, "usage: /mute, /mute on or /mute off")
        return ChatCommand("mute", argument)
    if head == "/restart":
        argument = " ".join(words[1:]) or None
        if argument not in (None, "--force"):
            return ChatCommand("restart", argument, "usage: /restart or /restart --force")
        return ChatCommand("restart", argument)
    group = _GROUP_COMMANDS.get(head)
    if group is not None:
        return ChatCommand(group, " ".join(words[1:]) or None)
    return None


_GROUP_COMMANDS: Mapping[str, Literal["newgroup", "forkgroup"]] = {
    f"/{name}": "forkgroup" if fork else "newgroup" for name, fork in GROUP_COMMANDS.items()
}
"""The group commands and their initialisms (``robota.core.frontend.GROUP_COMMANDS``), as the
command each is."""
