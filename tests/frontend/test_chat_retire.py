"""A chat let go entirely (``_chat_retire``, issue 28 s.3): its cards' delivery states, its
settled queue notes and its default agent forgotten, the engine asked through the port to
forget its route; the port says the route is held while a link hears it or the host counted
its inputs; the test variable that shortens the quiet."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from robota.core.cards import CardDelivery
from robota.core.frontend import FrontEndPort, TransportContext
from robota.core.frontend._chat_retire import RETIRE_ENV, kept_agent, let_go, retire_timing
from robota.core.frontend._queue import QueueNotes

KEY = "test:chat-1"


class PlainHub:
    """A hub that cannot retire (a terminal's engine stand-in)."""

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        pass

    def disconnect(self, route_key: str) -> None:
        pass

    def tell(self, route_key: str, request: object) -> None:
        pass


class Hub(PlainHub):
    """The engine's side of the port, as far as retiring goes."""

    def __init__(self) -> None:
        self.retired: list[tuple[str, Callable[[], bool]]] = []

    def retire(self, route_key: str, held: Callable[[], bool]) -> None:
        self.retired.append((route_key, held))


def context(port: FrontEndPort, default_agent: str = "codex") -> TransportContext:
    config: Any = SimpleNamespace(defaults=SimpleNamespace(agent=default_agent))
    return TransportContext(
        name="test",
        settings=None,
        port=port,
        store=None,  # type: ignore[arg-type]  (nothing here writes)
        db_path=Path("/nonexistent"),
        config=config,
        profile=None,  # type: ignore[arg-type]
        report=lambda _status: None,
        started_at=0.0,
    )


@pytest.mark.parametrize(
    ("agent", "default", "kept"),
    [
        (None, "codex", False),
        ("codex", "codex", False),
        ("claude", "codex", True),
        ("codex", None, True),
    ],
)
def test_which_agent_a_chat_let_go_keeps(
    agent: str | None, default: str | None, kept: bool
) -> None:
    assert kept_agent(agent, default) is kept


@pytest.mark.parametrize(
    ("value", "timing"),
    [
        (None, (60.0, 15.0)),
        ("", (60.0, 15.0)),
        ("soon", (60.0, 15.0)),
        ("0", (60.0, 15.0)),
        ("-3", (60.0, 15.0)),
        ("1", (1.0, 0.25)),
        ("0.1", (0.1, 0.05)),
        ("100", (100.0, 15.0)),
    ],
)
def test_the_quiet_a_chat_is_let_go_after(
    monkeypatch: pytest.MonkeyPatch, value: str | None, timing: tuple[float, float]
) -> None:
    if value is None:
        monkeypatch.delenv(RETIRE_ENV, raising=False)
    else:
        monkeypatch.setenv(RETIRE_ENV, value)
    assert retire_timing(60.0, 15.0) == timing


def test_a_chat_let_go_forgets_what_the_shell_kept_of_it_and_asks_the_engine() -> None:
    hub = Hub()
    port = FrontEndPort(hub)
    notes = QueueNotes()
    notes.queued(KEY, 1, "first", "m1")
    notes.click(KEY, 1)  # cancelled: settled
    notes.queued(KEY, 2, "second", "m2")  # still queued
    notes.queued("test:other", 3, "elsewhere", "m3")
    notes.click("test:other", 3)
    delivery = CardDelivery(None, None)  # type: ignore[arg-type]  (no send, no store here)
    for turn in ("a1:card", "a2:card", "b1:card"):
        delivery.expect_new(turn)
    agents = {KEY: "codex", "test:other": "codex", "test:third": "claude"}

    for key, cards in ((KEY, ["a1:card", "a2:card"]), ("test:third", [])):
        let_go(key, cards, agents=agents, notes=notes, delivery=delivery, context=context(port))

    assert delivery._turns.keys() == {"b1:card"}
    assert notes.get(KEY, 1) is None, "a settled note goes"
    assert notes.get(KEY, 2) is not None and notes.get("test:other", 3) is not None
    assert agents == {"test:other": "codex", "test:third": "claude"}
    assert [key for key, _ in hub.retired] == [KEY, "test:third"]
    held = dict(hub.retired)
    assert held[KEY]() is False


def test_the_port_holds_a_route_a_link_hears_or_the_host_counted() -> None:
    hub = Hub()
    port = FrontEndPort(hub)
    link = port.subscribe("test:heard", shared=True)
    port.hold("test:counted")
    for key in ("test:heard", "test:counted", "test:free"):
        port.retire(key)
    held = dict(hub.retired)
    assert (held["test:heard"](), held["test:counted"](), held["test:free"]()) == (
        True,
        True,
        False,
    )
    link.close()
    assert held["test:heard"]() is False, "no longer heard"
    assert held["test:counted"]() is True, "held for the run"


def test_a_hub_that_cannot_retire_is_asked_nothing() -> None:
    port = FrontEndPort(PlainHub())
    port.retire(KEY)  # nothing to ask, nothing raised
