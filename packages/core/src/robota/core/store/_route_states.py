"""``RouteStates`` in SQLite: passivated route actors keep their state across restarts.

``RouteDirectory`` calls ``load`` from whichever thread activates a route and ``save`` from the
passivating route actor's thread, and both may block. So ``save`` is a write through the writer,
waited for synchronously (a route counts as passivated only once its state is committed), and
``load`` reads on one shared reader connection behind a lock: activations are rare, and one
connection per route thread would be opened and dropped with every activation. The reader is
opened on the first ``load``, after the writer confirmed the schema is migrated.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar, overload

from ._client import StoreClient
from ._connection import open_reader
from ._database import Database
from ._ops import SaveRouteState
from ._queries import load_route_state
from ._records import JSONValue, dump_json, load_json

__all__ = ["SqliteRouteStates"]

S = TypeVar("S")


class SqliteRouteStates(Generic[S]):
    """Route states stored as JSON text in ``route_states``, one row per route key.

    Without ``encode``/``decode`` the states are JSON values themselves; route actors with richer
    states pass both (for example ``dataclasses.asdict`` plus a constructor).
    """

    @overload
    def __init__(
        self: SqliteRouteStates[JSONValue],
        client: StoreClient,
        path: str | os.PathLike[str],
        *,
        timeout: float = ...,
    ) -> None: ...

    @overload
    def __init__(
        self,
        client: StoreClient,
        path: str | os.PathLike[str],
        *,
        encode: Callable[[S], JSONValue],
        decode: Callable[[JSONValue], S],
        timeout: float = ...,
    ) -> None: ...

    def __init__(
        self,
        client: StoreClient,
        path: str | os.PathLike[str],
        *,
        encode: Callable[[S], JSONValue] | None = None,
        decode: Callable[[JSONValue], S] | None = None,
        timeout: float = 10.0,
    ) -> None:
        if (encode is None) != (decode is None):
            raise ValueError("pass both encode and decode, or neither")
        self._client = client
        self._path = os.fspath(path)
        self._encode = encode
        self._decode = decode
        self._timeout = timeout
        self._lock = threading.Lock()
        self._reader: Database | None = None

    def load(self, key: str) -> S | None:
        with self._lock:
            if self._reader is None:
                # The first activation can race the writer's migrations at startup.
                self._client.ready_sync(timeout=self._timeout)
                self._reader = open_reader(self._path, any_thread=True)
            text = load_route_state(self._reader, key)
        if text is None:
            return None
        value = load_json(text)
        return self._decode(value) if self._decode is not None else value  # type: ignore[return-value]

    def save(self, key: str, state: S) -> None:
        value = self._encode(state) if self._encode is not None else state
        try:
            text = dump_json(value)
        except (TypeError, ValueError) as error:
            raise TypeError(f"route {key!r}: state is not JSON-serialisable: {error}") from error
        self._client.write_sync(SaveRouteState(key, text), timeout=self._timeout)

    def close(self) -> None:
        """Close the reader connection; a later ``load`` opens a new one."""
        with self._lock:
            reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()
