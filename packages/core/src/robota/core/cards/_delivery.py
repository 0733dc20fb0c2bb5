"""The delivery service: the trio side of every card, where the sink's I/O and the ledger meet.

Card actors decide *what* to show and *when*; ``CardDelivery`` does it. It is a trio
``Service`` (one per sink, so one per transport) serving every turn of that transport:

* ``submit(request, reply_to)`` is thread-safe and never blocks: actors call it from their
  threads; the outcome (``CardShown``, ``CardSkipped``, ``CardFailed``, ``FinalSent``,
  ``FinalFailed``) is passed to ``reply_to`` (an ``Address.tell``) on the loop.
* requests of one turn run one at a time, in the order they were submitted (a lane per turn),
  so a card is never created twice, even when a restarted actor's first request overtakes
  its predecessor's last; different turns run concurrently, at most ``concurrency`` sink calls
  at once.
* the service knows each turn's card message id (from its own sends, else from the ledger), so
  the first show creates the card and every later one edits it.

The ledger rules, per request:

* **Show.** If the ledger says the final answer is out, nothing is shown (``CardSkipped``).
  A new card's send is claimed first (``ClaimProgressCard``: a process killed between the
  platform creating the card and its record leaves the claim, so the next run ends that card
  rather than never learning of it; claimed before and never recorded, a sink that can tell
  (``CardLookup``: Slack, by the key in the card's metadata) is asked for the card from the
  claim's time on, and the card it has is adopted; else the card is sent again under the same
  key, which Feishu answers with the card it made; either way it is edited to this show).
  A new card is sent, then its tokens are bound and ``RecordProgressCard`` notes it. An edit
  binds the tokens first (a button is never clickable before its token is bound), then
  ``RecordProgressCard``; if that refuses because the final answer went out meanwhile, the edit
  is not made. Only the first card's buttons can be clicked before their tokens commit (for the
  few milliseconds after the send); such a click is refused as unknown and can be repeated.
* **Final.** The send is claimed first (``ClaimFinalSend``, one savepoint: the ledger read,
  ``final_gate`` decided, the claim marked): delivered, nothing is sent
  (``FinalSent(already=True)``); claimed before and never recorded, an earlier try (a process
  killed between the platform keeping the answer and the ledger's commit) may have reached the
  platform, so a sink that can tell (``FinalLookup``) is asked which chunks it has (from the
  first claim's time on), and they count as sent. Then the chunks not yet sent go out, and
  ``RecordFinalDelivery`` records them. A send that failed leaves the same doubt (its answer
  may have been lost, not its message), so its retry asks too. Chunks sent before a failure
  are remembered, so a retry sends only the rest, and a failed record after a successful send
  is retried without sending again. The gate holds across actor crashes (the lane and this
  service outlive the actor) and across processes (the ledger). A sink that cannot tell sends
  the chunks again with the same deduplication keys, which its platform drops (Feishu's
  ``uuid``).

Stopping the service fails every queued and running request as transient ("delivery stopped"),
so no actor waits for an outcome that will never come; requests submitted while it is down wait
(bounded by ``max_queued``) for the next run.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from .._errors import RequestTimeout, RobotaError, StoreError
from ..kernel import LoopPort
from ..store import (
    BindCardActions,
    ClaimFinalSend,
    ClaimProgressCard,
    RecordFinalDelivery,
    RecordProgressCard,
    StoreClient,
)
from ._messages import (
    CardFailed,
    CardOutcome,
    CardRequest,
    CardShown,
    CardSkipped,
    DeliverFinal,
    FinalFailed,
    FinalSent,
    ShowCard,
)
from ._reads import LedgerEntry
from ._sink import CardLookup, FinalLookup, PermanentSendError, SendError, TransientSendError

if TYPE_CHECKING:
    from ._sink import CardSink

__all__ = ["CardDelivery"]

logger = logging.getLogger("robota.core.cards")

Reply = Callable[[CardOutcome], object]


@dataclass(slots=True)
class _TurnState:
    """What the service knows of one turn's messages."""

    message_id: str | None = None
    delivered: bool = False
    final_ids: list[str] = field(default_factory=list)
    """Ids of the final chunks sent so far (all of them once ``delivered``)."""
    claimed: bool = False
    """This service claimed the final's send in the ledger (``ClaimFinalSend``)."""
    claimed_at: float | None = None
    """When the final's send was first claimed: a lookup reads the platform from there on."""
    doubt: bool = False
    """A try may have reached the platform unheard: ask it before sending (``FinalLookup``)."""
    lanes: int = 0
    """Lanes using this entry right now: a busy entry is never evicted."""


@dataclass(slots=True)
class _Lane:
    jobs: deque[tuple[CardRequest, Reply]] = field(default_factory=deque)


class _Failure(RobotaError):
    def __init__(self, transient: bool, retry_after: float | None, error: str) -> None:
        super().__init__(error)
        self.transient = transient
        self.retry_after = retry_after
        self.error = error


class CardDelivery:
    """Delivers card requests through ``sink`` under the ledger's rules (module docstring)."""

    def __init__(
        self,
        sink: CardSink,
        store: StoreClient,
        *,
        send_timeout: float = 30.0,
        store_timeout: float = 10.0,
        concurrency: int = 16,
        max_queued: int = 10_000,
        remember: int = 4096,
    ) -> None:
        if concurrency < 1 or max_queued < 1 or remember < 1:
            raise ValueError("concurrency, max_queued and remember must be >= 1")
        self.sink = sink
        self.store = store
        self.send_timeout = send_timeout
        self.store_timeout = store_timeout
        self.max_queued = max_queued
        self.remember = remember
        self._concurrency = concurrency
        self._lock = threading.Lock()
        self._incoming: deque[tuple[CardRequest, Reply]] = deque()
        self._intake_posted = False
        self._port: LoopPort | None = None
        # Trio thread only:
        self._nursery: trio.Nursery | None = None
        self._limiter: trio.CapacityLimiter | None = None
        self._lanes: dict[str, _Lane] = {}
        self._turns: OrderedDict[str, _TurnState] = OrderedDict()

    def __repr__(self) -> str:
        return f"<CardDelivery lanes={len(self._lanes)} queued={len(self._incoming)}>"

    # -- any thread ----------------------------------------------------------------------------

    def submit(self, request: CardRequest, reply_to: Reply) -> None:
        """Queue ``request``; its outcome goes to ``reply_to`` on the loop. Never blocks."""
        with self._lock:
            if len(self._incoming) >= self.max_queued:
                full = True
            else:
                full = False
                self._incoming.append((request, reply_to))
                port = self._port
                post = port is not None and not self._intake_posted
                if post:
                    self._intake_posted = True
        if full:
            _reply(reply_to, _failed(request, _Failure(True, None, "delivery queue full")))
            return
        if post and port is not None and not port.post(self._intake):
            with self._lock:
                self._intake_posted = False

    # -- the trio side -------------------------------------------------------------------------

    def expect_new(self, turn_id: str) -> None:
        """``turn_id`` began just now (``CardTurn.fresh``): it has no ledger entry, so its
        first show creates the card without reading the ledger (trio thread)."""
        if turn_id not in self._turns:
            self._turns[turn_id] = _TurnState()
            self._evict()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self._limiter = trio.CapacityLimiter(self._concurrency)
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                with self._lock:
                    self._port = LoopPort()
                    self._intake_posted = False
                self._intake()
                task_status.started()
                await trio.sleep_forever()
        finally:
            with self._lock:
                self._port = None
            self._nursery = None
            self._lanes.clear()

    def _intake(self) -> None:
        with self._lock:
            batch = list(self._incoming)
            self._incoming.clear()
            self._intake_posted = False
        nursery = self._nursery
        if nursery is None:  # stopped between the post and now: keep them for the next run
            with self._lock:
                self._incoming.extendleft(reversed(batch))
            return
        for request, reply_to in batch:
            lane = self._lanes.get(request.turn_id)
            if lane is not None:
                lane.jobs.append((request, reply_to))
                continue
            lane = _Lane(deque([(request, reply_to)]))
            self._lanes[request.turn_id] = lane
            nursery.start_soon(self._work, request.turn_id, lane)

    async def _work(self, turn_id: str, lane: _Lane) -> None:
        current: tuple[CardRequest, Reply] | None = None
        try:
            while lane.jobs:
                current = lane.jobs.popleft()
                outcome = await self._handle(current[0])
                reply_to, current = current[1], None
                _reply(reply_to, outcome)
        finally:
            if self._lanes.get(turn_id) is lane:
                del self._lanes[turn_id]
            stopped = _Failure(True, None, "card delivery stopped")
            for request, reply_to in [*([current] if current else []), *lane.jobs]:
                _reply(reply_to, _failed(request, stopped))

    async def _handle(self, request: CardRequest) -> CardOutcome:
        state: _TurnState | None = None
        try:
            state = await self._state(request.turn_id)
            state.lanes += 1
            if isinstance(request, ShowCard):
                return await self._show(request, state)
            return await self._final(request, state)
        except _Failure as failure:
            message_id = state.message_id if state is not None else None
            return _failed(request, failure, message_id)
        finally:
            if state is not None:
                state.lanes -= 1

    async def _show(self, request: ShowCard, state: _TurnState) -> CardOutcome:
        turn_id = request.turn_id
        if state.delivered:
            return _skipped(request, state)
        if state.message_id is None:
            gate = await self._write(ClaimProgressCard(turn_id))
            state.message_id = gate.message_id  # ``known``: recorded by an earlier run
        if state.message_id is None:
            key = f"{turn_id}:card"
            found = None
            if gate.verdict == "check":
                found = await self._find_card(request.route, key, gate.claimed_at)
            message_id = found or await self._sink_call(
                self.sink.send_card, request.route, request.payload, key=key
            )
            state.message_id = message_id
            if gate.verdict == "check":
                # An earlier try may have created the card, found on the platform or answered
                # with (same key): it shows that try's content, not this one's.
                await self._sink_call(self.sink.update_card, message_id, request.payload)
            if request.actions:
                await self._write(BindCardActions(message_id, request.route, request.actions))
            if not await self._write(
                RecordProgressCard(turn_id, message_id, request.content_hash)
            ) and await self._final_is_out(turn_id, state):
                return _skipped(request, state)
            return CardShown(request.request_id, turn_id, message_id, request.content_hash, True)
        message_id = state.message_id
        if request.actions:
            await self._write(BindCardActions(message_id, request.route, request.actions))
        recorded = await self._write(RecordProgressCard(turn_id, message_id, request.content_hash))
        # Not recorded: the final answer is out (then the edit must not happen), or the ledger
        # has this very hash, which a failed edit may have left there: edit anyway.
        if not recorded and await self._final_is_out(turn_id, state):
            return _skipped(request, state)
        await self._sink_call(self.sink.update_card, message_id, request.payload)
        return CardShown(request.request_id, turn_id, message_id, request.content_hash, False)

    async def _final(self, request: DeliverFinal, state: _TurnState) -> CardOutcome:
        turn_id = request.turn_id
        if state.delivered:
            return FinalSent(request.request_id, turn_id, tuple(state.final_ids), already=True)
        if not state.claimed:
            gate = await self._write(ClaimFinalSend(turn_id))
            if gate.verdict == "sent":
                state.delivered = True
                state.final_ids = list(gate.final_message_ids)
                return FinalSent(request.request_id, turn_id, gate.final_message_ids, already=True)
            state.claimed = True
            state.claimed_at = gate.claimed_at
            state.doubt = state.doubt or gate.verdict == "check"
        chunks = request.chunks
        keys = [f"{turn_id}:final:{index}" for index in range(len(chunks))]
        if state.doubt:
            await self._look_up(request.route, keys, state)
        done = len(state.final_ids)
        if done < len(chunks):
            try:
                ids = await self._sink_call(
                    self.sink.send_final, request.route, chunks[done:], keys=keys[done:]
                )
            except _Failure as failure:
                state.doubt = True  # the chunk that failed may have reached the platform
                if isinstance(failure.__cause__, SendError):
                    state.final_ids.extend(failure.__cause__.sent)
                raise
            state.final_ids.extend(ids)
        sent = tuple(state.final_ids)
        recorded = await self._write(RecordFinalDelivery(turn_id, sent))
        state.delivered = True
        if recorded:
            return FinalSent(request.request_id, turn_id, sent, already=False)
        entry = await self._write(LedgerEntry(turn_id))
        logger.warning(
            "card delivery: turn %s had its final answer recorded by someone else while "
            "this one sent it",
            turn_id,
        )
        ids = entry.final_message_ids if entry is not None else sent
        state.final_ids = list(ids)
        return FinalSent(request.request_id, turn_id, tuple(ids), already=True)

    async def _look_up(self, route: str, keys: list[str], state: _TurnState) -> None:
        """An earlier try may have reached the platform: the leading chunks it has count as
        sent. A sink that cannot tell (or cannot tell now, for good) sends them again."""
        sink = self.sink
        if isinstance(sink, FinalLookup):
            try:
                found = await self._sink_call(sink.sent_finals, route, keys, since=state.claimed_at)
            except _Failure as failure:
                if failure.transient:
                    raise  # asked again on the retry
                logger.warning(
                    "card delivery: which chunks of %s's final went is unknown (%s): the rest "
                    "is sent again",
                    keys[0].partition(":final:")[0],
                    failure.error,
                )
            else:
                have = [found[key] for key in itertools.takewhile(found.__contains__, keys)]
                if len(have) > len(state.final_ids):
                    state.final_ids = have
        state.doubt = False

    async def _find_card(self, route: str, key: str, since: float | None) -> str | None:
        """The card an earlier try may have made, if the sink can tell and has it (``None``:
        send it, under its key). A sink that cannot tell now is asked again on the retry; one
        that cannot tell for good lets the card be sent again."""
        sink = self.sink
        if not isinstance(sink, CardLookup):
            return None
        try:
            found: str | None = await self._sink_call(sink.sent_card, route, key, since=since)
        except _Failure as failure:
            if failure.transient:
                raise
            logger.warning(
                "card delivery: whether %s's card went is unknown (%s): it is sent again",
                key.removesuffix(":card"),
                failure.error,
            )
            return None
        return found

    # -- helpers -------------------------------------------------------------------------------

    async def _state(self, turn_id: str) -> _TurnState:
        state = self._turns.get(turn_id)
        if state is not None:
            self._turns.move_to_end(turn_id)
            return state
        entry = await self._write(LedgerEntry(turn_id))
        state = self._turns.get(turn_id)  # another lane's load may have won while we waited
        if state is None:
            state = _TurnState()
            if entry is not None:
                state.message_id = entry.progress_message_id
                state.delivered = entry.delivered
                state.final_ids = list(entry.final_message_ids)
            self._turns[turn_id] = state
            self._evict()
        return state

    def forget(self, turn_ids: Iterable[str]) -> None:
        """Forget the idle states of ``turn_ids`` (their chat was let go): as one evicted, a
        forgotten turn is read from the ledger again if it ever comes back (trio thread)."""
        for turn_id in turn_ids:
            state = self._turns.get(turn_id)
            if state is not None and state.lanes == 0:
                del self._turns[turn_id]

    def _evict(self) -> None:
        """Forget the least recently used idle turns beyond ``remember``: a forgotten turn is
        read from the ledger again if it ever comes back."""
        excess = len(self._turns) - self.remember
        if excess <= 0:
            return
        for turn_id in [t for t, s in self._turns.items() if s.lanes == 0][:excess]:
            del self._turns[turn_id]

    async def _final_is_out(self, turn_id: str, state: _TurnState) -> bool:
        entry = await self._write(LedgerEntry(turn_id))
        if entry is not None and entry.delivered:
            state.delivered = True
            state.final_ids = list(entry.final_message_ids)
            return True
        return False

    async def _write(self, op: Any) -> Any:
        try:
            return await self.store.write(op, timeout=self.store_timeout)
        except (StoreError, RequestTimeout) as error:
            raise _Failure(True, None, f"store: {_describe(error)}") from error
        except Exception as error:
            # The op itself failed (a constraint, a bug): the same write would fail again.
            logger.exception("card delivery: %s failed", type(op).__name__)
            raise _Failure(False, None, f"store: {_describe(error)}") from error

    async def _sink_call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        assert self._limiter is not None
        try:
            async with self._limiter:
                with trio.fail_after(self.send_timeout):
                    return await method(*args, **kwargs)
        except trio.TooSlowError as error:
            raise _Failure(True, None, f"no answer within {self.send_timeout:g} s") from error
        except TransientSendError as error:
            raise _Failure(True, error.retry_after, _describe(error)) from error
        except PermanentSendError as error:
            raise _Failure(False, None, _describe(error)) from error
        except Exception as error:
            logger.exception("card sink %s raised an untyped error", _name(method))
            raise _Failure(False, None, _describe(error)) from error


def _skipped(request: ShowCard, state: _TurnState) -> CardSkipped:
    return CardSkipped(
        request.request_id, request.turn_id, state.message_id, tuple(state.final_ids)
    )


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 300 else text[:299] + "…"


def _name(method: Callable[..., Any]) -> str:
    return getattr(method, "__name__", repr(method))


def _failed(
    request: CardRequest, failure: _Failure, message_id: str | None = None
) -> CardFailed | FinalFailed:
    if isinstance(request, ShowCard):
        return CardFailed(
            request.request_id,
            request.turn_id,
            failure.transient,
            failure.retry_after,
            failure.error,
            message_id,
        )
    return FinalFailed(
        request.request_id, request.turn_id, failure.transient, failure.retry_after, failure.error
    )


def _reply(reply_to: Reply, outcome: CardOutcome) -> None:
    try:
        reply_to(outcome)
    except Exception:
        logger.exception("card delivery: reply_to raised for %s", type(outcome).__name__)
