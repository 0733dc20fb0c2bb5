"""The host's session handoffs (issue 30 §3): both sides' phase machines driven by the links and
their effects carried out, each phase one store transaction.

``MeshHandoffs`` is the shell around ``robota.mesh``'s sans-IO handoff: a frame from a link
(``Links.on_handoff``, with the channel it came on) becomes an event only through
``robota.mesh``'s wiring (an acknowledgement or a grant that does not verify changes nothing),
the side's row is read from the store, ``source_step`` / ``destination_step`` decide, and the
effects are done in order: ``RecordPhase`` as a compare-and-set ``MoveHandoff`` from the phase
the row had (a stale or repeated step writes nothing), the offer's record with its grant's
nonce (``ReceiveHandoff``: a replayed grant is refused across restarts), ``CommitHeld`` as one
``CommitHeldTask`` (the task saved held with its transcript and the signed acknowledgement),
``LetGo`` as one ``LetGoTask`` (only on a verified acknowledgement), ``ReleaseCopy`` and the
source's hearing of the close as ``MarkReleased``; messages go out only on the link whose
channel the grant names (``Links.send_handoff``), and an offer is granted afresh for each link
it goes on. ``reconnected`` sends again whatever each live handoff with that peer may have
missed; ``expire`` ends the offers whose ten minutes passed unanswered.

What a handoff does to the task on the desk (frozen from the push, let go on the
acknowledgement, started on the destination after the release) is the host's, through
``HandoffHooks``; this module only moves the handoff. The destination stages the payload on
disk (``_handoff_staging``: a partial file under the profile, ``Staging`` checking length,
then digest, then the staged file's content) and records ``staged`` with the staged file's path
in one transaction (``StageHandoff``); the commit reads that file back, checked again. A restart
mid-transfer removes the partial file (``resume``'s sweep) and asks the source for the payload
from its first byte again; a restart after staging commits from the staged file without asking
the source (``resume``). The folder an operator accepted into (``answer(cwd=...)``) is written
with the phase ``transferring`` (``AnswerHandoff``), so the commit saves the task there after a
restart too.
``_handoff_pause.pause_at`` marks the moments the chaos tests kill a host at (inert otherwise).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import trio

from ._handoff_pause import pause_at
from ._handoff_staging import HandoffStaging, StagedFile, StagingFailed

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from robota.core.store import Database, HandoffRow, HandoffSide, HeldTask, OfferHandoff
    from robota.mesh import (
        Chunked,
        Handoff,
        HandoffChunk,
        HandoffEffect,
        HandoffFrame,
        HandoffOffer,
        LinkReconnected,
        Links,
        OfferArrived,
        OfferExpired,
        Payload,
        PayloadChecked,
        Sealed,
        Staging,
    )

    from ._desk import TaskDesk

__all__ = [
    "DeskBook",
    "HandoffBook",
    "HandoffHooks",
    "HandoffKeys",
    "MeshHandoffs",
    "MeshHandoffsList",
    "held_task",
]

logger = logging.getLogger("robota.cli.host")

T = TypeVar("T")

WRITE_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class MeshHandoffsList:
    """This device's handoffs, both sides, newest first (``robota mesh handoffs``)."""

    TYPE: ClassVar[str] = "mesh.handoffs"


class HandoffBook(Protocol):
    """The store as the handoffs see it: one write is one transaction."""

    async def write(self, op: Any) -> Any: ...

    async def read(self, query: Callable[[Database], T]) -> T: ...


class DeskBook:
    """The host's store through its task desk: the writer actor and the desk's readers."""

    def __init__(self, desk: TaskDesk) -> None:
        self.desk = desk

    async def write(self, op: Any) -> Any:
        return await self.desk.engine.store.write(op, timeout=WRITE_TIMEOUT)

    async def read(self, query: Callable[[Database], T]) -> T:
        return await self.desk.reads.query(query)


@dataclass(frozen=True)
class HandoffKeys:
    """Who this device is: its id, its user's id, its device key (grants and acknowledgements
    are signed with it), and a peer's raw public key as the roster certifies it."""

    me: str
    user: str
    key: Ed25519PrivateKey
    public_key: Callable[[str], bytes | None]


async def _nothing(_task: str) -> None:
    return None


@dataclass
class HandoffHooks:
    """What the desk does when a handoff moves its task (each given the task's id)."""

    let_go: Callable[[str], Awaitable[None]] = _nothing
    """Source: the task moved; end its session's process."""
    unfreeze: Callable[[str], Awaitable[None]] = _nothing
    """Source: the handoff ended without moving the task; it takes input again."""
    released: Callable[[str], Awaitable[None]] = _nothing
    """Destination: the task's copy may start."""
    told: Callable[[str], None] = field(default=lambda text: logger.info("mesh: %s", text))
    """What the operators are told (``TellOperator``)."""


def held_task(payload: Payload, cwd: str | None = None) -> HeldTask:
    """The destination's held copy of the task a verified payload describes (``cwd``: the
    folder its operator chose, else the source's)."""
    from robota.core.store import HeldTask  # noqa: PLC0415

    task = payload.task

    def text(key: str) -> str | None:
        value = task.get(key)
        return value if isinstance(value, str) else None

    return HeldTask(
        id=str(task.get("id", "")),
        agent=text("agent") or "",
        runtime_kind=text("runtime_kind") or "",
        cwd=cwd or text("cwd") or payload.checkout.cwd,
        title=text("title"),
        model=text("model"),
        effort=text("effort"),
        permission_mode=text("permission_mode"),
    )


@dataclass
class _Receiving:
    staging: Staging
    file: StagedFile
    path: str | None = None
    """Where the checked payload was staged (recorded with ``staged``)."""


class MeshHandoffs:
    """This device's handoffs, both sides (module docstring)."""

    def __init__(
        self,
        book: HandoffBook,
        keys: HandoffKeys,
        links: Callable[[], Links | None],
        *,
        staging: HandoffStaging,
        hooks: HandoffHooks | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.book = book
        self.staging = staging
        self.keys = keys
        self._links = links
        self.hooks = hooks or HandoffHooks()
        self.clock = clock
        self._receiving: dict[str, _Receiving] = {}
        self._dirs: dict[str, str] = {}
        """The folder an answer chose (``mesh accept --dir``), until its transaction takes it."""

    # -- the source ----------------------------------------------------------------------------

    async def push(
        self,
        task: str,
        peer: str,
        sealed: Sealed,
        *,
        guard: Callable[[OfferHandoff], Any] | None = None,
    ) -> str:
        """Offer ``task`` (sealed idle by the caller) to ``peer``: recorded ``offered`` with its
        payload and a grant for the link it goes on, then sent. The new handoff's id;
        ``ValueError`` when the peer has no link or the task is already moving or moved.
        ``guard`` wraps the record in an op of the caller's that checks the task in the same
        transaction (``_mesh_push.OfferIdle``); what it raises is raised here."""
        from robota.core.store import OfferHandoff  # noqa: PLC0415
        from robota.mesh import OFFER_SECONDS, Handoff, manifest_document  # noqa: PLC0415

        links = self._links()
        channel = links.channel(peer) if links is not None else None
        if links is None or channel is None:
            raise ValueError(f"device {peer} is not linked now")
        handoff = Handoff(secrets.token_hex(8), task, peer, "offered")
        now = int(self.clock())
        expires = now + OFFER_SECONDS
        offer = self._offer(handoff, sealed, channel, now, expires)
        record = OfferHandoff(
            handoff=handoff.id,
            task=task,
            peer=peer,
            payload=sealed.payload,
            manifest_length=sealed.manifest.length,
            manifest_sha256=sealed.manifest.sha256,
            manifest=manifest_document(sealed.manifest),
            grant=offer.grant,
            expires_at=float(expires),
            at=float(now),
        )
        recorded = await self.book.write(record if guard is None else guard(record))
        if not recorded:
            raise ValueError(f"task {task} is already moving or has moved")
        await links.send_handoff(peer, offer, channel=channel)
        return handoff.id

    def _offer(
        self, handoff: Handoff, sealed: Sealed, channel: bytes, now: int, expires: int
    ) -> HandoffOffer:
        from robota.mesh import offer_frame  # noqa: PLC0415

        return offer_frame(
            self.keys.key,
            user=self.keys.user,
            me=self.keys.me,
            handoff=handoff,
            manifest=sealed.manifest,
            channel=channel,
            nonce=secrets.token_bytes(16),
            now=now,
            expires_at=expires,
        )

    # -- frames from a link --------------------------------------------------------------------

    async def on_handoff(self, peer: str, channel: bytes, frame: HandoffFrame) -> None:
        """A handoff's frame from ``peer`` on the link whose fingerprint is ``channel``."""
        from robota.mesh import HandoffChunk, HandoffOffer, HandoffSaved  # noqa: PLC0415

        if isinstance(frame, HandoffOffer):
            await self._offered(peer, channel, frame)
        elif isinstance(frame, HandoffChunk):
            await self._chunk(peer, channel, frame)
        else:
            source = await self._row(frame.handoff, "source")
            if source is not None and source.peer == peer:
                await self._source_frame(source, channel, frame)
            elif not isinstance(frame, HandoffSaved):
                await self._destination_frame(peer, channel, frame)

    async def _source_frame(self, row: HandoffRow, channel: bytes, frame: HandoffFrame) -> None:
        from robota.mesh import Unwired, source_event, source_step  # noqa: PLC0415

        key = self.keys.public_key(row.peer)
        if key is None:
            logger.warning("mesh: handoff %s: %s is not in the roster", row.id, row.peer)
            return
        event = source_event(
            frame,
            handoff=_handoff(row),
            me=self.keys.me,
            destination_key=key,
            manifest_sha256=row.manifest_sha256,
        )
        if isinstance(event, Unwired):
            logger.warning("mesh: handoff %s: %s", row.id, event.reason)
            return
        await self._do(row, source_step(_handoff(row), event).effects, channel)

    async def _destination_frame(self, peer: str, channel: bytes, frame: HandoffFrame) -> None:
        from robota.mesh import Unwired, destination_event, destination_step  # noqa: PLC0415

        row = await self._row(frame.handoff, "destination")
        if row is None or row.peer != peer:
            logger.info("mesh: a %s for no handoff of %s", type(frame).__name__, peer)
            return
        event = destination_event(frame)
        if isinstance(event, Unwired):
            logger.warning("mesh: handoff %s: %s", row.id, event.reason)
            return
        handoff = _handoff(row)
        await self._do(row, destination_step(handoff, event, new=handoff).effects, channel)

    async def _offered(self, peer: str, channel: bytes, offer: HandoffOffer) -> None:
        from robota.core.store import ReceiveHandoff  # noqa: PLC0415
        from robota.mesh import (  # noqa: PLC0415
            Handoff,
            TellOperator,
            Unwired,
            destination_step,
            manifest_document,
            offer_event,
        )

        key = self.keys.public_key(peer)
        if key is None:
            logger.warning("mesh: an offer from %s, not in the roster", peer)
            return
        # Verified before anything is said, a repeat too: an offer sent again after a
        # reconnect is granted afresh for the new link, so one replayed from another link
        # is refused (wrong-channel) and answered nothing.
        event = offer_event(
            offer,
            source_key=key,
            user=self.keys.user,
            me=self.keys.me,
            channel=channel,
            now=int(self.clock()),
            nonce_seen=(),  # the store's nonces: ReceiveHandoff refuses a replay below
        )
        if isinstance(event, Unwired):
            logger.warning("mesh: an offer from %s refused: %s", peer, event.reason)
            return
        row = await self._row(offer.handoff, "destination")
        if row is not None:
            # The source sent its offer again (a reconnect): say again what it may have missed.
            handoff = _handoff(row)
            step = destination_step(handoff, _offer_arrived(), new=handoff)
            await self._do(row, step.effects, channel)
            return
        arrived, grant = event
        new = Handoff(offer.handoff, offer.task, peer, "offered")
        manifest = offer.manifest()
        recorded = await self.book.write(
            ReceiveHandoff(
                handoff=offer.handoff,
                task=offer.task,
                peer=peer,
                nonce=grant.nonce,
                manifest_length=manifest.length,
                manifest_sha256=manifest.sha256,
                manifest=manifest_document(manifest),
                grant=grant.blob,
                expires_at=float(grant.expires_at),
                at=self.clock(),
            )
        )
        if recorded == "replayed":
            logger.warning("mesh: an offer from %s refused: replayed: its grant's nonce", peer)
            return
        pause_at("offered")
        step = destination_step(None, arrived, new=new)
        for effect in step.effects:
            if isinstance(effect, TellOperator):  # its RecordPhase was ReceiveHandoff's
                self.hooks.told(effect.text)

    async def _chunk(self, peer: str, channel: bytes, chunk: HandoffChunk) -> None:
        from robota.mesh import PayloadChecked, destination_step  # noqa: PLC0415

        row = await self._row(chunk.handoff, "destination")
        if row is None or row.peer != peer or row.phase != "transferring":
            return
        handoff = _handoff(row)
        try:
            event = await self._stage(row, chunk)
        except StagingFailed as failed:
            event = PayloadChecked(str(failed))
        await self._do(row, destination_step(handoff, event, new=handoff).effects, channel)

    async def _stage(self, row: HandoffRow, chunk: HandoffChunk) -> Chunked | PayloadChecked:
        """Feed ``chunk`` to the check and its bytes to the partial file; once every byte
        arrived and checked, the file is staged and read back for its content."""
        from robota.mesh import PayloadChecked, Staging, chunk_event  # noqa: PLC0415

        receiving = self._receiving.get(row.id)
        if receiving is None or chunk.offset == 0:
            if receiving is not None:
                receiving.file.abandon()
            staged = await trio.to_thread.run_sync(self.staging.begin, row.id)
            receiving = _Receiving(Staging(row.manifest_length, row.manifest_sha256), staged)
            self._receiving[row.id] = receiving
        event = chunk_event(receiving.staging, chunk)
        if isinstance(event, PayloadChecked) and event.problem:
            return event  # nothing of a chunk that cannot be taken is written
        await trio.to_thread.run_sync(receiving.file.write, chunk.data)
        pause_at("mid-transfer")
        if isinstance(event, PayloadChecked):
            path = await trio.to_thread.run_sync(receiving.file.finish)
            receiving.path = str(path)
            return await self._checked(row, receiving.path)
        return event

    async def _checked(self, row: HandoffRow, path: str) -> PayloadChecked:
        """The staged payload at ``path`` read back: length, digest, then content."""
        from robota.mesh import PayloadChecked  # noqa: PLC0415

        try:
            data = await self._staged_bytes(row, path)
        except StagingFailed as failed:
            return PayloadChecked(str(failed))
        return _content_checked(data)

    async def _staged_bytes(self, row: HandoffRow, path: str) -> bytes:
        def read() -> bytes:
            return self.staging.read(
                row.id, path, length=row.manifest_length, sha256=row.manifest_sha256
            )

        return await trio.to_thread.run_sync(read)

    # -- a restart -----------------------------------------------------------------------------

    async def resume(self) -> None:
        """At start: the partial files and orphaned staged files a stopped host left are
        removed, and each handoff this side staged commits from its staged file (checked
        again) without asking the source; one whose file no longer checks is abandoned."""
        from robota.core.store import staged_payloads  # noqa: PLC0415
        from robota.mesh import destination_step  # noqa: PLC0415

        staged = await self.book.read(staged_payloads)
        removed = await trio.to_thread.run_sync(self.staging.sweep, set(staged))
        if removed:
            logger.info("mesh: removed %d staged or partial payloads a stopped host left", removed)
        for handoff, path in staged.items():
            row = await self._row(handoff, "destination")
            if row is None or row.phase != "staged":
                continue
            event = await self._checked(row, path)
            links = self._links()
            channel = links.channel(row.peer) if links is not None else None
            current = _handoff(row)
            await self._do(row, destination_step(current, event, new=current).effects, channel)

    # -- the destination's operator -------------------------------------------------------------

    async def answer(self, handoff: str, *, yes: bool, cwd: str | None = None) -> str:
        """The destination's operator's answer to ``handoff``: the phase it is in after."""
        from robota.mesh import OperatorAnswered, destination_step  # noqa: PLC0415

        row = await self._row(handoff, "destination")
        if row is None:
            raise ValueError(f"no handoff {handoff} offered to this device")
        if row.phase != "offered":
            raise ValueError(f"handoff {handoff} is {row.phase}, not waiting for an answer")
        if cwd is not None:
            self._dirs[handoff] = cwd
        links = self._links()
        channel = links.channel(row.peer) if links is not None else None
        current = _handoff(row)
        step = destination_step(current, OperatorAnswered(yes=yes), new=current)
        await self._do(row, step.effects, channel)
        return step.handoff.phase

    # -- a link back ---------------------------------------------------------------------------

    async def reconnected(self, peer: str) -> None:
        """The link to ``peer`` is up again: each live handoff with it sends what the other
        side may have missed."""
        from robota.core.store import handoff_rows  # noqa: PLC0415
        from robota.mesh import LinkReconnected  # noqa: PLC0415

        links = self._links()
        channel = links.channel(peer) if links is not None else None
        if channel is None:
            return
        rows = await self.book.read(lambda db: handoff_rows(db, live_only=True))
        for row in rows:
            if row.peer == peer:
                await self._either(row, LinkReconnected(), channel)

    async def expire(self) -> None:
        """Each side's offers whose window passed unanswered end (``OfferExpired``): the
        source unfreezes its task and tells the destination, which stays unaware only while
        the link is down (its own window ends it too)."""
        from robota.core.store import handoff_rows  # noqa: PLC0415
        from robota.mesh import OfferExpired  # noqa: PLC0415

        now = self.clock()
        rows = await self.book.read(lambda db: handoff_rows(db, live_only=True))
        links = self._links()
        for row in rows:
            if row.phase != "offered" or row.expires_at is None or row.expires_at > now:
                continue
            channel = links.channel(row.peer) if links is not None else None
            await self._either(row, OfferExpired(), channel)

    async def _either(
        self, row: HandoffRow, event: LinkReconnected | OfferExpired, channel: bytes | None
    ) -> None:
        """An event either side's machine takes, given to this row's side's."""
        from robota.mesh import destination_step, source_step  # noqa: PLC0415

        handoff = _handoff(row)
        if row.side == "source":
            step = source_step(handoff, event)
        else:
            step = destination_step(handoff, event, new=handoff)
        await self._do(row, step.effects, channel)

    async def rows(self) -> list[HandoffRow]:
        from robota.core.store import handoff_rows  # noqa: PLC0415

        return await self.book.read(handoff_rows)

    # -- effects -------------------------------------------------------------------------------

    async def _do(
        self, row: HandoffRow, effects: tuple[HandoffEffect, ...], channel: bytes | None
    ) -> None:
        """Carry out ``effects`` in order; a compare-and-set that finds the row moved stops
        the rest (another step already did them)."""
        phase = row.phase
        for effect in effects:
            done = await self._effect(row, phase, effect, channel)
            if done is False:
                logger.info("mesh: handoff %s moved under a step; its effects stop", row.id)
                return
            if isinstance(done, str):
                phase = done

    async def _effect(
        self, row: HandoffRow, phase: str, effect: HandoffEffect, channel: bytes | None
    ) -> bool | str | None:
        from robota.core.store import (  # noqa: PLC0415
            AnswerHandoff,
            LetGoTask,
            MarkReleased,
            MoveHandoff,
        )
        from robota.mesh import (  # noqa: PLC0415
            CommitHeld,
            DiscardStaging,
            LetGo,
            RecordPhase,
            RefuseEvent,
            ReleaseCopy,
            SendMessage,
            SendOffer,
            SendPayload,
            SendSaved,
            TellOperator,
            Unfreeze,
        )

        match effect:
            case RecordPhase(phase=target) if target == phase:
                # The source hears the destination's close: nothing is sent again.
                return bool(await self.book.write(MarkReleased(handoff=row.id, side=row.side)))
            case RecordPhase(phase="transferring") if row.side == "destination":
                answered = AnswerHandoff(handoff=row.id, cwd=self._dirs.pop(row.id, None))
                return "transferring" if await self.book.write(answered) else False
            case RecordPhase(phase="staged") if row.side == "destination":
                return await self._record_staged(row)
            case RecordPhase(phase=target):
                move = MoveHandoff(handoff=row.id, side=row.side, expected=(phase,), to=target)
                return target if await self.book.write(move) else False
            case SendMessage(message=message):
                await self._send(row.peer, message, channel)
            case SendOffer():
                await self._resend_offer(row, channel)
            case SendPayload():
                await self._send_payload(row, channel)
            case SendSaved() if row.ack is not None or phase == "committed":
                await self._send_saved(row, channel)
            case CommitHeld():
                if not await self._commit(row):
                    return False
                pause_at("committed")
                return "committed"
            case LetGo():
                pause_at("acked")
                if not await self.book.write(LetGoTask(handoff=row.id)):
                    return False
                await self.hooks.let_go(row.task)
                return "committed"
            case ReleaseCopy():
                if await self.book.write(MarkReleased(handoff=row.id, side="destination")):
                    await self.hooks.released(row.task)
            case Unfreeze():
                await self.hooks.unfreeze(row.task)
            case DiscardStaging():
                await self._discard(row.id)
            case TellOperator(text=text):
                self.hooks.told(text)
            case RefuseEvent(reason=reason):
                logger.info("mesh: handoff %s: %s", row.id, reason)
        return None

    async def _send(self, peer: str, frame: HandoffFrame, channel: bytes | None) -> bool:
        links = self._links()
        if links is None or channel is None:
            return False  # sent again after the reconnect
        return await links.send_handoff(peer, frame, channel=channel)

    async def _resend_offer(self, row: HandoffRow, channel: bytes | None) -> None:
        from robota.core.store import handoff_payload  # noqa: PLC0415
        from robota.mesh import Sealed, manifest_of  # noqa: PLC0415

        payload = await self.book.read(lambda db: handoff_payload(db, row.id))
        if payload is None or channel is None or row.expires_at is None:
            return
        manifest = manifest_of(row.manifest_length, row.manifest_sha256, row.manifest)
        now = int(self.clock())
        offer = self._offer(
            _handoff(row), Sealed(payload, manifest), channel, now, int(row.expires_at)
        )
        await self._send(row.peer, offer, channel)

    async def _send_payload(self, row: HandoffRow, channel: bytes | None) -> None:
        from robota.core.store import handoff_payload  # noqa: PLC0415
        from robota.mesh import payload_chunks  # noqa: PLC0415

        payload = await self.book.read(lambda db: handoff_payload(db, row.id))
        if payload is None:
            return
        for chunk in payload_chunks(row.id, payload):
            if not await self._send(row.peer, chunk, channel):
                return  # the link went: the destination asks again after the reconnect

    async def _send_saved(self, row: HandoffRow, channel: bytes | None) -> None:
        from robota.mesh import HandoffSaved  # noqa: PLC0415

        fresh = await self._row(row.id, "destination")
        if fresh is not None and fresh.ack is not None:
            await self._send(row.peer, HandoffSaved(row.id, fresh.ack), channel)

    async def _record_staged(self, row: HandoffRow) -> str | bool:
        """``staged`` and where the checked payload is, in one transaction."""
        from robota.core.store import StageHandoff  # noqa: PLC0415

        receiving = self._receiving.get(row.id)
        if receiving is None or receiving.path is None:
            return False
        if not await self.book.write(StageHandoff(handoff=row.id, path=receiving.path)):
            return False
        pause_at("staged")
        return "staged"

    async def _discard(self, handoff: str) -> None:
        """Whatever of ``handoff``'s payload is staged, in memory and on disk, removed."""
        receiving = self._receiving.pop(handoff, None)
        if receiving is not None:
            receiving.file.abandon()
        await trio.to_thread.run_sync(self.staging.discard, handoff)

    async def _commit(self, row: HandoffRow) -> bool:
        """Save the task held with its transcript and the signed acknowledgement (one
        transaction), from the staged file read back and checked again; the staged payload
        is then removed."""
        from robota.core.store import (  # noqa: PLC0415
            CommitHeldTask,
            accepted_cwd,
            staged_payloads,
        )
        from robota.mesh import read_payload, sign_ack  # noqa: PLC0415

        path = (await self.book.read(staged_payloads)).get(row.id, "")
        try:
            data = await self._staged_bytes(row, path)
        except StagingFailed as failed:
            logger.warning("mesh: handoff %s cannot commit: %s", row.id, failed)
            return False
        payload = read_payload(data)
        ack = sign_ack(
            self.keys.key,
            handoff=row.id,
            source=row.peer,
            destination=self.keys.me,
            session=row.task,
            manifest_sha256=row.manifest_sha256,
        )
        task = held_task(payload, await self.book.read(lambda db: accepted_cwd(db, row.id)))
        transcript = tuple(dict(turn) for turn in payload.turns)
        op = CommitHeldTask(handoff=row.id, task=task, transcript=transcript, ack=ack.blob)
        if not await self.book.write(op):
            return False
        await self._discard(row.id)
        return True

    async def _row(self, handoff: str, side: HandoffSide) -> HandoffRow | None:
        from robota.core.store import handoff_row  # noqa: PLC0415

        return await self.book.read(lambda db: handoff_row(db, handoff, side))


def _handoff(row: HandoffRow) -> Handoff:
    from robota.mesh import Handoff  # noqa: PLC0415

    return Handoff(row.id, row.task, row.peer, row.phase, row.released)  # type: ignore[arg-type]


def _offer_arrived() -> OfferArrived:
    from robota.mesh import OfferArrived  # noqa: PLC0415

    return OfferArrived()


def _content_checked(data: bytes) -> PayloadChecked:
    """Length and digest held: the content must parse as a payload too."""
    from robota.mesh import PayloadChecked, PayloadMismatch, read_payload  # noqa: PLC0415

    try:
        read_payload(data)
    except PayloadMismatch as mismatch:
        return PayloadChecked(str(mismatch))
    return PayloadChecked()
