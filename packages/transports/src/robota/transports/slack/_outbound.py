"""What the bot says on Slack: the card sink over ``WebApi``, and the platform strategy.

``SlackSink`` is ``robota.core.cards.CardSink`` for Slack: the progress message is a thread
reply (``chat.postMessage`` with ``thread_ts``) to the person's message, updated by
``chat.update`` (latest state wins under a rate limit, see ``WebApi.update_message``); the
final answer's chunks are thread replies too. Each post carries its key in Slack's message
metadata: Slack keeps no deduplication key, so a card or a final that may have gone already (a
crash between Slack keeping it and the ledger's record, or a post whose answer never came) is
looked up by it before it is posted again (``sent_card`` and ``sent_finals``, the card
renderer's ``CardLookup`` and ``FinalLookup``): the turn's thread (or the channel's latest
messages) read from the send's first claim on, less ``CLOCK_SKEW`` for the host's clock
against Slack's, at most ``LOOKUP_PAGES`` pages. A message id is ``<channel>:<ts>``
(Slack's ``ts`` names a message only within its channel). ``anchors[turn_id]`` is the thread a
turn answers in; a turn without one (a recovered turn) posts to its route's thread, or the
channel.

``SlackCards`` is the platform strategy: the Block Kit renderer of ``robota.core.cards``, one
block and a little text short of Slack's limits, with a Stop button while the turn runs.

Errors become the card renderer's two kinds: worth retrying (429, 5xx, the network) or not
(``invalid_blocks``, ``channel_not_found``, a refused token ...).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from robota.core.cards import (
    PermanentSendError,
    SendError,
    StopButtonCards,
    TransientSendError,
)

from ._card import SLACK_LIMITS
from ._errors import ApiError
from ._inbound import route_chat
from ._platform import SlackPlatform
from ._web import WebApi

__all__ = [
    "STOP",
    "SlackCards",
    "SlackSink",
    "message_id",
    "restart_blocks",
    "split_message_id",
]

STOP = "stop"
"""The ``approval_id`` of a Stop button's binding (``CardAction``): not an approval, the
route's ``Interrupt``."""
_LIMITS = dataclasses.replace(
    SLACK_LIMITS,
    blocks=SLACK_LIMITS.blocks - 1,
    block_text_total=SLACK_LIMITS.block_text_total - 100,
)
"""Room for the Stop button's block."""


FINAL_EVENT = "robota_final"
"""The ``event_type`` of a final chunk's message metadata (its ``event_payload``: the key)."""
CARD_EVENT = "robota_card"
"""The ``event_type`` of a progress card's message metadata (its ``event_payload``: the key)."""
CLOCK_SKEW = 60.0
"""Seconds a lookup reads before the claim's time: the host's clock may be ahead of Slack's
(a message's ``ts`` is Slack's time of receipt), and a post a little earlier costs nothing."""
LOOKUP_PAGES = 3
"""Pages (200 messages each) a lookup reads at most: a post made since its claim is among the
first messages from the claim's time on, unless the thread took hundreds since."""


def message_id(channel: str, ts: str) -> str:
    return f"{channel}:{ts}"


def split_message_id(value: str) -> tuple[str, str]:
    channel, _, ts = value.partition(":")
    return channel, ts


def _send_error(error: ApiError, sent: Sequence[str] = ()) -> SendError:
    if error.status in (0, 429) or error.status >= 500 or error.error.startswith("no answer"):
        return TransientSendError(str(error), sent=sent)
    return PermanentSendError(str(error), sent=sent)


def _key(message: Mapping[str, Any], event_type: str) -> str | None:
    """The key a post carries in its metadata under ``event_type`` (a final chunk's,
    ``SlackSink.send_final``; a card's, ``send_card``), if any."""
    metadata = message.get("metadata")
    if not isinstance(metadata, Mapping) or metadata.get("event_type") != event_type:
        return None
    payload = metadata.get("event_payload")
    key = payload.get("key") if isinstance(payload, Mapping) else None
    return key if isinstance(key, str) else None


def _payload(payload: Any) -> tuple[str, list[Mapping[str, Any]] | None]:
    if not isinstance(payload, Mapping):
        return str(payload), None
    text = payload.get("text")
    blocks = payload.get("blocks")
    return (
        text if isinstance(text, str) and text else " ",
        list(blocks) if isinstance(blocks, list) else None,
    )


class SlackSink:
    """See the module docstring."""

    def __init__(self, web: WebApi) -> None:
        self.web = web
        self.anchors: dict[str, str] = {}
        """Turn id -> the ``thread_ts`` its messages go to."""

    def _target(self, route: str, turn_id: str) -> tuple[str, str | None]:
        chat = route_chat(route)
        if chat is None:
            raise PermanentSendError(f"not a Slack route: {route}")
        channel, thread = chat
        return channel, self.anchors.get(turn_id, thread)

    async def _post(
        self, channel: str, thread: str | None, payload: Any, event_type: str, key: str
    ) -> str:
        """``payload`` posted once (a post with no answer is not made again here: the card
        renderer looks it up before its retry), carrying ``key`` in its metadata; its id."""
        text, blocks = _payload(payload)
        ts = await self.web.post_message(
            channel,
            text=text,
            blocks=blocks,
            thread_ts=thread,
            metadata={"event_type": event_type, "event_payload": {"key": key}},
            retries=0,
        )
        return message_id(channel, ts)

    async def send_card(self, route: str, payload: Any, *, key: str) -> str:
        """The card a thread reply carrying ``key`` in its metadata (``sent_card`` finds it by
        that)."""
        channel, thread = self._target(route, key.removesuffix(":card"))
        try:
            return await self._post(channel, thread, payload, CARD_EVENT, key)
        except ApiError as error:
            raise _send_error(error) from error

    async def sent_card(self, route: str, key: str, *, since: float | None = None) -> str | None:
        """``robota.core.cards.CardLookup``: the card posted under ``key`` in the turn's thread
        (or the channel's latest messages), read from ``since`` on."""
        channel, thread = self._target(route, key.removesuffix(":card"))
        found = await self._find(channel, thread, CARD_EVENT, {key}, since)
        return found.get(key)

    async def update_card(self, message_id: str, payload: Any) -> None:
        channel, ts = split_message_id(message_id)
        text, blocks = _payload(payload)
        try:
            await self.web.update_message(channel, ts, text=text, blocks=blocks)
        except ApiError as error:
            raise _send_error(error) from error

    async def send_final(
        self, route: str, chunks: Sequence[Any], *, keys: Sequence[str]
    ) -> list[str]:
        """Each chunk a thread reply carrying its key in Slack's message metadata
        (``sent_finals`` finds it by that); posted once: a post with no answer is not made
        again here, the card renderer asks ``sent_finals`` before its retry."""
        sent: list[str] = []
        for chunk, key in zip(chunks, keys, strict=True):
            channel, thread = self._target(route, key.partition(":final:")[0])
            try:
                sent.append(await self._post(channel, thread, chunk, FINAL_EVENT, key))
            except ApiError as error:
                raise _send_error(error, sent) from error
        return sent

    async def sent_finals(
        self, route: str, keys: Sequence[str], *, since: float | None = None
    ) -> Mapping[str, str]:
        """``robota.core.cards.FinalLookup``: the chunks among ``keys`` the turn's thread (or
        the channel's latest messages) holds, by their metadata's key, read from ``since``
        on."""
        if not keys:
            return {}
        channel, thread = self._target(route, keys[0].partition(":final:")[0])
        return await self._find(channel, thread, FINAL_EVENT, set(keys), since)

    async def _find(
        self,
        channel: str,
        thread: str | None,
        event_type: str,
        wanted: set[str],
        since: float | None,
    ) -> dict[str, str]:
        """The posts among ``wanted`` (keys under ``event_type``) in the thread (or channel)
        from ``since`` less the clock skew on: key -> message id."""
        oldest = None if since is None else since - CLOCK_SKEW
        try:
            messages = await self.web.messages(channel, thread, oldest=oldest, pages=LOOKUP_PAGES)
        except ApiError as error:
            raise _send_error(error) from error
        found: dict[str, str] = {}
        for message in messages:
            key = _key(message, event_type)
            if key in wanted and isinstance(message.get("ts"), str):
                found[key] = message_id(channel, message["ts"])
        return found


class SlackCards(StopButtonCards):
    """The platform strategy (``robota.core.cards.CardPlatform``); see the module docstring.

    ``stop_token`` is the opaque token of the turn's Stop button (bound by the transport once
    the message exists); ``None``: no Stop button."""

    def __init__(self, *, agent: str, stop_token: str | None = None, stop_label: str = "Stop"):
        stop = None
        if stop_token is not None:
            stop = {
                "type": "actions",
                "block_id": "turn_stop",
                "elements": [
                    {
                        "type": "button",
                        "action_id": "turn_stop",
                        "text": {"type": "plain_text", "text": stop_label},
                        "style": "danger",
                        "value": stop_token,
                    }
                ],
            }
        super().__init__(SlackPlatform(agent=agent, limits=_LIMITS), append=_blocks, stop=stop)


def _blocks(message: Any, added: list[Any]) -> Any:
    return {**message, "blocks": [*message.get("blocks", ()), *added]}


def restart_blocks(
    text: str, label: str, token: str | None, *, action_id: str = "restart_cancel"
) -> list[Mapping[str, Any]]:
    """A note (a restart's, a queued prompt's): its text, and a button carrying ``token`` when
    it is set.

    Each ``block_id`` is derived from its block's content: a note is updated in place (a
    restart's cancel button, then its settled text), and Slack clients may keep a block's old
    state for an unchanged ``block_id``."""
    blocks: list[Mapping[str, Any]] = [
        {
            "type": "section",
            "block_id": _content_id("note", text),
            "text": {"type": "mrkdwn", "text": text},
        }
    ]
    if token is not None:
        button = {
            "type": "button",
            "action_id": action_id,
            "text": {"type": "plain_text", "text": label},
            "value": token,
        }
        block_id = _content_id("note_action", action_id, label, token)
        blocks.append({"type": "actions", "block_id": block_id, "elements": [button]})
    return blocks


def _content_id(kind: str, *parts: str) -> str:
    """``kind`` and a digest of ``parts``: a new id whenever the content changes (well within
    Slack's 255 characters)."""
    digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]
    return f"{kind}_{digest}"
