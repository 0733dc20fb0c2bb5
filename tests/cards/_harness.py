"""Test doubles for the card machinery: a hand-held clock, a tiny platform, a model of the
delivery service for the pure ``TurnCard``, and a recording sink for the real one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from robota.core import Address, ChildSpec, Reply, Restart, Supervisor, Timers
from robota.core.cards import (
    CardActor,
    CardDelivery,
    CardFailed,
    CardHost,
    CardPolicy,
    CardRequest,
    CardShown,
    CardSkipped,
    CardTurn,
    DeliverFinal,
    FinalFailed,
    FinalSent,
    PermanentSendError,
    ShowCard,
    TransientSendError,
    TurnCard,
)
from robota.core.presentation import Message, ToolCall, TurnView
from robota.core.store import StoreClient, StoreWriter, open_reader
from robota.core.testing import FAST_BACKOFF, Recording, wait_until


class Clock:
    """A clock that moves only when told."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Tokens:
    """Deterministic button tokens: tok-1, tok-2, ..."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"tok-{self.count}"


class TinyPlatform:
    """Renders what a test can reason about: state, messages, tools and the buttons.

    Plan and usage are left out on purpose, so a usage update changes the view but not the
    rendered card (the unchanged-skip case)."""

    name = "tiny"

    def render(
        self, view: TurnView, *, elapsed: float | None, approval_tokens: Mapping[str, Any]
    ) -> Any:
        return {
            "state": view.display_state,
            "messages": [a.text for a in view.activities if isinstance(a, Message)],
            "tools": [[a.tool_id, a.status] for a in view.activities if isinstance(a, ToolCall)],
            "buttons": {k: dict(v) for k, v in sorted(approval_tokens.items())},
            "elapsed": elapsed,
        }

    def final_chunks(self, text: str) -> list[Any]:
        return [text[i : i + 10] for i in range(0, len(text), 10)] if text.strip() else []


Script = Callable[[ShowCard | DeliverFinal], Exception | None]
"""Decides the fate of each request: ``None`` delivers it, an error fails it."""


def always_ok(_: ShowCard | DeliverFinal) -> None:
    return None


@dataclass
class Screen:
    """What the platform shows, after a model of ``CardDelivery`` handled the requests."""

    card: Any = None
    card_id: str | None = None
    cards_created: int = 0
    finals: list[Any] = field(default_factory=list)
    log: list[tuple[float, str, Any]] = field(default_factory=list)
    """(time, "show" | "final" | "show-failed" | "final-failed", payload or chunks)."""


class Driver:
    """Runs a pure ``TurnCard`` on a hand-held clock against the delivery model.

    ``auto`` answers each request at once (per ``script``); otherwise requests wait in
    ``pending`` until ``answer()``."""

    def __init__(self, card: TurnCard, clock: Clock, *, script: Script = always_ok) -> None:
        self.card = card
        self.clock = clock
        self.script = script
        self.auto = True
        self.screen = Screen()
        self.pending: list[ShowCard | DeliverFinal] = []
        self.ops: list[Any] = []
        self.notices: list[Any] = []
        self.requests: list[tuple[float, ShowCard | DeliverFinal]] = []

    def feed(self, effects: Sequence[Any]) -> None:
        for effect in effects:
            if isinstance(effect, ShowCard | DeliverFinal):
                self.requests.append((self.clock.now, effect))
                self.pending.append(effect)
            elif type(effect).__module__.startswith("robota.core.store"):
                self.ops.append(effect)
            else:
                self.notices.append(effect)
        if self.auto:
            self.answer()

    def start(self) -> None:
        self.feed(self.card.start())

    def event(self, event: Any) -> None:
        self.feed(self.card.event(event))

    def answer(self) -> None:
        while self.pending:
            request = self.pending.pop(0)
            self.feed(self.card.outcome(self.outcome(request)))

    def outcome(self, request: ShowCard | DeliverFinal) -> Any:
        screen, now = self.screen, self.clock.now
        error = self.script(request)
        if isinstance(request, ShowCard):
            if screen.finals:
                return CardSkipped(request.request_id, request.turn_id, screen.card_id)
            if error is not None:
                screen.log.append((now, "show-failed", request.payload))
                return CardFailed(
                    request.request_id,
                    request.turn_id,
                    isinstance(error, TransientSendError),
                    getattr(error, "retry_after", None),
                    str(error),
                )
            created = screen.card_id is None
            if created:
                screen.cards_created += 1
                screen.card_id = f"card-{screen.cards_created}"
            screen.card = request.payload
            screen.log.append((now, "show", request.payload))
            return CardShown(
                request.request_id, request.turn_id, screen.card_id, request.content_hash, created
            )
        if screen.finals:
            return FinalSent(request.request_id, request.turn_id, ("f",), already=True)
        if error is not None:
            screen.log.append((now, "final-failed", request.chunks))
            return FinalFailed(
                request.request_id,
                request.turn_id,
                isinstance(error, TransientSendError),
                getattr(error, "retry_after", None),
                str(error),
            )
        screen.finals.append(request.chunks)
        screen.log.append((now, "final", request.chunks))
        ids = tuple(f"f{i}" for i in range(len(request.chunks)))
        return FinalSent(request.request_id, request.turn_id, ids, already=False)

    def advance(self, until: float) -> None:
        """Move the clock to ``until``, waking the card at each deadline it asked for."""
        while True:
            wake = self.card.next_wake()
            if wake is None or wake > until:
                break
            self.clock.now = max(self.clock.now, wake)
            self.feed(self.card.wake())
        self.clock.now = max(self.clock.now, until)

    def shows(self) -> list[float]:
        return [t for t, kind, _ in self.screen.log if kind == "show"]


def fail_first(count: int, error: Callable[[], Exception]) -> Script:
    """A script failing the first ``count`` requests with ``error()``."""
    seen = [0]

    def script(_: ShowCard | DeliverFinal) -> Exception | None:
        seen[0] += 1
        return error() if seen[0] <= count else None

    return script


def transient(retry_after: float | None = None) -> Callable[[], Exception]:
    return lambda: TransientSendError("429 too many requests", retry_after=retry_after)


def permanent() -> Callable[[], Exception]:
    return lambda: PermanentSendError("message deleted")


# -- the real sink -----------------------------------------------------------------------------


@dataclass
class SinkCall:
    at: float
    method: str
    args: tuple[Any, ...]


class FakeSink:
    """A ``CardSink`` that keeps messages in memory, records every call with trio's time, and
    fails on demand: ``fail.append(error)`` fails the next calls in order (``None`` = succeed),
    ``fail_when(predicate, error)`` fails matching calls while the predicate holds."""

    def __init__(self) -> None:
        self.calls: list[SinkCall] = []
        self.messages: dict[str, Any] = {}
        self.cards: list[str] = []
        self.finals: list[tuple[str, Any]] = []
        self.fail: list[Exception | None] = []
        self.rules: list[tuple[Callable[[str, tuple[Any, ...]], bool], Exception]] = []
        self.delay = 0.0
        self.final_sent: trio.Event | None = None
        """Set (on the loop) when ``send_final`` succeeds: a wait that needs no polling."""
        self.keys: dict[str, str] = {}
        """Each final chunk's key -> its message id, as a platform that keeps them would."""
        self.card_keys: dict[str, str] = {}
        """Each card's key -> its message id, as a platform that keeps them would."""
        self.die_after_card = False
        """The call that made a card never returns (the process is killed before it hears
        the answer)."""
        self._ids = 0

    def fail_when(self, predicate: Callable[[str, tuple[Any, ...]], bool], error: Exception):
        self.rules.append((predicate, error))

    async def _enter(self, method: str, *args: Any) -> None:
        self.calls.append(SinkCall(trio.current_time(), method, args))
        if self.delay:
            await trio.sleep(self.delay)
        if self.fail:
            error = self.fail.pop(0)
            if error is not None:
                raise error
        for predicate, error in self.rules:
            if predicate(method, args):
                raise error

    def _new_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    async def send_card(self, route: str, payload: Any, *, key: str) -> str:
        await self._enter("send_card", route, payload, key)
        message_id = self._new_id("card")
        self.messages[message_id] = payload
        self.cards.append(message_id)
        self.card_keys[key] = message_id
        if self.die_after_card:
            await trio.sleep_forever()
        return message_id

    async def update_card(self, message_id: str, payload: Any) -> None:
        await self._enter("update_card", message_id, payload)
        assert message_id in self.messages, f"update of unknown message {message_id}"
        self.messages[message_id] = payload

    async def send_final(self, route: str, chunks: Sequence[Any], *, keys: Sequence[str]):
        await self._enter("send_final", route, tuple(chunks), tuple(keys))
        ids = []
        for chunk, key in zip(chunks, keys, strict=True):
            message_id = self._new_id("final")
            self.messages[message_id] = chunk
            self.finals.append((message_id, chunk))
            self.keys[key] = message_id
            ids.append(message_id)
        if self.final_sent is not None:
            self.final_sent.set()
        return ids

    def card_payload(self) -> Any:
        assert len(self.cards) == 1, f"{len(self.cards)} progress cards"
        return self.messages[self.cards[0]]

    def methods(self) -> list[str]:
        return [call.method for call in self.calls]


class LookupSink(FakeSink):
    """A ``FakeSink`` that is a ``FinalLookup`` too: it says which final chunks it keeps (by
    ``keys``, which a test may fill as a platform that kept a send would). ``since``: what
    each lookup was given."""

    def __init__(self) -> None:
        super().__init__()
        self.since: list[float | None] = []

    async def sent_finals(
        self, route: str, keys: Sequence[str], *, since: float | None = None
    ) -> Mapping[str, str]:
        self.since.append(since)
        await self._enter("sent_finals", route, tuple(keys))
        return {key: self.keys[key] for key in keys if key in self.keys}


class CardLookupSink(LookupSink):
    """A ``LookupSink`` that is a ``CardLookup`` too, as Slack is: a card's key is kept with
    the card (``card_keys``) and found by it; a send under a key made before is a new card."""

    async def sent_card(self, route: str, key: str, *, since: float | None = None) -> str | None:
        self.since.append(since)
        await self._enter("sent_card", route, key)
        return self.card_keys.get(key)


# -- a whole card tree: store, timers, delivery, one card actor ---------------------------------


class TimedDelivery(CardDelivery):
    """The real delivery service, noting when the card actor handed it each request, on trio's
    clock read on the actor's own thread: when the actor decided, before the hop to the loop and
    the sink, whose delay a loaded machine stretches and the design does not bound."""

    def __init__(self, sink: FakeSink, store: StoreClient) -> None:
        super().__init__(sink, store)
        self._now = trio.lowlevel.current_clock().current_time  # thread-safe: a clock, not the run
        self.handed: list[tuple[float, CardRequest]] = []

    def submit(self, request: CardRequest, reply_to: Reply) -> None:
        self.handed.append((self._now(), request))
        super().submit(request, reply_to)

    def shown_at(self) -> list[float]:
        """When each ``ShowCard`` was handed over, in order."""
        return [at for at, request in self.handed if isinstance(request, ShowCard)]


FAST = CardPolicy(
    interval=0.2,
    critical_interval=0.05,
    backoff=(0.05, 0.1, 0.2, 0.4, 0.8),
    snapshot_interval=0.0,
)
"""The product's discipline at a tenth of its pace (backoff faster still), for real clocks."""


@dataclass
class World:
    supervisor: Supervisor
    sink: FakeSink
    store: StoreClient
    path: Path
    notices: Recording
    delivery: TimedDelivery
    timers: Timers
    turn: CardTurn

    @property
    def card(self) -> Address:
        return self.supervisor.address("card")

    def tell(self, *events: Any) -> None:
        for event in events:
            self.card.tell(event)

    def read(self, query: Callable[..., Any], *args: Any) -> Any:
        db = open_reader(self.path)
        try:
            return query(db, *args)
        finally:
            db.close()

    async def notice(self, kind: type, count: int = 1, timeout: float = 10.0) -> list[Any]:
        await wait_until(
            lambda: sum(isinstance(n, kind) for n in self.notices.messages) >= count,
            timeout=timeout,
            what=lambda: f"notices so far: {self.notices.messages}",
        )
        return [n for n in self.notices.messages if isinstance(n, kind)]


@asynccontextmanager
async def card_world(
    path: Path,
    platform: Callable[[], Any],
    *,
    turn: CardTurn | None = None,
    policy: CardPolicy = FAST,
    sink: FakeSink | None = None,
    extra: Sequence[ChildSpec] = (),
    clock: Callable[[], float] | None = None,
) -> AsyncIterator[World]:
    """A supervised tree like the engine's: the store writer, timers, the delivery service and
    one card actor (restarted after a crash), in that order. ``clock`` replaces the actor's
    clocks (a ``MockClock``'s ``current_time`` keeps it in step with the timers)."""
    clocks: dict[str, Any] = {} if clock is None else {"clock": clock, "wall": clock}
    turn = turn if turn is not None else CardTurn("t1", "task-1", "route-1")
    sink = sink if sink is not None else FakeSink()
    notices = Recording()
    timers = Timers()
    parts: dict[str, Any] = {}

    def card() -> CardActor:
        supervisor = parts["supervisor"]
        return CardActor(
            turn,
            platform(),
            delivery=parts["delivery"],
            store=parts["store"],
            timers=timers,
            notify=notices.add,
            address=supervisor.address("card"),
            policy=policy,
            **clocks,
        )

    supervisor = Supervisor(
        "cards-test",
        [
            ChildSpec("store", lambda: StoreWriter(path)),
            ChildSpec("timers", lambda: timers),
            ChildSpec("delivery", lambda: parts["delivery"]),
            *extra,
            ChildSpec("card", card, restart=Restart.TRANSIENT),
        ],
        backoff=FAST_BACKOFF,
    )
    store = StoreClient(supervisor.address("store"))
    parts.update(supervisor=supervisor, store=store, delivery=TimedDelivery(sink, store))
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        try:
            yield World(supervisor, sink, store, path, notices, parts["delivery"], timers, turn)
        finally:
            supervisor.stop()


@dataclass
class HostWorld:
    host: CardHost
    delivery: CardDelivery
    sink: FakeSink
    store: StoreClient
    path: Path
    notices: Recording

    def read(self, query: Callable[..., Any], *args: Any) -> Any:
        db = open_reader(self.path)
        try:
            return query(db, *args)
        finally:
            db.close()


@asynccontextmanager
async def host_world(
    path: Path, *, policy: CardPolicy = FAST, **host_options: Any
) -> AsyncIterator[HostWorld]:
    """The engine's tree for cards: store writer, timers, one delivery service, the host."""
    sink = FakeSink()
    timers = Timers()
    parts: dict[str, Any] = {}
    supervisor = Supervisor(
        "host-test",
        [
            ChildSpec("store", lambda: StoreWriter(path)),
            ChildSpec("timers", lambda: timers),
            ChildSpec("delivery", lambda: parts["delivery"]),
            ChildSpec("cards", lambda: parts["host"]),
        ],
        backoff=FAST_BACKOFF,
    )
    store = StoreClient(supervisor.address("store"))
    parts["delivery"] = CardDelivery(sink, store)
    parts["host"] = CardHost(store=store, timers=timers, policy=policy, **host_options)
    async with trio.open_nursery() as nursery:
        await nursery.start(supervisor.run)
        try:
            yield HostWorld(parts["host"], parts["delivery"], sink, store, path, Recording())
        finally:
            supervisor.stop()


def button_tokens(payload: Any) -> list[str]:
    """The opaque tokens on a Feishu card's buttons (their callback values), in order."""
    found: list[str] = []
    if isinstance(payload, dict):
        for behavior in payload.get("behaviors", []):
            if behavior.get("type") == "callback":
                found.append(behavior["value"]["token"])
        for value in payload.values():
            found.extend(button_tokens(value))
    elif isinstance(payload, list):
        for value in payload:
            found.extend(button_tokens(value))
    return found
