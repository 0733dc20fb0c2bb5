"""The long connection as a pure state machine: inputs and clock readings in, effects out.

The trio adapter (``_client``) owns the socket, the HTTP client and the clock; this machine owns
every decision. Each input method takes ``now`` (seconds, any monotonic scale) and returns the
effects to carry out, in order; the adapter wakes the machine with ``tick`` at ``deadline()``::

    effects = machine.start()                    # [Discover()]
    effects = machine.discovered(url, config, now)   # [Dial(url)]
    effects = machine.opened(now)                # [Up(), Send(ping)]
    effects = machine.received(data, now)        # [Deliver(...)] / [] / [Discarded(...)]
    effects = machine.handled(ack_id, now, result=...)   # [Send(ack)]
    effects = machine.tick(now)                  # pings, overdue events, watchdog, reconnect

Rules:

* **Discovery first, every time.** Each (re)connection starts with a fresh endpoint call; its
  ``ClientConfig`` (and every pong's) sets ``PingInterval``, ``ReconnectCount``,
  ``ReconnectInterval`` and ``ReconnectNonce``. The WebSocket URL's ``service_id`` query goes into
  every frame's ``service``.
* **Ping** right after the socket opens, then every ``PingInterval``.
* **Watchdog.** No frame of any kind for 3 ping intervals: the link is dead even if TCP says
  otherwise (half-dead links behind proxies never close); close it and reconnect.
* **ACK.** A DATA frame of type ``event`` is delivered once whole and ACKed with the same
  frame (the last fragment's, for a fragmented one) plus a ``biz_rt`` header (ms from receipt)
  and the payload ``{"code": 200}``, ``{"code": 200, "data": base64(result JSON)}`` or
  ``{"code": 500}`` when the handler failed. The ACK goes out when the handler answered and
  never before: the handler accepts a message (its claims and inbox row committed) or refuses
  it before it returns, and the platform does not deliver an ACKed event again, so an ACK sent
  ahead of that commit (at a deadline, under a slow store) and a kill in between lost the
  message for good. A handler still working at ``ack_within`` (2.5 s) after receipt is
  reported once (``Overdue``, for the log): the platform delivers what is not ACKed within
  about 3 s again, and the redelivery meets the claims (dropped as claimed once the first
  commit landed, accepted if it never did); the ACK simply goes late. A ``card`` frame
  (legacy callbacks) is dropped without an ACK, as the official SDK does.
* **Fragments** (``sum`` > 1) are collected by ``message_id`` and ``seq`` and joined in order;
  parts of a message not completed within 5 s are dropped.
* **Reconnect.** A lost link waits a random jitter in ``[0, ReconnectNonce)`` seconds before the
  first attempt; a failed attempt (the first one at start too) waits ``ReconnectInterval``;
  ``ReconnectCount`` attempts at most (-1: forever), then ``Fatal``; a success starts a new
  series.
* **Fatal** refusals (credentials refused at discovery, a forbidden or over-limit handshake)
  stop the machine with ``Fatal``: no retry loop against bad credentials.
* **Status** (``status()``): what the transport reports while it tries: ``connecting`` with no
  detail before the first failure, then with the last error and the wait before the next
  attempt (the same text for the same failure, so a retry loop says it once); ``connected``;
  ``failed`` with the fatal reason.
"""

from __future__ import annotations

import base64
import json
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from ._frames import METHOD_CONTROL, METHOD_DATA, Frame, FrameError, Header, decode, encode

__all__ = [
    "ACK_WITHIN",
    "FRAGMENT_TTL",
    "WATCHDOG_PINGS",
    "ClientConfig",
    "Close",
    "Deliver",
    "Delivery",
    "Dial",
    "Discarded",
    "Discover",
    "Effect",
    "Fatal",
    "LinkState",
    "LongConnection",
    "Overdue",
    "Send",
    "State",
    "Up",
]

ACK_WITHIN = 2.5
"""Seconds after receipt by which the platform wants an event ACKed (it delivers one not ACKed
within about 3 s again): a handler still working then is reported (``Overdue``), never
ACKed ahead of its answer."""
FRAGMENT_TTL = 5.0
WATCHDOG_PINGS = 3
_MIN_WAIT = 0.05
"""Floor of every reconnect wait, so a zero interval cannot spin against a failing server."""


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """The server's connection settings (seconds), defaults as the official SDK's."""

    ping_interval: float = 120.0
    reconnect_count: int = -1
    reconnect_interval: float = 120.0
    reconnect_nonce: float = 30.0

    def merged(self, raw: object) -> ClientConfig:
        """These settings with the valid keys of a ``ClientConfig`` JSON object applied; a
        missing, non-numeric or out-of-range value keeps the current one."""
        if not isinstance(raw, Mapping):
            return self

        def number(key: str, current: float, low: float) -> float:
            value = raw.get(key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                return current
            return float(value) if math.isfinite(value) and value >= low else current

        ping = number("PingInterval", self.ping_interval, 0.0)
        count = raw.get("ReconnectCount")
        return ClientConfig(
            ping_interval=ping if ping > 0 else self.ping_interval,
            reconnect_count=count
            if isinstance(count, int) and not isinstance(count, bool) and count >= -1
            else self.reconnect_count,
            reconnect_interval=number("ReconnectInterval", self.reconnect_interval, 0.0),
            reconnect_nonce=number("ReconnectNonce", self.reconnect_nonce, 0.0),
        )


# -- effects ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Discover:
    """Call the endpoint (``POST {domain}/callback/ws/endpoint``), then feed ``discovered`` or
    ``failed``."""


@dataclass(frozen=True, slots=True)
class Dial:
    """Open the WebSocket at ``url``, then feed ``opened`` or ``failed``."""

    url: str


@dataclass(frozen=True, slots=True)
class Send:
    """Write one binary message."""

    data: bytes = field(repr=False)
    what: str
    """``ping`` or ``ack``: for logs and tests."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """A whole event, for the handler. ``ack_id`` names it in ``handled``."""

    ack_id: int
    message_id: str
    trace_id: str
    payload: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class Deliver:
    delivery: Delivery


@dataclass(frozen=True, slots=True)
class Up:
    """The link is up: a real connection exists (readiness may be reported)."""


@dataclass(frozen=True, slots=True)
class Close:
    """Close the socket (the watchdog fired, or ``stop``); a reconnect may follow."""

    reason: str


@dataclass(frozen=True, slots=True)
class Fatal:
    """Stop for good: ``reason`` says what the platform refused."""

    reason: str


@dataclass(frozen=True, slots=True)
class Overdue:
    """The handler of frame ``message_id`` has not answered within ``ack_within``: its ACK
    waits for it, and the platform may deliver the event again meanwhile (for the log)."""

    message_id: str
    seconds: float


@dataclass(frozen=True, slots=True)
class Discarded:
    """Input dropped on purpose (a malformed frame, an unknown type): for the log."""

    reason: str


Effect = Discover | Dial | Send | Deliver | Up | Close | Fatal | Overdue | Discarded
State = Literal["idle", "discovering", "dialing", "connected", "waiting", "stopped"]
LinkState = Literal["connecting", "connected", "failed"]


@dataclass(slots=True)
class _Pending:
    frame: Frame
    received: float
    overdue: bool = False
    """Reported ``Overdue`` already (once per event)."""


@dataclass(slots=True)
class _Parts:
    parts: list[bytes | None]
    first_seen: float


def _ack_payload(result: Mapping[str, Any] | None, failed: bool) -> bytes:
    if failed:
        return json.dumps({"code": 500}).encode()
    answer: dict[str, Any] = {"code": 200}
    if result is not None:
        data = json.dumps(result, ensure_ascii=False).encode()
        answer["data"] = base64.b64encode(data).decode("ascii")
    return json.dumps(answer).encode()


def _after(seconds: float) -> str:
    """``within 1 s`` for short waits (most under a second), else ``in 120 s``."""
    return "within 1 s" if seconds <= 1.0 else f"in {math.ceil(seconds)} s"


def service_id_of(url: str) -> int | None:
    """The ``service_id`` query of an endpoint URL, ``None`` when absent or not an int32."""
    values = parse_qs(urlsplit(url).query).get("service_id")
    if not values:
        return None
    try:
        service = int(values[0])
    except ValueError:
        return None
    return service if -(1 << 31) <= service < (1 << 31) else None


class LongConnection:
    def __init__(
        self,
        *,
        config: ClientConfig | None = None,
        ack_within: float = ACK_WITHIN,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.config = config or ClientConfig()
        self.ack_within = ack_within
        self._jitter = jitter
        self.state: State = "idle"
        self.service = 0
        self.fatal_reason: str | None = None
        self.last_error: str | None = None
        """Why the last attempt failed or the last link ended (``None`` once a link is up)."""
        self._retry_wait = 0.0
        """The wait before the next attempt, as decided when the last one failed."""
        self._url = ""
        self._next_ping = math.inf
        self._last_ping = 0.0
        self._last_frame = 0.0
        self._retry_at = math.inf
        self._attempts = 0
        """Attempts made in the current reconnect series."""
        self._pending: dict[int, _Pending] = {}
        self._fragments: dict[str, _Parts] = {}
        self._next_ack_id = 1

    # -- inputs ----------------------------------------------------------------------------

    def start(self) -> list[Effect]:
        if self.state != "idle":
            return []
        self.state = "discovering"
        self._attempts = 1
        return [Discover()]

    def discovered(self, url: str, config: object, now: float) -> list[Effect]:
        """The endpoint answered with a WebSocket ``url`` and its ``ClientConfig``."""
        if self.state != "discovering":
            return []
        self.config = self.config.merged(config)
        service = service_id_of(url)
        if service is None:
            return self.failed("the endpoint URL has no valid service_id", now, fatal=False)
        self.service, self._url = service, url
        self.state = "dialing"
        return [Dial(url)]

    def opened(self, now: float) -> list[Effect]:
        if self.state != "dialing":
            return []
        self.state = "connected"
        self._attempts = 0
        self.last_error = None
        self._last_frame = now
        return [Up(), self._ping(now)]

    def failed(self, reason: str, now: float, *, fatal: bool) -> list[Effect]:
        """Discovery or the handshake failed (``fatal`` when the platform refused for good)."""
        if self.state not in ("discovering", "dialing"):
            return []
        if fatal:
            return self._stop_fatal(reason)
        count = self.config.reconnect_count
        if count >= 0 and self._attempts >= max(count, 1):
            return self._stop_fatal(f"{reason}; gave up after {self._attempts} attempt(s)")
        self.last_error = reason
        self._wait(now, self.config.reconnect_interval)
        return []

    def closed(self, now: float) -> list[Effect]:
        """The socket ended (the peer closed it, or a read or write failed)."""
        if self.state != "connected":
            return []
        self._drop_link()
        self._attempts = 0
        self.last_error = "the link was lost"
        self._wait(now, self._jitter_wait())
        return []

    def received(self, data: bytes, now: float) -> list[Effect]:
        if self.state != "connected":
            return []
        self._last_frame = now
        try:
            frame = decode(data)
        except FrameError as error:
            return [Discarded(f"malformed frame: {error}")]
        kind = frame.header("type")
        if frame.method == METHOD_CONTROL:
            if kind == "pong":
                if frame.payload:
                    try:
                        raw = json.loads(frame.payload)
                    except ValueError:
                        return [Discarded("a pong whose ClientConfig is not JSON")]
                    self._apply(raw)
                return []
            if kind == "ping":
                return []
            return [Discarded(f"control frame of unknown type {kind!r}")]
        if frame.method != METHOD_DATA:
            return [Discarded(f"frame of unknown method {frame.method}")]
        message_id = frame.header("message_id") or ""
        payload = self._reassemble(frame, message_id, now)
        if isinstance(payload, Discarded):
            return [payload]
        if payload is None:
            return []
        if kind == "card":
            return [Discarded("legacy card callback frame (not ACKed, as the SDK does)")]
        if kind != "event":
            return [Discarded(f"data frame of unknown type {kind!r}")]
        ack_id = self._next_ack_id
        self._next_ack_id += 1
        self._pending[ack_id] = _Pending(frame, now)
        trace = frame.header("trace_id") or ""
        return [Deliver(Delivery(ack_id, message_id, trace, payload))]

    def handled(
        self,
        ack_id: int,
        now: float,
        *,
        result: Mapping[str, Any] | None = None,
        failed: bool = False,
    ) -> list[Effect]:
        """The handler of ``ack_id`` answered (``result`` goes back in the ACK)."""
        pending = self._pending.pop(ack_id, None)
        if pending is None or self.state != "connected":
            return []  # ACKed already, or its link is gone (the platform delivers it again)
        return [self._ack(pending, now, result, failed)]

    def tick(self, now: float) -> list[Effect]:
        effects: list[Effect] = []
        if self.state == "waiting" and now >= self._retry_at:
            self.state = "discovering"
            self._retry_at = math.inf
            self._attempts += 1
            return [Discover()]
        if self.state != "connected":
            return effects
        for pending in self._pending.values():
            if not pending.overdue and now >= pending.received + self.ack_within:
                pending.overdue = True  # reported, never ACKed ahead of its handler
                message_id = pending.frame.header("message_id") or ""
                effects.append(Overdue(message_id, now - pending.received))
        for message_id, parts in list(self._fragments.items()):
            if now >= parts.first_seen + FRAGMENT_TTL:
                del self._fragments[message_id]
                effects.append(Discarded(f"fragments of {message_id} expired incomplete"))
        if now >= self._last_frame + WATCHDOG_PINGS * self.config.ping_interval:
            self._drop_link()
            self._attempts = 0
            self.last_error = f"no frame for {WATCHDOG_PINGS} ping intervals"
            self._wait(now, self._jitter_wait())
            effects.append(Close(self.last_error))
            return effects
        if now >= self._next_ping:
            effects.append(self._ping(now))
        return effects

    def stop(self) -> list[Effect]:
        """Stop for good (shutdown): close the socket if one is open."""
        was_connected = self.state == "connected"
        self._drop_link()
        self.state = "stopped"
        return [Close("stopped")] if was_connected else []

    def status(self) -> tuple[LinkState, str | None]:
        """The link's state and detail as the transport reports it (see the module docstring).

        No clock: the detail names the wait decided at the failure, not a countdown."""
        if self.state == "stopped":
            return "failed", self.fatal_reason or "stopped"
        if self.state == "connected":
            return "connected", None
        if self.last_error is None:
            return "connecting", None
        return "connecting", f"{self.last_error}; next attempt {_after(self._retry_wait)}"

    def deadline(self) -> float:
        """When ``tick`` has something to do (``inf``: nothing until the next input)."""
        if self.state == "waiting":
            return self._retry_at
        if self.state != "connected":
            return math.inf
        candidates = [
            self._next_ping,
            self._last_frame + WATCHDOG_PINGS * self.config.ping_interval,
            *(p.received + self.ack_within for p in self._pending.values() if not p.overdue),
            *(p.first_seen + FRAGMENT_TTL for p in self._fragments.values()),
        ]
        return min(candidates)

    # -- internals -------------------------------------------------------------------------

    def _apply(self, raw: object) -> None:
        self.config = self.config.merged(raw)
        if self.state == "connected":
            self._next_ping = self._last_ping + self.config.ping_interval

    def _ping(self, now: float) -> Send:
        self._last_ping = now
        self._next_ping = now + self.config.ping_interval
        ping = Frame(service=self.service, method=METHOD_CONTROL, headers=(Header("type", "ping"),))
        return Send(encode(ping), "ping")

    def _ack(
        self, pending: _Pending, now: float, result: Mapping[str, Any] | None, failed: bool
    ) -> Send:
        elapsed = max(0, round((now - pending.received) * 1000))
        frame = pending.frame.with_header("biz_rt", str(elapsed))
        return Send(encode(replace(frame, payload=_ack_payload(result, failed))), "ack")

    def _reassemble(self, frame: Frame, message_id: str, now: float) -> bytes | Discarded | None:
        try:
            total = int(frame.header("sum") or "1")
            seq = int(frame.header("seq") or "0")
        except ValueError:
            return Discarded("a data frame with a non-numeric sum or seq")
        payload = frame.payload or b""
        if total <= 1:
            return payload
        if not 0 <= seq < total or total > 1024:
            return Discarded(f"fragment {seq} of {total} is out of range")
        parts = self._fragments.get(message_id)
        if parts is None or len(parts.parts) != total:
            parts = self._fragments[message_id] = _Parts([None] * total, now)
        parts.parts[seq] = payload
        if any(part is None for part in parts.parts):
            return None
        del self._fragments[message_id]
        return b"".join(part or b"" for part in parts.parts)

    def _jitter_wait(self) -> float:
        return self._jitter() * self.config.reconnect_nonce

    def _wait(self, now: float, seconds: float) -> None:
        self.state = "waiting"
        self._retry_wait = max(_MIN_WAIT, seconds)
        self._retry_at = now + self._retry_wait

    def _drop_link(self) -> None:
        self._pending.clear()
        self._fragments.clear()
        self._next_ping = math.inf

    def _stop_fatal(self, reason: str) -> list[Effect]:
        self._drop_link()
        self.state = "stopped"
        self.fatal_reason = reason
        return [Fatal(reason)]
