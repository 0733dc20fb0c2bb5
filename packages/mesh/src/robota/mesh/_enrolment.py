"""Pairing end to end: the PAKE's shell (``_linkio``) joined to what the identity does with it.

On the pairing device, once its operator said yes, ``pair_device`` has the joiner's key (from
the link certificate the confirmation proved) certified and the roster issued again with it
(``_actions.enrol``), and hands the joiner an ``Enrolment``: the root public key it pins from
then on, its device certificate, both lists and the link certificates the pairing device knows
(its own among them), so the new device can link to every other. On the new device,
``join_device`` verifies all of it before anything is written (``_actions.adopt_pairing``).

The enrolment travels as one packing of ``_codec`` (``pack_enrolment``, ``unpack_enrolment``);
its lists and certificates are checked where they are adopted, not here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import trio

from ._actions import Lists, adopt_pairing, device_key, enrol
from ._certs import Certificate
from ._codec import pack, unpack
from ._credentials import SecretStore
from ._errors import MeshError
from ._identity import DeviceId
from ._linkcert import certificate_key, link_certificate
from ._linkio import join, serve_pairing
from ._lists import Marks
from ._pairing import PairingWindow
from ._state import Identity, MeshFiles

__all__ = [
    "Enrolment",
    "join_device",
    "pack_enrolment",
    "pair_device",
    "unpack_enrolment",
]

_ENROLMENT = b"robota-mesh/1 enrolment"
_CERTS = b"robota-mesh/1 link certificates"


@dataclass(frozen=True, slots=True)
class Enrolment:
    root: bytes
    device_cert: bytes
    roster: bytes
    revocations: bytes
    certs: tuple[bytes, ...]


def pack_enrolment(enrolment: Enrolment) -> bytes:
    certs = pack(_CERTS, *enrolment.certs)
    e = enrolment
    return pack(_ENROLMENT, e.root, e.device_cert, e.roster, e.revocations, certs)


def unpack_enrolment(blob: bytes) -> Enrolment:
    """``Malformed`` unless ``blob`` is one packing of an enrolment."""
    root, device_cert, roster, revocations, certs = unpack(_ENROLMENT, blob, 5)
    return Enrolment(root, device_cert, roster, revocations, tuple(unpack(_CERTS, certs)))


async def pair_device(
    stream: trio.SocketStream,
    window: PairingWindow,
    files: MeshFiles,
    store: SecretStore,
    *,
    now: int,
    lifetime: int,
    marks: Marks,
    known: Iterable[bytes],
    decide: Callable[[str, DeviceId], Awaitable[bool]],
) -> tuple[Certificate, Lists, bytes]:
    """One pairing on the pairing device: the joiner's device certificate, the lists issued
    with it and its link certificate; ``PairingFailed`` when it did not pair."""
    identity = files.identity()
    if identity is None or identity.root is None:
        raise MeshError("this device has no mesh identity (robota mesh init)")
    root = identity.root
    key = device_key(store, identity)
    own = link_certificate(key)
    issued: list[tuple[Certificate, Lists]] = []

    def bundle(name: str, cert: bytes) -> bytes:
        device_cert, lists = enrol(
            files, store, certificate_key(cert), name=name, now=now, lifetime=lifetime, marks=marks
        )
        issued.append((device_cert, lists))
        certs = tuple(dict.fromkeys([own, *known]))
        enrolment = Enrolment(
            root, device_cert.blob, lists.roster.blob, lists.revocations.blob, certs
        )
        return pack_enrolment(enrolment)

    _name, joiner_cert = await serve_pairing(stream, window, key, decide=decide, bundle=bundle)
    device_cert, lists = issued[0]
    return device_cert, lists, joiner_cert


async def join_device(
    host: str,
    port: int,
    code: str,
    files: MeshFiles,
    store: SecretStore,
    *,
    now: Callable[[], int],
    marks: Marks,
    confirmed: Callable[[DeviceId], Awaitable[None]],
) -> tuple[Identity, Lists, tuple[bytes, ...]]:
    """One pairing on the new device: its identity and lists as adopted, and the link
    certificates it was handed; ``PairingFailed`` or ``Refused`` when it did not pair."""
    identity = files.identity()
    if identity is None:
        raise MeshError("this device has no mesh identity yet (robota mesh init --join)")
    key = device_key(store, identity)
    blob = await join(host, port, code, key, identity.name, confirmed=confirmed)
    enrolment = unpack_enrolment(blob)
    adopted, lists = adopt_pairing(
        files,
        store,
        root=enrolment.root,
        device_cert=enrolment.device_cert,
        roster=enrolment.roster,
        revocations=enrolment.revocations,
        now=now(),
        marks=marks,
    )
    return adopted, lists, enrolment.certs
