"""Socket Mode as a pure state machine: inputs and clock readings in, effects out.

The trio shell (``_client``) owns the sockets, the HTTP client and the clock; this machine owns
every decision. Each input takes ``now`` (seconds, any monotonic scale) and returns the effects
to carry out, in order; the shell wakes the machine with ``tick`` at ``deadline()``::

    machine.start()                          # [Open()]
    machine.opened_url(url)                  # [Dial(link, url)]
    machine.dialed(link, now)                # []: waiting for hello
    machine.received(link, text, now)        # hello: [Up()]; an envelope: [Send(ack), Deliver]
    machine.pong(link, now)                  # feeds the watchdog
    machine.closed(link, now)                # the socket ended
    machine.tick(now)                        # pings, watchdog, hello timeout, retries

Rules (Slack's Socket Mode):

* **A fresh URL every time.** Each connection starts with ``apps.connections.open`` (the app
  token): its URLs are single-use. The new link counts once its ``hello`` arrives (within
  ``hello_within`` of the handshake, else it is closed and retried).
* **ACK first.** Every envelope (a frame with an ``envelope_id``) is acknowledged at once, on
  the link it came by, with exactly ``{"envelope_id": ...}``, before the handler sees it and
  whatever it then does: Slack re-delivers what is not acknowledged within 3 s. An envelope
  without a payload, or of an unknown type, is acknowledged and dropped.
* **Disconnects.** ``refresh_requested`` and ``warning`` (and a reason not known): open the
  new connection while the old one still works, and close the old one once the new one said
  ``hello``. ``too_many_websockets``: close that link and wait ``too_many_wait`` before trying
  again (retrying at once only adds connections). ``link_disabled``: ``Fatal``.
* **Watchdog.** A WebSocket ping every ``ping_interval``; no frame of any kind (pongs count)
  for 3 intervals: the link is dead even if TCP says otherwise; close it and reconnect.
* **Retries** after a failed open, dial or hello wait ``backoff`` steps (1, 2, 4 ... 30 s,
  ``jitter`` of each added); a lost link reconnects at once (the first step of a new series).
* **Fatal.** An app token refused (``invalid_auth``, ``not_authed`` ...; the shell decides) or
  ``link_disabled`` stops the machine: no retry loop against a configuration error.
* **Status** (``status()``): what the transport reports while it tries: ``connecting`` with no
  detail before the first failure, then with the last error and the wait before the next
  attempt; ``connected`` while a live link exists; ``failed`` with the fatal reason.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ENVELOPE_TYPES",
    "HELLO_WITHIN",
    "PING_INTERVAL",
    "TOO_MANY_WAIT",
    "WATCHDOG_PINGS",
    "Close",
    "Deliver",
    "Dial",
    "Discarded",
    "Effect",
    "Envelope",
    "Fatal",
    "LinkState",
    "Open",
    "Ping",
    "Send",
    "SocketMode",
    "State",
    "Up",
    "ack_text",
]

PING_INTERVAL = 10.0
WATCHDOG_PINGS = 3
HELLO_WITHIN = 10.0
TOO_MANY_WAIT = 30.0
BACKOFF: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
ENVELOPE_TYPES = frozenset({"events_api", "interactive", "slash_commands"})
_REPLACE = frozenset({"refresh_requested", "warning"})
_MIN_WAIT = 0.05
"""Floor of every retry wait, so a zero backoff cannot spin against a failing server."""


# -- effects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Open:
    """Call ``apps.connections.open``, then feed ``opened_url`` or ``open_failed``."""


@dataclass(frozen=True, slots=True)
class Dial:
    """Open the WebSocket ``url`` as ``link``, then feed ``dialed`` or ``dial_failed``."""

    link: int
    url: str = field(repr=False)
    """Carries a single-use ticket: not for logs."""


@dataclass(frozen=True, slots=True)
class Send:
    """Write one text frame on ``link``."""

    link: int
    text: str
    what: str
    """``ack``: for logs and tests."""


@dataclass(frozen=True, slots=True)
class Ping:
    """A WebSocket ping on ``link``; feed ``pong`` when its pong arrives."""

    link: int


@dataclass(frozen=True, slots=True)
class Envelope:
    """One Socket Mode envelope, already acknowledged."""

    envelope_id: str
    type: str
    """``events_api``, ``interactive`` or ``slash_commands``."""
    payload: Mapping[str, Any] = field(repr=False)
    retry_attempt: int = 0
    retry_reason: str = ""
    accepts_response_payload: bool = False


@dataclass(frozen=True, slots=True)
class Deliver:
    envelope: Envelope


@dataclass(frozen=True, slots=True)
class Up:
    """A live link again (its ``hello`` came) after none: readiness may be reported."""


@dataclass(frozen=True, slots=True)
class Close:
    """Close ``link`` (replaced, silent, refused, or ``stop``)."""

    link: int
    reason: str


@dataclass(frozen=True, slots=True)
class Fatal:
    """Stop for good: ``reason`` says what Slack refused."""

    reason: str


@dataclass(frozen=True, slots=True)
class Discarded:
    """Input dropped on purpose (a malformed frame, an unknown type): for the log."""

    reason: str


Effect = Open | Dial | Send | Ping | Deliver | Up | Close | Fatal | Discarded
LinkState = Literal["connecting", "connected", "failed"]
State = Literal["idle", "connecting", "connected", "waiting", "stopped"]


def ack_text(envelope_id: str) -> str:
    """The acknowledgement of an envelope, exactly as Slack expects it."""
    return json.dumps({"envelope_id": envelope_id})


@dataclass(slots=True)
class _Link:
    hello_by: float
    """Dialing or waiting for ``hello`` until then; ``inf`` once live."""
    last_frame: float = 0.0
    next_ping: float = math.inf


class SocketMode:
    def __init__(
        self,
        *,
        ping_interval: float = PING_INTERVAL,
        hello_within: float = HELLO_WITHIN,
        too_many_wait: float = TOO_MANY_WAIT,
        backoff: tuple[float, ...] = BACKOFF,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.ping_interval = ping_interval
        self.hello_within = hello_within
        self.too_many_wait = too_many_wait
        self.backoff = backoff
        self._jitter = jitter
        self.fatal_reason: str | None = None
        self.last_error: str | None = None
        """Why the last attempt failed or the last link ended (``None`` once a hello came)."""
        self._retry_wait = 0.0
        """The wait before the next attempt, as decided when the last one failed."""
        self.current: int | None = None
        """The live link (its ``hello`` came), if any."""
        self._links: dict[int, _Link] = {}
        self._next_link = 1
        self._opening = False
        """An ``apps.connections.open`` or a dial of a new link is under way."""
        self._retry_at = math.inf
        self._attempts = 0
        """Failed attempts in a row (the backoff step)."""
        self._started = self._stopped = False

    @property
    def state(self) -> State:
        if self._stopped:
            return "stopped"
        if self.current is not None:
            return "connected"
        if self._opening:
            return "connecting"
        return "waiting" if self._started else "idle"

    # -- inputs ----------------------------------------------------------------------------

    def start(self) -> list[Effect]:
        if self._started:
            return []
        self._started = True
        return self._open()

    def opened_url(self, url: str) -> list[Effect]:
        """``apps.connections.open`` answered with a WebSocket URL."""
        if self._stopped or not self._opening:
            return []
        link = self._next_link
        self._next_link += 1
        self._links[link] = _Link(hello_by=math.inf)
        return [Dial(link, url)]

    def open_failed(self, reason: str, now: float, *, fatal: bool) -> list[Effect]:
        """``apps.connections.open`` failed (``fatal``: the app token was refused)."""
        if self._stopped or not self._opening:
            return []
        if fatal:
            return self._stop_fatal(reason)
        self._opening = False
        self.last_error = reason
        self._retry_later(now)
        return []

    def dialed(self, link: int, now: float) -> list[Effect]:
        """The handshake of ``link`` succeeded; its ``hello`` is due within ``hello_within``."""
        state = self._links.get(link)
        if state is not None and state.hello_by == math.inf and link != self.current:
            state.hello_by = now + self.hello_within
            state.last_frame = now
        return []

    def dial_failed(
        self, link: int, now: float, reason: str = "the WebSocket handshake failed"
    ) -> list[Effect]:
        if link == self.current or self._links.pop(link, None) is None or self._stopped:
            return []  # a live link did not fail to dial: a stale report
        self._opening = False
        self.last_error = reason
        self._retry_later(now)
        return []

    def received(self, link: int, text: str | bytes, now: float) -> list[Effect]:
        state = self._links.get(link)
        if state is None or self._stopped:
            return []
        state.last_frame = now
        if isinstance(text, bytes):
            return [Discarded("a binary frame (Socket Mode sends text)")]
        try:
            frame = json.loads(text)
        except ValueError:
            return [Discarded("a frame that is not JSON")]
        if not isinstance(frame, Mapping):
            return [Discarded("a frame that is not a JSON object")]
        kind = frame.get("type")
        envelope_id = frame.get("envelope_id")
        if isinstance(envelope_id, str) and envelope_id:
            return [Send(link, ack_text(envelope_id), "ack"), *self._envelope(frame, envelope_id)]
        if kind == "hello":
            return self._hello(link, state, now)
        if kind == "disconnect":
            return self._disconnect(link, frame.get("reason"), now)
        if isinstance(kind, str) and kind in ENVELOPE_TYPES:
            return [Discarded(f"an envelope ({kind}) without an envelope_id")]
        return [Discarded(f"a frame of unknown type {str(kind)[:40]!r}")]

    def pong(self, link: int, now: float) -> list[Effect]:
        state = self._links.get(link)
        if state is not None:
            state.last_frame = now
        return []

    def closed(self, link: int, now: float) -> list[Effect]:
        """The socket of ``link`` ended (the peer closed it, or a read or write failed)."""
        state = self._links.pop(link, None)
        if state is None or self._stopped:
            return []
        if link == self.current:
            self.current = None
            if self._opening or self._retry_at < math.inf:
                return []  # a replacement is already on its way
            self._attempts = 0
            self._lost("the link was lost")
            return self._open()
        # a link that never said hello: this attempt failed
        self._opening = False
        self.last_error = "the link closed before hello"
        self._retry_later(now)
        return []

    def tick(self, now: float) -> list[Effect]:
        if self._stopped:
            return []
        effects: list[Effect] = []
        for link, state in list(self._links.items()):
            if link != self.current and now >= state.hello_by:
                del self._links[link]
                self._opening = False
                self.last_error = f"no hello within {self.hello_within:g} s"
                self._retry_later(now)
                effects.append(Close(link, self.last_error))
        if self.current is not None:
            link, state = self.current, self._links[self.current]
            if now >= state.last_frame + WATCHDOG_PINGS * self.ping_interval:
                del self._links[link]
                self.current = None
                self._lost(f"no frame for {WATCHDOG_PINGS} ping intervals")
                effects.append(Close(link, self.last_error or ""))
                if not self._opening:
                    self._retry_at = math.inf
                    self._attempts = 0
                    effects.extend(self._open())
                return effects
            if now >= state.next_ping:
                state.next_ping = now + self.ping_interval
                effects.append(Ping(link))
        if not self._opening and now >= self._retry_at:
            effects.extend(self._open())
        return effects

    def stop(self) -> list[Effect]:
        """Stop for good (shutdown): close every open link."""
        effects: list[Effect] = [Close(link, "stopped") for link in self._links]
        self._links.clear()
        self.current = None
        self._stopped = True
        self._opening = False
        self._retry_at = math.inf
        return effects

    def status(self) -> tuple[LinkState, str | None]:
        """The link's state and detail as the transport reports it (see the module docstring).

        No clock: the detail names the wait decided at the failure, not a countdown."""
        if self._stopped:
            return "failed", self.fatal_reason or "stopped"
        if self.current is not None:
            return "connected", None
        if self.last_error is None:
            return "connecting", None
        wait = self._retry_wait
        after = "within 1 s" if wait <= 1.0 else f"in {math.ceil(wait)} s"
        return "connecting", f"{self.last_error}; next attempt {after}"

    def deadline(self) -> float:
        """When ``tick`` has something to do (``inf``: nothing until the next input)."""
        if self._stopped:
            return math.inf
        candidates = [self._retry_at if not self._opening else math.inf]
        for link, state in self._links.items():
            if link == self.current:
                candidates.append(state.next_ping)
                candidates.append(state.last_frame + WATCHDOG_PINGS * self.ping_interval)
            else:
                candidates.append(state.hello_by)
        return min(candidates)

    # -- internals -------------------------------------------------------------------------

    def _envelope(self, frame: Mapping[str, Any], envelope_id: str) -> list[Effect]:
        kind = frame.get("type")
        payload = frame.get("payload")
        if not isinstance(kind, str) or kind not in ENVELOPE_TYPES:
            return [Discarded(f"an envelope of unknown type {str(kind)[:40]!r} (acknowledged)")]
        if not isinstance(payload, Mapping):
            return [Discarded(f"an envelope ({kind}) without a payload (acknowledged)")]
        attempt = frame.get("retry_attempt")
        reason = frame.get("retry_reason")
        envelope = Envelope(
            envelope_id=envelope_id,
            type=kind,
            payload=payload,
            retry_attempt=attempt if isinstance(attempt, int) and attempt >= 0 else 0,
            retry_reason=reason if isinstance(reason, str) else "",
            accepts_response_payload=frame.get("accepts_response_payload") is True,
        )
        return [Deliver(envelope)]

    def _hello(self, link: int, state: _Link, now: float) -> list[Effect]:
        if link == self.current:
            return []
        effects: list[Effect] = []
        previous = self.current
        if previous is not None:
            del self._links[previous]
            effects.append(Close(previous, "replaced by a new connection"))
        state.hello_by = math.inf
        state.next_ping = now + self.ping_interval
        self.current = link
        self._opening = False
        self._retry_at = math.inf
        self._attempts = 0
        self.last_error = None
        if previous is None:
            effects.append(Up())
        return effects

    def _disconnect(self, link: int, reason: object, now: float) -> list[Effect]:
        said = str(reason)[:60] if reason is not None else "no reason"
        if reason == "link_disabled":
            return self._stop_fatal("Socket Mode is turned off for the app (link_disabled)")
        if reason == "too_many_websockets":
            del self._links[link]
            if link == self.current:
                self.current = None
            else:
                self._opening = False
            self._attempts += 1
            self._retry_at = now + max(self.too_many_wait, self._step(), _MIN_WAIT)
            self.last_error, self._retry_wait = "too_many_websockets", self._retry_at - now
            return [Close(link, "too_many_websockets: backing off")]
        if link != self.current:
            # A link not yet live is told to go: drop it and try again later.
            del self._links[link]
            self._opening = False
            self.last_error = f"disconnect ({said}) before hello"
            self._retry_later(now)
            return [Close(link, self.last_error)]
        if self._opening:
            return []  # the replacement is already on its way
        self._retry_at = math.inf
        effects = self._open()
        if reason not in _REPLACE:
            effects.insert(0, Discarded(f"disconnect of unknown reason {said!r}: reconnecting"))
        return effects

    def _open(self) -> list[Effect]:
        self._opening = True
        self._retry_at = math.inf
        return [Open()]

    def _step(self) -> float:
        if not self.backoff:
            return 0.0
        base = self.backoff[min(max(self._attempts - 1, 0), len(self.backoff) - 1)]
        return base * (1.0 + self._jitter())

    def _retry_later(self, now: float) -> None:
        self._attempts += 1
        at = now + max(_MIN_WAIT, self._step())
        # A longer wait already set (too_many_websockets) is kept: a failure cannot shorten it.
        self._retry_at = at if self._retry_at == math.inf else max(at, self._retry_at)
        self._retry_wait = self._retry_at - now

    def _lost(self, reason: str) -> None:
        """The live link is gone and a new one opens at once."""
        self.last_error, self._retry_wait = reason, 0.0

    def _stop_fatal(self, reason: str) -> list[Effect]:
        effects: list[Effect] = [Close(link, reason) for link in self._links]
        self._links.clear()
        self.current = None
        self._stopped = True
        self._opening = False
        self._retry_at = math.inf
        self.fatal_reason = reason
        return [*effects, Fatal(reason)]
