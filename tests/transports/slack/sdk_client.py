"""The official SDK (``slack_sdk``) run as a child process against the fake Slack.

``WebClient`` calls the fake's Web API, then the builtin (thread-based, aiohttp-free)
``SocketModeClient`` connects through the fake's ``apps.connections.open`` and acknowledges
every envelope it receives. Prints one JSON line per step. Tokens come from the environment
(``FAKE_SLACK_BOT_TOKEN``, ``FAKE_SLACK_APP_TOKEN``), never from argv; the API URL is argv[1].
"""

from __future__ import annotations

import json
import os
import sys
import threading

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse


def say(**line: object) -> None:
    print(json.dumps(line), flush=True)


web = WebClient(token=os.environ["FAKE_SLACK_BOT_TOKEN"], base_url=sys.argv[1])
say(kind="auth.test", user_id=web.auth_test()["user_id"])
posted = web.chat_postMessage(
    channel="D0ALICE",
    thread_ts="1796015967.000001",
    text="working…",
    blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "`ls` … ok"}}],
)
web.chat_update(channel="D0ALICE", ts=posted["ts"], text="done", blocks=[])
web.reactions_add(channel="D0ALICE", timestamp="1796015967.000001", name="eyes")
say(kind="posted", ts=posted["ts"], thread_ts=posted["message"]["thread_ts"])
try:
    web.chat_postMessage(channel="D0ALICE", text="x", blocks=[{"type": "divider"}] * 51)
except SlackApiError as error:
    say(kind="refused", error=error.response["error"], errors=error.response["errors"])

# A thread read from a time on, a page of one at a time (the SDK follows the cursor), with
# the metadata a post carried: what a lookup after a crash reads.
keyed = {"event_type": "robota_card", "event_payload": {"key": "t1:slack:card"}}
first = web.chat_postMessage(
    channel="D0ALICE", thread_ts="1796015967.000001", text="one", metadata=keyed
)
later = [
    web.chat_postMessage(channel="D0ALICE", thread_ts="1796015967.000001", text=text)["ts"]
    for text in ("two", "three")
]
pages = web.conversations_replies(
    channel="D0ALICE",
    ts="1796015967.000001",
    oldest=posted["ts"],
    limit=1,
    include_all_metadata=True,
)
say(
    kind="replies",
    first=first["ts"],
    later=later,
    pages=[[(m["ts"], m.get("metadata")) for m in page["messages"]] for page in pages],
)


# A private channel made, a person invited, refusals raised as Slack's, the channel archived:
# what a group channel's steps call.
made = web.conversations_create(name="shop-api", is_private=True)["channel"]
invited = web.conversations_invite(channel=made["id"], users="U0ALICE")["channel"]["id"]
refusals = []
for call in (
    lambda: web.conversations_create(name="shop-api", is_private=True),
    lambda: web.conversations_create(name="Shop API"),
    lambda: web.conversations_invite(channel=made["id"], users="U0ALICE"),
    lambda: web.conversations_invite(channel=made["id"], users="nobody"),
):
    try:
        call()
    except SlackApiError as error:
        refusals.append(error.response["error"])
archived = web.conversations_archive(channel=made["id"])["ok"]
say(
    kind="channel",
    id=made["id"],
    name=made["name"],
    is_private=made["is_private"],
    invited=invited,
    refusals=refusals,
    archived=archived,
)


def on_request(client: SocketModeClient, request: SocketModeRequest) -> None:
    client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
    event = request.payload.get("event", {})
    say(kind="envelope", type=request.type, envelope_id=request.envelope_id, text=event.get("text"))


socket = SocketModeClient(
    app_token=os.environ["FAKE_SLACK_APP_TOKEN"],
    web_client=WebClient(base_url=sys.argv[1]),
    auto_reconnect_enabled=True,
)
socket.socket_mode_request_listeners.append(on_request)
socket.connect()
say(kind="connected")
threading.Event().wait()  # the parent kills this process group when it is done
