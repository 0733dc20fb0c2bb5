"""The control endpoint's client: blocking, stdlib sockets only, every wait bounded.

CLI commands (``robota server stop``, ``robota task send``) are short processes; this module
imports nothing beyond the standard library and the protocol's envelope and framing
(``robota.core.protocol``), so talking to the host
costs a socket round trip rather than an event loop's import.

The errors tell the three situations a command reports differently apart: no host at all
(``NoHostRunning``: the socket is missing or nobody listens, so start one), a host that
answered no (``HostRefused``, with the reply's code, message and field), and a host that did
not answer usably in time (``HostUnreachable``).
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from ..protocol import Failure, LineSplitter, Overlong, Reply, decode_reply, encode_request
from ._errors import HostRefused, HostUnreachable, NoHostRunning
from ._socket_file import socket_address

__all__ = ["ControlClient"]

MAX_REPLY = 64 * 1024 * 1024
"""A reply may be larger than a request (a status with many routes); still bounded."""

_RECEIVE = 64 * 1024


class ControlClient:
    """One connection to the host at ``socket_path``, opened on the first ``call``.

    ``timeout`` bounds connecting and each call, from sending the request to its whole reply.
    Use it as a context manager, or ``close`` it.
    """

    def __init__(self, socket_path: Path, *, timeout: float = 10.0) -> None:
        self.socket_path = socket_path
        self.timeout = timeout
        self._socket: socket.socket | None = None
        self._lines = LineSplitter(MAX_REPLY)
        self._next_id = 1

    def __enter__(self) -> ControlClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def call(
        self,
        type_name: str,
        fields: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> Any:
        """Send one request and return its reply's ``result``; raises ``HostRefused`` when the
        host answers with an error."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        sock = self._connected()
        request_id = self._next_id
        self._next_id += 1
        line = encode_request(request_id, type_name, fields or {})
        try:
            sock.settimeout(self._remaining(deadline, type_name))
            sock.sendall(line)
            reply = self._receive(sock, request_id, deadline, type_name)
        except OSError as error:
            self.close()
            if isinstance(error, TimeoutError):
                raise HostUnreachable(
                    f"the host at {self.socket_path} did not answer {type_name!r} in time"
                ) from None
            raise HostUnreachable(f"lost the connection to the host: {error}") from error
        if isinstance(reply, Failure):
            if reply.id is None:  # a verdict on the connection (forbidden, busy): it is over
                self.close()
            raise HostRefused(type_name, reply.code, reply.message, reply.field)
        return reply.result

    def stream(self, type_name: str, fields: Mapping[str, Any] | None = None) -> socket.socket:
        """Send one request that turns its connection into a stream (a ``StreamEndpoint``'s)
        and hand the connection over: the caller reads the stream's lines (a refusal is a
        failure reply among them) and closes it; this client holds it no more."""
        sock = self._connected()
        self._socket = None
        try:
            sock.sendall(encode_request(self._next_id, type_name, fields or {}))
        except OSError as error:
            sock.close()
            raise HostUnreachable(f"lost the connection to the host: {error}") from error
        self._next_id += 1
        return sock

    def _connected(self) -> socket.socket:
        if self._socket is not None:
            return self._socket
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            self._connect(sock)
        except BaseException:
            sock.close()
            raise
        self._socket = sock
        self._lines = LineSplitter(MAX_REPLY)
        return sock

    def _connect(self, sock: socket.socket) -> None:
        path = self.socket_path
        try:
            with socket_address(path) as address:
                sock.connect(address)
        except FileNotFoundError:
            raise NoHostRunning(path, "no control socket") from None
        except ConnectionRefusedError:
            raise NoHostRunning(path, "nothing listens on it") from None
        except TimeoutError:
            raise HostUnreachable(f"{path}: connecting timed out") from None
        except OSError as error:
            raise HostUnreachable(f"{path}: cannot connect: {error}") from error

    def _remaining(self, deadline: float, type_name: str) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(type_name)
        return left

    def _receive(
        self, sock: socket.socket, request_id: int, deadline: float, type_name: str
    ) -> Reply:
        while True:
            sock.settimeout(self._remaining(deadline, type_name))
            data = sock.recv(_RECEIVE)
            lines = self._lines.feed(data) if data else self._lines.close()
            for line in lines:
                reply = self._decode(line)
                if reply.id == request_id or reply.id is None:
                    return reply
            if not data:
                self.close()
                raise HostUnreachable(
                    f"the host closed the connection before answering {type_name!r}"
                )

    def _decode(self, line: bytes | Overlong) -> Reply:
        if isinstance(line, Overlong):
            self.close()
            raise HostUnreachable(f"the host's reply is longer than {line.limit} bytes")
        try:
            return decode_reply(line)
        except ValueError as error:
            self.close()
            raise HostUnreachable(f"the host's reply is not a control reply: {error}") from None
