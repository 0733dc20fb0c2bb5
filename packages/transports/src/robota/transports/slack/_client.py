"""Socket Mode on trio: a thin shell that carries out ``SocketMode``'s effects.

One loop owns the machine and never waits on the network itself: ``apps.connections.open``,
each link (its handshake, then its reader), each ping and each close run in tasks of their
own and report back through one channel, so the machine sees one input at a time, the
acknowledgement of an envelope goes out as soon as it is read (even while a new connection is
being opened), and ``tick`` runs at the machine's ``deadline()``::

    client = SocketModeClient(api_url=..., app_token=..., handler=on_envelope)
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)      # returns once the first hello came
        ...

``handler(envelope)`` gets each envelope after it was acknowledged; it should hand off and
return (it runs in a task of its own, and what it raises is logged, nothing more). ``run``
raises ``ConnectionRefused`` when Slack refuses for good (the app token, ``link_disabled``).
``on_status(state, detail)`` is told the link's status (``SocketMode.status``) whenever it
changes, so a transport that cannot connect says why while it keeps trying.

``accept(envelope)``, when given, is what must be durable before Slack is told it has the
envelope (a chat message's claim and inbox row): the acknowledgement waits for it, at most
``ACCEPT_WITHIN`` seconds; one that fails or times out is not acknowledged (nor handed to
``handler``), so Slack delivers the envelope again and the durable claim drops a repeat.
"""

from __future__ import annotations

import logging
import math
import random
import ssl
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import trio

from .._tls import OneTlsContext
from ._errors import ApiError, ConnectionRefused
from ._socket import BACKOFF as SOCKET_BACKOFF
from ._socket import (
    HELLO_WITHIN,
    PING_INTERVAL,
    TOO_MANY_WAIT,
    Close,
    Deliver,
    Dial,
    Discarded,
    Effect,
    Envelope,
    Fatal,
    LinkState,
    Open,
    Ping,
    Send,
    SocketMode,
    State,
    Up,
)
from ._web import WebApi

if TYPE_CHECKING:
    import trio_websocket

__all__ = ["ACCEPT_WITHIN", "EnvelopeHandler", "SocketModeClient", "StatusListener"]

EnvelopeHandler = Callable[[Envelope], Awaitable[None]]
StatusListener = Callable[[LinkState, str | None], None]
ACCEPT_WITHIN = 2.0
"""Seconds an envelope's ``accept`` may take: Slack delivers again what is not acknowledged
within 3 s."""

log = logging.getLogger("robota.transports.slack")

_MAX_MESSAGE = 16 * 1024 * 1024
_E = TypeVar("_E", bound=BaseException)


@dataclass(frozen=True, slots=True)
class _Url:
    url: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class _OpenFailed:
    reason: str
    fatal: bool


@dataclass(frozen=True, slots=True)
class _Dialed:
    link: int


@dataclass(frozen=True, slots=True)
class _DialFailed:
    link: int
    reason: str


@dataclass(frozen=True, slots=True)
class _Received:
    link: int
    data: str | bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class _Pong:
    link: int


@dataclass(frozen=True, slots=True)
class _Lost:
    link: int
    reason: str


_Input = _Url | _OpenFailed | _Dialed | _DialFailed | _Received | _Pong | _Lost


@dataclass(slots=True)
class _Socket:
    """One link's resources, for the loop to write to and close."""

    scope: trio.CancelScope
    nursery: trio.Nursery | None = None
    ws: trio_websocket.WebSocketConnection | None = None
    stream: trio.abc.Stream | None = None


class SocketModeClient:
    def __init__(
        self,
        *,
        api_url: str,
        app_token: str,
        handler: EnvelopeHandler,
        accept: EnvelopeHandler | None = None,
        ping_interval: float = PING_INTERVAL,
        hello_within: float = HELLO_WITHIN,
        too_many_wait: float = TOO_MANY_WAIT,
        backoff: tuple[float, ...] = SOCKET_BACKOFF,
        open_timeout: float = 10.0,
        handshake_timeout: float = 10.0,
        close_timeout: float = 1.0,
        send_timeout: float = 5.0,
        jitter: Callable[[], float] = random.random,
        on_status: StatusListener | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.api_url = api_url
        self._tls = OneTlsContext(tls)
        """The TLS context of ``apps.connections.open`` and the ``wss`` dial (the transport's
        one, so both trust what its Web API calls trust); else httpx's default, made once."""
        self._app_token = app_token
        self.handler = handler
        self.accept = accept
        self.open_timeout = open_timeout
        self.handshake_timeout = handshake_timeout
        self.close_timeout = close_timeout
        """Slack does not finish the close handshake: a close waits this long, no more."""
        self.send_timeout = send_timeout
        self.machine = SocketMode(
            ping_interval=ping_interval,
            hello_within=hello_within,
            too_many_wait=too_many_wait,
            backoff=backoff,
            jitter=jitter,
        )
        self.connects = 0
        """How many times a live link came after none (1 + reconnects after a loss)."""
        self._sockets: dict[int, _Socket] = {}
        self._on_status = on_status
        self._told: tuple[LinkState, str | None] | None = None

    @property
    def state(self) -> State:
        return self.machine.state

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        async with (
            WebApi(
                api_url=self.api_url,
                token=self._app_token,
                timeout=self.open_timeout,
                tls=self._tls.get(),
            ) as api,
            trio.open_nursery() as nursery,
        ):
            try:
                reason = await self._loop(api, nursery, task_status)
            finally:
                # Also when cancelled: a socket left open outlives the task that read it.
                with trio.CancelScope(shield=True):
                    for link in list(self._sockets):
                        await self._close(link)
            nursery.cancel_scope.cancel()
        raise ConnectionRefused(f"Slack Socket Mode stopped: {reason}")

    async def _loop(
        self, api: WebApi, nursery: trio.Nursery, task_status: trio.TaskStatus[None]
    ) -> str:
        """Runs the machine until it is fatal; returns the reason."""
        send, receive = trio.open_memory_channel[_Input](math.inf)
        started = False
        effects: deque[Effect] = deque(self.machine.start())
        while True:
            while effects:
                effect = effects.popleft()
                if isinstance(effect, Fatal):
                    log.error("slack socket mode refused", extra={"reason": effect.reason})
                    for link in list(self._sockets):
                        await self._close(link)
                    return effect.reason
                if (
                    isinstance(effect, Send)
                    and effect.what == "ack"
                    and effects
                    and isinstance(effects[0], Deliver)
                    and not await self._accepted(effects[0].envelope)
                ):
                    effects.popleft()  # neither acknowledged nor handled: Slack sends it again
                    continue
                effects.extend(await self._carry_out(effect, api, nursery, send))
                if isinstance(effect, Up) and not started:
                    started = True
                    task_status.started()
            self._tell()
            with trio.move_on_at(self.machine.deadline()):
                item = await receive.receive()
                effects.extend(self._feed(item))
                continue
            effects.extend(self.machine.tick(trio.current_time()))

    def _tell(self) -> None:
        status = self.machine.status()
        if status != self._told and self._on_status is not None:
            self._on_status(*status)
        self._told = status

    async def _carry_out(
        self,
        effect: Effect,
        api: WebApi,
        nursery: trio.Nursery,
        send: trio.MemorySendChannel[_Input],
    ) -> list[Effect]:
        if isinstance(effect, Open):
            nursery.start_soon(self._open, api, send.clone())
        elif isinstance(effect, Dial):
            scope = trio.CancelScope()
            self._sockets[effect.link] = _Socket(scope)
            nursery.start_soon(self._serve_link, effect.link, effect.url, scope, send.clone())
        elif isinstance(effect, Send):
            return await self._send(effect)
        elif isinstance(effect, Ping):
            socket = self._sockets.get(effect.link)
            if socket is not None and socket.nursery is not None and socket.ws is not None:
                socket.nursery.start_soon(self._ping, effect.link, socket.ws, send.clone())
        elif isinstance(effect, Deliver):
            nursery.start_soon(self._handle, effect.envelope)
        elif isinstance(effect, Up):
            self.connects += 1
            log.info("slack socket mode up", extra={"connects": self.connects})
        elif isinstance(effect, Close):
            log.info("slack socket closed", extra={"link": effect.link, "reason": effect.reason})
            nursery.start_soon(self._close, effect.link)
        else:
            assert isinstance(effect, Discarded), effect
            log.warning("slack input dropped", extra={"reason": effect.reason})
        return []

    def _feed(self, item: _Input) -> list[Effect]:
        machine, now = self.machine, trio.current_time()
        if isinstance(item, _Url):
            return machine.opened_url(item.url)
        if isinstance(item, _OpenFailed):
            if not item.fatal:
                log.warning("slack apps.connections.open failed", extra={"reason": item.reason})
            return machine.open_failed(item.reason, now, fatal=item.fatal)
        if isinstance(item, _Dialed):
            return machine.dialed(item.link, now)
        if isinstance(item, _DialFailed):
            log.warning("slack handshake failed", extra={"reason": item.reason})
            self._sockets.pop(item.link, None)
            return machine.dial_failed(item.link, now, item.reason)
        if isinstance(item, _Received):
            if item.link not in self._sockets:
                return []  # from a socket already closed
            return machine.received(item.link, item.data, now)
        if isinstance(item, _Pong):
            return machine.pong(item.link, now)
        if self._sockets.pop(item.link, None) is not None:
            log.warning("slack socket lost", extra={"link": item.link, "reason": item.reason})
        return machine.closed(item.link, now)

    async def _open(self, api: WebApi, send: trio.MemorySendChannel[_Input]) -> None:
        async with send:
            try:
                answer = await api.call("apps.connections.open", form=True, retries=0)
            except ApiError as error:
                await send.send(_OpenFailed(f"apps.connections.open: {error.error}", error.fatal))
                return
            url = answer.get("url")
            if not isinstance(url, str) or not url:
                await send.send(_OpenFailed("apps.connections.open: no url", fatal=False))
            else:
                await send.send(_Url(url))

    async def _send(self, effect: Send) -> list[Effect]:
        socket = self._sockets.get(effect.link)
        if socket is None or socket.ws is None:
            return []
        import trio_websocket  # noqa: PLC0415 (lazy, see the facade)

        reason = ""
        try:
            # Bounded: a write into a dead link's full buffer would stall every other link.
            with trio.fail_after(self.send_timeout):
                await socket.ws.send_message(effect.text)
        except trio_websocket.ConnectionClosed:
            reason = "closed while writing"
        except trio.TooSlowError:
            reason = "write timed out"
        if not reason:
            return []
        log.warning("slack socket lost", extra={"link": effect.link, "reason": reason})
        await self._close(effect.link)
        return self.machine.closed(effect.link, trio.current_time())

    async def _serve_link(
        self,
        link: int,
        url: str,
        scope: trio.CancelScope,
        send: trio.MemorySendChannel[_Input],
    ) -> None:
        """One WebSocket: the handshake, then its messages into the machine's channel. This
        task owns the link's TCP stream and closes it however the link ends (lost, refused,
        or closed by the loop, which cancels ``scope``); the library's own reader runs in the
        link's nursery, so what it raises ends this link only."""
        import trio_websocket  # noqa: PLC0415 (lazy, see the facade)

        from .._dial import failure_name, tls_stream  # noqa: PLC0415 (lazy, see the facade)

        parts = urlsplit(url)
        secure = parts.scheme == "wss"
        try:
            port = parts.port or (443 if secure else 80)
        except ValueError:
            port = -1
        async with send:
            if parts.scheme not in ("ws", "wss") or not parts.hostname or port < 0:
                await send.send(_DialFailed(link, "apps.connections.open gave no ws(s) URL"))
                return
            host = parts.hostname
            host_header = host if parts.port is None else f"{host}:{port}"
            resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            stream: trio.SocketStream | trio.SSLStream[trio.SocketStream] | None = None
            dialed = False
            try:
                with scope:
                    try:
                        async with trio.open_nursery() as own:
                            with trio.fail_after(self.handshake_timeout):
                                if secure:
                                    # The transport's one context, as its Web API calls':
                                    # a dial made its own at each reconnect (about 1 MB).
                                    stream = await tls_stream(host, port, self._tls.get())
                                else:
                                    stream = await trio.open_tcp_stream(host, port)
                                ws = await trio_websocket.wrap_client_stream(
                                    own,
                                    stream,
                                    host_header,
                                    resource,
                                    max_message_size=_MAX_MESSAGE,
                                )
                            socket = self._sockets.get(link)
                            if socket is None:  # closed while dialing
                                own.cancel_scope.cancel()  # the library's reader too
                                return
                            socket.ws, socket.stream, socket.nursery = ws, stream, own
                            dialed = True
                            await send.send(_Dialed(link))
                            reason = await _read(link, ws, send)
                            await send.send(_Lost(link, reason))
                            own.cancel_scope.cancel()
                    except* Exception as group:
                        # Whatever ends one link (a refused handshake, a reset, a timeout) is
                        # that link's loss, reported by its type: never a crash of the client.
                        failure = failure_name(_first(group, Exception))
                        if dialed:
                            await send.send(_Lost(link, f"link failed: {failure}"))
                        else:
                            await send.send(_DialFailed(link, f"WebSocket handshake: {failure}"))
            finally:
                if stream is not None:
                    await trio.aclose_forcefully(stream)

    async def _ping(
        self,
        link: int,
        ws: trio_websocket.WebSocketConnection,
        send: trio.MemorySendChannel[_Input],
    ) -> None:
        import trio_websocket  # noqa: PLC0415 (lazy, see the facade)

        async with send:
            try:
                await ws.ping()
            except (trio_websocket.ConnectionClosed, ValueError):
                return  # the reader reports the close; a ValueError is a payload collision
            await send.send(_Pong(link))

    async def _accepted(self, envelope: Envelope) -> bool:
        """``accept`` ran for ``envelope`` (or there is none): it may be acknowledged."""
        if self.accept is None:
            return True
        try:
            with trio.fail_after(ACCEPT_WITHIN):
                await self.accept(envelope)
        except Exception:
            log.exception(
                "slack envelope not accepted (not acknowledged)",
                extra={"envelope_id": envelope.envelope_id, "type": envelope.type},
            )
            return False
        return True

    async def _handle(self, envelope: Envelope) -> None:
        try:
            await self.handler(envelope)
        except Exception:
            log.exception(
                "slack envelope handler failed",
                extra={"envelope_id": envelope.envelope_id, "type": envelope.type},
            )

    async def _close(self, link: int) -> None:
        socket = self._sockets.pop(link, None)
        if socket is None:
            return
        if socket.ws is not None:
            with trio.move_on_after(self.close_timeout):
                await socket.ws.aclose()
        if socket.stream is not None:
            await trio.aclose_forcefully(socket.stream)
        socket.scope.cancel()


async def _read(
    link: int, ws: trio_websocket.WebSocketConnection, send: trio.MemorySendChannel[_Input]
) -> str:
    """Every message of ``ws`` into the channel until it closes; how it closed."""
    import trio_websocket  # noqa: PLC0415 (lazy, see the facade)

    try:
        while True:
            await send.send(_Received(link, await ws.get_message()))
    except trio_websocket.ConnectionClosed as error:
        code = error.reason
        if code is None:
            return "closed"
        return f"closed by peer ({code.code} {code.reason or ''})".strip()


def _first(group: BaseExceptionGroup[Any], kind: type[_E]) -> _E:
    """The first leaf exception of ``group`` (nurseries nest groups)."""
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            return _first(error, kind)
        if isinstance(error, kind):
            return error
    raise group
