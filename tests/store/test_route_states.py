"""``SqliteRouteStates``: passivated routes come back with their state, across a restart."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from robota.core import RouteActor, RouteDirectory
from robota.core.store import (
    JSONValue,
    SqliteRouteStates,
    StoreClient,
    StoreWriter,
    load_route_state,
    open_reader,
)


class Counter(RouteActor[Any]):
    """Counts the messages its route received, over all its incarnations."""

    activations: ClassVar[list[tuple[str, object]]] = []
    lock = threading.Lock()

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.count = 0

    def restore(self, state: Any) -> None:
        with Counter.lock:
            Counter.activations.append((self.key, state))
        self.count = 0 if state is None else int(state["count"])

    def receive(self, message: Any) -> None:
        self.count += 1

    def snapshot(self) -> JSONValue:
        return {"count": self.count}


@pytest.fixture(autouse=True)
def _fresh_activations() -> None:
    Counter.activations = []


def saved(path: Path, key: str) -> str | None:
    reader = open_reader(path)
    try:
        return load_route_state(reader, key)
    finally:
        reader.close()


def test_passivated_state_survives_a_process_restart(db_path) -> None:
    ref = StoreWriter.start(db_path)
    states = SqliteRouteStates(StoreClient(ref), db_path)
    directory = RouteDirectory(Counter, states)
    for _ in range(3):
        directory.tell("tg:1", "hello")
    directory.tell("tg:2", "hello")
    assert directory.passivate_all(timeout=10)
    states.close()
    ref.stop(timeout=10)
    assert saved(db_path, "tg:1") == '{"count":3}'
    assert saved(db_path, "tg:2") == '{"count":1}'

    # A new process: new writer, new directory, same file.
    ref = StoreWriter.start(db_path)
    try:
        states = SqliteRouteStates(StoreClient(ref), db_path)
        directory = RouteDirectory(Counter, states)
        directory.tell("tg:1", "again")
        assert directory.passivate_all(timeout=10)
        states.close()
    finally:
        ref.stop(timeout=10)
    assert Counter.activations[-1] == ("tg:1", {"count": 3})
    assert saved(db_path, "tg:1") == '{"count":4}'


@dataclass(frozen=True)
class Settings:
    agent: str
    turns: int


def test_a_codec_maps_rich_states_to_json(store) -> None:
    states = SqliteRouteStates(
        store.client,
        store.path,
        encode=asdict,
        decode=lambda value: Settings(**value),  # type: ignore[arg-type]
    )
    try:
        assert states.load("tg:1") is None
        states.save("tg:1", Settings("codex", 2))
        assert states.load("tg:1") == Settings("codex", 2)
        # ``load`` may run on any thread (the directory activates routes wherever tell runs).
        loaded: list[Settings | None] = []
        thread = threading.Thread(target=lambda: loaded.append(states.load("tg:1")))
        thread.start()
        thread.join(10)
        assert loaded == [Settings("codex", 2)]
    finally:
        states.close()


def test_unserialisable_state_is_a_type_error(store) -> None:
    states = SqliteRouteStates(store.client, store.path)
    with pytest.raises(TypeError, match=r"tg:1.*not JSON-serialisable"):
        states.save("tg:1", {"when": object()})  # type: ignore[dict-item]
    assert saved(store.path, "tg:1") is None


def test_encode_and_decode_come_together(store) -> None:
    with pytest.raises(ValueError, match="both"):
        SqliteRouteStates(store.client, store.path, encode=asdict)  # type: ignore[call-overload]
