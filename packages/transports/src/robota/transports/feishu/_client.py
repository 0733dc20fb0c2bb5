"""The long connection on trio: a thin shell that carries out ``LongConnection``'s effects.

One loop owns the machine. It runs the endpoint call (httpcore, or httpx behind a proxy:
``robota.transports._direct``) and the WebSocket handshake
(trio-websocket) itself, reads each socket in a task of its own and runs each handler in a
task of its own; all of them report back through one channel, so the machine sees one input
at a time, and ``tick`` runs at the machine's ``deadline()``::

    client = LongConnectionClient(domain=..., app_id=..., app_secret=..., handler=on_event)
    async with trio.open_nursery() as nursery:
        await nursery.start(client.run)      # returns once the link is up
        ...

``handler(delivery)`` gets each whole event and returns what goes back in the ACK (a card
callback's toast or card) or ``None``, once what must outlive a crash is written: the event is
ACKed when the handler returns (or raises: ``{"code": 500}``) and never before, so it should
do that and hand the rest off. One still working at ``ack_within`` is logged; the platform
may deliver its event again meanwhile, for the handler's claims to drop. ``run`` raises
``ConnectionRefused`` when the platform refuses for good (bad credentials, a forbidden or
over-limit handshake, reconnects exhausted). ``on_status(state, detail)`` is told the link's
status (``LongConnection.status``) whenever it changes, so a transport that cannot connect
says why while it keeps trying.
"""

from __future__ import annotations

import logging
import math
import random
import ssl
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import trio

from .._tls import OneTlsContext
from ._connection import (
    ACK_WITHIN,
    Close,
    Deliver,
    Delivery,
    Dial,
    Discarded,
    Discover,
    Effect,
    Fatal,
    LinkState,
    LongConnection,
    Overdue,
    Send,
    State,
    Up,
)
from ._endpoint import ENDPOINT_PATH, Endpoint, endpoint_outcome, handshake_outcome
from ._errors import ConnectionRefused
from ._rest import scrub

if TYPE_CHECKING:
    import trio_websocket

    from .._direct import AsyncHttp

__all__ = ["EventHandler", "LongConnectionClient", "StatusListener"]

EventHandler = Callable[[Delivery], Awaitable[Mapping[str, Any] | None]]
StatusListener = Callable[[LinkState, str | None], None]

log = logging.getLogger("robota.transports.feishu")

_MAX_MESSAGE = 16 * 1024 * 1024
_E = TypeVar("_E", bound=BaseException)


@dataclass(frozen=True, slots=True)
class _Received:
    link: int
    data: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class _Lost:
    link: int
    reason: str


@dataclass(frozen=True, slots=True)
class _Handled:
    ack_id: int
    result: Mapping[str, Any] | None
    failed: bool


_Input = _Received | _Lost | _Handled


class LongConnectionClient:
    def __init__(
        self,
        *,
        domain: str,
        app_id: str,
        app_secret: str,
        handler: EventHandler,
        ack_within: float = ACK_WITHIN,
        endpoint_timeout: float = 10.0,
        handshake_timeout: float = 15.0,
        close_timeout: float = 2.0,
        send_timeout: float = 5.0,
        jitter: Callable[[], float] = random.random,
        on_status: StatusListener | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.domain = domain.rstrip("/")
        self._tls = OneTlsContext(tls)
        """The TLS context of the endpoint call and the ``wss`` dial (the transport's one, so
        both trust what its REST calls trust); else httpx's default, made once."""
        self.app_id = app_id
        self._secret = app_secret
        self.handler = handler
        self.endpoint_timeout = endpoint_timeout
        self.handshake_timeout = handshake_timeout
        self.close_timeout = close_timeout
        self.send_timeout = send_timeout
        self.machine = LongConnection(ack_within=ack_within, jitter=jitter)
        self.connects = 0
        """How many times the link came up (1 + reconnects)."""
        self._ws: trio_websocket.WebSocketConnection | None = None
        self._stream: trio.abc.Stream | None = None
        self._link = 0
        self._on_status = on_status
        self._told: tuple[LinkState, str | None] | None = None

    @property
    def state(self) -> State:
        return self.machine.state

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        from .._direct import AsyncHttp  # noqa: PLC0415 (lazy, see the facade)

        http = AsyncHttp.for_url(
            self.domain, timeout=self.endpoint_timeout, context=self._tls.get()
        )
        async with http, trio.open_nursery() as nursery:
            try:
                reason = await self._loop(http, nursery, task_status)
            finally:
                # Also when cancelled: a socket left open outlives the task that read it.
                with trio.CancelScope(shield=True):
                    await self._close(graceful=False)
            nursery.cancel_scope.cancel()
        raise ConnectionRefused(f"Feishu long connection stopped: {reason}")

    async def _loop(
        self, http: AsyncHttp, nursery: trio.Nursery, task_status: trio.TaskStatus[None]
    ) -> str:
        """Runs the machine until it is fatal; returns the reason."""
        send, receive = trio.open_memory_channel[_Input](math.inf)
        started = False
        effects: deque[Effect] = deque(self.machine.start())
        while True:
            while effects:
                effect = effects.popleft()
                if isinstance(effect, Fatal):
                    await self._close()
                    log.error("feishu long connection refused", extra={"reason": effect.reason})
                    return effect.reason
                effects.extend(await self._carry_out(effect, http, nursery, send))
                if isinstance(effect, Up) and not started:
                    started = True
                    task_status.started()
            self._tell()
            with trio.move_on_at(self.machine.deadline()):
                item = await receive.receive()
                effects.extend(await self._feed(item))
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
        http: AsyncHttp,
        nursery: trio.Nursery,
        send: trio.MemorySendChannel[_Input],
    ) -> list[Effect]:
        machine = self.machine
        if isinstance(effect, Discover):
            return await self._discover(http)
        if isinstance(effect, Dial):
            return await self._dial(effect.url, nursery, send)
        if isinstance(effect, Send):
            if self._ws is None:
                return []
            import trio_websocket  # noqa: PLC0415 (lazy, see the facade)

            try:
                # Bounded: a write into a dead link's full buffer would stall the watchdog.
                with trio.fail_after(self.send_timeout):
                    await self._ws.send_message(effect.data)
            except trio_websocket.ConnectionClosed as error:
                log.warning("feishu long connection lost", extra={"reason": f"{error.reason}"})
                await self._close()
                return machine.closed(trio.current_time())
            except trio.TooSlowError:
                log.warning("feishu long connection lost", extra={"reason": "write timed out"})
                await self._close(graceful=False)
                return machine.closed(trio.current_time())
            return []
        if isinstance(effect, Deliver):
            nursery.start_soon(self._handle, effect.delivery, send.clone())
            return []
        if isinstance(effect, Up):
            self.connects += 1
            log.info("feishu long connection up", extra={"connects": self.connects})
            return []
        if isinstance(effect, Close):
            log.warning("feishu long connection closed", extra={"reason": effect.reason})
            await self._close()
            return []
        if isinstance(effect, Overdue):
            log.warning(
                "feishu event not answered within %.1f s: its ACK waits for the handler",
                effect.seconds,
                extra={"frame": effect.message_id},
            )
            return []
        assert isinstance(effect, Discarded), effect
        log.warning("feishu input dropped", extra={"reason": effect.reason})
        return []

    async def _feed(self, item: _Input) -> list[Effect]:
        now = trio.current_time()
        if isinstance(item, _Handled):
            return self.machine.handled(item.ack_id, now, result=item.result, failed=item.failed)
        if item.link != self._link:
            return []  # from a socket already replaced
        if isinstance(item, _Received):
            return self.machine.received(item.data, now)
        log.warning("feishu long connection lost", extra={"reason": item.reason})
        await self._close()
        return self.machine.closed(now)

    async def _discover(self, http: AsyncHttp) -> list[Effect]:
        from .._direct import Unanswered, json_bytes  # noqa: PLC0415 (lazy, see the facade)

        now = trio.current_time
        try:
            response = await http.request(
                "POST",
                self.domain + ENDPOINT_PATH,
                headers={"locale": "zh", "Content-Type": "application/json"},
                content=json_bytes({"AppID": self.app_id, "AppSecret": self._secret}),
            )
        except Unanswered as error:
            return self.machine.failed(f"endpoint call failed: {error.name}", now(), fatal=False)
        outcome = endpoint_outcome(response.status, response.content)
        if isinstance(outcome, Endpoint):
            return self.machine.discovered(outcome.url, outcome.client_config, now())
        reason = scrub(outcome.reason, self._secret)
        if not outcome.fatal:
            log.warning("feishu endpoint call failed", extra={"reason": reason})
        return self.machine.failed(reason, now(), fatal=outcome.fatal)

    async def _dial(
        self, url: str, nursery: trio.Nursery, send: trio.MemorySendChannel[_Input]
    ) -> list[Effect]:
        import trio_websocket  # noqa: PLC0415 (lazy, see the facade)

        from .._dial import failure_name, tls_stream  # noqa: PLC0415 (lazy, see the facade)

        now = trio.current_time
        parts = urlsplit(url)
        secure = parts.scheme == "wss"
        try:
            port = parts.port or (443 if secure else 80)
        except ValueError:
            port = -1
        if parts.scheme not in ("ws", "wss") or not parts.hostname or port < 0:
            return self.machine.failed("the endpoint URL is not a ws(s) URL", now(), fatal=False)
        host = parts.hostname
        resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        stream: trio.abc.Stream | None = None
        link = self._link + 1
        rejected: trio_websocket.ConnectionRejected | None = None
        broken: BaseException | None = None
        try:
            with trio.fail_after(self.handshake_timeout):
                if secure:
                    # The transport's one context: a dial made one of its own each time, the
                    # system's certificates (about 1 MB) loaded at every reconnect, which
                    # the REST calls did not trust.
                    stream = await tls_stream(host, port, self._tls.get())
                else:
                    stream = await trio.open_tcp_stream(host, port)
                host_header = host if parts.port is None else f"{host}:{port}"
                ws = await nursery.start(
                    self._serve_link, stream, host_header, resource, link, send.clone()
                )
        except* trio_websocket.ConnectionRejected as group:
            rejected = _first(group, trio_websocket.ConnectionRejected)
        except* (
            OSError,
            trio.BrokenResourceError,
            trio_websocket.HandshakeError,
            trio.TooSlowError,
        ) as group:
            broken = _first(group, BaseException)
        if rejected is not None or broken is not None:
            await _close_forcefully(stream)
        if rejected is not None:
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in rejected.headers
            }
            outcome = handshake_outcome(rejected.status_code, headers)
            return self.machine.failed(outcome.reason, now(), fatal=outcome.fatal)
        if broken is not None:
            reason = f"WebSocket handshake failed: {failure_name(broken)}"
            log.warning("feishu handshake failed", extra={"reason": reason})
            return self.machine.failed(reason, now(), fatal=False)
        self._link = link
        self._ws, self._stream = ws, stream
        return self.machine.opened(now())

    async def _serve_link(
        self,
        stream: trio.SocketStream | trio.SSLStream[trio.SocketStream],
        host: str,
        resource: str,
        link: int,
        send: trio.MemorySendChannel[_Input],
        *,
        task_status: trio.TaskStatus[trio_websocket.WebSocketConnection],
    ) -> None:
        """One WebSocket: the handshake, then its messages into the machine's channel.

        The library's own reader task runs in a nursery of this link, so what it raises (a
        refused handshake above all) ends this link, never the client."""
        import trio_websocket  # noqa: PLC0415 (lazy, see the facade)

        reason = "closed"
        started = lost = False
        async with send:
            try:
                async with trio.open_nursery() as own:
                    ws = await trio_websocket.wrap_client_stream(
                        own, stream, host, resource, max_message_size=_MAX_MESSAGE
                    )
                    started = True
                    task_status.started(ws)
                    try:
                        while True:
                            message = await ws.get_message()
                            if isinstance(message, bytes):  # text is not the protocol's
                                await send.send(_Received(link, message))
                    except trio_websocket.ConnectionClosed as error:
                        code = error.reason
                        if code is not None:
                            reason = f"closed by peer ({code.code} {code.reason or ''})".strip()
                    # The library's reader finishes the close handshake, and ends once the
                    # client closes the stream (``_close``), which this report leads to.
                    lost = True
                    await send.send(_Lost(link, reason))
            except* Exception as group:
                if not started:
                    raise
                if not lost:
                    failure = type(_first(group, Exception)).__name__
                    await send.send(_Lost(link, f"link failed: {failure}"))

    async def _handle(self, delivery: Delivery, send: trio.MemorySendChannel[_Input]) -> None:
        async with send:
            try:
                result = await self.handler(delivery)
            except Exception:
                log.exception(
                    "feishu event handler failed", extra={"message_id": delivery.message_id}
                )
                await send.send(_Handled(delivery.ack_id, None, failed=True))
            else:
                await send.send(_Handled(delivery.ack_id, result, failed=False))

    async def _close(self, *, graceful: bool = True) -> None:
        ws, self._ws = self._ws, None
        stream, self._stream = self._stream, None
        self._link += 1  # whatever the old socket still reports is stale now
        if ws is not None and graceful:
            with trio.move_on_after(self.close_timeout):
                await ws.aclose()
        await _close_forcefully(stream)


def _first(group: BaseExceptionGroup[Any], kind: type[_E]) -> _E:
    """The first leaf exception of ``group`` (nurseries nest groups)."""
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            return _first(error, kind)
        if isinstance(error, kind):
            return error
    raise group


async def _close_forcefully(stream: trio.abc.Stream | None) -> None:
    if stream is not None:
        await trio.aclose_forcefully(stream)
