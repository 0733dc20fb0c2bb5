"""The host's mesh service: this device's links to the user's other devices (docs §14).

A ``robota.host_services`` entry named ``mesh``, after ``control`` and before ``transports``.
It opens only when the profile's ``config.yaml`` has ``mesh.enabled: true`` and the device has
its identity (``robota mesh init``); then it opens the credential store as recorded
(``open_secrets(first_use=False)``: the host never makes the first choice), accepts links on
each ``mesh.listen`` address, dials every ``mesh.peers`` entry that has an address, and keeps
the links (``robota.mesh.Links``). Lists a peer sends are adopted through ``adopt_list`` (the
files written) and the store's high-water marks raised through the host's one ``StoreWriter``
(``ServiceHost.store``: never a second writer in the host); the link certificates learned are
saved (``link-certs`` beside the identity) so the next start trusts them at once.

On a signing device it reissues both lists before half their lifetime has passed
(``reissue_due``, checked every ``TEND_EVERY`` seconds) and passes them on. A reissue that
failed is one problem (the last failure's), tried again at the next look and cleared once a
reissue succeeds.

A failure to open (a recorded keychain that stopped working, a damaged key, an address that
cannot be bound) is one of ``problems``, which ``mesh.status`` reports beside the links; the
host keeps serving everything else and this child keeps running, idle.

Peer conversations (``_mesh_talk``): the links hand this service's ``MeshTalk`` every
conversation frame, and it serves ``mesh.send``. Session handoffs (``_mesh_handoff``): the links
hand its ``MeshHandoffs`` every handoff frame with the channel it came on, and tell it each
new binding (a reconnect: what the peer may have missed is sent again); ``mesh.handoffs``
lists them.

Control requests: ``mesh.status`` (the links, ``lastSeen`` in epoch seconds, and the problems,
conversations a limit stopped lately among them), ``mesh.send`` and ``mesh.lists`` (the lists
on disk read again, after ``robota mesh revoke``: passed on to every link, and a revoked
device's link closed at once).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import trio

from robota.core import ChildSpec, RequestTimeout, StoreError
from robota.core.control import Endpoint, HandlerError, StreamEndpoint

from ._mesh_files import LINK_CERTS, load_link_certs, save_link_certs, split_address
from ._mesh_handoff import MeshHandoffs, MeshHandoffsList
from ._mesh_offers import (
    MeshAccept,
    MeshDecline,
    MeshOfferAny,
    MeshOfferFile,
    MeshOffers,
    MeshOffersList,
)
from ._mesh_pair import MeshJoin, MeshPair, MeshPairing
from ._mesh_push import MeshPush, handoff_hooks, push_task
from ._mesh_talk import MeshSend, MeshTalk
from ._services import ServiceSpec

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from keyring.backend import KeyringBackend

    from robota.core.config import Config, Profile
    from robota.core.store import StoreClient
    from robota.mesh import Identity, Links, LinkTrust, Lists, Marks, MeshFiles, OpenedStore

    from ._desk import TaskDesk
    from ._services import ServiceHost

__all__ = [
    "MESH_SERVICE",
    "PING_ENV",
    "HostMesh",
    "MeshLists",
    "MeshStatus",
    "ping_interval",
]

logger = logging.getLogger("robota.host")

PING_ENV = "ROBOTA_MESH_PING_SECONDS"
"""For tests only: a shorter ping interval than the links' 15 s, so that a test finds a cut
link silent within seconds (never a setting: ``ping_interval`` takes no more than 15 s)."""
TEND_EVERY = 5.0
"""Seconds between two looks at what to save and whether the lists are due for reissue."""
MARKS_TIMEOUT = 30.0
"""Seconds a raise of the marks may wait for the host's store writer."""


@dataclass(frozen=True, slots=True)
class MeshStatus:
    """The mesh service's links and problems (``robota mesh status``)."""

    TYPE: ClassVar[str] = "mesh.status"


@dataclass(frozen=True, slots=True)
class MeshLists:
    """Read the lists on disk again and pass them on (after ``robota mesh revoke``)."""

    TYPE: ClassVar[str] = "mesh.lists"


class HostMesh:
    """The ``mesh`` child of one host (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        profile: Profile,
        store: StoreClient,
        *,
        clock: Callable[[], float] = time.time,
        keychain: Callable[[], KeyringBackend | None] | None = None,
        desk: TaskDesk | None = None,
    ) -> None:
        """``keychain`` finds the OS keychain (``None``: ``robota.mesh``'s discovery); an
        in-process test gives its own, so that it never asks the keychain of its runner."""
        from robota.mesh import MeshFiles  # noqa: PLC0415

        self.config = config
        self.profile = profile
        self.store = store
        """The host's one store writer: the lists' marks are raised through it."""
        self.clock = clock
        self.keychain = keychain
        self.files: MeshFiles = MeshFiles(profile.data_dir / "mesh")
        self.problems: list[str] = []
        """Why the mesh did not open, or opened without a listener or a peer."""
        self.reissue_problem: str | None = None
        """Why the last reissue failed; ``None`` once one succeeded."""
        self.links: Links | None = None
        self.identity: Identity | None = None
        self._saved: list[bytes] = []
        self.listening: list[str] = []
        """The ``mesh.listen`` addresses bound (a pairing window is served there)."""
        self.joined_peers: dict[str, str] = {}
        """Devices this host joined since it started (their address): dialled at once."""
        self._joined = trio.Event()
        self._nursery: trio.Nursery | None = None
        """Where the open mesh's dials run (``None`` while it is not open)."""
        self._dials: dict[str, trio.CancelScope] = {}
        """Each dialled device's redial loop, so a new address replaces the old one's."""
        self.talk: MeshTalk | None = None
        """The peer conversations (``_mesh_talk``), when the host has a task desk."""
        self.offers: MeshOffers | None = None
        """The file offers (``_mesh_offers``), when the host has a task desk."""
        self.desk = desk
        self.handoffs: MeshHandoffs | None = None
        """The session handoffs (``_mesh_handoff``), once the links opened on a host with a
        task desk."""
        if desk is not None:
            from robota.mesh import TalkLimits  # noqa: PLC0415

            limits = TalkLimits(config.mesh.max_hops, config.mesh.max_replies)
            self.talk = MeshTalk(desk, limits, lambda: self.links, clock=clock)
            self.offers = MeshOffers(
                desk, profile.data_dir, profile.home, lambda: self.links, clock=clock
            )

    @property
    def store_path(self) -> Path:
        return self.config.storage.sqlite_path

    def open_secrets(self) -> OpenedStore:
        """The secret store as recorded (never a first choice); blocking: a worker thread's."""
        from robota.mesh import open_secrets  # noqa: PLC0415

        if self.keychain is None:
            return open_secrets(self.files, first_use=False)
        return open_secrets(self.files, first_use=False, keychain=self.keychain)

    def endpoints(self) -> list[Endpoint[Any] | StreamEndpoint[Any]]:
        pairing = MeshPairing(self)
        endpoints: list[Endpoint[Any] | StreamEndpoint[Any]] = [
            Endpoint(MeshStatus, self.status),
            Endpoint(MeshLists, self.reload),
            StreamEndpoint(MeshPair, pairing.pair, operator=True),
            Endpoint(MeshJoin, pairing.join, operator=True),
        ]
        if self.talk is not None:
            endpoints.append(Endpoint(MeshSend, self.talk.send))
        endpoints.append(Endpoint(MeshHandoffsList, self.handoffs_list))
        if self.desk is not None:
            endpoints.append(Endpoint(MeshPush, self.push, operator=True))
        if self.offers is not None:
            offers = self.offers
            endpoints += [
                Endpoint(MeshOfferFile, offers.offer),
                Endpoint(MeshOfferAny, offers.offer_any, operator=True),
                Endpoint(MeshOffersList, self.offers_list),
                Endpoint(MeshAccept, self.accept, operator=True),
                Endpoint(MeshDecline, self.decline),
            ]
        return endpoints

    # -- running -------------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        links = await self._open() if self.config.mesh.enabled else None
        task_status.started()
        while True:
            if links is not None:
                self.links = links
                await self._serve(links)
            # Not open (off, not paired yet, or failed): a join opens it.
            await self._joined.wait()
            self._joined = trio.Event()
            self.problems = []
            links = await self._open()

    async def _serve(self, links: Links) -> None:
        settings = self.config.mesh
        async with trio.open_nursery() as nursery:
            self._nursery = nursery  # from here a join dials at once (``joined``)
            try:
                for address in settings.listen:
                    await self._listen(nursery, links, address)
                peers = {d: p.address for d, p in settings.peers.items() if p.address}
                for device, address in {**peers, **self.joined_peers}.items():
                    self._dial(nursery, links, device, address)
                nursery.start_soon(self._tend, links)
                if self.talk is not None:
                    nursery.start_soon(self.talk.run)
                if self.offers is not None:
                    nursery.start_soon(self.offers.run)
                if self.handoffs is not None:
                    nursery.start_soon(self.handoffs.resume)
                await trio.sleep_forever()
            finally:
                self._nursery = None

    async def _open(self) -> Links | None:
        """The links' trust from the files and the store; ``None`` (and a problem) when the
        device has no identity or its secrets do not open."""
        from robota.mesh import (  # noqa: PLC0415
            Links,
            MeshError,
            current_lists,
            device_key,
            stored_marks,
        )

        key_of: list[Ed25519PrivateKey] = []

        def opened() -> LinkTrust | None:
            identity = self.files.identity()
            if identity is None:
                self.problems.append(
                    "the mesh is on but this device has no identity (robota mesh init)"
                )
                return None
            secrets = self.open_secrets()
            identity = self.files.identity() or identity
            key = device_key(secrets.store, identity)
            key_of.append(key)
            marks = stored_marks(self.store_path)
            lists = current_lists(self.files, identity, marks)
            self.identity = identity
            if lists is None or identity.root is None:
                self.problems.append("this device has not paired yet (robota mesh join ADDRESS)")
                return None
            known = load_link_certs(self.files.dir / LINK_CERTS)
            return self._trust(key, identity, lists, marks, known)

        try:
            trust = await trio.to_thread.run_sync(opened)
        except MeshError as error:
            self.problems.append(f"the mesh did not open: {error}")
            logger.warning("mesh: did not open: %s", error)
            return None
        if trust is None:
            return None
        self._saved = trust.known.all()
        links = Links(trust, clock=self.clock, ping_every=ping_interval(os.environ))
        links.on_talk = self._deliver
        if self.desk is not None and self.identity is not None and self.identity.root:
            self.handoffs = self._handoffs(links, key_of[0], self.identity.root)
            links.on_handoff = self.handoffs.on_handoff
            links.on_bound = self.handoffs.reconnected
        return links

    def _handoffs(self, links: Links, key: Ed25519PrivateKey, root: bytes) -> MeshHandoffs:
        """The handoffs of this device (its id, its user's: the root key's id, its key) whose
        peers' keys are the ones the roster the links hold certifies now."""
        from robota.mesh import device_id, parse_device_id  # noqa: PLC0415

        from ._handoff_staging import HandoffStaging  # noqa: PLC0415
        from ._mesh_handoff import DeskBook, HandoffKeys  # noqa: PLC0415

        def public_key(device: str) -> bytes | None:
            peer = parse_device_id(device)
            cert = links.trust.roster.find(peer) if peer is not None else None
            return cert.subject if cert is not None else None

        assert self.desk is not None
        keys = HandoffKeys(links.trust.device, device_id(root), key, public_key)
        hooks = handoff_hooks(self.desk)
        return MeshHandoffs(
            DeskBook(self.desk),
            keys,
            lambda: self.links,
            staging=HandoffStaging(self.profile.data_dir),
            hooks=hooks,
            clock=self.clock,
        )

    async def _deliver(self, peer: str, frame: object) -> None:
        """A conversation's frame to the conversations, an offer's to the offers."""
        from robota.mesh import FileChunk, OfferOutcome, PeerOffer  # noqa: PLC0415

        if isinstance(frame, PeerOffer | OfferOutcome | FileChunk):
            if self.offers is not None:
                await self.offers.on_frame(peer, frame)
        elif self.talk is not None:
            self.talk.on_talk(peer, frame)  # type: ignore[arg-type]

    def _trust(
        self,
        key: Ed25519PrivateKey,
        identity: Identity,
        lists: Lists,
        marks: Marks,
        known: list[bytes],
    ) -> LinkTrust:
        from robota.mesh import KnownCertificates, LinkTrust  # noqa: PLC0415

        certs = KnownCertificates()
        for der in known:
            try:
                certs.add(der)
            except Exception:
                continue
        assert identity.root is not None
        return LinkTrust(
            key,
            identity.name,
            identity.root,
            lists.roster,
            lists.revocations,
            known=certs,
            marks=marks,
            files=self.files,
            adopted=self._marks_raised,
        )

    def _marks_raised(self, marks: Marks) -> None:
        """A link adopted a list (on the trio thread, which must not wait for a write): the
        marks go to the host's writer; the links hold them in memory meanwhile."""
        from robota.mesh import marks_op  # noqa: PLC0415

        self.store.submit(marks_op(marks), _logged_failure)

    async def raise_marks(self, marks: Marks) -> None:
        """Raise the store's marks to ``marks`` through the host's writer, once committed."""
        from robota.mesh import marks_op  # noqa: PLC0415

        await self.store.write(marks_op(marks), timeout=MARKS_TIMEOUT)

    async def _listen(self, nursery: trio.Nursery, links: Links, address: str) -> None:
        try:
            host, port = split_address(address)
            await nursery.start(links.serve, host, port)
            self.listening.append(address)
        except (ValueError, OSError) as error:
            self.problems.append(f"mesh.listen {address}: {error}")
            logger.warning("mesh: cannot listen on %s: %s", address, error)

    def _dial(self, nursery: trio.Nursery, links: Links, device: str, address: str) -> None:
        from robota.mesh import parse_device_id  # noqa: PLC0415

        peer = parse_device_id(device)
        try:
            host, port = split_address(address)
        except ValueError as error:
            self.problems.append(f"mesh.peers {device}: {error}")
            return
        if peer is None:
            self.problems.append(f"mesh.peers: {device!r} is not a device id")
            return
        previous = self._dials.pop(peer, None)
        if previous is not None:
            previous.cancel()  # the device's new address replaces the old
        scope = self._dials[peer] = trio.CancelScope()

        async def dialling() -> None:
            with scope:
                await links.keep_dialling(host, port, peer)

        nursery.start_soon(dialling)

    async def save_known(self, links: Links) -> None:
        """Save the link certificates the links know when they changed (a paired device's at
        once: a host that stops before its next look must still trust it when it starts)."""
        known = links.trust.known.all()
        if known != self._saved:
            await trio.to_thread.run_sync(save_link_certs, self.files.dir / LINK_CERTS, known)
            self._saved = known

    async def _tend(self, links: Links) -> None:
        """Save what the links learned; end the handoff offers that expired; reissue the lists
        when due (a signing device)."""
        while True:
            await self.save_known(links)
            if self.handoffs is not None:
                await self.handoffs.expire()
            if self.identity is not None and self.identity.signing:
                await self._reissue_if_due(links)
            await trio.sleep(TEND_EVERY)

    async def _reissue_if_due(self, links: Links) -> None:
        from robota.mesh import (  # noqa: PLC0415
            Marks,
            MeshError,
            reissue,
            reissue_due,
            stored_marks,
        )

        trust, now = links.trust, int(self.clock())
        due = any(
            reissue_due(head.issued_at, head.expires_at, now)
            for head in (trust.roster, trust.revocations)
        )
        if not due:
            return
        lifetime = self.config.mesh.list_lifetime_seconds

        def reissued() -> Lists:
            secrets = self.open_secrets()
            marks = stored_marks(self.store_path)
            return reissue(self.files, secrets.store, now=now, lifetime=lifetime, marks=marks)

        try:
            lists = await trio.to_thread.run_sync(reissued)
            await self.raise_marks(Marks(lists.roster.seq, lists.revocations.seq))
        except (MeshError, StoreError, RequestTimeout) as error:
            if self.reissue_problem is None:
                logger.warning("mesh: reissue failed: %s", error)
            self.reissue_problem = f"the lists were not reissued: {error}"
            return
        if self.reissue_problem is not None:
            logger.info("mesh: the lists were reissued after a failure")
        self.reissue_problem = None
        logger.info("mesh: reissued the lists (roster %d)", lists.roster.seq)
        await self._take(links, lists)

    async def joined(self, device: str, address: str, lists: Lists, certs: list[bytes]) -> None:
        """This device joined ``device`` at ``address`` (handed ``lists`` and ``certs``): open
        the mesh now if it was waiting for that; an open one takes the lists and certificates
        and dials the device at once (a new address replaces the one it was dialled at)."""
        self.joined_peers[device] = address
        links, nursery = self.links, self._nursery
        if links is None or nursery is None:
            self._joined.set()
            return
        links.trust.learn(tuple(certs))
        await self.save_known(links)
        await self._take(links, lists)
        self._dial(nursery, links, device, address)

    async def take(self, links: Links, lists: Lists) -> None:
        await self._take(links, lists)

    async def _take(self, links: Links, lists: Lists) -> None:
        """Hold ``lists`` when newer than the links' and pass them on."""
        from robota.mesh import Marks  # noqa: PLC0415

        trust = links.trust
        if lists.roster.seq > trust.roster.seq:
            trust.roster = lists.roster
        if lists.revocations.seq > trust.revocations.seq:
            trust.revocations = lists.revocations
        trust.marks = Marks(
            max(trust.marks.roster, trust.roster.seq),
            max(trust.marks.revocations, trust.revocations.seq),
        )
        await links.refresh()

    # -- control requests ----------------------------------------------------------------------

    async def status(self, _request: MeshStatus) -> dict[str, object]:
        links: list[dict[str, object]] = []
        if self.links is not None:
            now = self.clock()
            for item in self.links.status():
                seen = now if item["state"] == "connected" else item["since"]
                links.append({**item, "lastSeen": seen})
        problems = list(self.problems)
        if self.reissue_problem is not None:
            problems.append(self.reissue_problem)
        if self.talk is not None:
            problems.extend(await self.talk.problems())
        return {"links": links, "problems": problems}

    async def offers_list(self, request: MeshOffersList) -> dict[str, object]:
        """``mesh.offers``: the files offered here, then the handoffs (``_mesh_take``)."""
        from ._mesh_take import handoff_item, offered_handoffs  # noqa: PLC0415

        assert self.offers is not None
        listed = await self.offers.offers(request)
        if self.handoffs is not None:
            items = [handoff_item(row) for row in await offered_handoffs(self.handoffs)]
            listed = {"offers": [*listed["offers"], *items]}  # type: ignore[misc]
        return listed

    async def accept(self, request: MeshAccept) -> dict[str, object]:
        """``mesh.accept``: a handoff's (``_mesh_take``), else a file offer's."""
        from ._mesh_take import accept_handoff, offered_handoff  # noqa: PLC0415

        assert self.offers is not None
        row = await offered_handoff(self.handoffs, request.offer)
        if row is None or self.handoffs is None:
            return await self.offers.accept(request)
        return await accept_handoff(self.handoffs, row, request.dir)

    async def decline(self, request: MeshDecline) -> dict[str, object]:
        """``mesh.decline``: a handoff's (``_mesh_take``), else a file offer's."""
        from ._mesh_take import decline_handoff, offered_handoff  # noqa: PLC0415

        assert self.offers is not None
        row = await offered_handoff(self.handoffs, request.offer)
        if row is None or self.handoffs is None:
            return await self.offers.decline(request)
        return await decline_handoff(self.handoffs, row)

    async def push(self, request: MeshPush) -> dict[str, object]:
        """``mesh.push``: the task offered to the device named (``_mesh_push``)."""
        if self.desk is None or self.handoffs is None:
            raise HandlerError("unavailable", "the mesh is not open (robota mesh status)")
        return await push_task(self.desk, self.handoffs, request)

    async def handoffs_list(self, _request: MeshHandoffsList) -> dict[str, object]:
        """``mesh.handoffs``: read from the store, open links or not."""
        from robota.core.store import handoff_rows  # noqa: PLC0415

        from ._mesh_handoff import DeskBook  # noqa: PLC0415

        if self.desk is None:
            return {"handoffs": []}
        me = self.identity.device if self.identity is not None else self.files_device()
        rows = await DeskBook(self.desk).read(handoff_rows)
        return {"handoffs": [row.to_json(me) for row in rows]}

    def files_device(self) -> str:
        """This device's id as its identity file says (``""`` before ``mesh init``)."""
        identity = self.files.identity()
        return identity.device if identity is not None else ""

    async def reload(self, _request: MeshLists) -> dict[str, object]:
        from robota.mesh import MeshError, current_lists, stored_marks  # noqa: PLC0415

        links, identity = self.links, self.identity
        if links is None or identity is None:
            return {"reloaded": False}

        def read() -> Lists | None:
            return current_lists(self.files, identity, stored_marks(self.store_path))

        try:
            lists = await trio.to_thread.run_sync(read)
        except MeshError as error:
            return {"reloaded": False, "problem": str(error)}
        if lists is not None:
            await self._take(links, lists)
        return {"reloaded": lists is not None}


def ping_interval(environ: Mapping[str, str]) -> float:
    """The links' ping interval: ``PING_EVERY`` (15 s), or ``PING_ENV`` when a test gives a
    number of seconds from 0.5 to 15 (anything else is ignored)."""
    from robota.mesh import PING_EVERY  # noqa: PLC0415

    try:
        asked = float(environ.get(PING_ENV, ""))
    except ValueError:
        return PING_EVERY
    return asked if 0.5 <= asked <= PING_EVERY else PING_EVERY


def _logged_failure(outcome: object) -> None:
    if isinstance(outcome, BaseException):
        logger.error("mesh: the lists' marks were not written: %s", outcome)


def _mesh_child(host: ServiceHost) -> ChildSpec:
    mesh = HostMesh(host.config, host.profile, host.store, desk=host.desk)
    host.add_endpoints(mesh.endpoints())
    return ChildSpec("mesh", lambda: mesh, shutdown=5.0)


MESH_SERVICE = ServiceSpec("mesh", _mesh_child, after=("control",), before=("transports",))
"""The ``mesh`` child: after the endpoint it answers on, before the transports that may ask it."""
