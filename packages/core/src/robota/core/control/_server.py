"""The control endpoint's trio adapter: a Unix socket serving registered request handlers.

A thin shell around ``ServerConnection``: it owns the socket file (created in an owner-only
directory before ``serve`` reports started, removed when it ends), checks each peer's uid,
feeds bytes to the protocol and sends back what it says. Requests on one connection are served
one after another, so replies come in request order; connections are served concurrently, at
most ``max_connections`` at once (the next one is told ``busy`` and closed).

A request only the operator may make (``operator=True`` on its endpoint: a confirmation asked
on a terminal, an attach) is refused as ``forbidden`` when the peer's process ancestry reaches
an agent robota started (``_ancestry``): a terminal an agent opened is not a person.

Bounds: a connection that sends nothing for ``idle_timeout`` seconds is told so and closed; a
reply the peer does not read within the same time closes it too; a request line is at most
``max_line`` bytes. A handler's exception is the request's ``internal`` failure, logged once
with its traceback; the server keeps serving. A handler refuses a request on purpose by
raising ``HandlerError`` with a code of its own; that is a reply, not a crash, and not logged.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import trio

from ..protocol import Failure, Ok, Reply, encode_reply
from ._ancestry import caller_refusal
from ._errors import ControlError
from ._peer import peer_credentials
from ._protocol import MAX_LINE, Call, ErrorCode, ServerConnection
from ._requests import RequestRegistry
from ._socket_file import (
    BoundSocketFile,
    claim_socket_path,
    ensure_runtime_dir,
    listening_socket,
)

__all__ = ["ControlServer", "Endpoint", "HandlerError", "ServerLimits", "StreamEndpoint"]

logger = logging.getLogger("robota.core.control")

R = TypeVar("R")

_RECEIVE = 64 * 1024
_ACCEPT_RETRY = 0.1
_REFUSAL_SEND = 1.0
"""How long a refused connection's one reply may wait to be read: refusals stay cheap even
when a flood of connections reads nothing."""
_TRANSIENT_ACCEPT = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}


class HandlerError(ControlError):
    """Raised by a handler to refuse its request with ``code`` (``not_found``, ...)."""

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


@dataclass(frozen=True, slots=True)
class Endpoint(Generic[R]):
    """One request type and the coroutine that serves it; its return value is the reply's
    ``result`` and must be JSON-serialisable."""

    request: type[R]
    handle: Callable[[R], Awaitable[object]]
    operator: bool = False
    """Only the operator may ask: refused when the caller descends from an agent's process."""


@dataclass(frozen=True, slots=True)
class StreamEndpoint(Generic[R]):
    """A request that turns its connection into a stream (an attached terminal): ``handle``
    gets the request and the connection and owns it until it returns; the connection then
    closes. A ``HandlerError`` raised before the handler wrote anything is the request's
    failure reply, as for an ``Endpoint``. The peer must wait for the handler's first line
    before it sends more: bytes sent behind the request are not handed over."""

    request: type[R]
    handle: Callable[[R, trio.SocketStream], Awaitable[None]]
    operator: bool = False
    """Only the operator may ask: refused when the caller descends from an agent's process."""


@dataclass(frozen=True, slots=True)
class ServerLimits:
    max_connections: int = 32
    idle_timeout: float = 300.0
    """Seconds without a byte from the peer (and the longest a reply may wait to be read)."""
    max_line: int = MAX_LINE


class ControlServer:
    """Serves ``endpoints`` on ``socket_path`` to processes of ``allowed_uid`` (this user)."""

    def __init__(
        self,
        socket_path: Path,
        endpoints: Sequence[Endpoint[Any] | StreamEndpoint[Any]],
        *,
        limits: ServerLimits = ServerLimits(),
        allowed_uid: int | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.limits = limits
        self.allowed_uid = os.geteuid() if allowed_uid is None else allowed_uid
        self._registry = RequestRegistry(e.request for e in endpoints)
        self._handlers: dict[type[Any], Callable[[Any], Awaitable[object]]] = {
            e.request: e.handle for e in endpoints if isinstance(e, Endpoint)
        }
        self._streams: dict[type[Any], Callable[[Any, trio.SocketStream], Awaitable[None]]] = {
            e.request: e.handle for e in endpoints if isinstance(e, StreamEndpoint)
        }
        self._operator_only = frozenset(e.request for e in endpoints if e.operator)
        self._connections = 0

    @property
    def connections(self) -> int:
        """Connections being served right now."""
        return self._connections

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Bind the socket, report started, serve until cancelled, then remove the socket.

        Raises ``SocketInUse`` when a live process already serves ``socket_path``.
        """
        ensure_runtime_dir(self.socket_path.parent)
        await trio.to_thread.run_sync(claim_socket_path, self.socket_path)
        sock = trio.socket.from_stdlib_socket(
            await trio.to_thread.run_sync(
                listening_socket, self.socket_path, self.limits.max_connections
            )
        )
        bound: BoundSocketFile | None = None
        try:
            bound = BoundSocketFile(self.socket_path)
            listener = trio.SocketListener(sock)
            task_status.started()
            async with listener, trio.open_nursery() as nursery:
                while True:
                    stream = await self._accept(listener)
                    if self._connections >= self.limits.max_connections:
                        nursery.start_soon(self._refuse_busy, stream)
                    else:
                        self._connections += 1
                        nursery.start_soon(self._serve_connection, stream)
        finally:
            sock.close()
            if bound is not None:
                bound.remove()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """``serve``, as a child of a supervision tree runs a service."""
        await self.serve(task_status=task_status)

    async def _accept(self, listener: trio.SocketListener) -> trio.SocketStream:
        while True:
            try:
                return await listener.accept()
            except OSError as error:
                if error.errno not in _TRANSIENT_ACCEPT:
                    raise
                logger.warning("control socket: accept failed (%s); retrying", error)
                await trio.sleep(_ACCEPT_RETRY)

    async def _refuse_busy(self, stream: trio.SocketStream) -> None:
        limit = self.limits.max_connections
        message = f"the host serves at most {limit} control connections at once; try again"
        try:
            async with stream:
                await self._send(stream, Failure(None, ErrorCode.BUSY, message), _REFUSAL_SEND)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def _serve_connection(self, stream: trio.SocketStream) -> None:
        try:
            async with stream:
                if not await self._peer_allowed(stream):
                    return
                await self._converse(stream, _peer_pid(stream))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the peer went away; nothing to answer
        finally:
            self._connections -= 1

    async def _peer_allowed(self, stream: trio.SocketStream) -> bool:
        try:
            uid: int | None = peer_credentials(stream.socket).uid
        except OSError as error:
            uid, why = None, f"its peer credentials are unavailable ({error})"
        if uid == self.allowed_uid:
            return True
        if uid is not None:
            why = f"the peer runs as uid {uid}, the host as uid {self.allowed_uid}"
        logger.warning("control socket: refused a connection: %s", why)
        refusal = Failure(None, ErrorCode.FORBIDDEN, f"connection refused: {why}")
        await self._send(stream, refusal, _REFUSAL_SEND)
        return False

    async def _converse(self, stream: trio.SocketStream, peer_pid: int | None) -> None:
        connection = ServerConnection(self._registry, max_line=self.limits.max_line)
        while True:
            data = b""
            with trio.move_on_after(self.limits.idle_timeout) as idle:
                data = await stream.receive_some(_RECEIVE)
            if idle.cancelled_caught:
                message = f"no request for {self.limits.idle_timeout:g} s; closing"
                await self._send(stream, Failure(None, ErrorCode.IDLE, message))
                return
            items = connection.receive(data) if data else connection.end_of_input()
            for item in items:
                refusal = await self._not_operator(item, peer_pid)
                if refusal is not None:
                    if not await self._send(stream, refusal):
                        return
                    continue
                if isinstance(item, Call) and type(item.request) in self._streams:
                    failure = await self._stream(item, stream)
                    if failure is not None:
                        await self._send(stream, failure)
                    return
                reply = item if isinstance(item, Failure) else await self._dispatch(item)
                if not await self._send(stream, reply):
                    return
            if not data:
                return

    async def _not_operator(self, item: Call | Failure, peer_pid: int | None) -> Failure | None:
        """The refusal of an operator-only request from a peer that descends from an agent's
        process (read off the loop: it walks ``/proc``)."""
        if not isinstance(item, Call) or type(item.request) not in self._operator_only:
            return None
        if peer_pid is None:
            return None  # a platform whose peer credentials name no pid: nothing to walk
        why = await trio.to_thread.run_sync(caller_refusal, peer_pid)
        if why is None:
            return None
        name = getattr(item.request, "TYPE", type(item.request).__name__)
        logger.warning("control socket: refused %r: %s", name, why)
        return Failure(item.id, ErrorCode.FORBIDDEN, f"only the operator may ask {name!r}: {why}")

    async def _dispatch(self, call: Call) -> Reply:
        request = call.request
        name = getattr(request, "TYPE", type(request).__name__)
        try:
            result = await self._handlers[type(request)](request)
        except HandlerError as refusal:
            return Failure(call.id, refusal.code, refusal.message, refusal.field)
        except Exception as error:
            logger.exception("control request %r (id %r) failed", name, call.id)
            return Failure(
                call.id,
                ErrorCode.INTERNAL,
                f"the {name!r} handler failed ({type(error).__name__}); "
                "the host's log has the traceback",
            )
        return Ok(call.id, result)

    async def _stream(self, call: Call, stream: trio.SocketStream) -> Failure | None:
        """Hand the connection to the request's stream handler; its refusal, if it refused."""
        try:
            await self._streams[type(call.request)](call.request, stream)
        except HandlerError as refusal:
            return Failure(call.id, refusal.code, refusal.message, refusal.field)
        except Exception:
            # This connection ends; the server and its other connections go on.
            name = getattr(call.request, "TYPE", type(call.request).__name__)
            logger.exception("control stream %r (id %r) failed", name, call.id)
        return None

    async def _send(
        self, stream: trio.SocketStream, reply: Reply, timeout: float | None = None
    ) -> bool:
        """Send ``reply``; False when the peer did not take it within ``timeout`` (by default
        the idle timeout)."""
        try:
            line = encode_reply(reply)
        except (TypeError, ValueError) as error:
            logger.exception("control reply to id %r is not JSON", reply.id)
            line = encode_reply(
                Failure(reply.id, ErrorCode.INTERNAL, f"the handler's result is not JSON: {error}")
            )
        with trio.move_on_after(self.limits.idle_timeout if timeout is None else timeout):
            await stream.send_all(line)
            return True
        return False


def _peer_pid(stream: trio.SocketStream) -> int | None:
    try:
        return peer_credentials(stream.socket).pid
    except OSError:
        return None
