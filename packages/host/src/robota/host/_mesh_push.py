"""Pushing a task to another of the user's devices (issue 30 §3): ``robota task push TASK
--to DEVICE`` and ``robota session push ID --to DEVICE`` (the session's task) are one control
request, ``mesh.push``.

The push reads the task as the store has it in one read (its settings, its completed turns as
prompts and answers, its queue, whether a turn is running) and ``robota.mesh.seal`` refuses
it, naming why, while anything is in flight (``push_busy``, a table tests it). The working
folder is read with git (origin, HEAD, what is uncommitted or untracked: that stays on this
device and the operator is shown it).

Approvals are not stored: one waits in the process driving the task's turn, so the push asks
it (``approval_waiting``): a background session that owns the task says ``needs-input`` in its
``session.status`` while a question of its agent waits for an answer. (The host's own ``cli:``
routes never wait on one, policy decides there; a chat route's waits inside its running turn,
which refuses the push as a running turn.)

``MeshHandoffs.push`` then records the offer, which is what freezes the task: from that write
on ``task_mobility`` says ``moving`` and the one place a task's input is admitted (the route's
core, ``mobility_refusal``) refuses every prompt to it.

The offer's record is guarded (``OfferIdle``): in the writer's one transaction it reads the
task again as the push did and records the offer only while it is still idle and has the
turns it was sealed with; a turn that began, a prompt queued or a turn that ran to its end
since the read refuses the push, naming which (``HandoffBusy``, or that the task changed),
and nothing is recorded. So the task is frozen exactly as it was sealed. (The route admits a
prompt on a read of the task's mobility before its turn's first write; that write checks
again in its own transaction, ``store.refuse_immobile``, so a prompt admitted in the instant
before the offer commits is refused there: one of the two writes always sees the other.)

The desk's side of a handoff (``handoff_hooks``): ``let_go`` ends the process of a background
session that owns the moved task (``session.stop`` to its socket); ``unfreeze`` has nothing to
undo, as the frozen state is read from the handoff's row, which is now ended.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import trio

from robota.core import Record
from robota.core.control import HandlerError

from ._mesh_handoff import HandoffHooks
from ._mesh_reach import open_links, pick_peer
from ._session_requests import SESSION_KIND

if TYPE_CHECKING:
    from robota.core.store import Database, OfferHandoff, Task
    from robota.mesh import Busy, SourceCheckout

    from ._desk import TaskDesk
    from ._mesh_handoff import MeshHandoffs

__all__ = [
    "MeshPush",
    "OfferIdle",
    "TaskSnapshot",
    "approval_waiting",
    "handoff_hooks",
    "push_busy",
    "push_task",
    "task_snapshot",
]

logger = logging.getLogger("robota.host")

GIT_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MeshPush:
    """Offer ``task`` (or the task of the background session ``session``, or ``caller``'s) to
    the device ``to`` names (an id, a unique prefix or a name); the answer names the handoff
    and what stays on this device."""

    TYPE: ClassVar[str] = "mesh.push"
    to: str
    task: str | None = None
    session: str | None = None
    caller: dict[str, str] | None = None


def session_task(db: Database, session_id: str) -> str | None:
    """The task the background session ``session_id`` owns (it claimed it when it started)."""
    row = db.execute(
        "SELECT task_id FROM task_owners WHERE owner = ?", (f"{SESSION_KIND}:{session_id}",)
    ).fetchone()
    return str(row[0]) if row is not None else None


def push_busy(*, turn_running: bool, queued: int, approval_waiting: bool) -> Busy | None:
    """What keeps a task from moving now, the most pressing first; ``None`` when it is idle.
    An approval waits only inside a running turn, and is what its operator must answer."""
    if approval_waiting:
        return "approval-waiting"
    if turn_running:
        return "turn-running"
    if queued:
        return "prompt-queued"
    return None


@dataclass(frozen=True, slots=True)
class TaskSnapshot:
    """What a push reads of a task, in one read."""

    task: Mapping[str, Any]
    turns: Sequence[Mapping[str, Any]]
    queue: Sequence[str]
    turn_running: bool


def task_snapshot(db: Database, task: Task) -> TaskSnapshot:
    """The task's settings, its completed turns (oldest first), its pending prompts and
    whether a turn of it is in flight."""
    from robota.core.store import active_turn_attempts, task_turn_attempts  # noqa: PLC0415

    from ._reads import routes_of  # noqa: PLC0415

    attempts = task_turn_attempts(db, task.id, status="completed", limit=-1)
    turns = [
        {"prompt": a.prompt, "answer": a.final_text or ""}
        for a in sorted(attempts, key=lambda a: (a.created_at, a.id))
    ]
    queue = [
        str(row["text"])
        for key in routes_of(db, task.id)
        for row in db.query(
            "SELECT text FROM queued_prompts WHERE route_key = ? AND status = 'pending' "
            "AND (task_id = ? OR task_id IS NULL) ORDER BY id",
            (key, task.id),
        )
    ]
    running = any(a.task_id == task.id for a in active_turn_attempts(db))
    settings = {
        "id": task.id,
        "agent": task.agent,
        "runtime_kind": task.runtime_kind,
        "cwd": str(task.cwd),
        "title": task.title,
        "model": task.model,
        "effort": task.effort,
        "permission_mode": task.permission_mode,
    }
    return TaskSnapshot(settings, turns, queue, running)


class OfferIdle(Record, kw_only=True):
    """Record ``offer`` only while its task is as the push sealed it (module docstring): no
    turn running, no prompt queued, ``turns`` completed turns. ``HandoffBusy`` naming what is
    in flight, or ``MeshError`` when a turn ran since, and nothing is written; else
    ``OfferHandoff``'s result (``False``: the task is already moving or has moved)."""

    offer: OfferHandoff
    turns: int

    def apply(self, db: Database, /) -> bool:
        from robota.core.store import task as load_task  # noqa: PLC0415
        from robota.mesh import HandoffBusy, MeshError  # noqa: PLC0415

        task = load_task(db, self.offer.task)
        if task is None:
            raise MeshError(f"task {self.offer.task} is gone")
        now = task_snapshot(db, task)
        busy = push_busy(
            turn_running=now.turn_running, queued=len(now.queue), approval_waiting=False
        )
        if busy is not None:
            raise HandoffBusy(busy)
        if len(now.turns) != self.turns:
            raise MeshError(
                f"the task ran a turn after it was sealed ({len(now.turns)} turns, "
                f"{self.turns} sealed); push it again"
            )
        return self.offer.apply(db)

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("offer", "turns")
    __match_args__ = ()

    def __init__(self, *, offer: OfferHandoff, turns: int) -> None:
        object.__setattr__(self, "offer", offer)
        object.__setattr__(self, "turns", turns)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(offer={self.offer!r}, turns={self.turns!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OfferIdle) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.offer, self.turns) == (other.offer, other.turns)

    def __hash__(self) -> int:
        return hash((self.offer, self.turns))


def git_checkout(cwd: str) -> SourceCheckout:
    """The folder as git sees it: origin, HEAD and the paths that stay behind (uncommitted,
    then untracked); all ``None``/empty outside a checkout or without git."""
    from robota.mesh import SourceCheckout  # noqa: PLC0415

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", cwd, *args],
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout if done.returncode == 0 else None

    head = git("rev-parse", "HEAD")
    if head is None:
        return SourceCheckout(cwd)
    origin = git("remote", "get-url", "origin")
    status = git("status", "--porcelain", "--untracked-files=all") or ""
    changed = [line[3:] for line in status.splitlines() if line and not line.startswith("??")]
    untracked = [line[3:] for line in status.splitlines() if line.startswith("??")]
    return SourceCheckout(
        cwd, origin.strip() if origin else None, head.strip(), tuple(changed + untracked)
    )


async def approval_waiting(desk: TaskDesk, task_id: str) -> bool:
    """Whether the live background session that owns ``task_id`` waits on an approval
    (module docstring)."""
    if desk.owners is None:
        return False
    owner = await desk.owners.other(task_id)
    if owner is None:
        return False
    return await desk.owners.session_state(owner) == "needs-input"


async def push_task(desk: TaskDesk, handoffs: MeshHandoffs, request: MeshPush) -> dict[str, Any]:
    """``mesh.push``: the task sealed idle and offered (module docstring)."""
    from robota.mesh import HandoffBusy, MeshError, seal  # noqa: PLC0415

    from ._desk import task_json  # noqa: PLC0415

    desk.refuse_when_stopping()
    peer = pick_peer(open_links(handoffs._links()), request.to)
    name = request.task
    if request.session is not None:
        session = request.session
        name = await desk.reads.query(lambda db: session_task(db, session))
        if name is None:
            raise HandlerError("not_found", f"session {session} owns no task", "session")
    task = await desk.resolve(name, request.caller)
    asking = await approval_waiting(desk, task.id)
    snapshot = await desk.reads.query(lambda db: task_snapshot(db, task))
    busy = push_busy(
        turn_running=snapshot.turn_running, queued=len(snapshot.queue), approval_waiting=asking
    )
    checkout = await trio.to_thread.run_sync(git_checkout, str(task.cwd))
    try:
        sealed = seal(snapshot.task, snapshot.turns, snapshot.queue, checkout, busy=busy)
    except HandoffBusy as error:
        raise HandlerError("busy", f"task {task.id}: {error}") from None
    except MeshError as error:
        raise HandlerError("refused", f"task {task.id}: {error}") from None
    sealed_turns = len(snapshot.turns)
    try:
        handoff = await handoffs.push(
            task.id, peer, sealed, guard=lambda offer: OfferIdle(offer=offer, turns=sealed_turns)
        )
    except HandoffBusy as error:
        raise HandlerError("busy", f"task {task.id}: {error}") from None
    except MeshError as error:
        raise HandlerError("refused", f"task {task.id}: {error}") from None
    except ValueError as error:  # it names the task already
        raise HandlerError("refused", str(error)) from None
    inventory = {key: list(value) for key, value in sealed.manifest.inventory.items()}
    return {
        "handoff": handoff,
        "task": task_json(task),
        "to": peer,
        "inventory": inventory,
        "sourceLocal": list(checkout.uncommitted),
        "origin": checkout.origin,
        "head": checkout.head,
    }


def handoff_hooks(desk: TaskDesk) -> HandoffHooks:
    """What the desk does when a handoff moves one of its tasks (module docstring)."""

    async def let_go(task_id: str) -> None:
        if desk.owners is None:
            return
        owner = await desk.owners.other(task_id)
        if owner is None:
            return
        await desk.owners.stop_session(owner)

    async def unfreeze(task_id: str) -> None:
        logger.info("mesh: task %s takes input again (its handoff ended)", task_id)

    return HandoffHooks(let_go=let_go, unfreeze=unfreeze)
