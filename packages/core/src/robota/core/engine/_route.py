"""The conversation route's actor: the shell that performs what its core decides.

``ConversationRoute`` is one route key's actor (a ``LoopRouteActor`` of the engine's directory:
its messages are handled on the engine's trio loop, so an active route costs no thread, and a
burst of a hundred chats no hundred threads with their stacks and heap arenas, issue 28 s.3). It
owns a ``RouteCore`` (``_route_core``: every decision, no I/O) and does the I/O: on activation
it reads what the store knows of the route (``Restored``) and builds the read port the core
queries (``StoreReads``); for each message it asks the core for effects and performs them, in
order, and then says whether it is ``settled`` (the directory's quiet passivation). The route
never waits on a write or an agent: every store write is acknowledged by a message to the route
itself (built by the effect's ``Ack``), and every agent request is answered by a notice.

Its reads are the one thing it does in place: the core asks them as plain calls in the middle of
a decision (a prompt's task's mobility, a command's task lookup), a few indexed rows each, and
an asynchronous read there would make every decision that reads one a state of its own. Each
borrows a connection of the engine's ``ReaderPool`` (``EngineContext.readers``): the routes, all
on the loop and one message at a time, hold at most one of its four, so a read does not wait for
a connection while the engine's other readers hold fewer than the rest; SQLite in WAL mode never
makes a reader wait for the writer, so what a read costs the loop is its rows (tens of
microseconds from the page cache). A connection held per route for its life would cost a host
146 KiB per active route before its page cache.

Two effects act in the store writer's thread, right after the commit: a ``Write``'s ``then``
(the prompt sent and ``TurnBegan`` told once the attempt is recorded) and ``ClaimFinal`` (the
final answer delivered once the ledger claim wins). They are on every turn's critical path,
and a round trip through this route's inbox first would add a thread wake-up to each
(measured: the engine benchmark's prompt -> agent figure). What they touch is thread-safe
(addresses, the front ends, the running set).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from .._records import replace
from ..agents import ListSessions, OpenSession
from ..kernel import LoopRouteActor
from ..store import (
    BindRouteTask,
    QueuedPrompt,
    ReaderPool,
    RecordFinalDelivery,
    Task,
    TurnAttempt,
    active_turn_attempts,
    bound_sessions,
    find_task,
    find_turn_attempt,
    head_attempt,
    mobility_refusal,
    pending_prompts,
    route_binding,
    task_mobility,
    task_turn_attempts,
    task_with_remote,
    tasks,
    transcript_to_prime,
)
from ..store import task as load_task
from ._context import EngineContext, TaskOwning
from ._route_core import RouteCore
from ._route_effects import (
    Answer,
    ClaimFinal,
    Effect,
    FinalClaimed,
    ListAgentSessions,
    Log,
    MakeDirectory,
    Notify,
    OpenAgentSession,
    Running,
    Tell,
    Write,
)
from ._route_state import IdsAndClocks, Kept, Restored

__all__ = ["ConversationRoute", "StoreReads"]

logger = logging.getLogger("robota.core.engine")

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}


class ConversationRoute(LoopRouteActor[Kept]):
    """One route's conversation. Its state lives in the store; ``snapshot`` keeps only the
    count of inputs taken (``RouteIdle.inputs``) and its surfaces (``Kept``) across a
    passivation."""

    def __init__(self, key: str, context: EngineContext) -> None:
        super().__init__(key)
        self.ctx = context
        self._core: RouteCore | None = None
        route = context.route

        def deliver(notice: object) -> None:
            route(key, notice)

        self._deliver = deliver
        """Where agents send what they answer this route (its sessions' notices too)."""
        self._open_ahead = context.open_ahead is not None and context.open_ahead(key)
        """Its new sessions ask their agent to open the next one ahead (``EngineContext``)."""

    # -- lifecycle -----------------------------------------------------------------------------

    def restore(self, state: Kept | None) -> None:
        ctx, key = self.ctx, self.key
        with ctx.readers.reading() as db:
            binding = route_binding(db, key)
            task = None
            if binding is not None and binding.current_task_id is not None:
                task = load_task(db, binding.current_task_id)
            # A turn a previous incarnation (crashed, or passivated) left running at the agent
            # in this engine run: its events reach this incarnation by the route key, so it
            # ends here as if nothing happened. Attempts of an earlier run are recovery's.
            running = next(
                (a for a in active_turn_attempts(db) if a.route_key == key and a.id in ctx.running),
                None,
            )
            pending = tuple(p.id for p in pending_prompts(db, key))
        restored = Restored(task, pending, running, kept=state)
        self._core = RouteCore(
            key,
            ctx.agents,
            ctx.defaults,
            StoreReads(ctx.readers, key, ctx.owning),
            restored=restored,
            human_approves=(
                ctx.human_approves(key) if callable(ctx.human_approves) else ctx.human_approves
            ),
            ids=IdsAndClocks(wall=ctx.clock),
            restricted=ctx.restricted,
        )
        self.perform(self._core.start())
        self.settled = self._core.settled

    def snapshot(self) -> Kept:
        return self._core.kept() if self._core is not None else Kept()

    @property
    def core(self) -> RouteCore:
        assert self._core is not None, "restore() builds the core"
        return self._core

    def receive(self, message: Any) -> None:
        self.perform(self.core.handle(message))
        # Read by the directory's sweep: a plain bool, set after each message.
        self.settled = self.core.settled

    # -- performing ----------------------------------------------------------------------------

    def perform(self, effects: Iterable[Effect]) -> None:
        for effect in effects:
            match effect:
                case Notify(notice=notice):
                    self.ctx.outputs.deliver(self.key, notice)
                case Write():
                    self._write(effect)
                case ClaimFinal():
                    self._claim(effect)
                case Tell(agent=agent, request=request):
                    self._tell(agent, request)
                case OpenAgentSession(agent=agent, task_id=task_id, spec=spec):
                    if self._open_ahead:
                        spec = replace(spec, open_ahead=True)
                    self._tell(agent, OpenSession(task_id, spec, self._deliver))
                case ListAgentSessions(agent=agent, ref=ref, search=search, limit=limit):
                    self._tell(agent, ListSessions(ref, self._deliver, search, limit))
                case Running(attempt_id=attempt_id, running=running):
                    if running:
                        self.ctx.running.add(attempt_id)
                    else:
                        self.ctx.running.discard(attempt_id)
                case MakeDirectory(path=path):
                    path.mkdir(parents=True, exist_ok=True)
                case Log(level=level, text=text):
                    logger.log(_LEVELS.get(level, logging.ERROR), "%s", text)
                case Answer(answer=answer, value=value):
                    answer(value)

    def _tell(self, agent: str, request: object) -> None:
        entry = self.ctx.agents.get(agent)
        if entry is None:
            logger.error("route %s: agent %r is not configured", self.key, agent)
            return
        entry.address.tell(request)

    def _write(self, write: Write) -> None:
        op, ack, key, route = write.op, write.ack, self.key, self.ctx.route
        then = _in_any_thread(self.ctx, key, write.then) if write.then else None

        def acknowledged(outcome: object) -> None:
            failed = isinstance(outcome, BaseException)
            if then is not None and not failed:
                then()
            if ack is not None:
                message = ack.message(outcome)
                if message is not None:
                    route(key, message)
            elif failed:
                logger.error("route %s: %s failed: %s", key, type(op).__name__, outcome)

        self.ctx.store.submit(op, acknowledged)
        owning = self.ctx.owning
        if owning is not None and isinstance(op, BindRouteTask):
            # Binding a task is where a route takes it (new, forked, switched to, adopted):
            # one owner per task claims it there, after the bind in the store's order.
            owning.bound(self.ctx.store, key, op.task_id)

    def _claim(self, claim: ClaimFinal) -> None:
        outputs, route, key = self.ctx.outputs, self.ctx.route, self.key
        finished, before = claim.finished, claim.before

        def claimed(outcome: object) -> None:
            for notice in before:
                outputs.deliver(key, notice)
            if isinstance(outcome, BaseException):
                route(key, FinalClaimed(finished, won=False, error=outcome))
                return
            if outcome is True:
                outputs.deliver(key, finished)
            route(key, FinalClaimed(finished, won=outcome is True))

        self.ctx.store.submit(RecordFinalDelivery(finished.attempt_id), claimed)


def _in_any_thread(ctx: EngineContext, key: str, effects: Sequence[Effect]) -> Callable[[], None]:
    """``effects`` as one call safe from any thread (the writer's): resolved now, on the
    route's loop, so the writer's thread does no more than the sends themselves."""
    steps: list[Callable[[], object]] = []
    for effect in effects:
        match effect:
            case Running(attempt_id=attempt_id, running=True):
                steps.append(partial(ctx.running.add, attempt_id))
            case Running(attempt_id=attempt_id):
                steps.append(partial(ctx.running.discard, attempt_id))
            case Notify(notice=notice):
                steps.append(partial(ctx.outputs.deliver, key, notice))
            case Tell(agent=agent, request=request):
                steps.append(partial(ctx.agents[agent].address.tell, request))
            case _:
                raise TypeError(f"{type(effect).__name__} cannot run in the writer's thread")

    def run() -> None:
        for step in steps:
            step()

    return run


class StoreReads:
    """``RouteReads`` over the store's readers, for route ``route_key``: each read borrows a
    connection for itself alone (every query returns its rows whole). ``owning``: the engine's
    one owner per task (``EngineContext.owning``), which ``immobile`` asks too."""

    def __init__(
        self, readers: ReaderPool, route_key: str, owning: TaskOwning | None = None
    ) -> None:
        self.readers = readers
        self.route_key = route_key
        self.owning = owning

    def task(self, task_id: str) -> Task | None:
        with self.readers.reading() as db:
            return load_task(db, task_id)

    def find_task(self, text: str) -> Sequence[Task]:
        with self.readers.reading() as db:
            return find_task(db, text)

    def tasks(self, *, limit: int, search: str | None) -> Sequence[Task]:
        with self.readers.reading() as db:
            return tasks(db, limit=limit, search=search)

    def task_with_remote(self, agent: str, remote_id: str) -> Task | None:
        with self.readers.reading() as db:
            return task_with_remote(db, agent, remote_id)

    def bound_sessions(self, session_ids: Sequence[str]) -> set[tuple[str, str]]:
        with self.readers.reading() as db:
            return bound_sessions(db, session_ids)

    def pending_prompts(self) -> Sequence[QueuedPrompt]:
        with self.readers.reading() as db:
            return pending_prompts(db, self.route_key)

    def head_attempt(self, task: Task) -> TurnAttempt | None:
        with self.readers.reading() as db:
            return head_attempt(db, task)

    def find_turn_attempt(self, task_id: str, ref: str) -> Sequence[TurnAttempt]:
        with self.readers.reading() as db:
            return find_turn_attempt(db, task_id, ref)

    def turn_attempts(
        self, task_id: str, *, status: str | None, limit: int
    ) -> Sequence[TurnAttempt]:
        with self.readers.reading() as db:
            return task_turn_attempts(db, task_id, status=status, limit=limit)

    def is_dir(self, path: Path) -> bool:
        return path.is_dir()

    def transcript_to_prime(self, task_id: str) -> Sequence[Mapping[str, object]] | None:
        with self.readers.reading() as db:
            return transcript_to_prime(db, task_id)

    def immobile(self, task_id: str) -> str | None:
        with self.readers.reading() as db:
            refusal = mobility_refusal(task_id, task_mobility(db, task_id))
            if refusal is None and self.owning is not None:
                refusal = self.owning.refusal(db, self.route_key, task_id)
            return refusal
