"""Pairing through the host: ``mesh.pair`` (the signing device) and ``mesh.join`` (the new one).

Both are operator-only control requests (``operator=True``: refused when the caller descends
from an agent's process). ``robota mesh pair`` holds a stream (``StreamEndpoint``): the host
opens a pairing window on its mesh listener for ``mesh.pairingTtlSeconds`` and sends, one JSON
line each, the ``code`` (the command shows it on ``/dev/tty``), then ``confirm`` (the joiner's
name and device id once its code's confirmation held); the command answers ``decision``
(``yes``: the operator typed ``y``), and the host ends with ``paired`` or ``failed`` (its
reason). ``robota mesh join ADDRESS`` is one request with the address and the code the
operator typed on the terminal; the host runs the joiner's side and answers the pairing
device's name and id.

Either way each side writes the other into ``mesh.peers`` of the profile's ``config.yaml``
(``_mesh_peers``: comments and layout kept; the joiner with the address it used, replacing the
one a device paired again had, the pairing device with none, since the joiner dials it), and
the mesh service takes the new lists and link certificates at once; the joiner's dials the
device it joined at once, without a restart.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import trio

from robota.core.control import HandlerError

from ._mesh_files import LINK_CERTS, load_link_certs, save_link_certs, split_address
from ._mesh_peers import record_peer

if TYPE_CHECKING:
    from robota.core.config import Config, Profile
    from robota.mesh import DeviceId, Identity, Links, Lists, Marks, MeshFiles, OpenedStore

__all__ = ["MeshJoin", "MeshPair", "MeshPairing", "PairingService"]

logger = logging.getLogger("robota.host")

_DECISION_LINE = 4096


@dataclass(frozen=True, slots=True)
class MeshPair:
    """Open a pairing window and converse with the operator (a stream, see the docstring)."""

    TYPE: ClassVar[str] = "mesh.pair"


@dataclass(frozen=True, slots=True)
class MeshJoin:
    """Join the mesh of the device at ``address`` with ``code`` (typed on the terminal)."""

    TYPE: ClassVar[str] = "mesh.join"
    address: str
    code: str


async def send_line(stream: trio.SocketStream, frame: dict[str, object]) -> None:
    from robota.core.protocol import encode_frame  # noqa: PLC0415

    await stream.send_all(encode_frame(frame))


async def read_decision(stream: trio.SocketStream, timeout: float) -> bool:
    """The operator's answer (``{"type": "decision", "yes": true}``); no as anything else."""
    data = b""
    with trio.move_on_after(timeout):
        while b"\n" not in data and len(data) < _DECISION_LINE:
            chunk = await stream.receive_some(_DECISION_LINE)
            if not chunk:
                break
            data += chunk
    try:
        frame = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        return False
    return isinstance(frame, dict) and frame.get("type") == "decision" and frame.get("yes") is True


class PairingService(Protocol):
    """What pairing needs of the host's mesh service (``_mesh.HostMesh`` is one)."""

    config: Config
    profile: Profile
    files: MeshFiles
    links: Links | None
    identity: Identity | None
    problems: list[str]
    listening: list[str]
    clock: Callable[[], float]

    @property
    def store_path(self) -> Path: ...

    def open_secrets(self) -> OpenedStore:
        """The secret store as recorded (blocking)."""
        ...

    async def raise_marks(self, marks: Marks) -> None:
        """Raise the store's marks through the host's writer."""
        ...

    async def take(self, links: Links, lists: Lists) -> None:
        """Hold ``lists`` when newer and pass them on to every link."""
        ...

    async def joined(self, device: str, address: str, lists: Lists, certs: list[bytes]) -> None:
        """This device joined ``device`` at ``address``, handed ``lists`` and ``certs``."""
        ...

    async def save_known(self, links: Links) -> None:
        """Save the link certificates ``links`` know."""
        ...


class MeshPairing:
    """``mesh.pair`` and ``mesh.join`` on one host's mesh service."""

    def __init__(self, mesh: PairingService) -> None:
        self.mesh = mesh

    def _open_links(self) -> Links:
        mesh = self.mesh
        if not mesh.config.mesh.enabled:
            raise HandlerError("unavailable", "the mesh is off (mesh.enabled in the profile)")
        if mesh.links is None:
            why = "; ".join(mesh.problems) or "it is not open"
            raise HandlerError("unavailable", f"the host's mesh is not open: {why}")
        return mesh.links

    async def pair(self, _request: MeshPair, stream: trio.SocketStream) -> None:
        from robota.mesh import (  # noqa: PLC0415
            PairingWindow,
            certificate_device,
            enrolment_bundle,
            new_code,
            stored_marks,
        )

        mesh = self.mesh
        links = self._open_links()
        if mesh.identity is None or not mesh.identity.signing:
            raise HandlerError(
                "forbidden", "this device does not hold the signing key (pair on a signing device)"
            )
        if not mesh.listening:
            raise HandlerError(
                "unavailable", "this host accepts no connections (mesh.listen is empty)"
            )
        ttl = mesh.config.mesh.pairing_ttl_seconds
        settings = mesh.config.mesh

        def prepare() -> tuple[Callable[[str, bytes], bytes], list[Any]]:
            secrets = mesh.open_secrets()
            return enrolment_bundle(
                mesh.files,
                secrets.store,
                now=int(mesh.clock()),
                lifetime=settings.list_lifetime_seconds,
                marks=stored_marks(mesh.store_path),
                known=links.trust.known.all(),
            )

        bundle, issued = await trio.to_thread.run_sync(prepare)
        window = PairingWindow(new_code(), trio.current_time() + ttl)

        async def decide(name: str, device: DeviceId) -> bool:
            await send_line(stream, {"type": "confirm", "name": name, "device": device})
            left = max(1.0, window.deadline - trio.current_time()) + 60.0
            return await read_decision(stream, left)

        await send_line(stream, {"type": "code", "code": window.code, "expiresIn": ttl})
        before = len(links.paired)
        links.open_pairing(window, decide, bundle)
        try:
            while len(links.paired) == before:
                closed = window.expire(trio.current_time())
                if closed and window.state != "used":
                    break
                await trio.sleep(0.1)
        finally:
            links.close_pairing()
        if len(links.paired) == before:
            reason = {"expired": "the pairing window expired"}.get(
                window.state, "no device paired (a wrong code, or the pairing was declined)"
            )
            logger.info("mesh: pairing ended without a device: %s", window.state)
            await send_line(stream, {"type": "failed", "reason": reason, "window": window.state})
            return
        name, cert = links.paired[-1]
        device = certificate_device(cert)
        links.trust.learn((cert,))
        await mesh.save_known(links)
        if issued:
            _cert, lists = issued[-1]
            await mesh.raise_marks(_marks_of(lists))
            await mesh.take(links, lists)
        await trio.to_thread.run_sync(record_peer, mesh.profile.config_file, device, name, None)
        logger.info("mesh: paired %s (%s)", device, name)
        await send_line(stream, {"type": "paired", "name": name, "device": device})

    async def join(self, request: MeshJoin) -> dict[str, object]:
        from robota.mesh import (  # noqa: PLC0415
            BadCode,
            MeshError,
            PairingFailed,
            join_device,
            parse_code,
            stored_marks,
        )

        mesh = self.mesh
        if not mesh.config.mesh.enabled:
            raise HandlerError("unavailable", "the mesh is off (mesh.enabled in the profile)")
        try:
            host, port = split_address(request.address)
        except ValueError as error:
            raise HandlerError("bad_request", str(error), "address") from None
        try:
            code = parse_code(request.code)
        except BadCode as error:
            raise HandlerError("bad_request", f"the code: {error}", "code") from None
        pairer: list[DeviceId] = []

        async def confirmed(device: DeviceId) -> None:
            pairer.append(device)

        try:
            secrets = await trio.to_thread.run_sync(mesh.open_secrets)
            identity, lists, certs = await join_device(
                host,
                port,
                code,
                mesh.files,
                secrets.store,
                now=lambda: int(mesh.clock()),
                marks=await trio.to_thread.run_sync(stored_marks, mesh.store_path),
                confirmed=confirmed,
            )
        except PairingFailed as failed:  # its message says "pairing failed: ..." itself
            raise HandlerError("pairing_failed", str(failed)) from None
        except trio.BrokenResourceError:
            # The listener ended the connection in the handshake: it has no window open.
            raise HandlerError(
                "pairing_failed",
                f"pairing failed: no pairing window answered at {request.address} (it expired or"
                " was used, or robota mesh pair is not running there)",
            ) from None
        except (MeshError, OSError, trio.TooSlowError) as error:
            raise HandlerError("pairing_failed", f"pairing failed: {error}") from None
        await mesh.raise_marks(_marks_of(lists))
        path = mesh.files.dir / LINK_CERTS
        known = list(dict.fromkeys([*load_link_certs(path), *certs]))
        await trio.to_thread.run_sync(save_link_certs, path, known)
        device = pairer[0] if pairer else None
        entry = lists.roster.find(device) if device is not None else None
        name = entry.name if entry is not None else ""
        if device is not None:
            await trio.to_thread.run_sync(
                record_peer, mesh.profile.config_file, device, name, request.address
            )
            await mesh.joined(device, request.address, lists, list(certs))
        logger.info("mesh: joined %s (%s) at %s", device, name, request.address)
        return {
            "device": identity.device,
            "name": identity.name,
            "pairer": device,
            "pairerName": name,
        }


def _marks_of(lists: Lists) -> Marks:
    from robota.mesh import Marks  # noqa: PLC0415

    return Marks(lists.roster.seq, lists.revocations.seq)
