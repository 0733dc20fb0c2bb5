"""What ``robota cards preview`` shows: a stream-json event file replayed the way a card actor
would draw it, one update at a time.

Reading (``read_events``): one JSON object per line, as print mode's ``--output-format
stream-json`` writes them. Event lines are decoded with ``event_from_json``; of print mode's own
lines, ``session_started`` names the agent for the header, ``steered`` is the user's text sent
during the turn (the card shows it where it arrived), and ``queued`` and ``result`` change no
card; blank lines are skipped. Any line may carry ``"ts"``, its time in seconds, to replay real
timing; lines without one come 100 ms after the line before. The whole input is checked before
anything is drawn, and a bad line raises ``PreviewError`` naming its number and what is wrong.

Drawing (``preview``): per turn, a ``TurnView``, the platform's renderer held for the turn (the
terminal's, or the ``CardPlatform`` an installed transport plugin declares, ``renderers``) and an
``UpdateThrottle`` on the simulated clock, driven as the card actor drives them: an update goes
out when the throttle says it is due (at the event, or at a timer between two events), content
that renders the same as the last update is skipped, and at the end the pending state, the
terminal one above all, is flushed. Then the turn's final answer, split per platform. A
``turn_started`` after a turn ended begins the next turn (``-p`` with several prompts).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from robota.core import RobotaError, transport_names, transport_plugin
from robota.core.events import (
    EVENT_TYPES,
    EventFormatError,
    RuntimeEvent,
    TurnStarted,
    event_from_json,
)
from robota.core.presentation import (
    TerminalRenderer,
    TurnView,
    UpdateThrottle,
    UserSteer,
    payload_hash,
)

__all__ = [
    "DEFAULT_SPACING",
    "Final",
    "PreviewError",
    "Timed",
    "Update",
    "preview",
    "read_events",
    "renderers",
]

TERMINAL = "terminal"
"""The platform core draws itself; every other is an installed transport plugin's."""
DEFAULT_SPACING = 0.1
"""Seconds between two lines that carry no ``ts``."""

if TYPE_CHECKING:
    # Types only: the cards package loads the card actor's kernel (pykka, trio), which drawing
    # does not need; a plugin's renderers are found by their shape (``renderers``).
    from robota.core.cards import CardPlatform, CardRenderers

_QUIET = frozenset({"result", "queued"})
"""Print mode's lines that change no card."""


class PreviewError(RobotaError, ValueError):
    """A line of the events file that cannot be previewed; the message names the line."""


@dataclass(frozen=True, slots=True)
class Timed:
    """An input of the turn view, at its time (seconds since the file's first line)."""

    at: float
    event: RuntimeEvent | UserSteer
    agent: str | None = None
    """The agent the last ``session_started`` named, if any."""


@dataclass(frozen=True, slots=True)
class Update:
    turn: int
    number: int
    """1-based within the turn: the updates actually sent (unchanged ones are skipped)."""
    at: float
    reason: Literal["update", "critical", "terminal"]
    payload: Any
    """The platform payload: the plugin's card JSON, or the terminal's ``{"lines": [...]}``.
    It shares parts with later updates' payloads (the renderers cache them): read-only."""


@dataclass(frozen=True, slots=True)
class Final:
    turn: int
    messages: list[Any]
    """The plugin's final-answer messages; for the terminal the answer as one string."""
    status: str
    skipped: int
    """Updates rendered unchanged and not sent."""


# -- reading ------------------------------------------------------------------------------------


def read_events(lines: Iterable[bytes]) -> list[Timed]:
    """Decode every line; ``PreviewError`` at the first bad one."""
    out: list[Timed] = []
    agent: str | None = None
    offset: float | None = None
    clock: float | None = None
    for number, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise PreviewError(f"line {number}: not UTF-8 ({error.reason})") from None
        text = text.strip()
        if not text:
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as error:
            raise PreviewError(
                f"line {number}: not JSON: {error.msg} (column {error.colno})"
            ) from None
        if not isinstance(obj, dict):
            raise PreviewError(f"line {number}: expected a JSON object, found {_kind(obj)}")
        stamp = _timestamp(obj.pop("ts", None), number)
        kind = obj.get("type")
        if kind == "session_started":
            named = obj.get("agent")
            if named is not None and not isinstance(named, str):
                raise PreviewError(f"line {number}: agent: expected a string, found {_kind(named)}")
            agent = named or agent
            continue
        if kind in _QUIET:
            continue
        if kind == "steered":
            steer = obj.get("text")
            if not isinstance(steer, str):
                raise PreviewError(
                    f"line {number}: steered.text: expected a string, found {_kind(steer)}"
                )
            event: RuntimeEvent | UserSteer = UserSteer(steer)
        elif isinstance(kind, str) and kind not in EVENT_TYPES:
            raise PreviewError(f"line {number}: unknown type {kind!r} (expected {_EXPECTED})")
        else:
            try:
                event = event_from_json(obj)
            except EventFormatError as error:
                raise PreviewError(f"line {number}: {error}") from None
        # Unstamped lines come DEFAULT_SPACING apart; the first stamped one lands where an
        # unstamped one would, and later stamps keep their distance from it.
        now = 0.0 if clock is None else clock + DEFAULT_SPACING
        if stamp is not None:
            if offset is None:
                offset = stamp - now
            now = stamp - offset
            if clock is not None and now < clock:
                raise PreviewError(f"line {number}: ts {stamp:g} is earlier than a line before it")
        clock = now
        out.append(Timed(round(now, 6), event, agent))
    return out


_EXPECTED = (
    "an event type (" + ", ".join(EVENT_TYPES) + ") or session_started, steered, queued, result"
)


def _timestamp(value: object, number: int) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise PreviewError(f"line {number}: ts: expected a number of seconds, found {_kind(value)}")
    return float(value)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


# -- drawing ------------------------------------------------------------------------------------


def renderers() -> dict[str, CardRenderers]:
    """Every installed transport plugin that declares its cards, by name (each is loaded, not
    its renderer). A plugin that fails to load draws nothing here: the host reports it."""
    found: dict[str, CardRenderers] = {}
    for name in transport_names():
        try:
            plugin = transport_plugin(name)
        except (KeyError, RobotaError):
            continue
        if callable(getattr(plugin, "card_platform", None)):  # CardRenderers, see above
            found[name] = cast("CardRenderers", plugin)
    return found


def preview(
    events: list[Timed],
    *,
    platform: str,
    layout: str | None = None,
    agent: str = "agent",
    plugins: dict[str, CardRenderers] | None = None,
) -> Iterator[Update | Final]:
    """The updates and final messages, in order, turn after turn. ``platform`` is ``terminal``
    or one of ``plugins`` (default: ``renderers()``), drawn in ``layout`` (its default when
    ``None``)."""
    if platform != TERMINAL and plugins is None:
        plugins = renderers()
    cards = None if platform == TERMINAL else (plugins or {})[platform]
    """The updates and final messages, in order, turn after turn."""
    turn: _Turn | None = None
    number = 0
    for timed in events:
        starts = isinstance(timed.event, TurnStarted)
        if turn is None or (starts and turn.view.terminal):
            if turn is not None:
                yield from turn.finish()
            number += 1
            name = timed.agent or agent
            drawn = None if cards is None else cards.card_platform(agent=name, layout=layout)
            turn = _Turn(number, drawn, name, timed.at)
        yield from turn.feed(timed)
    if turn is not None:
        yield from turn.finish()


@dataclass(eq=False)
class _Turn:
    number: int
    platform: CardPlatform | None
    """The plugin's platform, made for this turn; ``None``: the terminal."""
    agent: str
    started: float
    view: TurnView = field(default_factory=TurnView)
    throttle: UpdateThrottle = field(default_factory=UpdateThrottle)
    sent: int = 0
    skipped: int = 0
    critical: bool = False
    """Whether anything offered since the last update was critical (for the header only)."""
    clock: float = 0.0
    render: Callable[[TurnView, float], Any] = field(init=False)
    """The platform's renderer, held for the turn as the card actor holds it."""

    def __post_init__(self) -> None:
        self.clock = self.started
        if (cards := self.platform) is not None:
            self.render = lambda view, elapsed: cards.render(
                view, elapsed=elapsed, approval_tokens={}
            )
        else:
            terminal = TerminalRenderer(agent=self.agent)
            self.render = lambda view, elapsed: {"lines": terminal.render(view, elapsed=elapsed)}

    def feed(self, timed: Timed) -> Iterator[Update]:
        # A timer that would have fired between the last event and this one fires first, on
        # the state the last event left.
        yield from self._timers(before=timed.at)
        self.clock = max(self.clock, timed.at)
        change = self.view.apply(timed.event)
        if change != "unchanged":
            self.critical = self.critical or change == "critical"
            self.throttle.offer(
                self.view.version,
                critical=change == "critical",
                terminal=self.view.terminal,
                now=self.clock,
            )
        if self.throttle.due(self.clock):
            yield from self._update(self.clock)

    def finish(self) -> Iterator[Update | Final]:
        yield from self._timers(before=math.inf)
        text = self.view.final_text or ""
        messages: list[Any] = []
        if text.strip():
            messages = [text] if self.platform is None else self.platform.final_chunks(text)
        yield Final(self.number, messages, self.view.status, self.skipped)

    def _timers(self, *, before: float) -> Iterator[Update]:
        while (deadline := self.throttle.next_deadline()) is not None and deadline < before:
            self.clock = max(self.clock, deadline)
            yield from self._update(self.clock)

    def _update(self, now: float) -> Iterator[Update]:
        self.throttle.begin(now)
        payload = self.render(self.view, now - self.started)
        digest = payload_hash(payload)
        if self.throttle.unchanged(digest):
            self.throttle.skipped()
            self.skipped += 1
            return
        self.throttle.sent(digest, now)
        self.sent += 1
        reason: Literal["update", "critical", "terminal"] = (
            "terminal" if self.view.terminal else "critical" if self.critical else "update"
        )
        self.critical = False
        yield Update(self.number, self.sent, round(now, 6), reason, payload)
