"""The card renderer's policy as a pure state machine: inputs in, effects out, no I/O.

``TurnCard`` is what the actor runs, minus the actor. It takes three kinds of input (a turn
event, a wake-up, an outcome of the delivery service), reads two injected clocks, and returns
*effects* for its shell to carry out: requests for the delivery service (``ShowCard``,
``DeliverFinal``), store ops (``SaveTurnSnapshot``, ``RetireCardActions``) and notices for the
engine. ``next_wake()`` says when it wants to be woken. Keeping it pure is what lets the update
discipline be tested on a hand-held clock, and the property tests run thousands of turns.

The discipline, on top of ``UpdateThrottle``:

* events reduce into the ``TurnView``; each change is offered to the throttle (critical for a
  new approval and the terminal state), which decides when the card is rendered and shown;
* one request to the delivery service is in flight at a time; outcomes carry the request id,
  and outcomes of requests this instance did not make (a crashed predecessor's) only teach it
  the card's message id;
* the final answer is asked for once the throttle reports the terminal card flushed (shown, or
  unchanged); a terminal card that is refused permanently ``terminal_card_attempts`` times is
  given up so the answer still goes out; a final that fails transiently is retried on the same
  backoff series, up to ``final_attempts``;
* approval buttons get fresh random tokens per decision, carried with each card request and
  bound by the delivery service; tokens of an answered approval, and all of them once the turn
  ends, are retired in the store;
* the snapshot is saved along with a card request that shows a newer view (at most every
  ``snapshot_interval``), and before the final answer; the actor also saves it on the way out,
  crash or stop, so a restarted actor continues from the exact view its predecessor had.
"""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast, get_args

from ..events import ApprovalDecision, ApprovalRequested, ApprovalResolved, RuntimeEvent
from ..presentation import BACKOFF, TurnView, UpdateThrottle, UserSteer, payload_hash
from ..store import (
    ActionBinding,
    CardAction,
    FinalDelivery,
    RetireCardActions,
    SaveTurnSnapshot,
    TurnSnapshot,
)
from ._messages import (
    CardNotice,
    CardOutcome,
    CardShown,
    CardSkipped,
    CardTurn,
    DeliverFinal,
    FinalAnswerDelivered,
    FinalAnswerFailed,
    FinalFailed,
    FinalSent,
    ProgressCardPosted,
    ShowCard,
)
from ._platforms import CardPlatform

__all__ = ["CardPolicy", "Effect", "Restored", "TurnCard", "new_token"]

_DECISIONS = frozenset(get_args(ApprovalDecision))

Effect = ShowCard | DeliverFinal | SaveTurnSnapshot | RetireCardActions | CardNotice


def new_token() -> str:
    """An opaque button token: 128 random bits, URL-safe, far under every platform's limit."""
    return secrets.token_urlsafe(16)


@dataclass(frozen=True, slots=True)
class CardPolicy:
    """The card renderer's knobs; the defaults are the product's."""

    interval: float = 2.0
    critical_interval: float = 0.5
    backoff: tuple[float, ...] = BACKOFF
    """Waits after consecutive failed sends (cards and the final answer alike)."""
    terminal_card_attempts: int = 3
    """Permanent refusals of the terminal card after which the answer goes without it."""
    final_attempts: int = 20
    """Failed deliveries of the final answer after which the turn is reported failed."""
    token_ttl: float | None = 7 * 24 * 3600.0
    """How long an approval button stays valid (``None``: until the turn ends)."""
    snapshot_interval: float = 10.0
    """Least time between two snapshots saved along with card updates. Serialising a big view
    costs milliseconds of the interpreter, and the actor saves on every exit anyway (crash
    included), so these saves only bound what a crash of the whole process loses."""


@dataclass(frozen=True, slots=True)
class Restored:
    """What the store knew about the turn when an incarnation started."""

    snapshot: TurnSnapshot | None = None
    ledger: FinalDelivery | None = None
    actions: tuple[tuple[str, ActionBinding], ...] = ()


@dataclass(slots=True)
class _Final:
    chunks: tuple[Any, ...] | None = None
    request_id: str | None = None
    failures: int = 0
    retry_at: float | None = None
    settled: bool = False


@dataclass(slots=True)
class _Flight:
    request_id: str
    terminal: bool


class TurnCard:
    """One turn's card: see the module docstring. Not thread-safe: one owner drives it."""

    def __init__(
        self,
        turn: CardTurn,
        platform: CardPlatform,
        *,
        policy: CardPolicy | None = None,
        clock: Callable[[], float],
        wall: Callable[[], float],
        token: Callable[[], str] = new_token,
        restored: Restored | None = None,
    ) -> None:
        self.turn = turn
        self.platform = platform
        self.policy = policy if policy is not None else CardPolicy()
        self._clock = clock
        self._wall = wall
        self._token = token
        self.throttle = UpdateThrottle(
            interval=self.policy.interval,
            critical_interval=self.policy.critical_interval,
            backoff=self.policy.backoff,
        )
        self._ids = itertools.count(1)
        self._nonce = secrets.token_hex(4)
        self._flight: _Flight | None = None
        self._final = _Final()
        self._tokens: dict[str, dict[ApprovalDecision, ActionBinding]] = {}
        self._terminal_seen = False
        self._terminal_wall: float | None = None
        self._card_refusals = 0
        self._card_abandoned = False
        self.card_message_id: str | None = None
        self.saved_version = -1
        self._saved_at: float | None = None
        self.done = False
        """The answer is delivered (or failed for good): nothing more will be sent."""
        self._restored = restored if restored is not None else Restored()
        snapshot = self._restored.snapshot
        self.view = TurnView.from_json(snapshot.snapshot) if snapshot is not None else TurnView()
        if snapshot is not None:
            self.saved_version = self.view.version
        self.view.restricted = self.view.restricted or turn.restricted

    # -- inputs ---------------------------------------------------------------------------------

    def start(self) -> list[Effect]:
        """The first input of every incarnation: continue from what was restored."""
        ledger = self._restored.ledger
        if ledger is not None:
            self.card_message_id = ledger.progress_message_id
            if ledger.delivered:
                self.done = True
                self._final.settled = True
                return [
                    FinalAnswerDelivered(
                        self.turn.turn_id,
                        ledger.final_message_ids,
                        ledger.progress_message_id,
                        already=True,
                    )
                ]
        pending = {a.approval_id for a in self.view.pending_approvals}
        for _message_id, binding in self._restored.actions:
            action = binding.action
            if action.approval_id in pending and action.decision in _DECISIONS:
                decision = cast(ApprovalDecision, action.decision)
                self._tokens.setdefault(action.approval_id, {})[decision] = binding
        for approval in self.view.pending_approvals:
            if approval.approval_id not in self._tokens:
                self._mint(approval.approval_id, approval.decisions)
        effects: list[Effect] = []
        ended = self.turn.ended
        if ended is not None and not self.view.terminal:
            self.view.apply(ended)  # shown as it ended, never as running first
        if self.view.terminal:
            effects.extend(self._turn_ended())
        if self.view.version > 0:
            # Whatever happened since the card was last shown is on it again, at once.
            self.throttle.offer(
                self.view.version,
                critical=True,
                terminal=self.view.terminal,
                now=self._clock(),
            )
        effects.extend(self._pump())
        return effects

    def event(self, event: RuntimeEvent | UserSteer) -> list[Effect]:
        if self.done:
            return []  # the turn is over on screen; a late event changes nothing
        change = self.view.apply(event)
        if change == "unchanged":
            return []
        effects: list[Effect] = []
        if isinstance(event, ApprovalRequested):
            approval = next(
                (a for a in self.view.pending_approvals if a.approval_id == event.approval_id),
                None,
            )
            if approval is not None:
                self._mint(approval.approval_id, approval.decisions)
        elif isinstance(event, ApprovalResolved) and event.approval_id in self._tokens:
            del self._tokens[event.approval_id]
            effects.append(
                RetireCardActions(self.turn.turn_id, event.approval_id, "resolved", self._wall())
            )
        if self.view.terminal and not self._terminal_seen:
            effects.extend(self._turn_ended())
        self.throttle.offer(
            self.view.version,
            critical=change == "critical",
            terminal=self.view.terminal,
            now=self._clock(),
        )
        effects.extend(self._pump())
        return effects

    def wake(self) -> list[Effect]:
        return [] if self.done else self._pump()

    def outcome(self, outcome: CardOutcome) -> list[Effect]:
        if isinstance(outcome, FinalSent | FinalFailed):
            return self._final_outcome(outcome)
        effects: list[Effect] = []
        message_id = outcome.message_id
        if message_id is not None and self.card_message_id is None:
            self.card_message_id = message_id
        if isinstance(outcome, CardShown) and outcome.created:
            # Announced even from a predecessor's request: the engine hears of the card once
            # more at worst, never not at all.
            effects.append(ProgressCardPosted(self.turn.turn_id, outcome.message_id))
        flight = self._flight
        if flight is None or outcome.request_id != flight.request_id or self.done:
            return effects
        self._flight = None
        now = self._clock()
        if isinstance(outcome, CardShown):
            self.throttle.sent(outcome.content_hash, now)
        elif isinstance(outcome, CardSkipped):
            # The answer is out already (a predecessor delivered it): the turn is finished.
            self.done = True
            self._final.settled = True
            effects.append(
                FinalAnswerDelivered(
                    self.turn.turn_id, outcome.final_ids, self.card_message_id, already=True
                )
            )
            return effects
        else:
            self.throttle.failed(now, transient=outcome.transient, retry_after=outcome.retry_after)
            if flight.terminal and not outcome.transient:
                self._card_refusals += 1
                if self._card_refusals >= self.policy.terminal_card_attempts:
                    self._card_abandoned = True
        effects.extend(self._pump())
        return effects

    # -- state for the shell --------------------------------------------------------------------

    def next_wake(self) -> float | None:
        """When (on ``clock``'s scale) the card wants ``wake()``; ``None``: only on input."""
        if self.done:
            return None
        deadlines = []
        if not self._card_abandoned and self._flight is None:
            deadline = self.throttle.next_deadline()
            if deadline is not None:
                deadlines.append(deadline)
        final = self._final
        if final.request_id is None and final.retry_at is not None and not final.settled:
            deadlines.append(final.retry_at)
        return min(deadlines) if deadlines else None

    def snapshot(self) -> SaveTurnSnapshot | None:
        """The op saving the view, when it is newer than the last one saved."""
        if self.view.version <= self.saved_version:
            return None
        self.saved_version = self.view.version
        self._saved_at = self._clock()
        text = json.dumps(self.view.to_json(), ensure_ascii=False, separators=(",", ":"))
        return SaveTurnSnapshot(
            self.turn.turn_id, self.turn.task_id, text, self.view.version, self._wall()
        )

    def tokens(self) -> dict[str, dict[ApprovalDecision, str]]:
        """``approval_id -> decision -> token`` of the buttons now on offer."""
        return {
            approval_id: {decision: b.token for decision, b in decisions.items()}
            for approval_id, decisions in self._tokens.items()
        }

    # -- internals ------------------------------------------------------------------------------

    def _next_id(self) -> str:
        return f"{self._nonce}-{next(self._ids)}"

    def _elapsed(self) -> float | None:
        started = self.turn.started_at
        if started is None:
            return None
        end = self._terminal_wall if self._terminal_wall is not None else self._wall()
        return max(0.0, end - started)

    def _mint(self, approval_id: str, decisions: Sequence[ApprovalDecision]) -> None:
        ttl = self.policy.token_ttl
        expires = None if ttl is None else self._wall() + ttl
        self._tokens[approval_id] = {
            decision: ActionBinding(
                self._token(), CardAction(self.turn.turn_id, approval_id, decision), expires
            )
            for decision in decisions
        }

    def _turn_ended(self) -> list[Effect]:
        self._terminal_seen = True
        self._terminal_wall = self._wall()
        self._tokens.clear()
        return [RetireCardActions(self.turn.turn_id, None, "turn_ended", self._wall())]

    def _pump(self) -> list[Effect]:
        effects: list[Effect] = []
        now = self._clock()
        throttle = self.throttle
        if not self._card_abandoned and self._flight is None and throttle.due(now):
            throttle.begin(now)
            tokens = self.tokens()
            payload = self.platform.render(
                self.view, elapsed=self._elapsed(), approval_tokens=tokens
            )
            content_hash = payload_hash(payload)
            if throttle.unchanged(content_hash):
                throttle.skipped()
            else:
                saved_at = self._saved_at
                if saved_at is None or now - saved_at >= self.policy.snapshot_interval:
                    snapshot = self.snapshot()
                    if snapshot is not None:
                        effects.append(snapshot)
                request_id = self._next_id()
                self._flight = _Flight(request_id, self.view.terminal)
                actions = tuple(b for d in self._tokens.values() for b in d.values())
                effects.append(
                    ShowCard(
                        request_id,
                        self.turn.turn_id,
                        self.turn.route,
                        payload,
                        content_hash,
                        actions,
                    )
                )
        if self.view.terminal and (throttle.flushed or self._card_abandoned):
            effects.extend(self._send_final(now))
        return effects

    def _send_final(self, now: float) -> list[Effect]:
        final = self._final
        if final.settled or final.request_id is not None:
            return []
        if final.retry_at is not None and now < final.retry_at:
            return []
        effects: list[Effect] = []
        if final.chunks is None:
            final.chunks = tuple(self.platform.final_chunks(self.view.final_text or ""))
        snapshot = self.snapshot()
        if snapshot is not None:
            effects.append(snapshot)
        final.request_id = self._next_id()
        final.retry_at = None
        effects.append(
            DeliverFinal(final.request_id, self.turn.turn_id, self.turn.route, final.chunks)
        )
        return effects

    def _final_outcome(self, outcome: FinalSent | FinalFailed) -> list[Effect]:
        final = self._final
        if final.request_id is None or outcome.request_id != final.request_id or final.settled:
            return []
        final.request_id = None
        turn_id = self.turn.turn_id
        if isinstance(outcome, FinalSent):
            final.settled = True
            self.done = True
            notice = FinalAnswerDelivered(
                turn_id, outcome.message_ids, self.card_message_id, already=outcome.already
            )
            return [notice]
        final.failures += 1
        if not outcome.transient or final.failures >= self.policy.final_attempts:
            final.settled = True
            self.done = True
            return [FinalAnswerFailed(turn_id, outcome.error)]
        backoff = self.policy.backoff
        delay = backoff[min(final.failures, len(backoff)) - 1]
        if outcome.retry_after is not None:
            delay = max(delay, outcome.retry_after)
        final.retry_at = self._clock() + delay
        return []
