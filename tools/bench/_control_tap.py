"""A wire tap on a running host's control socket: when each request came in and its first
reply went out, as seen on the socket, so the host's own share of a request is measured apart
from the client's process start.

The tap moves the host's socket aside (``control.sock`` -> ``control.tapped.sock``) and listens
at its path itself, relaying every connection byte for byte in a thread of its own; the host
keeps serving the socket it bound (it only looks at the path when it removes its file on the
way out, and leaves a file that is not its own). Closing the tap puts the host's socket back,
so a later ``server stop`` / ``server start`` finds the path as the host left it.

Each entry is (request type, seconds at its line's last byte in, seconds at its reply's first
byte out), ``time.perf_counter`` of this process, the clock the benchmark times processes with.
The relay costs the client two loopback hops (tens of microseconds), which land in the client's
figure and not in the tap's.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

__all__ = ["ControlTap", "TapEntry"]

TapEntry = tuple[str, float, float]


class ControlTap:
    def __init__(self, socket_path: Path) -> None:
        self.path = socket_path
        self.aside = socket_path.with_name("control.tapped.sock")
        self.entries: list[TapEntry] = []
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._closing = False

    def __enter__(self) -> ControlTap:
        self.path.rename(self.aside)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(self.path))
        self.path.chmod(0o600)
        listener.listen(16)
        self._listener = listener
        self._spawn(self._accept)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing = True
        if self._listener is not None:
            self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        for thread in self._threads:
            thread.join(5)
        self.path.unlink(missing_ok=True)
        self.aside.rename(self.path)

    def requests(self, type_name: str, since: int) -> list[tuple[float, float]]:
        """(request in, reply out) of the ``type_name`` requests recorded after the first
        ``since`` entries."""
        with self._lock:
            return [(came, out) for name, came, out in self.entries[since:] if name == type_name]

    def mark(self) -> int:
        with self._lock:
            return len(self.entries)

    def _spawn(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        assert self._listener is not None
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(str(self.aside))
            self._spawn(self._relay, client, upstream)

    def _relay(self, client: socket.socket, upstream: socket.socket) -> None:
        """One connection: client -> host and back, noting each request line's arrival and
        the first bytes of the host's next reply (requests on a connection are answered in
        order: a CLI command sends one and waits)."""
        pending: list[tuple[str, float]] = []
        buffered = b""
        with client, upstream:
            while True:
                ready, _, _ = select.select([client, upstream], [], [], 1.0)
                if self._closing and not ready:
                    return
                for sock in ready:
                    data = sock.recv(64 * 1024)
                    now = time.perf_counter()
                    if not data:
                        return
                    if sock is client:
                        upstream.sendall(data)
                        buffered += data
                        *lines, buffered = buffered.split(b"\n")
                        pending += [(_type_of(line), now) for line in lines]
                    else:
                        # Noted before the reply goes on: the client may act on it (and the
                        # benchmark read the entries) before this thread runs again.
                        if pending:
                            name, came = pending.pop(0)
                            with self._lock:
                                self.entries.append((name, came, now))
                        client.sendall(data)


def _type_of(line: bytes) -> str:
    try:
        return str(json.loads(line).get("type"))
    except (ValueError, AttributeError):
        return "?"
