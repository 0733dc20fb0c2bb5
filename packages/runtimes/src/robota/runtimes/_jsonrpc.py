"""A JSON-RPC connection over a pair of trio byte streams (an agent's stdin and stdout).

``Connection.run`` reads lines and dispatches them: responses complete the pending request with
the same id, notifications and server-to-client requests go to the handlers given at
construction. A server request nobody handles is answered with -32601 (method not found), as
the protocol demands, so the agent never waits for an answer that will not come.

A connection may be *strict* (``corrupt_after``): a line over the size limit, or that many
malformed lines in a row, means the peer's state can no longer be trusted (the lost line may
have been the answer a turn waits for), so reading stops, ``corruption`` says why and every
pending request fails as if the stream had ended. The agent's supervisor restarts such an agent.

Requests time out per call (``timeout=None`` waits forever, which ``thread/fork`` needs: a
retry after a timeout could create a second branch). When the stream ends, every pending request
fails with ``ConnectionLost``.

A connection may take over requests written before it existed (``written``: an agent's
``initialize``, written at its spawn so the agent answers while robota still loads, see
``_prestart``). They hold the first ids, framed by the same ``request_line``; the client's first
request of the same method then awaits that response instead of writing the request again, and
one with other params is refused (``ValueError``) rather than sent twice. Notifications written
before (``notified``: the App Server's ``initialized``) are not written again either.

Some of those requests may be guesses (``speculative``: a new task's ``thread/start``, written
with the settings print mode expects the engine to open its session with). A guess the client's
request does not match is dropped (its response, when it comes, is discarded unlogged) and the
client's request goes out as usual; one the peer refused (it was written before the peer had
answered ``initialize``) is asked again, in order. So a guess can only save time, never change
what the client gets.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

import trio

from robota.core import AgentError

from ._framing import (
    DEFAULT_MAX_LINE,
    LineDecoder,
    Malformed,
    Notification,
    Request,
    Response,
    line_of,
    notification_line,
    request_line,
)

__all__ = [
    "Connection",
    "ConnectionLost",
    "PendingRequest",
    "MethodNotFound",
    "RequestRefused",
    "RpcError",
    "RpcTimeout",
    "request_line",
]

logger = logging.getLogger("robota.runtimes.jsonrpc")

METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

NotificationHandler = Callable[[str, Any], None]
RequestHandler = Callable[[str, Any], Awaitable[Any]]


class RpcError(AgentError):
    """The peer answered a request with an error object."""

    def __init__(self, method: str, code: int, message: str, data: Any = None) -> None:
        self.method = method
        self.code = code
        self.message = message
        self.data = data
        super().__init__(f"{method}: error {code}: {message}")


class RpcTimeout(AgentError):
    """No response within the request's timeout."""


class ConnectionLost(AgentError):
    """The stream ended (the agent exited or closed stdout) before the response came."""


class MethodNotFound(AgentError):
    """Raised by a request handler for a method it does not serve: answered with -32601."""


class RequestRefused(AgentError):
    """Raised by a request handler to answer with a specific JSON-RPC error."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(message)


async def _no_requests(method: str, params: Any) -> Any:  # noqa: ARG001 (handler signature)
    raise MethodNotFound


class PendingRequest:
    """A request written to the peer, its response still to come (``Connection.send_request``)."""

    __slots__ = ("_connection", "_id", "_receive", "method")

    def __init__(
        self,
        connection: Connection,
        request_id: int,
        method: str,
        receive: trio.MemoryReceiveChannel[Response],
    ) -> None:
        self._connection = connection
        self._id = request_id
        self._receive = receive
        self.method = method

    @property
    def request_id(self) -> int:
        return self._id

    async def result(self, *, timeout: float | None) -> Any:
        name, method = self._connection.name, self.method
        try:
            with trio.fail_after(timeout if timeout is not None else math.inf):
                try:
                    response = await self._receive.receive()
                except trio.EndOfChannel:
                    raise ConnectionLost(
                        f"{name}: connection lost while waiting for {method}"
                    ) from None
        except trio.TooSlowError:
            raise RpcTimeout(f"{name}: {method} got no response in {timeout:g} s") from None
        finally:
            self.abandon()
        if response.error is not None:
            error = response.error
            raise RpcError(
                method,
                int(error.get("code", INTERNAL_ERROR)),
                str(error.get("message", "")),
                error.get("data"),
            )
        return response.result

    def abandon(self) -> None:
        """Stop waiting: a response that still comes is logged as unknown."""
        self._connection._pending.pop(self._id, None)


class Connection:
    """One JSON-RPC peer. Start ``run`` in a nursery, then ``request`` and ``notify``."""

    def __init__(
        self,
        send: trio.abc.SendStream,
        receive: trio.abc.ReceiveStream,
        *,
        name: str,
        jsonrpc_field: bool,
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler = _no_requests,
        max_line: int = DEFAULT_MAX_LINE,
        corrupt_after: int | None = None,
        written: Sequence[tuple[str, Any]] = (),
        notified: Sequence[tuple[str, Any]] = (),
        speculative: Collection[str] = (),
    ) -> None:
        self.name = name
        self._send_stream = send
        self._receive_stream = receive
        self._jsonrpc_field = jsonrpc_field
        self.on_notification = on_notification
        self.on_request = on_request
        """Both handlers may be replaced until ``run`` starts (a client built on the
        connection installs its own)."""
        self._decoder = LineDecoder(max_line)
        self._send_lock = trio.Lock()
        self._next_id = 0
        self._pending: dict[int | str, trio.MemorySendChannel[Response]] = {}
        self._closed = False
        self._nursery: trio.Nursery | None = None
        self._corrupt_after = corrupt_after
        self._malformed_run = 0
        self.malformed = 0
        self.corruption: str | None = None
        """Why a strict connection stopped reading, or ``None``."""
        self._written: dict[str, tuple[bytes, PendingRequest]] = {}
        self._guesses: set[int | str] = set()
        """Ids of the ``speculative`` requests written before the connection."""
        self._dropped: set[int | str] = set()
        """Ids of guesses that missed: their responses are discarded when they come."""
        for method, params in written:  # ids 0, 1, ... as they were written
            line = request_line(self._next_id, method, params, jsonrpc_field=jsonrpc_field)
            pending = self._expect(method)
            self._written[method] = (line, pending)
            if method in speculative:
                self._guesses.add(pending.request_id)
        self._notified = {
            method: notification_line(method, params, jsonrpc_field=jsonrpc_field)
            for method, params in notified
        }

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read until the stream ends; then fail whatever is still pending."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                task_status.started()
                async for chunk in self._receive_stream:
                    for message in self._decoder.feed(chunk):
                        self._dispatch(message)
                    if self.corruption is not None:
                        break
                nursery.cancel_scope.cancel()
        finally:
            self._closed = True
            for waiter in self._pending.values():
                waiter.close()
            self._pending.clear()

    async def request(self, method: str, params: Any = None, *, timeout: float | None) -> Any:
        """Send a request and wait for its result (``RpcError`` when the peer answers with an
        error, ``RpcTimeout`` after ``timeout`` seconds, ``ConnectionLost``)."""
        pending = await self.send_request(method, params)
        if pending.request_id not in self._guesses:
            return await pending.result(timeout=timeout)
        try:
            return await pending.result(timeout=timeout)
        except RpcError as error:
            logger.info(
                "%s: %s written ahead was refused (%s); asking again", self.name, method, error
            )
        return await (await self._send_new(method, params)).result(timeout=timeout)

    async def send_request(self, method: str, params: Any = None) -> PendingRequest:
        """Write a request now (what the pipe takes goes out before anything else runs) and
        return the handle its result is awaited on, so what announces a request can follow
        its write. The handle must be awaited (``result``) or ``abandon``-ed."""
        if self._closed:
            raise ConnectionLost(f"{self.name}: connection closed before {method}")
        if method in self._written:
            taken = self._take_written(method, params)
            if taken is not None:
                return taken
        return await self._send_new(method, params)

    async def _send_new(self, method: str, params: Any) -> PendingRequest:
        pending = self._expect(method)
        line = request_line(pending.request_id, method, params, jsonrpc_field=self._jsonrpc_field)
        try:
            await self._write(line)
        except BaseException:
            pending.abandon()
            raise
        return pending

    def _expect(self, method: str) -> PendingRequest:
        """The next id, and the handle its response will complete."""
        request_id = self._next_id
        self._next_id += 1
        send, receive = trio.open_memory_channel[Response](1)
        self._pending[request_id] = send
        return PendingRequest(self, request_id, method, receive)

    def _take_written(self, method: str, params: Any) -> PendingRequest | None:
        """The response to await for a request written before; ``None``: write it now (a
        guess that missed)."""
        line, pending = self._written.pop(method)
        ours = request_line(pending.request_id, method, params, jsonrpc_field=self._jsonrpc_field)
        if ours != line:
            pending.abandon()
            if pending.request_id in self._guesses:
                self._dropped.add(pending.request_id)
                logger.info("%s: %s written ahead with other params; sending it", self.name, method)
                return None
            raise ValueError(
                f"{self.name}: {method} was written before the connection with other params"
            )
        return pending

    async def notify(self, method: str, params: Any = None) -> None:
        line = notification_line(method, params, jsonrpc_field=self._jsonrpc_field)
        if self._notified.pop(method, None) == line:
            return  # written before the connection: the peer has it
        await self._write(line)

    # -- internals -----------------------------------------------------------------------------

    async def _write(self, message: dict[str, Any] | bytes) -> None:
        """Write a message, or a line already framed (``request_line``)."""
        if isinstance(message, bytes):
            data = message
        else:
            data = line_of(message, jsonrpc_field=self._jsonrpc_field)
        try:
            self._send_lock.acquire_nowait()
        except trio.WouldBlock:
            await self._send_lock.acquire()
        try:
            # What the pipe takes at once is written now: ``send_all`` yields to the scheduler
            # before it writes, a trip round the loop on every prompt's way to the agent.
            sent = self._write_now(data)
            if sent < len(data):
                await self._send_stream.send_all(data[sent:])
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
            raise ConnectionLost(f"{self.name}: cannot write: {error}") from None
        finally:
            self._send_lock.release()

    def _write_now(self, data: bytes) -> int:
        """Write to a file-descriptor stream without blocking; the bytes written."""
        fileno = getattr(self._send_stream, "fileno", None)
        if fileno is None:
            return 0
        try:
            return os.write(fileno(), data)
        except BlockingIOError:
            return 0

    def _dispatch(self, message: Malformed | Request | Notification | Response) -> None:
        if self.corruption is not None:
            return
        if not isinstance(message, Malformed):
            self._malformed_run = 0
        if isinstance(message, Response):
            waiter = self._pending.get(message.id)
            if waiter is None and message.id in self._dropped:
                self._dropped.discard(message.id)  # the answer to a guess that missed
                return
            if waiter is None:
                logger.warning(
                    "%s: response to unknown request id %r",
                    self.name,
                    message.id,
                    extra={"agent": self.name},
                )
                return
            try:
                waiter.send_nowait(message)
            except (trio.WouldBlock, trio.BrokenResourceError):
                pass  # a duplicate response, or the requester gave up
        elif isinstance(message, Notification):
            if self.on_notification is not None:
                try:
                    self.on_notification(message.method, message.params)
                except Exception:
                    logger.exception("%s: notification handler failed", self.name)
        elif isinstance(message, Request):
            assert self._nursery is not None
            self._nursery.start_soon(self._answer, message)
        else:
            self.malformed += 1
            self._malformed_run += 1
            self._judge(message)
            logger.warning(
                "%s: skipped a malformed line (%s): %r",
                self.name,
                message.reason,
                message.head,
                extra={"agent": self.name},
            )

    def _judge(self, message: Malformed) -> None:
        if self._corrupt_after is None:
            return
        if message.overlong:
            self.corruption = (
                f"{self.name} wrote a line longer than {self._decoder.max_line} bytes "
                "(something it said was lost)"
            )
        elif self._malformed_run >= self._corrupt_after:
            self.corruption = (
                f"{self.name} wrote {self._malformed_run} lines in a row that are not "
                "JSON-RPC (its output is garbage)"
            )

    async def _answer(self, request: Request) -> None:
        reply: dict[str, Any] = {"id": request.id}
        try:
            reply["result"] = await self.on_request(request.method, request.params)
        except MethodNotFound:
            reply["error"] = {
                "code": METHOD_NOT_FOUND,
                "message": f"method not found: {request.method}",
            }
        except RequestRefused as refused:
            reply["error"] = {"code": refused.code, "message": str(refused)}
        except Exception as error:
            logger.exception("%s: handling %s failed", self.name, request.method)
            reply["error"] = {"code": INTERNAL_ERROR, "message": str(error)}
        try:
            await self._write(reply)
        except ConnectionLost:
            pass  # the agent went away; nobody is waiting for this answer
