"""What the host's conversations and offers (``_mesh_talk``, ``_mesh_offers``) ask of the
links alike: that the mesh is open, which peer DEVICE names, and a peer's name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from robota.core.control import HandlerError

if TYPE_CHECKING:
    from robota.mesh import Links

__all__ = ["open_links", "peer_name", "pick_peer"]


def open_links(links: Links | None) -> Links:
    """``links``; ``unavailable`` when the mesh is not open."""
    if links is None:
        raise HandlerError("unavailable", "the host's mesh is not open (robota mesh status)")
    return links


def pick_peer(links: Links, text: str) -> str:
    """The other device of the roster ``text`` names (an id, a unique prefix or a name)."""
    from robota.mesh import DeviceNotFound, pick_device  # noqa: PLC0415

    trust = links.trust
    devices = {c.device: c.name for c in trust.roster.devices if c.device != trust.device}
    try:
        return pick_device(devices, text)
    except DeviceNotFound as error:
        raise HandlerError("not_found", str(error), "device") from None


def peer_name(links: Links | None, device: str) -> str:
    """``device``'s name in the roster (its id when the roster does not hold it)."""
    if links is not None:
        for cert in links.trust.roster.devices:
            if cert.device == device:
                return cert.name
    return device
