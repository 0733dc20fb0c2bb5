"""The dispatch scheduler of one team: which request runs now, which waits, and in what order.

A pure state machine (cc-bot's ``dispatch``, kept across restarts instead of cleared): the
team actor hands it ``Submit``, ``Complete`` and ``Sweep`` and performs the effects it returns.

* **Slots**: a running request occupies one; at most ``slots`` run.
* **Submit** evaluates, in order: slots full -> queue (``slot_full``); a tag conflict with a
  running request (``_tags``) -> queue (``conflict:...``); the same sender already running **or
  queued** -> queue (``user_serial``); else start. Queuing with ``queue_limit`` requests already
  waiting is a ``Rejected`` (``queue_full``) instead. A request id seen before is ignored (a
  redelivered chat event must not run twice).
* **Complete** ends a running request (or withdraws a queued one) and promotes.
* **Promotion** scans the queue from the head for the first promotable request: a slot free, no
  tag conflict with what still runs, its sender not running, and no earlier queued request of
  the same sender (per-sender FIFO). It repeats while one is found: a finished ``write`` of the
  project may free several reads at once, and a slot left idle while a request waits is a bug.
* **Sweep** ends every request running for ``max_turn_seconds`` or more (timed out: the team
  actor finalises its card and interrupts its turn) and promotes.

``Queued`` carries the request's position in the queue (1 is next) and how many run ahead of it,
for the one reply a queued request gets; it starts later without another message.
Content-free: a request is an id, a sender, an intent name and tags; times are the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._tags import conflict, conflict_reason

__all__ = [
    "Complete",
    "Ended",
    "Queued",
    "Rejected",
    "Request",
    "Running",
    "Scheduler",
    "SchedulerEffect",
    "SchedulerMessage",
    "SchedulerState",
    "Started",
    "Submit",
    "Sweep",
    "Waiting",
    "Withdrawn",
]


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    sender: str
    intent: str
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Running:
    request: Request
    started_at: float


@dataclass(frozen=True, slots=True)
class Waiting:
    request: Request
    queued_at: float
    reason: str


@dataclass(frozen=True, slots=True)
class SchedulerState:
    """Everything the scheduler knows; what the store keeps for a team."""

    running: tuple[Running, ...] = ()
    queue: tuple[Waiting, ...] = ()


# messages


@dataclass(frozen=True, slots=True)
class Submit:
    request: Request
    now: float


@dataclass(frozen=True, slots=True)
class Complete:
    request_id: str
    now: float


@dataclass(frozen=True, slots=True)
class Sweep:
    now: float


SchedulerMessage = Submit | Complete | Sweep

# effects


@dataclass(frozen=True, slots=True)
class Started:
    request: Request
    promoted: bool = False
    """Waited in the queue first (its thread already had the queued reply)."""


@dataclass(frozen=True, slots=True)
class Queued:
    request: Request
    position: int
    running_ahead: int
    reason: str


@dataclass(frozen=True, slots=True)
class Rejected:
    request: Request
    reason: str = "queue_full"


@dataclass(frozen=True, slots=True)
class Ended:
    request_id: str
    timed_out: bool = False


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """A queued request completed (cancelled) before it ran."""

    request_id: str


SchedulerEffect = Started | Queued | Rejected | Ended | Withdrawn


@dataclass(slots=True)
class Scheduler:
    slots: int = 3
    queue_limit: int = 10
    max_turn_seconds: float = 30 * 60
    running: list[Running] = field(default_factory=list)
    queue: list[Waiting] = field(default_factory=list)

    @classmethod
    def restore(
        cls, state: SchedulerState, *, slots: int, queue_limit: int, max_turn_seconds: float
    ) -> Scheduler:
        return cls(slots, queue_limit, max_turn_seconds, list(state.running), list(state.queue))

    @property
    def state(self) -> SchedulerState:
        return SchedulerState(tuple(self.running), tuple(self.queue))

    def handle(self, message: SchedulerMessage) -> list[SchedulerEffect]:
        if isinstance(message, Submit):
            return self._submit(message.request, message.now)
        if isinstance(message, Complete):
            return self._complete(message.request_id, message.now)
        return self._sweep(message.now)

    def _known(self, request_id: str) -> bool:
        return any(r.request.id == request_id for r in self.running) or any(
            w.request.id == request_id for w in self.queue
        )

    def _blocked(self, request: Request) -> str | None:
        """Why ``request`` cannot start now (slots, tags, its sender), or ``None``."""
        if len(self.running) >= self.slots:
            return "slot_full"
        for running in self.running:
            pair = conflict(request.tags, running.request.tags)
            if pair is not None:
                return conflict_reason(pair)
        if any(r.request.sender == request.sender for r in self.running):
            return "user_serial"
        return None

    def _submit(self, request: Request, now: float) -> list[SchedulerEffect]:
        if self._known(request.id):
            return []
        reason = self._blocked(request)
        if reason is None and any(w.request.sender == request.sender for w in self.queue):
            reason = "user_serial"
        if reason is None:
            self.running.append(Running(request, now))
            return [Started(request)]
        if len(self.queue) >= self.queue_limit:
            return [Rejected(request)]
        self.queue.append(Waiting(request, now, reason))
        return [Queued(request, len(self.queue), len(self.running), reason)]

    def _complete(self, request_id: str, now: float) -> list[SchedulerEffect]:
        for index, running in enumerate(self.running):
            if running.request.id == request_id:
                del self.running[index]
                return [Ended(request_id), *self._promote(now)]
        for index, waiting in enumerate(self.queue):
            if waiting.request.id == request_id:
                del self.queue[index]
                return [Withdrawn(request_id)]
        return []

    def _sweep(self, now: float) -> list[SchedulerEffect]:
        overdue = [r for r in self.running if now - r.started_at >= self.max_turn_seconds]
        if not overdue:
            return []
        self.running = [r for r in self.running if r not in overdue]
        ended: list[SchedulerEffect] = [Ended(r.request.id, timed_out=True) for r in overdue]
        return [*ended, *self._promote(now)]

    def _promote(self, now: float) -> list[SchedulerEffect]:
        started: list[SchedulerEffect] = []
        while len(self.running) < self.slots:
            index = self._first_promotable()
            if index is None:
                break
            request = self.queue.pop(index).request
            self.running.append(Running(request, now))
            started.append(Started(request, promoted=True))
        return started

    def _first_promotable(self) -> int | None:
        seen: set[str] = set()
        for index, waiting in enumerate(self.queue):
            sender = waiting.request.sender
            if sender not in seen and self._blocked(waiting.request) is None:
                return index
            seen.add(sender)
        return None
