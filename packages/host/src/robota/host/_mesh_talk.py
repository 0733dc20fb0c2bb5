"""Peer conversations through the host (issue 30 §1): ``mesh.send`` and what a link delivers.

``robota mesh send DEVICE TEXT`` is the control request ``mesh.send``: the host picks the
device from its roster, counts the conversation's first message in the store, then sends it
(``robota.mesh.PeerSay``) on that device's link. With ``wait`` the reply (or why none comes) is
the request's answer. ``from_task`` (or, inside an agent robota started, the caller's own task)
is the task the answers are delivered to.

A conversation's frame from a link (``Links.on_talk``) is attributed to the device the link's
handshake proved, never to what the frame says. A first message runs in the task it names on
this device or, naming none, in a new task on the default agent and folder, on a ``cli`` route
of its own named for the sender; a reply runs in the task this side gave the conversation. It
runs through ``TaskDesk.answer``: queued behind whatever the route holds, as a turn of its own
(never a steer, never merged), with that task's ordinary permissions and the sender named
below the text. The turn's answer is this side's reply, sent only when ``robota.mesh.may_reply``
allows: the reply that would cross ``mesh.limits.maxHops`` or ``maxReplies`` is held back, the
task's route is told (``RouteNote``), ``mesh status`` lists it among the host's problems, and
the peer gets ``PeerEnd``. Each count is written (one transaction, ``SaveMeshConversation``)
before the message it counts goes out, so a kill can lose a message but never let a
conversation run past its bounds. Frames of one conversation are taken one at a time.

Not yet: a turn a restart interrupted does not send its answer after the restart (the peer's
``--wait`` ends at its timeout).
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import trio

from robota.core.control import HandlerError
from robota.core.engine import RouteNote

from ._mesh_reach import open_links, peer_name, pick_peer
from ._requests import SEND_WAIT, SEND_WAIT_MAX, TaskNew
from ._routing import cli_route

if TYPE_CHECKING:
    from robota.core.store import Database, MeshConversation
    from robota.mesh import Links, PeerEnd, PeerReply, PeerSay, TalkFrame, TalkLimits

    from ._desk import TaskDesk

__all__ = ["MeshSend", "MeshTalk", "attributed", "peer_route_name"]

logger = logging.getLogger("robota.host")

INBOX = 64
"""Conversation frames waiting to be taken; more from a flooding peer are dropped (logged)."""
WRITE_TIMEOUT = 30.0
STOPPED_SHOWN = 86400.0
"""Seconds a conversation a limit stopped stays among ``mesh status``'s problems."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MeshSend:
    """Send ``text`` to ``device`` (an id, a unique prefix or a name) as the first message of a
    new conversation; ``task`` names the task there (none: a new one), ``from_task`` (or
    ``caller``'s task) the task here its answers go to. With ``wait`` the answer is the reply
    or why none came, within ``timeout`` seconds."""

    TYPE: ClassVar[str] = "mesh.send"
    device: str
    text: str
    task: str | None = None
    from_task: str | None = None
    caller: dict[str, str] | None = None
    wait: bool = False
    timeout: float | None = None


def peer_route_name(device_name: str, token: str) -> str:
    """The name of a new task's route for a peer's message: the sender's name, made safe for
    a route key, and a token of its own (``peer-desktop-1a2b3c4d``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")[:24].strip("-")
    return f"peer-{slug or 'device'}-{token}"


def attributed(text: str, device: str, name: str, peer_task: str) -> str:
    """The prompt a peer's message runs as: its text, then who sent it (the proven device;
    the task is what the sender says it speaks for)."""
    task = f", task {peer_task}" if peer_task else ""
    return f"{text.strip()}\n\n[robota mesh: from device {name} ({device}){task}]"


class MeshTalk:
    """This host's peer conversations (see the module docstring); one per host, on its loop."""

    def __init__(
        self,
        desk: TaskDesk,
        limits: TalkLimits,
        links: Callable[[], Links | None],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.desk = desk
        self.limits = limits
        self._links = links
        self.clock = clock
        self._send, self._receive = trio.open_memory_channel[tuple[str, "TalkFrame"]](INBOX)
        self._locks: dict[tuple[str, str], trio.Lock] = {}
        self._waiters: dict[str, trio.MemorySendChannel[dict[str, object]]] = {}

    # -- frames from the links ---------------------------------------------------------------

    def on_talk(self, peer: str, frame: TalkFrame) -> None:
        """A link delivered ``frame`` from ``peer`` (the device its handshake proved)."""
        try:
            self._send.send_nowait((peer, frame))
        except trio.WouldBlock:
            logger.warning("mesh: dropped a conversation frame from %s (too many waiting)", peer)

    async def run(self) -> None:
        """Take the frames the links deliver until cancelled."""
        async with trio.open_nursery() as nursery:
            async for peer, frame in self._receive:
                nursery.start_soon(self._take, peer, frame)

    async def _take(self, peer: str, frame: TalkFrame) -> None:
        from robota.mesh import PeerEnd  # noqa: PLC0415

        try:
            if isinstance(frame, PeerEnd):
                await self._peer_ended(peer, frame)
            else:
                await self._message(peer, frame)
        except HandlerError as error:
            logger.warning("mesh: conversation %s from %s: %s", frame.conversation, peer, error)

    async def _peer_ended(self, peer: str, frame: PeerEnd) -> None:
        from robota.mesh import ended  # noqa: PLC0415

        async with self._lock(peer, frame.conversation):
            row = await self._load(peer, frame.conversation)
            if row is None:
                return
            await self._save(ended(row, f"peer: {frame.reason}"))
        self._wake(row, {"ended": frame.reason})

    async def _message(self, peer: str, frame: PeerSay | PeerReply) -> None:
        from robota.mesh import PeerEnd, PeerSay, RefuseMessage, ended, take  # noqa: PLC0415

        async with self._lock(peer, frame.conversation):
            row = await self._load(peer, frame.conversation)
            decision = take(peer, row, frame, self.limits)
            if isinstance(decision, RefuseMessage):
                logger.info("mesh: refused a message from %s: %s", peer, decision.reason)
                if row is not None and decision.reason == "max-hops":
                    await self._save(ended(row, "max-hops"))
                await self._tell(peer, PeerEnd(frame.conversation, decision.reason))
                return
            row = decision.conversation
            if isinstance(frame, PeerSay):
                task_id = await self._task_for(peer, frame)
                if task_id is None:
                    await self._save(ended(row, "no-task"))
                    await self._tell(peer, PeerEnd(frame.conversation, "no-task"))
                    return
                row = _with_task(row, task_id)
            row = await self._save(row)
        if row.began == "me":
            self._wake(row, {"reply": frame.text})
        if row.task_id is not None:
            await self._run(peer, row, frame.text)

    async def _run(self, peer: str, row: MeshConversation, text: str) -> None:
        """Run the peer's message in the conversation's task; its answer is this side's reply."""
        from robota.mesh import PeerEnd, PeerReply, ReplyHeld, ended, may_reply  # noqa: PLC0415

        assert row.task_id is not None
        prompt = attributed(text, peer, self._name(peer), row.peer_task)
        answer: str | None = None
        try:
            finished = await self.desk.answer(row.task_id, prompt, timeout=SEND_WAIT)
            if finished.status == "completed" and finished.final_text:
                answer = finished.final_text
        except HandlerError as error:
            logger.info("mesh: %s's message did not run in %s: %s", peer, row.task_id, error)
        async with self._lock(peer, row.id):
            current = await self._load(peer, row.id)
            if current is None:
                return
            if answer is None:
                await self._save(ended(current, "no-answer"))
                await self._tell(peer, PeerEnd(row.id, "no-answer"))
                return
            decision = may_reply(current, self.limits)
            if decision is None:
                return
            await self._save(decision.conversation)
        if isinstance(decision, ReplyHeld):
            await self._held(peer, decision.conversation, decision.reason)
            await self._tell(peer, PeerEnd(row.id, decision.reason))
            return
        await self._tell(peer, PeerReply(row.id, answer))

    async def _held(self, peer: str, row: MeshConversation, reason: str) -> None:
        """Tell the task's route that a limit held this side's reply back."""
        bound = self.limits.max_hops if reason == "max-hops" else self.limits.max_replies
        note = (
            f"mesh: the conversation {row.id} with {self._name(peer)} stopped: the reply was not"
            f" sent, it would cross mesh.limits.{_KEYS[reason]} ({bound}); {row.hops} messages,"
            f" {row.replies} replies from this device"
        )
        logger.info("%s", note)
        if row.task_id is None:
            return
        try:
            key = await self.desk.route_of(row.task_id)
        except HandlerError:
            return
        self.desk.taps.tell(key, RouteNote(note))

    async def _task_for(self, peer: str, frame: PeerSay) -> str | None:
        """The task a first message runs in: the one it names, or a new one on a route of its
        own named for the sender; ``None`` when the name picks no task."""
        if frame.task:
            try:
                return (await self.desk.resolve(frame.task, None)).id
            except HandlerError:
                return None
        name = self._name(peer)
        key = cli_route(peer_route_name(name, secrets.token_hex(4)))
        opened = await self.desk.new(TaskNew(route=key, title=f"from {name}"))
        task = opened["task"]
        assert isinstance(task, dict)
        return str(task["id"])

    # -- mesh.send ---------------------------------------------------------------------------

    async def send(self, request: MeshSend) -> dict[str, object]:
        from robota.mesh import MAX_TEXT, PeerSay, began, ended  # noqa: PLC0415

        text = request.text.strip()
        if not text:
            raise HandlerError("bad_request", "mesh.send: 'text' is empty", "text")
        if len(text) > MAX_TEXT:
            raise HandlerError("bad_request", f"mesh.send: 'text' is over {MAX_TEXT}", "text")
        wait = SEND_WAIT if request.timeout is None else request.timeout
        if not 0 < wait <= SEND_WAIT_MAX:
            raise HandlerError(
                "bad_request", f"mesh.send: 'timeout' must be in (0, {SEND_WAIT_MAX:g}]", "timeout"
            )
        links = open_links(self._links())
        device = pick_peer(links, request.device)
        from_task = await self._from_task(request)
        conversation = secrets.token_hex(8)
        row = began(device, conversation, task_id=from_task, me=True)
        replies, waiting = trio.open_memory_channel[dict[str, object]](1)
        self._waiters[conversation] = replies
        try:
            async with self._lock(device, conversation):
                await self._save(row)
                sent = await links.send_talk(
                    device, PeerSay(conversation, text, request.task or "", from_task or "")
                )
                if not sent:
                    await self._save(ended(row, "refused"))
                    raise HandlerError("unavailable", f"no link to {device} (robota mesh status)")
            result: dict[str, object] = {
                "conversation": conversation,
                "device": device,
                "name": self._name(device),
                "from_task": from_task,
            }
            if request.wait:
                with trio.move_on_after(wait):
                    result.update(await waiting.receive())
                if "reply" not in result and "ended" not in result:
                    raise HandlerError(
                        "timeout", f"no reply from {device} within {wait:g} s (it may come later)"
                    )
            return result
        finally:
            self._waiters.pop(conversation, None)

    async def _from_task(self, request: MeshSend) -> str | None:
        from ._task_names import ENV_NAMES  # noqa: PLC0415

        caller = {k: v for k, v in (request.caller or {}).items() if k in ENV_NAMES and v}
        if request.from_task is None and not caller:
            return None
        return (await self.desk.resolve(request.from_task, caller)).id

    # -- what mesh status shows --------------------------------------------------------------

    async def problems(self) -> list[str]:
        """The conversations a limit stopped lately, for ``mesh status``."""
        from robota.core.store import mesh_conversations  # noqa: PLC0415

        since = self.clock() - STOPPED_SHOWN
        rows = await self.desk.reads.query(lambda db: mesh_conversations(db, limit=200))
        return [
            f"conversation {row.id} with {self._name(row.peer)} stopped ({row.reason}): the reply"
            f" that would cross mesh.limits.{_KEYS.get(row.reason, row.reason)} was not sent"
            f" ({row.hops} messages, {row.replies} replies from this device"
            + (f", task {row.task_id})" if row.task_id else ")")
            for row in rows
            if row.state == "stopped" and row.updated_at >= since
        ]

    # -- steps -------------------------------------------------------------------------------

    def _name(self, device: str) -> str:
        return peer_name(self._links(), device)

    def _lock(self, peer: str, conversation: str) -> trio.Lock:
        return self._locks.setdefault((peer, conversation), trio.Lock())

    def _wake(self, row: MeshConversation, outcome: dict[str, object]) -> None:
        waiter = self._waiters.get(row.id) if row.began == "me" else None
        if waiter is not None:
            try:
                waiter.send_nowait(outcome)
            except (trio.WouldBlock, trio.ClosedResourceError):
                pass

    async def _tell(self, peer: str, frame: TalkFrame) -> None:
        links = self._links()
        if links is None or not await links.send_talk(peer, frame):
            logger.info("mesh: could not send %s to %s (no link)", type(frame).__name__, peer)

    async def _load(self, peer: str, conversation: str) -> MeshConversation | None:
        from robota.core.store import mesh_conversation  # noqa: PLC0415

        def read(db: Database) -> MeshConversation | None:
            return mesh_conversation(db, peer, conversation)

        return await self.desk.reads.query(read)

    async def _save(self, row: MeshConversation) -> MeshConversation:
        from robota.core.store import SaveMeshConversation  # noqa: PLC0415

        return await self.desk.engine.store.write(
            SaveMeshConversation(row, at=self.clock()), timeout=WRITE_TIMEOUT
        )


_KEYS = {"max-hops": "maxHops", "max-replies": "maxReplies"}


def _with_task(row: MeshConversation, task_id: str) -> MeshConversation:
    import dataclasses  # noqa: PLC0415

    return dataclasses.replace(row, task_id=task_id)
