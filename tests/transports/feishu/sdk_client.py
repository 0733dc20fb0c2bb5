"""The official SDK's long-connection client, run as a child process against the fake.

Prints one JSON line per event it handles. Credentials come from the environment
(``FAKE_FEISHU_APP_ID``, ``FAKE_FEISHU_APP_SECRET``), never from argv; the domain is argv[1].
"""

from __future__ import annotations

import json
import os
import sys

import lark_oapi as lark
from lark_oapi.event.callback.model.p2_card_action_trigger import (
    P2CardActionTrigger,
    P2CardActionTriggerResponse,
)


def on_message(data: lark.im.v1.P2ImMessageReceiveV1) -> None:
    message = data.event.message
    line = {"kind": "message", "message_id": message.message_id, "content": message.content}
    print(json.dumps(line), flush=True)


def on_card(data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
    print(json.dumps({"kind": "card", "value": data.event.action.value}), flush=True)
    return P2CardActionTriggerResponse({"toast": {"type": "info", "content": "stopping"}})


handler = (
    lark.EventDispatcherHandler.builder("", "")
    .register_p2_im_message_receive_v1(on_message)
    .register_p2_card_action_trigger(on_card)
    .build()
)
lark.ws.Client(
    os.environ["FAKE_FEISHU_APP_ID"],
    os.environ["FAKE_FEISHU_APP_SECRET"],
    event_handler=handler,
    domain=sys.argv[1],
    log_level=lark.LogLevel.WARNING,
).start()
