"""A fake Slack on loopback that speaks the real wire protocol.

Two listeners on 127.0.0.1: the Web API (tests/support/json_http: ``POST /api/<method>`` with a
JSON or form-encoded body, ``Authorization: Bearer``, answers HTTP 200 with ``ok``/``error``,
429 with ``Retry-After``) and Socket Mode (WebSocket by hand on wsproto, so the fake decides
whether it answers pings and whether it finishes a close handshake, which Slack does not). It
enforces what Slack enforces (the right kind of token per method, single-use connection
tickets, ``hello`` first, at most 10 connections, Block Kit's limits, updates of the bot's own
messages only, a channel's name by Slack's rules) and records everything a test asserts on
(the channels ``conversations.create`` made and their members among them). Tests steer it:
push an envelope, send raw frames, ask a connection to disconnect, silence it, script the next
answers of a method (``refuse``: its next error).

    async with fake_slack() as fake:          # both listeners up
        ...SocketModeClient(api_url=fake.api_url, app_token=APP_TOKEN, ...)
        await fake.wait_until(lambda: fake.acks)
"""

from __future__ import annotations

import itertools
import json
import ssl
import time
import uuid
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import trio
import wsproto
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Message,
    Ping,
    RejectConnection,
    Request,
    TextMessage,
)
from wsproto.utilities import LocalProtocolError, RemoteProtocolError

from .json_http import Answer, HttpRequest, serve_json

BOT_TOKEN = "xoxb-fake-1111-bottokenvalue"
APP_TOKEN = "xapp-1-A0FAKE-appleveltokenvalue"
BOT_USER = "U0BOT"
BOT_ID = "B0BOT"
TEAM = "T0FAKE"
APP_ID = "A0FAKE"
MAX_CONNECTIONS = 10
WAIT = 10.0
"""Upper bound of every wait in these tests: reached only when something is broken."""


@dataclass
class Call:
    method: str
    headers: dict[str, str]
    args: dict[str, Any]
    """The JSON body, or the form fields (one value each)."""
    at: float


@dataclass
class Connection:
    number: int
    ticket: str
    stream: trio.SocketStream
    ws: wsproto.WSConnection
    lock: trio.Lock = field(default_factory=trio.Lock)
    acks: list[str] = field(default_factory=list)
    """Every text frame the client sent (acks are the only thing it should send)."""
    pings: int = 0
    silent: bool = False
    """Answers no ping and sends nothing: a half-dead link."""
    closed_by: str | None = None
    """``client`` or ``server`` once it ended."""

    async def send_text(self, text: str) -> None:
        async with self.lock:
            await self.stream.send_all(self.ws.send(Message(data=text)))


def _blocks_errors(blocks: object) -> list[str]:
    """What Slack's validator says of a message's ``blocks`` (the limits a bridge meets)."""
    if not isinstance(blocks, list):
        return ["must be an array [json-pointer:/blocks]"]
    errors = []
    if len(blocks) > 50:
        errors.append("must provide no more than 50 items [json-pointer:/blocks]")
    markdown = 0
    for i, block in enumerate(blocks):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            errors.append(f"missing required field: type [json-pointer:/blocks/{i}]")
            continue
        text = block.get("text")
        body = text.get("text") if isinstance(text, Mapping) else text
        if block["type"] == "section" and isinstance(body, str) and len(body) > 3000:
            errors.append(f"must be less than 3001 characters [json-pointer:/blocks/{i}/text/text]")
        if block["type"] == "header" and isinstance(body, str) and len(body) > 150:
            errors.append(f"must be less than 151 characters [json-pointer:/blocks/{i}/text/text]")
        if block["type"] == "markdown" and isinstance(body, str):
            markdown += len(body)
    if markdown > 12000:
        errors.append("markdown blocks exceed 12000 characters in total [json-pointer:/blocks]")
    return errors


class FakeSlack:
    def __init__(self) -> None:
        self.http_port = 0
        self.ws_port = 0
        self.ws_origin = "ws://127.0.0.1"
        """Where ``apps.connections.open`` sends a client: ``wss://localhost`` over TLS."""
        self.calls: list[Call] = []
        self.scripted: dict[str, deque[Answer]] = defaultdict(deque)
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}
        """(channel, ts) -> the message as Slack keeps it."""
        self.reactions: set[tuple[str, str, str]] = set()
        self.stall_finals = False
        """Take a final answer (a message with a ``markdown`` block) and neither keep nor
        answer it: the moment a crash falls between a turn's terminal progress message and its
        final (``stalled``: the thread of each)."""
        self.stalled: list[str] = []
        self.hold_finals = False
        """Keep a final answer (it is in its thread) but never answer its post: the moment a
        crash falls between Slack keeping the final and the host's record of it (``held``:
        the thread of each)."""
        self.held: list[str] = []
        self.hold_metadata: set[str] = set()
        """Metadata ``event_type`` values whose posts are kept (in their thread) but never
        answered: the moment a crash falls between Slack keeping a post (a progress card's)
        and the host's record of it (``held_posts``: the thread of each)."""
        self.held_posts: list[str] = []
        self.stall_removals = False
        """Take ``reactions.remove`` and neither make nor answer it: the moment a crash falls
        between a message's terminal reaction and the removal of its ``eyes``."""
        self.hold_reactions: set[str] = set()
        """Reaction names whose ``reactions.add`` is taken (the reaction is there) but never
        answered: the moment a crash falls right after the bot's ``eyes``."""
        self.connections: list[Connection] = []
        self.http_accepted = 0
        """Web API (HTTP) connections the fake accepted, and how many of them are open now."""
        self.http_open = 0
        self.tickets: set[str] = set()
        """Handed out by apps.connections.open and not used yet."""
        self.max_connections = MAX_CONNECTIONS
        self.disabled = False
        """Socket Mode turned off for the app: connections get ``link_disabled``."""
        self.files: dict[str, tuple[bytes, str]] = {}
        """Download path -> (content, mime type): what ``share`` made downloadable."""
        self.redirects: dict[str, str] = {}
        """Download path -> where Slack answers it redirects (a test's steering)."""
        self.downloads: list[Call] = []
        self.pages_read = 0
        """Pages ``conversations.replies`` and ``conversations.history`` answered."""
        """Every GET of a file or of the sign-in page, with its headers."""
        self.channels: dict[str, dict[str, Any]] = {}
        """Channel id -> the channel as ``conversations.create`` made it (``is_archived``
        set by ``conversations.archive``)."""
        self.members: dict[str, list[str]] = {}
        """Channel id -> the users ``conversations.invite`` brought in, in order."""
        self._last_ts = 0.0
        self._files = itertools.count(1)
        self._channels = itertools.count(1)
        self._changed = trio.Event()

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/api/"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def share(self, name: str, data: bytes, mimetype: str, filetype: str) -> dict[str, Any]:
        """A file a person shared, as the ``files`` entry of its event (Slack's shape);
        downloadable at its ``url_private_download`` with the bot token only."""
        file_id = f"F0FILE{next(self._files):04d}"
        quoted = quote(name, safe="")
        path = f"/files-pri/{TEAM}-{file_id}/download/{quoted}"
        self.files[path] = (data, mimetype)
        entry: dict[str, Any] = {
            "id": file_id,
            "created": 1796015967,
            "timestamp": 1796015967,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype,
            "pretty_type": filetype.upper(),
            "user": "U0ALICE",
            "user_team": TEAM,
            "editable": False,
            "size": len(data),
            "mode": "hosted",
            "is_external": False,
            "external_type": "",
            "is_public": False,
            "public_url_shared": False,
            "display_as_bot": False,
            "username": "",
            "url_private": f"{self.base_url}/files-pri/{TEAM}-{file_id}/{quoted}",
            "url_private_download": self.base_url + path,
            "permalink": f"https://fake.slack.com/files/U0ALICE/{file_id}/{quoted}",
            "permalink_public": f"https://slack-files.com/{TEAM}-{file_id}-0000",
            "is_starred": False,
            "has_rich_preview": False,
            "file_access": "visible",
        }
        if mimetype.startswith("image/"):
            entry.update(original_w=0, original_h=0, thumb_64=self.base_url + path + "?t=64")
        return entry

    def _download(self, request: HttpRequest) -> Answer:
        """Slack's file download: the bot token required, else the sign-in page (a redirect)."""
        call = Call(request.path, request.headers, {}, trio.current_time())
        self.downloads.append(call)
        self._touch()
        if request.path == "/":
            page = b"<!DOCTYPE html><html><body>Sign in to fake.slack.com</body></html>"
            return 200, {"content-type": "text/html; charset=utf-8"}, page
        if request.path in self.redirects:
            return 302, {"location": self.redirects[request.path]}, b""
        stored = self.files.get(request.path)
        auth = request.headers.get("authorization", "")
        if auth != f"Bearer {BOT_TOKEN}":
            return 302, {"location": f"{self.base_url}/?redirect={request.path}"}, b""
        if stored is None:
            return 404, {"content-type": "text/plain"}, b"file not found"
        data, mimetype = stored
        return 200, {"content-type": mimetype}, data

    # -- observing -------------------------------------------------------------------------

    def calls_of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    @property
    def current(self) -> Connection:
        return self.connections[-1]

    @property
    def open_connections(self) -> list[Connection]:
        return [c for c in self.connections if c.closed_by is None]

    @property
    def acks(self) -> list[dict[str, Any]]:
        return [json.loads(a) for c in self.connections for a in c.acks]

    def _touch(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_until(self, condition: Callable[[], object], timeout: float = WAIT) -> None:
        """Until ``condition()`` holds: checked on every change of the fake, and every 10 ms
        for conditions on the client's side (what its handler got)."""
        with trio.fail_after(timeout):
            while not condition():
                with trio.move_on_after(0.01):
                    await self._changed.wait()

    # -- steering --------------------------------------------------------------------------

    def refuse(self, method: str, error: str, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` answered ``ok: false`` with ``error``."""
        for _ in range(times):
            self.scripted[method].append((200, {}, {"ok": False, "error": error}))

    def channel_named(self, name: str) -> dict[str, Any] | None:
        return next((c for c in self.channels.values() if c["name"] == name), None)

    async def push(self, frame: Mapping[str, Any], connection: Connection | None = None) -> None:
        await (connection or self.current).send_text(json.dumps(frame))

    async def send_raw(self, text: str, connection: Connection | None = None) -> None:
        await (connection or self.current).send_text(text)

    async def send_bytes(self, data: bytes) -> None:
        connection = self.current
        async with connection.lock:
            await connection.stream.send_all(connection.ws.send(Message(data=data)))

    async def disconnect(self, reason: str, connection: Connection | None = None) -> None:
        """Slack's ``disconnect`` message; the connection stays open (Slack closes it a few
        seconds later; tests close it with ``drop`` when they need that)."""
        await self.push(
            {"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-fake"}},
            connection,
        )

    async def drop(self, connection: Connection | None = None) -> None:
        """Close a connection's TCP stream from the server's side, no close handshake."""
        connection = connection or self.current
        connection.closed_by = connection.closed_by or "server"
        await connection.stream.aclose()
        self._touch()

    # -- the Web API -----------------------------------------------------------------------

    def _token_error(self, method: str, auth: str) -> str | None:
        if not auth.startswith("Bearer ") or not auth.removeprefix("Bearer "):
            return "not_authed"
        token = auth.removeprefix("Bearer ")
        if token not in (BOT_TOKEN, APP_TOKEN):
            return "invalid_auth"
        wants_app = method == "apps.connections.open"
        if (token == APP_TOKEN) != wants_app:
            return "not_allowed_token_type"
        return None

    def _answer(self, call: Call) -> Answer:
        refused = self._token_error(call.method, call.headers.get("authorization", ""))
        if refused is not None:
            return 200, {}, {"ok": False, "error": refused}
        if self.scripted[call.method]:
            return self.scripted[call.method].popleft()
        args = call.args
        if call.method == "auth.test":
            return (
                200,
                {},
                {
                    "ok": True,
                    "url": "https://fake.slack.com/",
                    "team": "fake",
                    "user": "robota",
                    "team_id": TEAM,
                    "user_id": BOT_USER,
                    "bot_id": BOT_ID,
                    "is_enterprise_install": False,
                },
            )
        if call.method == "apps.connections.open":
            ticket = str(uuid.uuid4())
            self.tickets.add(ticket)
            url = f"{self.ws_origin}:{self.ws_port}/link/?ticket={ticket}&app_id={APP_ID}"
            return 200, {}, {"ok": True, "url": url}
        if call.method == "conversations.open":
            users = str(args.get("users") or "")
            if not users.startswith("U"):
                return 200, {}, {"ok": False, "error": "user_not_found"}
            return 200, {}, {"ok": True, "channel": {"id": "D" + users[1:]}}
        if call.method in ("chat.postMessage", "chat.update"):
            return self._chat(call.method, args)
        if call.method in ("conversations.create", "conversations.invite", "conversations.archive"):
            return self._channel(call.method, args)
        if call.method in ("conversations.replies", "conversations.history"):
            return self._read(call.method, args)
        if call.method in ("reactions.add", "reactions.remove"):
            key = (str(args.get("channel")), str(args.get("timestamp")), str(args.get("name")))
            if not key[0] or key[1] in ("", "None"):
                return 200, {}, {"ok": False, "error": "message_not_found"}
            if call.method == "reactions.add":
                if key in self.reactions:
                    return 200, {}, {"ok": False, "error": "already_reacted"}
                self.reactions.add(key)
                if key[2] in self.hold_reactions:
                    return 200, {}, Ellipsis
            else:
                if self.stall_removals:
                    return 200, {}, Ellipsis
                if key not in self.reactions:
                    return 200, {}, {"ok": False, "error": "no_reaction"}
                self.reactions.discard(key)
            return 200, {}, {"ok": True}
        return 404, {}, {"ok": False, "error": "unknown_method"}

    def _new_ts(self) -> str:
        """A message's ``ts`` as Slack makes them: its time of receipt (epoch seconds, six
        decimals), unique and increasing within the fake."""
        self._last_ts = max(time.time(), self._last_ts + 1e-6)
        return f"{self._last_ts:.6f}"

    def _channel(self, method: str, args: Mapping[str, Any]) -> Answer:
        """Slack's channel methods as a bot token sees them: a name by Slack's rules and not
        taken (an archived channel keeps its name), an invite of ``U``/``W`` users not in the
        channel yet, an archive once; the answers' shapes are Slack's."""
        if method == "conversations.create":
            name = str(args.get("name") or "")
            if not name:
                return 200, {}, {"ok": False, "error": "invalid_name_required"}
            if len(name) > 80:
                return 200, {}, {"ok": False, "error": "invalid_name_maxlength"}
            if any(not (c.isascii() and (c.islower() or c.isdigit() or c in "-_")) for c in name):
                return 200, {}, {"ok": False, "error": "invalid_name_specials"}
            if self.channel_named(name) is not None:
                return 200, {}, {"ok": False, "error": "name_taken"}
            channel = self._new_channel(name, private=args.get("is_private") in (True, "true", "1"))
            return 200, {}, {"ok": True, "channel": channel}
        channel = self.channels.get(str(args.get("channel") or ""))
        if channel is None:
            return 200, {}, {"ok": False, "error": "channel_not_found"}
        if channel["is_archived"]:
            return 200, {}, {"ok": False, "error": "is_archived"}
        if method == "conversations.archive":
            channel["is_archived"] = True
            return 200, {}, {"ok": True}
        members = self.members[channel["id"]]
        users = [u for u in str(args.get("users") or "").split(",") if u]
        if not users or any(not u.startswith(("U", "W")) for u in users):
            return 200, {}, {"ok": False, "error": "user_not_found"}
        if any(u in members for u in users):
            return 200, {}, {"ok": False, "error": "already_in_channel"}
        members.extend(users)
        return 200, {}, {"ok": True, "channel": channel}

    def _new_channel(self, name: str, *, private: bool) -> dict[str, Any]:
        """A channel the bot created, as ``conversations.create`` answers it."""
        channel_id = f"C0GROUP{next(self._channels):04d}"
        created = int(time.time())
        channel: dict[str, Any] = {
            "id": channel_id,
            "name": name,
            "is_channel": True,
            "is_group": False,
            "is_im": False,
            "is_mpim": False,
            "is_private": private,
            "created": created,
            "is_archived": False,
            "is_general": False,
            "unlinked": 0,
            "name_normalized": name,
            "is_shared": False,
            "is_org_shared": False,
            "is_ext_shared": False,
            "is_pending_ext_shared": False,
            "pending_shared": [],
            "context_team_id": TEAM,
            "updated": created * 1000,
            "parent_conversation": None,
            "creator": BOT_USER,
            "is_member": True,
            "last_read": "0000000000.000000",
            "topic": {"value": "", "creator": "", "last_set": 0},
            "purpose": {"value": "", "creator": "", "last_set": 0},
            "previous_names": [],
            "priority": 0,
        }
        self.channels[channel_id] = channel
        self.members[channel_id] = []
        return channel

    def _read(self, method: str, args: Mapping[str, Any]) -> Answer:
        """A thread's messages, oldest first (its parent, when Slack has it, then its replies),
        or the channel's messages outside threads, newest first; their metadata only with
        ``include_all_metadata``. As Slack: only messages after ``oldest`` (or at it, with
        ``inclusive``), a thread's parent whatever ``oldest`` says; pages of ``limit`` (at most
        1000, 100 when not given) with a ``next_cursor`` while there is more."""
        channel = str(args.get("channel") or "")
        with_metadata = str(args.get("include_all_metadata", "")).lower() in ("true", "1")
        try:
            oldest = float(args.get("oldest") or 0)
            limit = min(int(args.get("limit") or 100), 1000)
            start = int(args.get("cursor") or "0") if args.get("cursor") else 0
        except ValueError:
            return 200, {}, {"ok": False, "error": "invalid_arguments"}
        inclusive = str(args.get("inclusive", "")).lower() in ("true", "1")

        def after(ts: str) -> bool:
            return float(ts) >= oldest if inclusive else float(ts) > oldest

        mine = sorted(
            ((ts, message) for (c, ts), message in self.messages.items() if c == channel),
            key=lambda item: float(item[0]),
        )
        if method == "conversations.replies":
            thread = str(args.get("ts") or "")
            if not thread:
                return 200, {}, {"ok": False, "error": "invalid_arguments"}
            found = [
                m for ts, m in mine if ts == thread or (m.get("thread_ts") == thread and after(ts))
            ]
        else:
            found = [
                m for ts, m in reversed(mine) if m.get("thread_ts") in (None, ts) and after(ts)
            ]
        page = found[start : start + limit]
        shown = [
            m if with_metadata else {k: v for k, v in m.items() if k != "metadata"} for m in page
        ]
        self.pages_read += 1
        more = start + limit < len(found)
        answer: dict[str, Any] = {"ok": True, "messages": shown, "has_more": more}
        if more:
            answer["response_metadata"] = {"next_cursor": str(start + limit)}
        return 200, {}, answer

    def _chat(self, method: str, args: Mapping[str, Any]) -> Answer:
        channel = args.get("channel")
        if not isinstance(channel, str) or not channel:
            return 200, {}, {"ok": False, "error": "channel_not_found"}
        blocks = args.get("blocks")
        if isinstance(blocks, str):  # form-encoded bodies carry blocks as JSON text
            blocks = json.loads(blocks)
        if blocks is not None:
            errors = _blocks_errors(blocks)
            if errors:
                return (
                    200,
                    {},
                    {
                        "ok": False,
                        "error": "invalid_blocks",
                        "errors": errors,
                        "response_metadata": {"messages": [f"[ERROR] {e}" for e in errors]},
                    },
                )
        text = args.get("text")
        if not text and not blocks:
            return 200, {}, {"ok": False, "error": "no_text"}
        if method == "chat.postMessage":
            markdown = any(
                isinstance(b, dict) and b.get("type") == "markdown" for b in blocks or []
            )
            if self.stall_finals and markdown:
                self.stalled.append(str(args.get("thread_ts")))
                return 200, {}, Ellipsis
            ts = self._new_ts()
            message = {
                "type": "message",
                "user": BOT_USER,
                "bot_id": BOT_ID,
                "app_id": APP_ID,
                "text": text or "",
                "ts": ts,
                "team": TEAM,
                "blocks": blocks or [],
            }
            if args.get("thread_ts"):
                message["thread_ts"] = args["thread_ts"]
            metadata = args.get("metadata")
            if isinstance(metadata, str):  # form-encoded bodies carry it as JSON text
                metadata = json.loads(metadata)
            if isinstance(metadata, dict):
                message["metadata"] = metadata
            self.messages[channel, ts] = message
            if self.hold_finals and markdown:
                self.held.append(str(args.get("thread_ts")))
                return 200, {}, Ellipsis
            if isinstance(metadata, dict) and metadata.get("event_type") in self.hold_metadata:
                self.held_posts.append(str(args.get("thread_ts")))
                return 200, {}, Ellipsis
            return 200, {}, {"ok": True, "channel": channel, "ts": ts, "message": message}
        ts = str(args.get("ts"))
        message = self.messages.get((channel, ts))
        if message is None:
            return 200, {}, {"ok": False, "error": "message_not_found"}
        message.update(text=text or "", blocks=blocks or [])
        message["edited"] = {"user": BOT_USER, "ts": self._new_ts()}
        return 200, {}, {"ok": True, "channel": channel, "ts": ts, "text": text, "message": message}

    def _receive(self, request: HttpRequest) -> Answer:
        headers = request.headers
        if request.method == "GET" and (
            request.path == "/" or request.path.startswith("/files-pri/")
        ):
            return self._download(request)
        if request.method != "POST" or not request.path.startswith("/api/"):
            return 404, {}, {"ok": False, "error": "unknown_method"}
        args: dict[str, Any] = {k: v[0] for k, v in parse_qs(request.query).items()}
        kind = headers.get("content-type", "")
        try:
            if kind.startswith("application/json"):
                parsed = json.loads(request.body) if request.body else {}
                if not isinstance(parsed, dict):
                    return 200, {}, {"ok": False, "error": "invalid_json"}
                args.update(parsed)
            elif request.body:
                args.update({k: v[0] for k, v in parse_qs(request.body.decode()).items()})
        except ValueError:
            return 200, {}, {"ok": False, "error": "invalid_json"}
        call = Call(request.path.removeprefix("/api/"), headers, args, trio.current_time())
        self.calls.append(call)
        self._touch()
        return self._answer(call)

    # -- Socket Mode -----------------------------------------------------------------------

    async def _serve_http(self, stream: trio.SocketStream) -> None:
        self.http_accepted += 1
        self.http_open += 1
        try:
            await serve_json(stream, answer=self._receive)
        finally:
            self.http_open -= 1

    async def _serve_ws(self, stream: trio.abc.Stream) -> None:
        ws = wsproto.WSConnection(wsproto.ConnectionType.SERVER)
        connection: Connection | None = None
        text = ""
        try:
            while True:
                data = await stream.receive_some(65536)
                if not data:
                    ws.receive_data(None)
                    break
                ws.receive_data(data)
                for event in ws.events():
                    if isinstance(event, Request):
                        connection = await self._accept(stream, ws, event)
                        if connection is None:
                            return
                    elif connection is None:
                        return
                    elif isinstance(event, Ping):
                        connection.pings += 1
                        if not connection.silent:
                            async with connection.lock:
                                await stream.send_all(ws.send(event.response()))
                    elif isinstance(event, TextMessage):
                        text += event.data  # wsproto may hand a message over in parts
                        if event.message_finished:
                            connection.acks.append(text)
                            text = ""
                    elif isinstance(event, BytesMessage):
                        connection.acks.append(json.dumps({"binary": len(event.data)}))
                    elif isinstance(event, CloseConnection):
                        # Slack never answers a close: the client must time its own out.
                        connection.closed_by = connection.closed_by or "client"
                        return
                    self._touch()
        except (
            trio.BrokenResourceError,
            trio.ClosedResourceError,
            LocalProtocolError,
            RemoteProtocolError,
        ):
            pass
        finally:
            if connection is not None and connection.closed_by is None:
                connection.closed_by = "client"
            await trio.aclose_forcefully(stream)
            self._touch()

    async def _accept(
        self, stream: trio.SocketStream, ws: wsproto.WSConnection, request: Request
    ) -> Connection | None:
        target = urlsplit(request.target)
        ticket = parse_qs(target.query).get("ticket", [""])[0]
        if target.path != "/link/" or ticket not in self.tickets:
            # an unknown or reused ticket: URLs are single-use
            await stream.send_all(ws.send(RejectConnection(status_code=401)))
            self._touch()
            return None
        self.tickets.discard(ticket)
        await stream.send_all(ws.send(AcceptConnection()))
        connection = Connection(len(self.connections) + 1, ticket, stream, ws)
        self.connections.append(connection)
        if self.disabled:
            await self.disconnect("link_disabled", connection)
        elif len(self.open_connections) > self.max_connections:
            await self.disconnect("too_many_websockets", connection)
        else:
            await connection.send_text(
                json.dumps(
                    {
                        "type": "hello",
                        "num_connections": len(self.open_connections),
                        "debug_info": {
                            "host": "applink-fake",
                            "build_number": 1,
                            "approximate_connection_time": 18060,
                        },
                        "connection_info": {"app_id": APP_ID},
                    }
                )
            )
        self._touch()
        return connection


# -- envelopes with the real shapes ----------------------------------------------------------

_envelopes = itertools.count(1)


def events_api(
    event: Mapping[str, Any],
    *,
    event_id: str = "Ev0001",
    retry_attempt: int = 0,
    retry_reason: str = "",
    envelope_id: str | None = None,
) -> dict[str, Any]:
    """An ``events_api`` envelope carrying ``event`` in an ``event_callback``."""
    return {
        "envelope_id": envelope_id or f"env-{next(_envelopes):04d}",
        "type": "events_api",
        "payload": {
            "token": "verification-token",
            "team_id": TEAM,
            "context_team_id": TEAM,
            "api_app_id": APP_ID,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": 1796015967,
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": TEAM,
                    "user_id": BOT_USER,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": "4-fake",
            "event": dict(event),
        },
        "accepts_response_payload": False,
        "retry_attempt": retry_attempt,
        "retry_reason": retry_reason,
    }


def dm(text: str, *, user: str = "U0ALICE", ts: str = "1796015967.000001") -> dict[str, Any]:
    """A direct message event."""
    return {
        "type": "message",
        "channel": "D0ALICE",
        "channel_type": "im",
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "team": TEAM,
        "client_msg_id": str(uuid.uuid4()),
        "blocks": [
            {
                "type": "rich_text",
                "block_id": "rt1",
                "elements": [
                    {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
                ],
            }
        ],
    }


def file_share(
    text: str, files: list[dict[str, Any]], *, ts: str = "1796015967.000001"
) -> dict[str, Any]:
    """A direct message a person shared ``files`` with (``subtype: file_share``)."""
    event = dm(text, ts=ts)
    event.update(subtype="file_share", files=files, upload=False, display_as_bot=False)
    if not text:
        del event["blocks"]
    return event


@asynccontextmanager
async def fake_slack(ws_tls: ssl.SSLContext | None = None) -> AsyncIterator[FakeSlack]:
    """The fake, its Socket Mode over TLS with ``ws_tls`` (a server context) if given."""
    fake = FakeSlack()
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            partial(trio.serve_tcp, fake._serve_http, 0, host="127.0.0.1")
        )
        fake.http_port = listeners[0].socket.getsockname()[1]
        if ws_tls is None:
            listeners = await nursery.start(
                partial(trio.serve_tcp, fake._serve_ws, 0, host="127.0.0.1")
            )
            fake.ws_port = listeners[0].socket.getsockname()[1]
        else:
            secure = await nursery.start(
                partial(trio.serve_ssl_over_tcp, fake._serve_ws, 0, ws_tls, host="127.0.0.1")
            )
            fake.ws_port = secure[0].transport_listener.socket.getsockname()[1]
            fake.ws_origin = "wss://localhost"
        try:
            yield fake
        finally:
            nursery.cancel_scope.cancel()
