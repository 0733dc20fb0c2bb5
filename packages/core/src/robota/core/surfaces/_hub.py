"""A host's surface clients and the sessions they are bound to: the protocol's shell.

The carrier (a WebSocket adapter, a plugin of the ``robota.surfaces`` group) only moves text:
it ``join``s a client per connection, hands every text frame it reads to ``handle`` and writes
what the client's ``outbox`` yields. Everything else is decided here, on the host's trio loop:

* sessions: a host serves several (``command{name: "new"}`` opens one, ``command{name:
  "switch", args: {session}}`` binds the client to another); each is one route of the engine
  (``serve:N``) heard through one shared ``RouteLink`` of the front-end port, its notices
  turned into host messages (``host_message``) and stamped by its ``SessionStream``; a client
  hears only the session it is bound to. Leaving never stops work: a turn runs on.
* a connection's first frame decides where its stream starts: ``resume{lastSeq}`` gives the
  messages after ``lastSeq`` (or ``resume_gap``), anything else the live stream from the
  ``hello``'s seq (what was published meanwhile comes first). Until then the session's
  messages wait for the client, so a resume neither repeats nor misses one.
* a slow reader: what waits unsent to a client is counted in bytes; past ``byte_budget`` the
  client is cut off (``cut_off`` is set, its outbox ends) instead of holding the session.
* approvals go to every client of the session; each client is a driving surface of its route
  (``SurfaceJoined``/``SurfaceLeft``, its answers carry its id), so the engine's rule decides:
  the first answer wins, the others are told ``prompt_resolved`` (with its ``answerer``), and a
  question asked with no client bound, or pending when the last one leaves, is declined.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from ..engine import (
    AnswerApproval,
    FrontEndRequest,
    Interrupt,
    SurfaceJoined,
    SurfaceLeft,
    UserInput,
)
from ..frontend import FrontEndPort, RouteLink
from ._frames import (
    Abort,
    Ack,
    Command,
    GetMessages,
    GetPending,
    PermissionResponse,
    Resume,
    Submit,
    SurfaceProtocolError,
    parse_client_frame,
)
from ._messages import TurnDrivers, host_message
from ._stream import SessionStream

__all__ = ["BYTE_BUDGET", "SURFACE_PROTOCOL", "SurfaceClient", "SurfaceHub", "SurfaceSession"]

logger = logging.getLogger("robota.core.surfaces")

SURFACE_PROTOCOL = 1
BYTE_BUDGET = 8 * 1024 * 1024
"""Bytes that may wait unsent to one client before it is cut off."""
ROUTE_KIND = "serve"

OpenSession = Callable[[str], Awaitable[dict[str, Any]]]
"""Make route ``key``'s task (the host's way: agent, directory, trust); what ``hello`` and
``command_result`` say of it (``{"task": id, ...}``)."""


class SurfaceSession:
    """One session of the host: its route, its stream, the clients bound to it."""

    def __init__(self, name: str, route_key: str, link: RouteLink, port: FrontEndPort) -> None:
        self.name = name
        self.route_key = route_key
        self.link = link
        self.port = port
        self.stream = SessionStream()
        self.drivers = TurnDrivers()
        self.clients: dict[int, SurfaceClient] = {}
        self.info: dict[str, Any] = {}

    def describe(self) -> dict[str, Any]:
        return {"session": self.name, **self.info}

    def tell(self, request: FrontEndRequest) -> None:
        self.port.tell(self.route_key, request)

    async def pump(self) -> None:
        """The route's notices to every bound client, until the link ends (the host stops)."""
        async for batch in self.link:
            for notice in batch:
                message = host_message(notice)
                if message is None:
                    continue
                _, text = self.stream.publish(self.drivers.stamp(notice, message))
                for client in list(self.clients.values()):
                    client.put(text)


class SurfaceClient:
    """One connection's client: the session it is bound to and what waits unsent to it."""

    def __init__(self, number: int, byte_budget: int) -> None:
        self.number = number
        self.id = f"surface:{number}"
        self.byte_budget = byte_budget
        self.session: SurfaceSession | None = None
        self.cut_off = False
        self.started = False
        """Its first frame came: its stream is live."""
        self.queued = 0
        self._held: list[str] = []
        self._send, self.outbox = trio.open_memory_channel[str](math.inf)

    def put(self, text: str) -> None:
        """Queue ``text`` (a session's message, or a reply) for the carrier to send."""
        if self.cut_off:
            return
        self.queued += len(text.encode())
        if self.queued > self.byte_budget:
            logger.info("surfaces: client %s cut off (not reading)", self.id)
            self.cut_off = True
            self._send.close()
            return
        if self.started:
            self._send.send_nowait(text)
        else:
            self._held.append(text)

    def sent(self, text: str) -> None:
        """The carrier wrote ``text``: it no longer counts against the budget."""
        self.queued -= len(text.encode())

    def reply(self, message: dict[str, Any]) -> None:
        assert self.session is not None
        self.put(self.session.stream.reply(message)[1])

    def start(self, replay: list[str] | None) -> None:
        """Go live: ``replay`` in place of what was held (a resume), else what was held."""
        texts = self._held if replay is None else replay
        held = sum(len(text.encode()) for text in self._held)
        self._held = []
        self.queued -= held
        self.started = True
        for text in texts:
            self.put(text)

    def close(self) -> None:
        self._send.close()


class SurfaceHub:
    """See the module docstring. ``run`` it in the host's nursery (``nursery.start``)."""

    def __init__(
        self,
        port: FrontEndPort,
        open_session: OpenSession,
        *,
        byte_budget: int = BYTE_BUDGET,
        hello: dict[str, Any] | None = None,
    ) -> None:
        self.port = port
        self._open = open_session
        self.byte_budget = byte_budget
        self._hello = hello or {}
        self.sessions: dict[str, SurfaceSession] = {}
        self.clients: dict[int, SurfaceClient] = {}
        self._numbers = itertools.count(1)
        self._session_numbers = itertools.count(1)
        self._nursery: trio.Nursery | None = None
        self._first: trio.Lock = trio.Lock()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            await trio.sleep_forever()

    def stop(self) -> None:
        for session in self.sessions.values():
            session.link.close()
        for client in self.clients.values():
            client.close()

    async def new_session(self) -> SurfaceSession:
        """Open a session (its route's task made the host's way) and start hearing it."""
        assert self._nursery is not None, "run the hub first"
        name = f"s{next(self._session_numbers)}"
        key = f"{ROUTE_KIND}:{name}"
        # Heard from before the task is asked for: the session's stream misses nothing.
        link = self.port.subscribe(key, shared=True)
        try:
            info = await self._open(key)
        except BaseException:
            link.close()
            raise
        return self._serve(name, key, link, info)

    def adopt(self, name: str, route_key: str, info: dict[str, Any]) -> SurfaceSession:
        """Serve an existing route (its task already made) as session ``name``: a background
        session's one route, which its attached terminals share with the WebSocket clients.
        Call it before any client joins, so the stream misses nothing they could see."""
        assert self._nursery is not None, "run the hub first"
        return self._serve(name, route_key, self.port.subscribe(route_key, shared=True), info)

    def _serve(
        self, name: str, route_key: str, link: RouteLink, info: dict[str, Any]
    ) -> SurfaceSession:
        assert self._nursery is not None
        session = SurfaceSession(name, route_key, link, self.port)
        session.info = info
        self.sessions[name] = session
        self._nursery.start_soon(session.pump)
        return session

    async def join(self) -> SurfaceClient:
        """A new connection's client, bound to the host's first session (opened now if there
        is none yet), its ``hello`` queued."""
        async with self._first:
            session = next(iter(self.sessions.values()), None) or await self.new_session()
        client = SurfaceClient(next(self._numbers), self.byte_budget)
        self.clients[client.number] = client
        self._bind(client, session)
        hello = {
            "type": "hello",
            "protocol": SURFACE_PROTOCOL,
            "surface": client.id,
            "sessions": sorted(self.sessions),
            **self._hello,
            **session.describe(),
        }
        # Sent ahead of what is held: the hello's seq is where a live start begins.
        client._send.send_nowait(session.stream.reply(hello)[1])
        return client

    def leave(self, client: SurfaceClient) -> None:
        """The connection ended: the client goes; the session and its turn go on."""
        self.clients.pop(client.number, None)
        self._unbind(client)
        client.close()

    async def handle(self, client: SurfaceClient, text: str | bytes) -> None:
        """One frame the client sent. A wrong one is answered with ``protocol_error``."""
        try:
            frame = parse_client_frame(text)
            await self._dispatch(client, frame)
        except SurfaceProtocolError as error:
            if not client.started:
                client.start(None)
            message: dict[str, Any] = {"type": "protocol_error", "message": str(error)}
            if error.field is not None:
                message["field"] = error.field
            client.reply(message)

    async def _dispatch(self, client: SurfaceClient, frame: object) -> None:
        session = client.session
        assert session is not None
        if isinstance(frame, Resume):
            if client.started:
                raise SurfaceProtocolError("resume: only as a connection's first frame", "type")
            replay = session.stream.replay(frame.last_seq)
            client.start(replay if replay is not None else [])
            if replay is None:
                client.reply(session.stream.gap(frame.last_seq))
            return
        if not client.started:
            client.start(None)
        if isinstance(frame, Submit):  # its turn's messages name this client (``driverId``)
            session.tell(UserInput(frame.prompt, message_id=client.id))
        elif isinstance(frame, Abort):
            session.tell(Interrupt())
        elif isinstance(frame, PermissionResponse):
            session.tell(AnswerApproval(frame.id, frame.result, surface=client.id))
        elif isinstance(frame, GetMessages):
            client.reply(session.stream.messages())
        elif isinstance(frame, GetPending):
            client.reply(session.stream.pending())
        elif isinstance(frame, Ack):
            if frame.seq > session.stream.seq:
                raise SurfaceProtocolError(
                    f"ack.seq: {frame.seq} is beyond the session's last message "
                    f"({session.stream.seq})",
                    "ack.seq",
                )
        elif isinstance(frame, Command):
            await self._command(client, frame)

    async def _command(self, client: SurfaceClient, command: Command) -> None:
        if command.name == "new":
            session = await self.new_session()
        elif command.name == "switch":
            name = command.args.get("session")
            if not isinstance(name, str) or name not in self.sessions:
                known = ", ".join(sorted(self.sessions))
                raise SurfaceProtocolError(
                    f"command.args.session: expected one of {known}", "command.args.session"
                )
            session = self.sessions[name]
        else:
            # Any other command is the route's own (``/rename x``, ``/queue``...): the route
            # answers with a ``command_result`` through the session's stream.
            args = command.args.get("text", "")
            if not isinstance(args, str):
                raise SurfaceProtocolError("command.args.text: expected a string", "command.args")
            assert client.session is not None
            line = f"/{command.name} {args}".rstrip()  # a turn it starts (/new PROMPT) is ours
            client.session.tell(UserInput(line, message_id=client.id))
            return
        self._unbind(client)
        self._bind(client, session)
        client.reply(
            {
                "type": "command_result",
                "name": command.name,
                "sessions": sorted(self.sessions),
                **session.describe(),
            }
        )

    def _bind(self, client: SurfaceClient, session: SurfaceSession) -> None:
        client.session = session
        session.clients[client.number] = client
        session.tell(SurfaceJoined(client.id, drives=True))

    def _unbind(self, client: SurfaceClient) -> None:
        session = client.session
        if session is None or session.clients.pop(client.number, None) is None:
            return
        # The engine's rule: the last driving surface leaving settles a pending question.
        session.tell(SurfaceLeft(client.id))
