"""The host's ``task.*`` requests: what ``robota task send | new | stop | fork | queue |
rename`` ask of the engine.

Every request goes through the engine's own rules: a prompt is a ``UserInput`` to the task's
route (``_routing`` picks it), which steers, queues or starts a turn as a person's typing
would; a new task is a ``NewTask`` on a ``cli`` route of its own (or the route asked for); a
fork is a ``ForkTask`` on a new ``cli`` route; a stop is an ``Interrupt``; the queue and a
rename are the route's own ``/queue`` and ``/rename`` commands, typed on the task's route. The
desk only follows the route (``RouteTaps``) to report what came of it.

A prompt to a chat's route is followed by that chat's transport first (``serve_route``): its
answers go to its chat, as a typed prompt's do, even when no message reached the chat in this
host's run.

A request names its task as ``robota task`` does (``_requests``): ``resolve`` picks the one
task with the command line's decision (``_task_names.pick_task``) on the desk's connection, and
a name that picks none, or several, is refused with ``not_found`` and the decision's own
message.

While the host stops, ``accepting`` is false and every request here is refused with
``stopping``: no new turn starts in a host that is going away.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Collection, Mapping
from pathlib import Path

import trio

from robota.core.control import HandlerError
from robota.core.engine import (
    Engine,
    ForkTask,
    InputQueued,
    InputSteered,
    Interrupt,
    LetTaskGo,
    NewTask,
    RouteIdle,
    RouteNotice,
    RouteReply,
    TaskOpened,
    TaskSettings,
    TurnBegan,
    TurnFinished,
    UserInput,
    UseTask,
)
from robota.core.frontend import TaskNotResolved
from robota.core.protocol import encode_frame, notice_to_json
from robota.core.store import Database, Task, Together, route_binding
from robota.core.store import task as load_task

from ._desk_reads import DeskReads
from ._owners import Owner, TaskOwners
from ._print_choice import PRINT_KIND
from ._reads import routes_of, task_lookup
from ._requests import (
    SEND_WAIT,
    SEND_WAIT_MAX,
    TaskFork,
    TaskNew,
    TaskQueue,
    TaskRelease,
    TaskRename,
    TaskRun,
    TaskSend,
    TaskStop,
)
from ._routing import MadeHere, TaskRoute, cli_route, route_for_task, serves
from ._taps import RouteTaps
from ._task_names import ENV_NAMES, pick_task

__all__ = ["TaskDesk", "task_json"]

LET_GO_TIMEOUT = 60.0
"""Seconds a route and its agent may take to let go of a task's session (``task.release``)."""
OPEN_TIMEOUT = 120.0
"""Seconds a task's agent session may take to open when the host binds a route to it."""
REPLY_TIMEOUT = 30.0
"""Seconds a route may take to answer a request that starts no turn."""

Hear = Callable[[RouteNotice], Awaitable[None]]
"""Told each notice a waited-for prompt's route says (``task.run``'s stream)."""


def task_json(task: Task) -> dict[str, object]:
    return {
        "id": task.id,
        "title": task.title,
        "agent": task.agent,
        "cwd": task.cwd,
        "last_turn_status": task.last_turn_status,
        "forked_from": task.forked_from,
    }


def _reply_json(reply: RouteReply) -> dict[str, str]:
    return {"level": reply.level, "text": reply.text}


def _turn_json(finished: TurnFinished) -> dict[str, object]:
    return {
        "turn_id": finished.attempt_id,
        "status": finished.status,
        "final": finished.final_text,
        "error": finished.error.message if finished.error is not None else None,
        "duration_ms": finished.duration_ms,
    }


class TaskDesk:
    def __init__(
        self,
        engine: Engine,
        taps: RouteTaps,
        kinds: Collection[str],
        accepting: Callable[[], bool],
        serve_route: Callable[[str], object] = lambda _key: None,
        *,
        owner: Owner | None = None,
    ) -> None:
        self.engine = engine
        self.taps = taps
        self.kinds = frozenset(kinds)
        self._accepting = accepting
        self._serve_route = serve_route
        """Has a chat transport follow a route of its kind before a prompt (its answers go
        to its chat)."""
        self.reads = DeskReads(engine.db_path, engine.context.readers)
        self.owners = TaskOwners(owner, engine.store, self.reads) if owner is not None else None
        """The host's: a task another live process owns is passed to it or refused
        (``_owners``); a session's desk serves only the task it owns."""
        self.print_routes = MadeHere.for_this_process(PRINT_KIND)
        """The print routes this process's print runs make (``_print_turns``), told by their
        key (nothing is kept per run): a task current on one is driven there, where its agent
        session is open."""

    def close(self) -> None:
        """Close the read connections (the host's or session's run ends with them)."""
        self.reads.close()

    # -- requests --------------------------------------------------------------------------------

    async def send(self, request: TaskSend, hear: Hear | None = None) -> dict[str, object]:
        """The prompt's answer (the class docstring of ``TaskSend``); with ``wait``, ``hear``
        is told each notice the route says until it went idle after the prompt."""
        self.refuse_when_stopping()
        if not request.text.strip():
            raise HandlerError("bad_request", "task.send: 'text' is empty", "text")
        wait = SEND_WAIT if request.timeout is None else request.timeout
        if not 0 < wait <= SEND_WAIT_MAX:
            raise HandlerError(
                "bad_request", f"task.send: 'timeout' must be in (0, {SEND_WAIT_MAX:g}]", "timeout"
            )
        task, route = await self._task_route(request.task, request.caller)
        owner = await self.owners.take(task.id) if self.owners is not None else None
        if owner is not None and self.owners is not None:
            return await self.owners.forward_send(owner, request)
        key = route.route_key
        self._serve_route(key)
        async with self.taps.tap(key) as notices:
            if route.bind:
                await self._bind(key, task.id, notices)
            sent = self.taps.tell(key, UserInput(request.text))
            result: dict[str, object] = {"task": task_json(task), "route": key}
            if not request.wait:
                result["outcome"] = await self._outcome(request.text, notices)
            else:
                with trio.move_on_after(wait):
                    result.update(await self._answers(key, sent, notices, hear))
                if "turns" not in result:
                    raise HandlerError(
                        "timeout",
                        f"task {task.id}: no end within {wait:g} s; the turn goes on and its "
                        "answer goes where the route's answers go",
                    )
                # What the turns made of the task (its last turn's status), not what it was.
                result["task"] = task_json(await self.read_task(task.id))
        return result

    async def run(self, request: TaskRun, stream: trio.SocketStream) -> None:
        """``task.run``: ``send`` with ``wait`` whose notices go out as they come (frames)."""

        async def hear(notice: RouteNotice) -> None:
            frame = {"type": "notice", "notice": notice_to_json(notice)}
            await stream.send_all(encode_frame(frame))

        try:
            result = await self.send(request.send(), hear)
            await stream.send_all(encode_frame({"type": "result", "result": result}))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the client went away; the turn goes on, as a ``task send --wait``'s would

    async def answer(self, name: str, text: str, *, timeout: float) -> TurnFinished:
        """Run ``text`` on the task ``name`` names as a turn of its own, queued behind whatever
        the route holds (``/nosteer``: never a steer, never merged with other input), and wait
        for that turn's end. A peer device's message runs so (``_mesh_talk``), with the task's
        ordinary permissions; a task another live process owns is refused (``owned``), any
        other is this host's from then on, as for ``task send`` (its agent holds the task's
        agent session: a terminal's ``-r`` is refused naming the host, rather than opening the
        same agent session in a second agent process)."""
        self.refuse_when_stopping()
        text = text.strip()
        task, route = await self._task_route(name, None)
        if self.owners is not None and (owner := await self.owners.take(task.id)) is not None:
            raise self.owners.refuse(owner, "a peer's message")
        key = route.route_key
        self._serve_route(key)
        async with self.taps.tap(key) as notices:
            if route.bind:
                await self._bind(key, task.id, notices)
            self.taps.tell(key, UserInput(f"/nosteer {text}"))
            attempt: str | None = None
            with trio.move_on_after(timeout):
                async for notice in notices:
                    if isinstance(notice, TurnBegan) and attempt is None and notice.prompt == text:
                        attempt = notice.attempt_id
                    elif isinstance(notice, TurnFinished) and notice.attempt_id == attempt:
                        return notice
                    elif (
                        attempt is None
                        and isinstance(notice, RouteReply)
                        and notice.level == "error"
                    ):
                        raise HandlerError("refused", notice.text)
        raise HandlerError("timeout", f"task {task.id}: no end within {timeout:g} s")

    async def new(self, request: TaskNew) -> dict[str, object]:
        self.refuse_when_stopping()
        if request.cwd is not None and request.nodir:
            raise HandlerError("bad_request", "task.new: 'cwd' and 'nodir' exclude each other")
        cwd = Path(request.cwd) if request.cwd is not None else None
        if cwd is not None and not cwd.is_absolute():
            raise HandlerError("bad_request", f"task.new: cwd {cwd} is not absolute", "cwd")
        settings = TaskSettings(agent=request.agent, cwd=cwd, title=request.title)
        if request.nodir:
            settings = TaskSettings(agent=request.agent, title=request.title, nodir=True)
        key = request.route if request.route is not None else cli_route(secrets.token_hex(6))
        if not serves(self.kinds, key):
            served = ", ".join(sorted(self.kinds))
            raise HandlerError(
                "bad_request",
                f"task.new: route {key!r} is not of a kind this host serves ({served})",
                "route",
            )
        task = await self.open_on(key, NewTask(settings))
        return {"task": task_json(task), "route": key}

    async def fork(self, request: TaskFork) -> dict[str, object]:
        self.refuse_when_stopping()
        source = await self.resolve(request.task, request.caller)
        key = cli_route(secrets.token_hex(6))
        task = await self.open_on(key, ForkTask(source.id, request.title))
        return {"task": task_json(task), "route": key, "source": task_json(source)}

    async def queue(self, request: TaskQueue) -> dict[str, object]:
        command = "/queue" if request.cancel is None else f"/queue cancel {request.cancel}"
        task, route = await self._task_route(request.task, request.caller)
        await self._refuse_owned(task.id, "task queue")
        if route.bind:
            # Queues belong to routes: a task current on none of this host's has none here,
            # and binding it (opening its agent session) would not change that.
            if request.cancel is not None:
                raise HandlerError(
                    "not_found", f"task {task.id} has no queue on this host", "cancel"
                )
            empty = {"level": "info", "text": "the queue is empty"}
            return {"task": task_json(task), "route": None, "replies": [empty]}
        replies = await self._command(route.route_key, command)
        return {"task": task_json(task), "route": route.route_key, "replies": replies}

    async def rename(self, request: TaskRename) -> dict[str, object]:
        """The route's ``/rename`` on the task's route; a task current on none of the host's
        routes is bound to its ``cli`` route first, as ``send`` binds it (which opens its agent
        session: ``/rename`` acts on a route's current task)."""
        self.refuse_when_stopping()
        title = " ".join(request.title.split())
        if not title:
            raise HandlerError("bad_request", "task.rename: 'title' is empty", "title")
        task, route = await self._task_route(request.task, request.caller)
        if self.owners is not None and (owner := await self.owners.take(task.id)) is not None:
            raise self.owners.refuse(owner, "task rename")
        key = route.route_key
        if route.bind:
            async with self.taps.tap(key) as notices:
                await self._bind(key, task.id, notices)
        replies = await self._command(key, f"/rename {title}")
        await self.engine.store.write(Together(()), timeout=REPLY_TIMEOUT)
        return {"task": task_json(await self.read_task(task.id)), "route": key, "replies": replies}

    async def release(self, request: TaskRelease) -> dict[str, object]:
        """``task.release`` (``TaskRelease``): every route of this host that holds the task
        lets go of its agent session (``LetTaskGo``), in turn; the first refusal is the reply
        (a route let go before it opens the session again at its next prompt), else the host
        no longer owns the task."""
        task, current_on = await self._resolved(request.task, None, with_routes=True)
        if self.owners is not None and (owner := await self.owners.other(task.id)) is not None:
            raise self.owners.refuse(owner, "letting it go")
        held = [k for k in current_on if serves(self.kinds, k) or k in self.print_routes]
        for key in held:
            refusal = await self._let_go(key, task.id)
            if refusal is not None:
                raise HandlerError("busy", f"{refusal} on route {key}", "task")
        if self.owners is not None:
            await self.owners.let_go(task.id)
        return {"task": task_json(task), "routes": held}

    async def _let_go(self, key: str, task_id: str) -> str | None:
        """Route ``key``'s answer to ``LetTaskGo``: ``None`` once its agent closed the task's
        session, else why not."""
        answered = trio.Event()
        said: list[str | None] = []
        token = trio.lowlevel.current_trio_token()

        def answer(refusal: str | None) -> None:  # the route's or the agent's (any thread)
            said.append(refusal)
            token.run_sync_soon(answered.set)

        self.taps.tell(key, LetTaskGo(task_id, answer))
        with trio.move_on_after(LET_GO_TIMEOUT):
            await answered.wait()
            return said[0]
        raise HandlerError("timeout", f"route {key} did not let task {task_id} go in time")

    # -- shared with the group requests ------------------------------------------------------------

    async def open_on(self, key: str, request: NewTask | ForkTask | UseTask) -> Task:
        """Tell route ``key`` to make a task current (``NewTask``, ``ForkTask`` or ``UseTask``)
        and wait until it did; the task as the store has it. Refused with the route's own
        reason."""
        async with self.taps.tap(key) as notices:
            self.taps.tell(key, request)
            timeout = REPLY_TIMEOUT if isinstance(request, NewTask) else OPEN_TIMEOUT
            with trio.move_on_after(timeout) as waited:
                async for notice in notices:
                    if isinstance(notice, RouteReply) and notice.level == "error":
                        raise HandlerError("refused", notice.text)
                    if isinstance(request, NewTask):
                        if isinstance(notice, RouteReply):
                            break  # announced: written, and no session to wait for
                    elif isinstance(request, UseTask):
                        if isinstance(notice, TaskOpened) and notice.task_id == request.task_id:
                            break  # its session opened (resumed, or afresh) at its agent
                    elif isinstance(notice, TaskOpened) and notice.forked_from == request.task_id:
                        break  # the fork's session opened at its agent
            if waited.cancelled_caught:
                name = type(request).__name__
                raise HandlerError("timeout", f"route {key} did not answer {name} in time")
        # The route wrote the task before it replied, through the client every route shares:
        # once a write queued after it commits, the task is there to read.
        await self.engine.store.write(Together(()), timeout=REPLY_TIMEOUT)
        task = await trio.to_thread.run_sync(self.bound_task, key)
        if task is None:
            raise HandlerError("internal", f"route {key} replied but holds no task")
        return task

    async def stop(self, request: TaskStop) -> dict[str, object]:
        task, route = await self._task_route(request.task, request.caller)
        await self._refuse_owned(task.id, "task stop")
        if route.bind:
            return {"task": task_json(task), "route": None, "stopped": False, "replies": []}
        key = route.route_key
        replies: list[dict[str, str]] = []
        stopped = False
        async with self.taps.tap(key) as notices:
            self.taps.tell(key, Interrupt())
            with trio.move_on_after(REPLY_TIMEOUT):
                async for notice in notices:
                    if isinstance(notice, RouteReply):
                        replies.append(_reply_json(notice))
                        break
                    if isinstance(notice, TurnFinished):
                        stopped = True
                        break
        return {"task": task_json(task), "route": key, "stopped": stopped, "replies": replies}

    # -- steps -----------------------------------------------------------------------------------

    async def _refuse_owned(self, task_id: str, what: str) -> None:
        """``owned``, naming the owner, when another live process drives ``task_id``."""
        if self.owners is not None and (owner := await self.owners.other(task_id)) is not None:
            raise self.owners.refuse(owner, what)

    def refuse_when_stopping(self) -> None:
        if not self._accepting():
            raise HandlerError("stopping", "the host is stopping; it accepts no new turns")

    async def route_of(self, name: str) -> str:
        """The route key the task ``name`` names is driven through (``not_found`` when it
        names none)."""
        return (await self._task_route(name, None))[1].route_key

    async def resolve(self, name: str | None, caller: Mapping[str, str] | None) -> Task:
        """The one task ``name`` (TASK as typed) names, or omitted, ``caller``'s environment."""
        return (await self._resolved(name, caller, with_routes=False))[0]

    async def read_task(self, task_id: str) -> Task:
        task = await self.reads.query(lambda db: load_task(db, task_id))
        if task is None:
            raise HandlerError("not_found", f"no task {task_id!r}", "task")
        return task

    async def _command(self, key: str, line: str) -> list[dict[str, str]]:
        """Type the command ``line`` on route ``key``; the route's reply to it."""
        async with self.taps.tap(key) as notices:
            self.taps.tell(key, UserInput(line))
            with trio.move_on_after(REPLY_TIMEOUT):
                async for notice in notices:
                    if isinstance(notice, RouteReply):
                        return [_reply_json(notice)]
        name = line.split(maxsplit=1)[0]
        raise HandlerError("timeout", f"route {key} did not answer {name} in time")

    async def _task_route(
        self, name: str | None, caller: Mapping[str, str] | None
    ) -> tuple[Task, TaskRoute]:
        task, current_on = await self._resolved(name, caller, with_routes=True)
        return task, route_for_task(task.id, current_on, self.kinds, self.print_routes)

    async def _resolved(
        self, name: str | None, caller: Mapping[str, str] | None, *, with_routes: bool
    ) -> tuple[Task, list[str]]:
        """The task and (``with_routes``) the routes it is current on, in one read."""
        unknown = sorted(set(caller or ()) - set(ENV_NAMES))
        if unknown:
            taken = ", ".join(ENV_NAMES)
            message = f"caller: {unknown[0]!r} names no task (it takes {taken})"
            raise HandlerError("bad_request", message, "caller")

        def read(db: Database) -> tuple[Task, list[str]]:
            task = pick_task(name, task_lookup(db), caller or {})
            return task, routes_of(db, task.id) if with_routes else []

        try:
            return await self.reads.query(read)
        except TaskNotResolved as error:
            raise HandlerError("not_found", str(error), "task") from None

    def bound_task(self, route_key: str) -> Task | None:
        """The task current on ``route_key``; from any thread (a pooled connection)."""

        def read(db: Database) -> Task | None:
            binding = route_binding(db, route_key)
            if binding is None or binding.current_task_id is None:
                return None
            return load_task(db, binding.current_task_id)

        return self.reads.read(read)

    async def _bind(
        self, key: str, task_id: str, notices: trio.MemoryReceiveChannel[RouteNotice]
    ) -> None:
        """Make the task current on ``key`` and wait until its session opened: a prompt told
        before a failed bind would start a new task instead."""
        self.taps.tell(key, UseTask(task_id))
        with trio.move_on_after(OPEN_TIMEOUT):
            async for notice in notices:
                if isinstance(notice, TaskOpened) and notice.task_id == task_id:
                    return
                if isinstance(notice, RouteReply) and notice.level == "error":
                    raise HandlerError("refused", notice.text)
            raise HandlerError("stopping", "the host stopped before the task opened")
        raise HandlerError("timeout", f"task {task_id} did not open within {OPEN_TIMEOUT:g} s")

    async def _outcome(
        self, text: str, notices: trio.MemoryReceiveChannel[RouteNotice]
    ) -> dict[str, object]:
        """What the route made of ``text``, once that is committed: a turn ``started``, the
        prompt ``queued`` (its queue number), ``steered`` into the running turn, or a reply
        (a command's, or a refusal). ``unknown`` if the route said nothing in time."""
        with trio.move_on_after(REPLY_TIMEOUT):
            async for notice in notices:
                if isinstance(notice, TurnBegan) and notice.prompt == text:
                    return {"kind": "started", "turn_id": notice.attempt_id}
                if isinstance(notice, InputQueued) and notice.text == text:
                    return {"kind": "queued", "prompt_id": notice.prompt_id, "ahead": notice.ahead}
                if isinstance(notice, InputSteered) and notice.text == text:
                    return {"kind": "steered", "turn_id": notice.attempt_id}
                if isinstance(notice, RouteReply):
                    return {"kind": "replied", "reply": _reply_json(notice)}
        return {"kind": "unknown"}

    async def _answers(
        self,
        key: str,
        sent: int,
        notices: trio.MemoryReceiveChannel[RouteNotice],
        hear: Hear | None,
    ) -> dict[str, object]:
        """The turns that ended and the replies given until the route went idle after the
        ``sent``-th input: what that input came to."""
        turns: list[dict[str, object]] = []
        replies: list[dict[str, str]] = []
        async for notice in notices:
            if hear is not None:
                await hear(notice)
            if isinstance(notice, TurnFinished):
                turns.append(_turn_json(notice))
            elif isinstance(notice, RouteReply):
                replies.append(_reply_json(notice))
            elif isinstance(notice, RouteIdle) and notice.inputs >= sent:
                return {"turns": turns, "replies": replies}
        raise HandlerError("stopping", f"route {key}: the host stopped before the turn ended")
