"""File offers through the host (issue 30 §2): ``mesh.offer``, ``mesh.offers``, ``mesh.accept``,
``mesh.decline`` and the offer frames a link delivers.

Offering (``robota mesh offer DEVICE PATH``): the file is judged as resolved (links followed)
by ``robota.mesh.offer_refusal``: ``mesh.offer.operator`` (operator-only: the control server
refuses a caller whose ancestry reaches an agent's process; the command asks it only from a
terminal) takes any readable regular file; ``mesh.offer`` (anyone, agents included) only a file
of the task's working folder that does not look like a secret. Its size and SHA-256 are read,
the offer is written (``direction`` ``out``, one store write), then sent (``PeerOffer``); it
waits ``OFFER_TTL`` for the other operator.

Receiving: an offer from a link (attributed to the device its handshake proved) is written
(``in``, ``offered``) and listed by ``mesh.offers`` until it expires. ``mesh.accept``
(operator-only; the command asks the operator on ``/dev/tty`` first) moves it to ``accepted``
(``advance``, one write), asks the sender for the bytes (``OfferOutcome`` ``accepted``) and
copies them as they come (``FileChunk``) through ``robota.mesh.Receiving``: a partial copy
under the device's folder, its length then SHA-256 checked, then kept under a name that cannot
leave the folder, replace anything or follow a link. The answer says where (name, size,
SHA-256, path; never the content). ``mesh.decline`` and expiry end it. The sender is told every
outcome and writes it; the task it offered for is told in its route (``RouteNote``).

At start, partial copies a stopped host left are removed and offers it left ``accepted`` are
``failed``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import trio

from robota.core.control import HandlerError
from robota.core.engine import RouteNote

from ._mesh_reach import open_links, peer_name, pick_peer

if TYPE_CHECKING:
    from robota.core.store import Database, MeshOffer
    from robota.mesh import FileChunk, Links, OfferFrame, OfferOutcome, PeerOffer, Receiving

    from ._desk import TaskDesk

__all__ = [
    "MeshAccept",
    "MeshDecline",
    "MeshOfferFile",
    "MeshOfferAny",
    "MeshOffers",
    "MeshOffersList",
]

logger = logging.getLogger("robota.host")

WRITE_TIMEOUT = 30.0
TRANSFER_TIMEOUT = 600.0
"""Seconds ``mesh.accept`` waits for the whole copy."""
MAX_SIZE = 1 << 30
"""The largest file offered or taken (1 GiB)."""
SWEEP_EVERY = 15.0


@dataclass(frozen=True, slots=True, kw_only=True)
class MeshOfferFile:
    """Offer the file at ``path`` (absolute) to ``device`` as an agent may: only a non-secret
    file of its own task's folder (``caller``'s task). ``task`` names the task on ``device``
    whose conversation is told of the file once kept."""

    TYPE: ClassVar[str] = "mesh.offer"
    device: str
    path: str
    task: str | None = None
    caller: dict[str, str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MeshOfferAny:
    """Offer any readable file (operator-only); the fields are ``mesh.offer``'s."""

    TYPE: ClassVar[str] = "mesh.offer.operator"
    device: str
    path: str
    task: str | None = None
    caller: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class MeshOffersList:
    """The offers waiting for this device's operator."""

    TYPE: ClassVar[str] = "mesh.offers"


@dataclass(frozen=True, slots=True)
class MeshAccept:
    """Accept the offer ``id`` (operator-only) and wait for its copy; a handoff's task to work
    in ``dir`` (``_mesh_take``)."""

    TYPE: ClassVar[str] = "mesh.accept"
    offer: str
    dir: str | None = None


@dataclass(frozen=True, slots=True)
class MeshDecline:
    TYPE: ClassVar[str] = "mesh.decline"
    offer: str


def _digest(path: Path) -> tuple[int, str]:
    """The size and SHA-256 of the regular file at ``path`` (never through a link: it is the
    resolved path)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file")
        digest, size = hashlib.sha256(), 0
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


class MeshOffers:
    """This host's file offers (see the module docstring); one per host, on its loop."""

    def __init__(
        self,
        desk: TaskDesk,
        data_dir: Path,
        profile_home: Path,
        links: Callable[[], Links | None],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.desk = desk
        self.data_dir = data_dir
        self.profile_home = profile_home
        self._links = links
        self.clock = clock
        self._receiving: dict[tuple[str, str], Receiving] = {}
        self._done: dict[tuple[str, str], trio.Event] = {}
        self._nursery: trio.Nursery | None = None
        """Where an accepted file's sending runs (``run``'s)."""

    # -- start and the sweep ---------------------------------------------------------------

    async def run(self) -> None:
        """At start, what a stopped host left; then expire unanswered offers."""
        from robota.mesh import remove_partials  # noqa: PLC0415

        removed = await trio.to_thread.run_sync(remove_partials, self.data_dir)
        if removed:
            logger.info("mesh: removed %d partial copies a stopped host left", removed)
        for row in await self._rows("in", "accepted"):
            await self._save(dataclasses.replace(row, phase="failed", detail="the host stopped"))
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            while True:
                await self._sweep()
                await trio.sleep(SWEEP_EVERY)

    async def _sweep(self) -> None:
        from robota.mesh import OfferOutcome  # noqa: PLC0415

        now = self.clock()
        for row in await self._rows("in", "offered"):
            if now >= row.expires_at:
                await self._save(dataclasses.replace(row, phase="expired"))
                await self._tell(row.peer, OfferOutcome(row.id, "expired", "nobody answered"))

    # -- offering ----------------------------------------------------------------------------

    async def offer(self, request: MeshOfferFile) -> dict[str, object]:
        return await self._offer(request)

    async def offer_any(self, request: MeshOfferAny) -> dict[str, object]:
        return await self._offer(request, operator=True)

    async def _offer(
        self, request: MeshOfferFile | MeshOfferAny, *, operator: bool = False
    ) -> dict[str, object]:
        from robota.core.store import MeshOffer  # noqa: PLC0415
        from robota.mesh import OFFER_TTL, PeerOffer, offer_refusal  # noqa: PLC0415

        links = open_links(self._links())
        self._refuse_when_lapsed()
        device = pick_peer(links, request.device)
        path = Path(request.path)
        if not path.is_absolute():
            raise HandlerError("bad_request", f"mesh.offer: {path} is not absolute", "path")
        task_id, task_dir = await self._own_task(request.caller)
        resolved = Path(os.path.realpath(path))
        why = offer_refusal(
            resolved,
            operator=operator,
            task_dir=task_dir,
            profile=Path(os.path.realpath(self.profile_home)),
        )
        if why is not None:
            raise HandlerError("forbidden", f"{path} may not be offered: {why}", "path")
        try:
            size, sha256 = await trio.to_thread.run_sync(_digest, resolved)
        except OSError as error:
            raise HandlerError("bad_request", f"cannot read {path}: {error}", "path") from None
        if size > MAX_SIZE:
            raise HandlerError("bad_request", f"{path} is over {MAX_SIZE} bytes", "path")
        now = self.clock()
        row = MeshOffer(
            peer=device,
            direction="out",
            id=secrets.token_hex(8),
            name=path.name,
            size=size,
            sha256=sha256,
            expires_at=now + OFFER_TTL,
            path=str(resolved),
            task_id=task_id,
        )
        await self._save(row)
        frame = PeerOffer(row.id, row.name, size, sha256, request.task or "")
        if not await links.send_talk(device, frame):
            await self._save(dataclasses.replace(row, phase="failed", detail="no link"))
            raise HandlerError("unavailable", f"no link to {device} (robota mesh status)")
        return {**_item(row, "to"), "device": device}

    async def _own_task(self, caller: dict[str, str] | None) -> tuple[str | None, Path | None]:
        """The offering agent's task (its environment's) and that task's folder, resolved."""
        from ._task_names import ENV_NAMES  # noqa: PLC0415

        named = {k: v for k, v in (caller or {}).items() if k in ENV_NAMES and v}
        if not named:
            return None, None
        task = await self.desk.resolve(None, named)
        cwd = getattr(task, "cwd", None)
        return task.id, Path(os.path.realpath(cwd)) if cwd else None

    # -- the operator's answers --------------------------------------------------------------

    async def offers(self, _request: MeshOffersList) -> dict[str, object]:
        await self._sweep()
        return {"offers": [_item(row, "from") for row in await self._rows("in", "offered")]}

    async def accept(self, request: MeshAccept) -> dict[str, object]:
        from robota.mesh import OfferOutcome, ReceiveFailed, Receiving, advance  # noqa: PLC0415

        open_links(self._links())
        self._refuse_when_lapsed()
        row = await self._incoming(request.offer)
        phase = advance(row.phase, "accept", now=self.clock(), expires_at=row.expires_at)  # type: ignore[arg-type]
        if phase is None:
            raise HandlerError("refused", f"offer {row.id} is {row.phase}, it cannot be accepted")
        key = (row.peer, row.id)
        try:
            copy = await trio.to_thread.run_sync(
                lambda: Receiving(self.data_dir, row.peer, row.id, size=row.size, sha256=row.sha256)
            )
        except ReceiveFailed as error:
            raise HandlerError("internal", str(error)) from None
        self._receiving[key] = copy
        done = self._done[key] = trio.Event()
        row = await self._save(dataclasses.replace(row, phase=phase))
        try:
            if not await self._tell(row.peer, OfferOutcome(row.id, "accepted", "")):
                await self._fail(row, "no link to the offering device")
            elif row.size == 0:
                await self._chunk(row.peer, _empty(row.id))
            with trio.move_on_after(TRANSFER_TIMEOUT):
                await done.wait()
            final = await self._load(row.peer, "in", row.id)
            if final is None or final.phase == "accepted":
                await self._fail(row, "the copy did not arrive in time")
                final = await self._load(row.peer, "in", row.id)
        finally:
            self._done.pop(key, None)
        assert final is not None
        if final.phase != "done":
            raise HandlerError("failed", f"offer {row.id}: {final.detail or final.phase}")
        return {"offer": _item(final, "from"), "path": final.path}

    async def decline(self, request: MeshDecline) -> dict[str, object]:
        from robota.mesh import OfferOutcome, advance  # noqa: PLC0415

        row = await self._incoming(request.offer)
        phase = advance(row.phase, "decline", now=self.clock(), expires_at=row.expires_at)  # type: ignore[arg-type]
        if phase is None:
            raise HandlerError("refused", f"offer {row.id} is {row.phase}, it cannot be declined")
        await self._save(dataclasses.replace(row, phase=phase))
        await self._tell(row.peer, OfferOutcome(row.id, "declined", "the operator declined"))
        return {"offer": row.id, "phase": phase}

    async def _incoming(self, text: str) -> MeshOffer:
        """The one incoming offer whose id is or begins with ``text``."""
        await self._sweep()
        rows = [r for r in await self._rows("in", None) if r.id.startswith(text.strip().lower())]
        if not text.strip() or not rows:
            raise HandlerError("not_found", f"no offer {text!r} (robota mesh offers)", "offer")
        if len(rows) > 1:
            raise HandlerError("not_found", f"{len(rows)} offers' ids begin {text!r}", "offer")
        return rows[0]

    # -- frames from the links ---------------------------------------------------------------

    async def on_frame(self, peer: str, frame: OfferFrame) -> None:
        from robota.mesh import FileChunk, OfferOutcome, PeerOffer  # noqa: PLC0415

        if isinstance(frame, PeerOffer):
            await self._offered(peer, frame)
        elif isinstance(frame, OfferOutcome):
            await self._outcome(peer, frame)
        elif isinstance(frame, FileChunk):
            await self._chunk(peer, frame)

    async def _offered(self, peer: str, frame: PeerOffer) -> None:
        from robota.core.store import MeshOffer  # noqa: PLC0415
        from robota.mesh import OFFER_TTL, OfferOutcome  # noqa: PLC0415

        if await self._load(peer, "in", frame.offer) is not None:
            return  # a replay: the first stays
        why = "over the size bound" if frame.size > MAX_SIZE else self._lapsed()
        if why:
            await self._tell(peer, OfferOutcome(frame.offer, "declined", why))
            return
        row = MeshOffer(
            peer=peer,
            direction="in",
            id=frame.offer,
            name=frame.name,
            size=frame.size,
            sha256=frame.sha256,
            expires_at=self.clock() + OFFER_TTL,
            task_id=frame.task or None,
        )
        await self._save(row)
        logger.info(
            "mesh: %s offers %r (%d bytes): robota mesh offers", peer, frame.name, frame.size
        )

    async def _outcome(self, peer: str, frame: OfferOutcome) -> None:
        """The receiving device's answer to one of this device's offers."""
        row = await self._load(peer, "out", frame.offer)
        if row is None or row.phase in ("done", "failed", "declined", "expired"):
            return
        if frame.outcome == "accepted":
            if row.phase != "offered" or self.clock() >= row.expires_at:
                return
            row = await self._save(dataclasses.replace(row, phase="accepted"))
            if self._nursery is not None:
                self._nursery.start_soon(self._send_file, row)
            return
        row = await self._save(dataclasses.replace(row, phase=frame.outcome, detail=frame.detail))
        note = f"mesh: the offer of {row.name} to {self._name(peer)}: {frame.outcome}" + (
            f" ({frame.detail})" if frame.detail else ""
        )
        logger.info("%s", note)
        if row.task_id is not None:
            try:
                self.desk.taps.tell(await self.desk.route_of(row.task_id), RouteNote(note))
            except HandlerError:
                pass

    async def _send_file(self, row: MeshOffer) -> None:
        """The accepted file's bytes, in chunks (the receiver checks them against the offer)."""
        from robota.mesh import CHUNK, FileChunk  # noqa: PLC0415

        try:
            handle = await trio.to_thread.run_sync(
                lambda: os.fdopen(os.open(row.path, os.O_RDONLY | os.O_NOFOLLOW), "rb")
            )
        except OSError as error:
            logger.warning("mesh: cannot send %s: %s", row.path, error)
            return
        with handle:
            offset = 0
            while chunk := await trio.to_thread.run_sync(handle.read, CHUNK):
                if not await self._tell(row.peer, FileChunk(row.id, offset, chunk)):
                    return
                offset += len(chunk)

    async def _chunk(self, peer: str, frame: FileChunk) -> None:
        from robota.mesh import OfferOutcome, ReceiveFailed  # noqa: PLC0415

        key = (peer, frame.offer)
        copy = self._receiving.get(key)
        if copy is None:
            return
        row = await self._load(peer, "in", frame.offer)
        if row is None or row.phase != "accepted":
            return
        try:
            await trio.to_thread.run_sync(copy.write, frame.data, frame.offset)
            if copy.written < row.size:
                return
            kept = await trio.to_thread.run_sync(copy.finish, row.name)
        except ReceiveFailed as error:
            await self._fail(row, str(error))
            return
        self._receiving.pop(key, None)
        await self._save(dataclasses.replace(row, phase="done", path=str(kept)))
        logger.info(
            "mesh: kept %s from %s: %s (%d bytes, sha256 %s)",
            row.name,
            peer,
            kept,
            row.size,
            row.sha256,
        )
        await self._tell(peer, OfferOutcome(row.id, "done", kept.name))
        self._wake(key)
        if row.task_id is not None:
            await self._tell_task(row, kept)

    async def _tell_task(self, row: MeshOffer, kept: Path) -> None:
        """The offer's task on this device hears of the kept file (never its content), as a
        message queued in its conversation."""
        from ._requests import TaskSend  # noqa: PLC0415

        assert row.task_id is not None
        text = (
            f"/nosteer [robota mesh: device {self._name(row.peer)} ({row.peer}) sent the file"
            f" {row.name!r}, {row.size} bytes, sha256 {row.sha256}; it is kept at {kept}]"
        )
        try:
            await self.desk.send(TaskSend(task=row.task_id, text=text))
        except HandlerError as error:
            logger.info("mesh: task %s was not told of %s: %s", row.task_id, kept, error)

    async def _fail(self, row: MeshOffer, why: str) -> None:
        from robota.mesh import OfferOutcome  # noqa: PLC0415

        copy = self._receiving.pop((row.peer, row.id), None)
        if copy is not None:
            await trio.to_thread.run_sync(copy.abandon)
        await self._save(dataclasses.replace(row, phase="failed", detail=why))
        await self._tell(row.peer, OfferOutcome(row.id, "failed", why))
        self._wake((row.peer, row.id))

    # -- steps -------------------------------------------------------------------------------

    def _name(self, device: str) -> str:
        return peer_name(self._links(), device)

    def _wake(self, key: tuple[str, str]) -> None:
        done = self._done.get(key)
        if done is not None:
            done.set()

    def _lapsed(self) -> str:
        """Why this device refuses offers now: its lists lapsed (``""``: they did not)."""
        from robota.mesh import lapsed  # noqa: PLC0415

        links, now = self._links(), int(self.clock())
        if links is None:
            return ""
        trust = links.trust
        if lapsed(trust.roster.expires_at, now) or lapsed(trust.revocations.expires_at, now):
            return "this device's lists lapsed (robota mesh status)"
        return ""

    def _refuse_when_lapsed(self) -> None:
        why = self._lapsed()
        if why:
            raise HandlerError("refused", f"file offers are refused: {why}")

    async def _tell(self, peer: str, frame: OfferFrame) -> bool:
        links = self._links()
        return links is not None and await links.send_talk(peer, frame)

    async def _rows(self, direction: str, phase: str | None) -> list[MeshOffer]:
        from robota.core.store import mesh_offers  # noqa: PLC0415

        return await self.desk.reads.query(lambda db: mesh_offers(db, direction, phase=phase))

    async def _load(self, peer: str, direction: str, offer: str) -> MeshOffer | None:
        from robota.core.store import mesh_offer  # noqa: PLC0415

        def read(db: Database) -> MeshOffer | None:
            return mesh_offer(db, peer, direction, offer)

        return await self.desk.reads.query(read)

    async def _save(self, row: MeshOffer) -> MeshOffer:
        from robota.core.store import SaveMeshOffer  # noqa: PLC0415

        return await self.desk.engine.store.write(
            SaveMeshOffer(row, at=self.clock()), timeout=WRITE_TIMEOUT
        )


def _empty(offer: str) -> FileChunk:
    from robota.mesh import FileChunk  # noqa: PLC0415

    return FileChunk(offer, 0, b"")


def _item(row: MeshOffer, who: str) -> dict[str, Any]:
    """An offer as ``mesh offers --json`` lists it (the Contract's names)."""
    from robota.mesh import iso_time  # noqa: PLC0415

    return {
        "id": row.id,
        "kind": "file",
        who: row.peer,
        "name": row.name,
        "size": row.size,
        "sha256": row.sha256,
        "expiresAt": iso_time(row.expires_at),
    }
