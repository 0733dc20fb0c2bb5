"""What the bot says: messages, cards and reactions over ``RestClient``, and the card sink.

``Messenger`` is the few REST calls the transport makes (reply, send, PATCH, reactions), each
with Feishu's ``uuid`` idempotency key where the platform takes one: the same key sends at
most one message within an hour, so a send retried after a timeout or a crash cannot post
twice. ``FeishuSink`` is ``robota.core.cards.CardSink`` on top of it: the progress card is a
reply to the person's message (the turn's anchor), updated by PATCH; the final answer's chunks
are replies too (so a topic's answer stays in its topic), or messages to the chat when the turn
has no anchor (a recovered turn). Errors become the card renderer's two kinds: worth retrying
(rate limits, 230020, 5xx, the network) or not.

``FeishuCards`` is the platform strategy: the Card JSON 2.0 renderer of ``robota.core.cards``
for the progress card, with a Stop button while the turn runs, and the final answer as ``post``
messages of one ``md`` node each, split on Markdown boundaries within the request limit.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from robota.core.cards import (
    PermanentSendError,
    SendError,
    StopButtonCards,
    TransientSendError,
)
from robota.core.presentation import split_markdown

from ._card import Layout
from ._errors import ApiError
from ._inbound import is_team_route, route_chat
from ._platform import FeishuPlatform
from ._rest import RestClient

__all__ = [
    "FINAL_BYTES",
    "RESET",
    "STOP",
    "FeishuCards",
    "FeishuSink",
    "Messenger",
    "ResetButton",
    "idempotency_key",
]

log = logging.getLogger("robota.transports.feishu")

FINAL_BYTES = 12 * 1024
"""UTF-8 bytes of Markdown per final message: the post's JSON, escaped twice (content is a
JSON string inside the JSON body), stays well within the 30 KB request limit."""
_TRANSIENT_CODES = frozenset({99991400, 230020})


def idempotency_key(key: str) -> str:
    """Feishu's ``uuid`` for a stable key of ours (the platform takes at most 50 characters)."""
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _send_error(error: ApiError, sent: Sequence[str] = ()) -> SendError:
    if error.status in (0, 429) or error.status >= 500 or error.code in _TRANSIENT_CODES:
        return TransientSendError(str(error), sent=sent)
    return PermanentSendError(str(error), sent=sent)


def _message_id(answer: Mapping[str, Any], call: str) -> str:
    data = answer.get("data")
    message_id = data.get("message_id") if isinstance(data, Mapping) else None
    if not isinstance(message_id, str) or not message_id:
        raise ApiError(call, status=200, code=0, msg="no message_id in the answer")
    return message_id


class Messenger:
    """The REST calls of the transport, on one ``RestClient``."""

    def __init__(self, rest: RestClient) -> None:
        self.rest = rest

    async def reply(
        self,
        message_id: str,
        msg_type: str,
        content: object,
        *,
        key: str | None = None,
        in_thread: bool = False,
    ) -> str:
        """``in_thread``: the reply goes into (or opens) the message's thread."""
        body: dict[str, object] = {"msg_type": msg_type, "content": _content(content)}
        if in_thread:
            body["reply_in_thread"] = True
        if key is not None:
            body["uuid"] = idempotency_key(key)
        path = f"/open-apis/im/v1/messages/{message_id}/reply"
        return _message_id(await self.rest.call("POST", path, json_body=body), f"POST {path}")

    async def send(
        self,
        receive_id: str,
        msg_type: str,
        content: object,
        *,
        id_type: str = "chat_id",
        key: str | None = None,
    ) -> str:
        body: dict[str, object] = {
            "receive_id": receive_id,
            "msg_type": msg_type,
            "content": _content(content),
        }
        if key is not None:
            body["uuid"] = idempotency_key(key)
        path = "/open-apis/im/v1/messages"
        answer = await self.rest.call(
            "POST", path, json_body=body, params={"receive_id_type": id_type}
        )
        return _message_id(answer, f"POST {path}")

    async def to_route(
        self,
        route_key: str,
        anchor: str | None,
        msg_type: str,
        content: object,
        *,
        key: str | None = None,
    ) -> str:
        """A reply to ``anchor`` when there is one (in its thread on a team's request route),
        else a message to the route's chat."""
        if anchor is not None:
            in_thread = is_team_route(route_key)
            return await self.reply(anchor, msg_type, content, key=key, in_thread=in_thread)
        chat = route_chat(route_key)
        if chat is None:
            raise ApiError("send", status=0, code=None, msg=f"not a Feishu route: {route_key}")
        return await self.send(chat[0], msg_type, content, key=key)

    async def patch_card(self, message_id: str, card: object) -> None:
        await self.rest.patch_message(message_id, _content(card))

    async def react(self, message_id: str, emoji: str) -> str | None:
        """Add the bot's ``emoji`` reaction; the platform's reaction id."""
        path = f"/open-apis/im/v1/messages/{message_id}/reactions"
        answer = await self.rest.call(
            "POST", path, json_body={"reaction_type": {"emoji_type": emoji}}, retries=1
        )
        data = answer.get("data")
        reaction_id = data.get("reaction_id") if isinstance(data, Mapping) else None
        return reaction_id if isinstance(reaction_id, str) else None

    async def own_reactions(self, message_id: str) -> list[tuple[str, str]]:
        """The bot's reactions on ``message_id`` now: (reaction id, emoji), first page."""
        path = f"/open-apis/im/v1/messages/{message_id}/reactions"
        answer = await self.rest.call("GET", path, params={"page_size": "50"}, retries=1)
        data = answer.get("data")
        items = data.get("items") if isinstance(data, Mapping) else None
        found = []
        for item in items if isinstance(items, list) else ():
            if not isinstance(item, Mapping):
                continue
            operator = item.get("operator")
            kind = item.get("reaction_type")
            reaction_id = item.get("reaction_id")
            emoji = kind.get("emoji_type") if isinstance(kind, Mapping) else None
            by_app = isinstance(operator, Mapping) and operator.get("operator_type") == "app"
            if by_app and isinstance(reaction_id, str) and isinstance(emoji, str):
                found.append((reaction_id, emoji))
        return found

    async def unreact(self, message_id: str, reaction_id: str) -> None:
        path = f"/open-apis/im/v1/messages/{message_id}/reactions/{reaction_id}"
        await self.rest.call("DELETE", path, retries=1)


def _button(element_id: str, label: str, kind: str, token: str) -> dict[str, Any]:
    return {
        "tag": "button",
        "element_id": element_id,
        "text": {"tag": "plain_text", "content": label},
        "type": kind,
        "behaviors": [{"type": "callback", "value": {"token": token}}],
    }


def _elements(card: Any, added: list[Any]) -> Any:
    body = card.get("body", {})
    return {**card, "body": {**body, "elements": [*body.get("elements", ()), *added]}}


def _content(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


class FeishuSink:
    """``robota.core.cards.CardSink`` for Feishu. ``anchors[turn_id]`` is the message a turn's
    card and answer reply to (the person's message); ``CardDelivery``'s keys are
    ``<turn_id>:card`` and ``<turn_id>:final:<n>``, which is how a call finds its turn."""

    def __init__(self, messenger: Messenger) -> None:
        self.messenger = messenger
        self.anchors: dict[str, str] = {}

    async def send_card(self, route: str, payload: Any, *, key: str) -> str:
        anchor = self.anchors.get(key.removesuffix(":card"))
        try:
            return await self.messenger.to_route(route, anchor, "interactive", payload, key=key)
        except ApiError as error:
            raise _send_error(error) from error

    async def update_card(self, message_id: str, payload: Any) -> None:
        try:
            await self.messenger.patch_card(message_id, payload)
        except ApiError as error:
            raise _send_error(error) from error

    async def send_final(
        self, route: str, chunks: Sequence[Any], *, keys: Sequence[str]
    ) -> list[str]:
        sent: list[str] = []
        for chunk, key in zip(chunks, keys, strict=True):
            anchor = self.anchors.get(key.partition(":final:")[0])
            try:
                sent.append(await self.messenger.to_route(route, anchor, "post", chunk, key=key))
            except ApiError as error:
                raise _send_error(error, sent) from error
        return sent


STOP = "stop"
"""The ``approval_id`` of a Stop button's binding (``CardAction``): not an approval, the
route's ``Interrupt``."""
RESET = "reset"
"""The ``approval_id`` of a Reset button's binding (its ``decision`` is the attempt id): the
route's ``/turns reset``."""


@dataclass(frozen=True, slots=True)
class ResetButton:
    """A completed card's Reset action and the compact warning below it."""

    token: str
    label: str
    warning: str


class FeishuCards(StopButtonCards):
    """The platform strategy (``robota.core.cards.CardPlatform``); see the module docstring.

    ``stop_token`` is the opaque token of the turn's Stop button (bound by the transport once
    the card exists); ``None``: no Stop button. ``reset``: the Reset action a completed card
    shows (where the agent forks through a turn)."""

    def __init__(
        self,
        *,
        agent: str,
        layout: Layout = "grouped",
        stop_token: str | None = None,
        stop_label: str = "Stop",
        reset: ResetButton | None = None,
    ) -> None:
        stop = None
        if stop_token is not None:
            stop = _button("turn_stop", stop_label, "danger", stop_token)
        completed: list[dict[str, Any]] = []
        if reset is not None:
            completed.append(_button("turn_reset", reset.label, "default", reset.token))
            completed.append(
                {"tag": "markdown", "element_id": "reset_note", "content": reset.warning}
            )
        super().__init__(
            FeishuPlatform(agent=agent, layout=layout),
            append=_elements,
            stop=stop,
            completed=completed,
        )

    def final_chunks(self, text: str) -> list[Any]:
        if not text.strip():
            return []
        return [
            {"zh_cn": {"content": [[{"tag": "md", "text": chunk}]]}}
            for chunk in split_markdown(text, FINAL_BYTES, unit="bytes", max_tables=3)
        ]
