"""A fake Feishu Open Platform on loopback that speaks the real wire protocol.

Two listeners on 127.0.0.1: an HTTP server (tests/support/json_http) for the endpoint call, the
tenant token and the REST calls, and a trio-websocket server speaking pbbp2 frames. It enforces
what the platform enforces (credentials, bearer tokens, 5 PATCHes per second per message) and
records everything a test asserts on. Tests steer it: push an event (whole or in fragments),
drop or silence the current connection, refuse the next handshake, revoke a token, script the
next answers of a REST path.

    async with fake_platform() as fake:     # both listeners up
        ...LongConnectionClient(domain=fake.domain, ...)
        await fake.wait_until(lambda: fake.acks)
"""

from __future__ import annotations

import base64
import json
import math
import ssl
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qs

import trio
import trio_websocket

from robota.transports.feishu import METHOD_CONTROL, METHOD_DATA, Frame, Header, decode, encode

from .json_http import Answer, serve_json
from .json_http import HttpRequest as Request

APP_ID = "cli_fake_app"
APP_SECRET = "fake-secret-8d0f1c2b9a"
SERVICE_ID = 33554678
BODY_LIMIT = 30 * 1024
"""Bytes of a send, reply or PATCH body the platform takes for cards and posts."""
WAIT = 10.0
"""Upper bound of every wait in these tests: reached only when something is broken."""


@dataclass
class Connection:
    number: int
    ws: trio_websocket.WebSocketConnection
    pings: list[Frame] = field(default_factory=list)
    acks: list[Frame] = field(default_factory=list)
    silent: bool = False
    closed_by: str | None = None
    """``client`` or ``server`` once it ended."""


@dataclass
class Sent:
    message_id: str
    msg_type: str
    content: Any
    """The parsed content (a card, a post, ``{"text"}``)."""
    reply_to: str | None
    """The message replied to; ``None``: sent to ``receive_id``."""
    receive_id: str | None
    uuid: str | None
    at: float
    in_thread: bool = False
    """A reply with ``reply_in_thread`` (it goes into, or opens, the message's thread)."""


@dataclass
class Patched:
    message_id: str
    content: Any
    at: float


@dataclass
class Reaction:
    op: str
    """``add`` or ``remove``."""
    message_id: str
    emoji: str
    reaction_id: str
    at: float


class FakePlatform:
    def __init__(self) -> None:
        self.client_config: dict[str, Any] = {
            "PingInterval": 60,
            "ReconnectCount": -1,
            "ReconnectInterval": 0.05,
            "ReconnectNonce": 0,
        }
        self.pong_config: dict[str, Any] | None = None
        """What pongs carry; ``None``: an empty pong."""
        self.token_expire = 7200
        self.http_port = 0
        self.ws_port = 0
        self.ws_origin = "ws://127.0.0.1"
        """Where the endpoint sends a client: ``wss://localhost`` when the fake serves TLS."""
        self.requests: list[Request] = []
        self.tokens: list[str] = []
        self.revoked: set[str] = set()
        self.scripted: dict[tuple[str, str], deque[Answer]] = defaultdict(deque)
        self.handshake_refusals: deque[tuple[int, dict[str, str]]] = deque()
        self.connections: list[Connection] = []
        self.patches: dict[str, list[float]] = defaultdict(list)
        self.routes: list[Callable[[Request], Answer | None]] = []
        """Extra endpoints (``fake_registration``): the first that answers a request wins."""
        self.messages: list[Sent] = []
        """Messages the bot sent or replied, in order (a repeated ``uuid`` is not a new one)."""
        self.patched: list[Patched] = []
        self.reactions: list[Reaction] = []
        """Reactions added and removed, in order."""
        self.hold_posts = False
        """Take ``post`` messages (they count as sent) but never answer: the moment a crash
        falls between the platform's acceptance and the sender's record of it."""
        self.hold_cards = False
        """Take ``interactive`` messages sent with a ``uuid`` (a turn's card; they count as
        sent) but never answer: the moment a crash falls between the platform making a card
        and the sender's record of it (``held_cards``: whom each replied to)."""
        self.held_cards: list[str | None] = []
        self.stall_posts = False
        """Take ``post`` messages and neither keep nor answer them: the moment a crash falls
        between a turn's terminal card and its final (``stalled``: whom each replied to)."""
        self.stalled: list[str | None] = []
        self.stall_unreactions = False
        """Take a reaction's removal and neither make nor answer it: the moment a crash falls
        between a message's terminal reaction and the removal of its ``OnIt``."""
        self.hold_reactions: set[str] = set()
        """Emoji whose additions are taken (they count as added) but never answered: the
        moment a crash falls right after the bot's reaction (``OnIt``)."""
        self.on_request: Callable[[Request], object] | None = None
        """Called with every request as it arrives (before it is answered)."""
        self.redeliver_after: float | None = None
        """Deliver an event again (a new frame, to the connection open then) when no frame of
        it was ACKed with success (``{"code": 200}``; a handler that failed is ACKed 500)
        within this many seconds, as the platform does (about 3 s); ``None``: never (the
        default: a test pushes again itself)."""
        self.redeliveries = 1
        """How many times at most one event is delivered again (``redeliver_after``)."""
        self.redelivered: list[str] = []
        """The frames (message ids) that delivered an event again, in order."""
        self.chats: list[dict[str, Any]] = []
        """Group chats the bot created (``POST /open-apis/im/v1/chats``), as the platform
        answered them, with the members asked for under ``members``."""
        self.resources: dict[tuple[str, str], tuple[str, bytes, str]] = {}
        """(message_id, file_key) -> (type, bytes, content type): what a person's message
        carries, for ``GET .../messages/{message_id}/resources/{file_key}``."""
        self._changed = trio.Event()
        self._seq = 0
        self._ids = 0
        self._nursery: trio.Nursery | None = None

    @property
    def domain(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    # -- observing -------------------------------------------------------------------------

    def calls(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.path == path]

    @property
    def current(self) -> Connection:
        return self.connections[-1]

    @property
    def acks(self) -> list[Frame]:
        return [ack for c in self.connections for ack in c.acks]

    def ack_answer(self, message_id: str) -> dict[str, Any]:
        """The payload of the ACK of the pushed frame ``message_id`` (``data`` decoded)."""
        for ack in self.acks:
            if ack.header("message_id") == message_id:
                answer = json.loads(ack.payload or b"{}")
                if "data" in answer:
                    answer["data"] = json.loads(base64.b64decode(answer["data"]))
                return dict(answer)
        raise KeyError(message_id)

    def reactions_on(self, message_id: str) -> list[str]:
        """The emoji on ``message_id`` now, in the order they were added."""
        live: dict[str, str] = {}
        for reaction in self.reactions:
            if reaction.message_id != message_id:
                continue
            if reaction.op == "add":
                live[reaction.reaction_id] = reaction.emoji
            else:
                live.pop(reaction.reaction_id, None)
        return list(live.values())

    def _touch(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_until(
        self, condition: Callable[[], object], timeout: float = WAIT, *, every: float = math.inf
    ) -> None:
        """Until ``condition()`` holds: checked on every change of the fake, and every ``every``
        seconds too for a condition on what the fake does not see (the host's store), which
        otherwise is checked again only at the connection's next ping, a minute on. Only on
        changes by default: a test may count on a change coming first (an ack after a held
        reaction, which is recorded without one)."""
        with trio.fail_after(timeout):
            while not condition():
                with trio.move_on_after(every):
                    await self._changed.wait()

    # -- steering --------------------------------------------------------------------------

    async def push_event(self, payload: object, *, fragments: int = 1, kind: str = "event") -> str:
        """Send ``payload`` (JSON) as one DATA frame, or split into ``fragments`` frames sent
        last part first; returns the frame's message_id. An event not ACKed is delivered
        again when ``redeliver_after`` is set."""
        message_id = await self._push(self.current, payload, fragments, kind)
        if self.redeliver_after is not None and kind == "event" and self._nursery is not None:
            self._nursery.start_soon(self._redeliver, payload, message_id, fragments)
        return message_id

    def acked(self, frames: Collection[str], *, ok: bool = False) -> bool:
        """Whether any of ``frames`` (message ids) was ACKed (``ok``: with success)."""
        return any(
            ack.header("message_id") in frames
            and not (ok and json.loads(ack.payload or b"{}").get("code") != 200)
            for ack in self.acks
        )

    async def _redeliver(self, payload: object, first: str, fragments: int) -> None:
        """The platform's redelivery of an event none of whose frames was ACKed with success:
        to the connection open when it is due (waiting for one while none is)."""
        frames = [first]
        for _ in range(self.redeliveries):
            assert self.redeliver_after is not None
            await trio.sleep(self.redeliver_after)
            while not self.acked(frames, ok=True):
                open_now = [c for c in self.connections if c.closed_by is None]
                if not open_now:
                    await self._changed.wait()
                    continue
                try:
                    frame = await self._push(open_now[-1], payload, fragments, "event")
                except (trio_websocket.ConnectionClosed, trio.BrokenResourceError):
                    await trio.sleep(0.05)  # that link is going: the next one gets it
                    continue
                frames.append(frame)
                self.redelivered.append(frame)
                self._touch()
                break
            else:
                return

    async def _push(
        self, connection: Connection, payload: object, fragments: int, kind: str
    ) -> str:
        self._seq += 1
        message_id = f"msg-{self._seq}"
        data = json.dumps(payload).encode()
        size = math.ceil(len(data) / fragments)
        parts = [data[i * size : (i + 1) * size] for i in range(fragments)]
        for seq in reversed(range(fragments)):
            frame = Frame(
                seq_id=self._seq * 100 + seq,
                log_id=self._seq,
                service=SERVICE_ID,
                method=METHOD_DATA,
                headers=(
                    Header("type", kind),
                    Header("message_id", message_id),
                    Header("sum", str(fragments)),
                    Header("seq", str(seq)),
                    Header("trace_id", f"trace-{self._seq}"),
                ),
                payload=parts[seq],
            )
            await connection.ws.send_message(encode(frame))
        return message_id

    async def send_raw(self, data: bytes | str) -> None:
        await self.current.ws.send_message(data)

    async def drop(self) -> None:
        """Close the current connection from the server's side."""
        connection = self.current
        connection.closed_by = "server"
        await connection.ws.aclose(code=1001, reason="going away")
        self._touch()

    # -- HTTP ------------------------------------------------------------------------------

    def _answer(self, request: Request) -> Answer:
        for route in self.routes:
            answer = route(request)
            if answer is not None:
                return answer
        try:
            body = json.loads(request.body) if request.body else {}
        except ValueError:
            return 400, {}, {"code": 9499, "msg": "bad json"}
        key = (request.method, request.path)
        if request.path == "/callback/ws/endpoint":
            if self.scripted[key]:
                return self.scripted[key].popleft()
            if (body.get("AppID"), body.get("AppSecret")) != (APP_ID, APP_SECRET):
                return 200, {}, {"code": 10014, "msg": "app secret invalid"}
            number = len(self.calls(request.path))
            query = f"device_id=dev{number}&service_id={SERVICE_ID}"
            url = f"{self.ws_origin}:{self.ws_port}/ws?{query}"
            return (
                200,
                {},
                {
                    "code": 0,
                    "msg": "ok",
                    "data": {"URL": url, "ClientConfig": self.client_config},
                },
            )
        if request.path == "/open-apis/auth/v3/tenant_access_token/internal":
            if (body.get("app_id"), body.get("app_secret")) != (APP_ID, APP_SECRET):
                return 200, {}, {"code": 10014, "msg": "app secret invalid"}
            token = f"t-fake{len(self.tokens) + 1:04d}"
            self.tokens.append(token)
            return (
                200,
                {},
                {
                    "code": 0,
                    "msg": "ok",
                    "tenant_access_token": token,
                    "expire": self.token_expire,
                },
            )
        auth = request.headers.get("authorization", "")
        token = auth.removeprefix("Bearer ")
        if not auth.startswith("Bearer ") or token not in self.tokens or token in self.revoked:
            return 400, {}, {"code": 99991663, "msg": "Invalid access token for authorization."}
        if self.scripted[key]:
            return self.scripted[key].popleft()
        if key == ("GET", "/open-apis/bot/v3/info"):
            return 200, {}, {"code": 0, "msg": "ok", "bot": {"open_id": "ou_fakebot"}}
        if request.method == "PATCH" and request.path.startswith("/open-apis/im/v1/messages/"):
            now = trio.current_time()
            recent = [t for t in self.patches[request.path] if t > now - 1.0]
            if len(recent) >= 5:
                return 400, {}, {"code": 230020, "msg": "message update frequency limit"}
            self.patches[request.path].append(now)
            if len(request.body) > BODY_LIMIT:
                return 400, {}, {"code": 230025, "msg": "request body over 30 KB"}
            self.patched.append(
                Patched(request.path.rsplit("/", 1)[1], json.loads(body["content"]), now)
            )
            return 200, {}, {"code": 0, "msg": "success", "data": {}}
        if key == ("POST", "/open-apis/im/v1/chats"):
            return self._create_chat(request, body)
        parts = request.path.removeprefix("/open-apis/im/v1/messages").strip("/").split("/")
        if request.method == "GET" and len(parts) == 3 and parts[1] == "resources":
            return self._resource(request, parts[0], parts[2])
        if request.path.startswith("/open-apis/im/v1/messages"):
            if request.method == "POST" and parts == [""]:
                return self._send(request, body, None)
            if request.method == "POST" and len(parts) == 2 and parts[1] == "reply":
                return self._send(request, body, parts[0])
            if len(parts) >= 2 and parts[1] == "reactions":
                return self._react(request, body, parts)
        return 404, {}, {"code": 404, "msg": f"no route {request.method} {request.path}"}

    def _receive(self, request: Request) -> Answer:
        self.requests.append(request)
        if self.on_request is not None:
            self.on_request(request)
        self._touch()
        return self._answer(request)

    def _send(self, request: Request, body: dict[str, Any], reply_to: str | None) -> Answer:
        if len(request.body) > BODY_LIMIT and body.get("msg_type") != "text":
            return 400, {}, {"code": 230025, "msg": "request body over 30 KB"}
        if not isinstance(body.get("content"), str) or not body.get("msg_type"):
            return 400, {}, {"code": 230001, "msg": "invalid message content"}
        uuid = body.get("uuid")
        if self.stall_posts and body.get("msg_type") == "post":
            self.stalled.append(reply_to)
            return 200, {}, Ellipsis
        if uuid is not None:
            for sent in self.messages:
                if sent.uuid == uuid:
                    return 200, {}, {"code": 0, "msg": "success", "data": _message(sent)}
        self._ids += 1
        sent = Sent(
            message_id=f"om_bot{self._ids}",
            msg_type=str(body["msg_type"]),
            content=json.loads(body["content"]),
            reply_to=reply_to,
            receive_id=body.get("receive_id"),
            uuid=uuid,
            at=trio.current_time(),
            in_thread=body.get("reply_in_thread") is True,
        )
        self.messages.append(sent)
        if self.hold_posts and sent.msg_type == "post":
            return 200, {}, Ellipsis
        if self.hold_cards and sent.msg_type == "interactive" and uuid is not None:
            self.held_cards.append(reply_to)
            return 200, {}, Ellipsis
        return 200, {}, {"code": 0, "msg": "success", "data": _message(sent)}

    def _create_chat(self, request: Request, body: dict[str, Any]) -> Answer:
        """The platform's checks: open_ids for ``user_id_type=open_id``, at most 50 users, a
        name within 60 characters; a repeated ``uuid`` is the chat it made before."""
        query = parse_qs(request.query)
        id_type = query.get("user_id_type", ["open_id"])[0]
        users = body.get("user_id_list") or []
        name = body.get("name") or ""
        if (
            not isinstance(users, list)
            or len(users) > 50
            or not isinstance(name, str)
            or len(name) > 60
            or (id_type == "open_id" and not all(str(u).startswith("ou_") for u in users))
        ):
            return 400, {}, {"code": 99992402, "msg": "field validation failed"}
        uuid = query.get("uuid", [None])[0]
        for chat in self.chats:
            if uuid is not None and chat["uuid"] == uuid:
                return 200, {}, {"code": 0, "msg": "success", "data": chat["data"]}
        self._ids += 1
        data = {
            "chat_id": f"oc_group{self._ids}",
            "name": name,
            "description": body.get("description") or "",
            "avatar": "https://example.invalid/avatar.png",
            "owner_id": body.get("owner_id") or APP_ID,
            "owner_id_type": id_type if body.get("owner_id") else "app_id",
            "chat_mode": body.get("chat_mode") or "group",
            "chat_type": body.get("chat_type") or "private",
            "chat_tag": "inner",
            "external": False,
            "tenant_key": "tenant",
            "add_member_permission": "all_members",
            "share_card_permission": "allowed",
            "at_all_permission": "all_members",
            "edit_permission": "all_members",
            "join_message_visibility": "all_members",
            "leave_message_visibility": "all_members",
            "membership_approval": "no_approval_required",
            "moderation_permission": "all_members",
        }
        self.chats.append(
            {
                "uuid": uuid,
                "data": data,
                "members": list(users),
                # The SDK sends Python's ``True``; the platform reads either spelling.
                "bot_manager": query.get("set_bot_manager", [""])[0].lower() == "true",
            }
        )
        return 200, {}, {"code": 0, "msg": "success", "data": data}

    def _resource(self, request: Request, message_id: str, file_key: str) -> Answer:
        kind = parse_qs(request.query).get("type", [""])[0]
        if kind not in ("image", "file"):
            return 400, {}, {"code": 234001, "msg": "Invalid request param."}
        found = self.resources.get((message_id, file_key))
        if found is None or found[0] != kind:
            return 400, {}, {"code": 234003, "msg": "File not in msg."}
        _, data, content_type = found
        return 200, {"content-type": content_type}, data

    def _react(self, request: Request, body: dict[str, Any], parts: list[str]) -> Answer:
        message_id = parts[0]
        now = trio.current_time()
        if request.method == "POST" and len(parts) == 2:
            emoji = body.get("reaction_type", {}).get("emoji_type")
            if not isinstance(emoji, str):
                return 400, {}, {"code": 231001, "msg": "reaction type is invalid"}
            self._ids += 1
            reaction_id = f"r{self._ids}"
            self.reactions.append(Reaction("add", message_id, emoji, reaction_id, now))
            if emoji in self.hold_reactions:
                return 200, {}, Ellipsis
            data = {"reaction_id": reaction_id, "reaction_type": {"emoji_type": emoji}}
            return 200, {}, {"code": 0, "msg": "success", "data": data}
        if request.method == "GET" and len(parts) == 2:  # the reactions on a message
            live: dict[str, str] = {}
            for reaction in self.reactions:
                if reaction.message_id == message_id:
                    if reaction.op == "add":
                        live[reaction.reaction_id] = reaction.emoji
                    else:
                        live.pop(reaction.reaction_id, None)
            items = [
                {
                    "reaction_id": rid,
                    "operator": {"operator_id": APP_ID, "operator_type": "app"},
                    "reaction_type": {"emoji_type": emoji},
                }
                for rid, emoji in live.items()
            ]
            data = {"items": items, "has_more": False}
            return 200, {}, {"code": 0, "msg": "success", "data": data}
        if request.method == "DELETE" and len(parts) == 3 and self.stall_unreactions:
            return 200, {}, Ellipsis
        if request.method == "DELETE" and len(parts) == 3:
            added = [
                r for r in self.reactions if (r.message_id, r.reaction_id) == (message_id, parts[2])
            ]
            if not added:
                return 400, {}, {"code": 231003, "msg": "reaction not found"}
            self.reactions.append(Reaction("remove", message_id, added[0].emoji, parts[2], now))
            return 200, {}, {"code": 0, "msg": "success", "data": {}}
        return 404, {}, {"code": 404, "msg": "no such reaction call"}

    # -- the long connection ---------------------------------------------------------------

    async def _serve_ws(self, request: trio_websocket.WebSocketRequest) -> None:
        if self.handshake_refusals:
            status, headers = self.handshake_refusals.popleft()
            await request.reject(
                status, extra_headers=[(k.encode(), v.encode()) for k, v in headers.items()]
            )
            self._touch()
            return
        ws = await request.accept()
        connection = Connection(len(self.connections) + 1, ws)
        self.connections.append(connection)
        self._touch()
        try:
            while True:
                message = await ws.get_message()
                if not isinstance(message, bytes):
                    continue
                frame = decode(message)
                if frame.method == METHOD_CONTROL and frame.header("type") == "ping":
                    connection.pings.append(frame)
                    if not connection.silent:
                        payload = (
                            json.dumps(self.pong_config).encode() if self.pong_config else None
                        )
                        pong = Frame(
                            service=SERVICE_ID,
                            method=METHOD_CONTROL,
                            headers=(Header("type", "pong"),),
                            payload=payload,
                        )
                        await ws.send_message(encode(pong))
                elif frame.method == METHOD_DATA:
                    connection.acks.append(frame)
                self._touch()
        except trio_websocket.ConnectionClosed:
            if connection.closed_by is None:
                connection.closed_by = "client"
            self._touch()


def _message(sent: Sent) -> dict[str, Any]:
    return {
        "message_id": sent.message_id,
        "msg_type": sent.msg_type,
        "chat_id": sent.receive_id or "oc_fake",
        "sender": {"id": APP_ID, "id_type": "app_id", "sender_type": "app"},
        "body": {"content": json.dumps(sent.content)},
    }


@asynccontextmanager
async def fake_platform(ws_tls: ssl.SSLContext | None = None) -> AsyncIterator[FakePlatform]:
    """The fake, its long connection over TLS with ``ws_tls`` (a server context) if given."""
    fake = FakePlatform()
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, partial(serve_json, answer=fake._receive), 0, host="127.0.0.1")
        )
        fake.http_port = listeners[0].socket.getsockname()[1]
        server = await nursery.start(
            trio_websocket.serve_websocket, fake._serve_ws, "127.0.0.1", 0, ws_tls
        )
        fake.ws_port = server.port
        if ws_tls is not None:
            fake.ws_origin = "wss://localhost"
        fake._nursery = nursery
        try:
            yield fake
        finally:
            nursery.cancel_scope.cancel()
