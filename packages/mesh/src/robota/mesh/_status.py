"""What ``robota mesh status`` and ``mesh devices`` show, and what DEVICE names: pure.

``status_view`` and ``devices_view`` build the ``--json`` documents of the Contract from what
the caller read (the identity, the lists, the store's record, the links the host reports)
and never show a key's private part, a code or a phrase: only ids, names, numbers and times.
Times are ISO 8601 in UTC (``2026-12-07T05:00:00Z``).

The links are the host's (its mesh service reports each link's ``device``, ``name``,
``state`` and ``since``, and when each device was last seen); with no host, or a host whose
mesh is not open, every other active device of the roster is ``down``.

``problems`` says what keeps the mesh from working as it should, each a sentence: lapsed
lists (handoffs and file offers are refused until newer lists arrive), a failed keychain, a
refused project setting, lists this device would refuse, a ``mesh.name`` that is not the name
the mesh knows this device by (``name_problem``).

A device's name is the one its certificate carries: given when ``mesh init`` made its key (its
``mesh.name`` then, else the host name), the name the other devices show and resolve; status
shows that one, not a ``mesh.name`` set afterwards.

``pick_device`` resolves DEVICE on a command line: a whole id (any case, dashes or not), else
a device name, else a unique id prefix (at least 4 characters); anything else names no device
or several, and the message lists the candidates.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ._errors import MeshError
from ._identity import DeviceId, id_matches_prefix, parse_device_id
from ._lists import lapsed

__all__ = [
    "LINK_STATES",
    "DeviceNotFound",
    "LinkReport",
    "LinkState",
    "ListHead",
    "devices_view",
    "iso_time",
    "lapsed_problems",
    "name_problem",
    "pick_device",
    "status_view",
]

LinkState = Literal["connected", "connecting", "down"]
LINK_STATES: tuple[LinkState, ...] = ("connected", "connecting", "down")
_MIN_PREFIX = 4


class DeviceNotFound(MeshError):
    """DEVICE names no device of the roster, or several."""


@dataclass(frozen=True, slots=True)
class LinkReport:
    """One link as the host's mesh service reports it."""

    device: DeviceId
    name: str
    state: LinkState
    since: float | None = None
    last_seen: float | None = None


@dataclass(frozen=True, slots=True)
class ListHead:
    """What status shows of a list: its number and when it expires."""

    seq: int
    expires_at: int


def iso_time(when: float | None) -> str | None:
    if when is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))


def lapsed_problems(roster: ListHead | None, revocations: ListHead | None, now: int) -> list[str]:
    """A sentence per lapsed list."""
    problems = []
    for kind, head in (("roster", roster), ("revocation list", revocations)):
        if head is not None and lapsed(head.expires_at, now):
            problems.append(
                f"the {kind} (number {head.seq}) lapsed at {iso_time(head.expires_at)}: no newer"
                " one reached this device in time, so handoffs and file offers are refused"
                " until one does"
            )
    return problems


def name_problem(configured: str, certified: str) -> str | None:
    """A sentence when ``mesh.name`` (``configured``) is not the name in this device's
    certificate (``certified``), which the other devices know it by and resolve DEVICE with."""
    if configured == certified:
        return None
    return (
        f"mesh.name is {configured!r}, but the mesh knows this device as {certified!r} (its name"
        f" when robota mesh init made its key): the other devices show it and name it"
        f" {certified!r}"
    )


def _head(head: ListHead | None) -> dict[str, object] | None:
    if head is None:
        return None
    return {"seq": head.seq, "expiresAt": iso_time(head.expires_at)}


def status_view(
    *,
    enabled: bool,
    device: DeviceId | None,
    name: str,
    store: str | None,
    signing: bool,
    listen: Sequence[str],
    links: Sequence[LinkReport],
    roster: ListHead | None,
    revocations: ListHead | None,
    problems: Sequence[str],
) -> dict[str, object]:
    """``mesh status --json`` (the Contract's names)."""
    return {
        "enabled": enabled,
        "device": None if device is None else {"id": device, "name": name},
        "store": store,
        "signing": signing,
        "listen": list(listen),
        "links": [
            {
                "device": link.device,
                "name": link.name,
                "state": link.state,
                "since": iso_time(link.since),
            }
            for link in links
        ],
        "roster": _head(roster),
        "revocations": _head(revocations),
        "problems": list(problems),
    }


def devices_view(
    active: Mapping[DeviceId, str],
    revoked: Sequence[DeviceId],
    names: Mapping[DeviceId, str],
    links: Sequence[LinkReport],
) -> list[dict[str, object]]:
    """``mesh devices --json``: the roster's devices, then the revoked ones (the Contract's
    names); ``names`` gives a revoked device the name it last had."""
    by_device = {link.device: link for link in links}
    rows: list[dict[str, object]] = []
    for device, name in active.items():
        link = by_device.get(device)
        rows.append(
            {
                "id": device,
                "name": name,
                "state": "active",
                "linked": link is not None and link.state == "connected",
                "lastSeen": iso_time(link.last_seen if link is not None else None),
            }
        )
    for device in sorted(set(revoked) - set(active)):
        link = by_device.get(device)
        rows.append(
            {
                "id": device,
                "name": names.get(device, ""),
                "state": "revoked",
                "linked": False,
                "lastSeen": iso_time(link.last_seen if link is not None else None),
            }
        )
    return rows


def pick_device(devices: Mapping[DeviceId, str], text: str) -> DeviceId:
    """The one device ``text`` names (see the module docstring); ``DeviceNotFound`` else."""
    whole = parse_device_id(text)
    if whole is not None and whole in devices:
        return whole
    named = [device for device, name in devices.items() if name == text]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise DeviceNotFound(
            f"{len(named)} devices are called {text!r}: name one by its id ({', '.join(named)})"
        )
    plain = text.replace("-", "").replace(" ", "")
    if len(plain) >= _MIN_PREFIX:
        prefixed = [device for device in devices if id_matches_prefix(device, text)]
        if len(prefixed) == 1:
            return prefixed[0]
        if len(prefixed) > 1:
            raise DeviceNotFound(
                f"{len(prefixed)} devices' ids begin {text!r}: give more of it"
                f" ({', '.join(prefixed)})"
            )
    raise DeviceNotFound(f"no device of the roster is {text!r} (robota mesh devices lists them)")
