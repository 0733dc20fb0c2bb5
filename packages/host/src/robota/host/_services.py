"""The host's children as services: each a named child with its place in the supervision tree.

A service is registered under the ``robota.host_services`` entry point group (pyproject's
``[project.entry-points."robota.host_services"]``) as a ``HostService``: its ``name`` (the
child's id), ``after`` and ``before`` (the names of the children it starts after or before:
``after=("control",), before=("transports",)`` for a service the transports may ask, as the
device mesh will be) and ``child(host)``, the ``ChildSpec`` it runs as in this host. The
host's own children (engine, taps, control, teams, transports) are services of that shape,
registered the same way (``BUILTIN_SERVICES``; ``robota.host:ENGINE_SERVICE`` ...).

A service may serve requests on the host's control endpoint: its ``child(host)`` hands them to
``host.add_endpoints`` (the device mesh's ``mesh.status``, ``mesh.pair`` ...). The host asks
every service for its child before it builds its endpoint, so what they added is served from
the endpoint's first connection; a request type another endpoint already serves is a
``PluginError``, and so is an endpoint added once the endpoint is built.

Children start in the order ``service_order`` decides and stop in reverse; the decision is pure
(names and constraints in, names out), so a table tests it:

* every ``after``/``before`` of a service that is installed holds; a name nobody installed is
  no constraint (a plugin may be placed relative to another plugin that is optional);
* among the services whose constraints allow them to start next, the one listed first goes
  first: the built-ins in their documented order, then the plugins in the order they were found;
* a name given twice, or constraints that cannot all hold (a cycle), are a ``PluginError``
  naming them: the host does not start with a tree it cannot order.

Why the built-ins are also here in code: an editable install whose metadata predates the group
(a venv not reinstalled since) would otherwise start a host without an engine; one registered
under the group under a built-in's name is that built-in (the same object), never a second one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from robota.core import ChildSpec, PluginError, entry_points

if TYPE_CHECKING:
    from robota.core import Actor, EntryPoint, Service
    from robota.core.config import Config, Profile
    from robota.core.control import Endpoint, StreamEndpoint
    from robota.core.store import StoreClient

    from ._desk import TaskDesk

__all__ = [
    "BUILTIN_SERVICES",
    "CONTROL_SERVICE",
    "ENGINE_SERVICE",
    "TAPS_SERVICE",
    "TEAMS_SERVICE",
    "TRANSPORTS_SERVICE",
    "HOST_SERVICES_GROUP",
    "HostService",
    "Place",
    "ServiceHost",
    "ServiceSpec",
    "host_services",
    "service_order",
]

logger = logging.getLogger("robota.host")

HOST_SERVICES_GROUP = "robota.host_services"


class ServiceHost(Protocol):
    """What a service's ``child`` is given: the parts of the host its children run (the host's
    ``Host`` is one). Named here, not imported from ``_host``, which composes the services: the
    host knows its services, a service knows only this."""

    @property
    def engine(self) -> Actor | Service: ...

    @property
    def taps(self) -> Actor | Service: ...

    @property
    def server(self) -> Actor | Service: ...

    @property
    def teams(self) -> Actor | Service: ...

    @property
    def transport_tree(self) -> Actor | Service: ...

    @property
    def store(self) -> StoreClient:
        """The client of the host's one store writer: a service writes to the profile's store
        through it, never with a writer of its own (one writer per store in a host)."""
        ...

    @property
    def desk(self) -> TaskDesk:
        """The host's ``task.*`` requests: what a service runs a turn through."""
        ...

    @property
    def config(self) -> Config:
        """The profile's configuration, as the host loaded it."""
        ...

    @property
    def profile(self) -> Profile: ...

    def add_endpoints(self, endpoints: Iterable[Endpoint[Any] | StreamEndpoint[Any]]) -> None:
        """Serve ``endpoints`` on the host's control endpoint too (from ``child`` only)."""
        ...


@runtime_checkable
class HostService(Protocol):
    """One child of the host's tree, registered under ``robota.host_services`` by its name."""

    @property
    def name(self) -> str:
        """The child's id, and the name the entry point is registered under."""
        ...

    @property
    def after(self) -> tuple[str, ...]:
        """Children this one starts after (and stops before)."""
        ...

    @property
    def before(self) -> tuple[str, ...]:
        """Children this one starts before (and stops after)."""
        ...

    def child(self, host: ServiceHost) -> ChildSpec:
        """This service's child in ``host``'s tree; its ``id`` is ``name``."""
        ...


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """A ``HostService`` from a function of the host: what a plugin most often registers."""

    name: str
    make: Callable[[ServiceHost], ChildSpec]
    after: tuple[str, ...] = ()
    before: tuple[str, ...] = ()

    def child(self, host: ServiceHost) -> ChildSpec:
        return self.make(host)


@dataclass(frozen=True, slots=True)
class Place:
    """A service as the ordering decision sees it: its name and its constraints."""

    name: str
    after: tuple[str, ...] = ()
    before: tuple[str, ...] = ()


def service_order(places: Sequence[Place]) -> tuple[str, ...]:
    """The start order of ``places`` (see the module docstring); ``PluginError`` when a name
    is given twice or the constraints form a cycle."""
    names = [place.name for place in places]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise PluginError(f"host services registered twice: {', '.join(twice)}")
    known = set(names)
    waits: dict[str, set[str]] = {name: set() for name in names}
    for place in places:
        waits[place.name] |= {other for other in place.after if other in known}
        for other in place.before:
            if other in known:
                waits[other].add(place.name)
    order: list[str] = []
    while len(order) < len(names):
        ready = next((n for n in names if n not in order and not waits[n] - set(order)), None)
        if ready is None:
            stuck = [n for n in names if n not in order]
            raise PluginError(
                "host services whose after/before cannot all hold (a cycle): " + ", ".join(stuck)
            )
        order.append(ready)
    return tuple(order)


def host_services(builtins: Iterable[HostService] = ()) -> list[HostService]:
    """The services of this host in their start order: ``builtins`` and every one installed
    under ``robota.host_services`` (loaded now); ``PluginError`` when one is broken or they
    cannot be ordered."""
    found: dict[str, HostService] = {service.name: service for service in builtins}
    listed = list(found)
    for entry in entry_points(HOST_SERVICES_GROUP):
        service = _loaded(entry)
        known = found.setdefault(entry.name, service)
        if known is not service:
            raise PluginError(f"host services registered twice: {entry.name}")
        if entry.name not in listed:
            listed.append(entry.name)
    order = service_order([Place(name, found[name].after, found[name].before) for name in listed])
    return [found[name] for name in order]


def _loaded(entry: EntryPoint) -> HostService:
    """The service ``entry`` registers, or why not (a ``PluginError`` naming the entry)."""
    what = f"host service {entry.name!r} ({entry.value})"
    try:
        service = entry.load()
    except Exception as error:
        message = f"{what} failed to load: {type(error).__name__}: {error}"
        raise PluginError(message) from error
    if isinstance(service, HostService) and service.name == entry.name:
        return service
    raise PluginError(f"{what} is not a HostService named {entry.name!r}")


def _engine(host: ServiceHost) -> ChildSpec:
    return ChildSpec("engine", lambda: host.engine, shutdown=45.0, start_timeout=60.0)


def _taps(host: ServiceHost) -> ChildSpec:
    return ChildSpec("taps", lambda: host.taps)


def _control(host: ServiceHost) -> ChildSpec:
    return ChildSpec("control", lambda: host.server)


def _teams(host: ServiceHost) -> ChildSpec:
    return ChildSpec("teams", lambda: host.teams, shutdown=15.0)


def _transports(host: ServiceHost) -> ChildSpec:
    return ChildSpec("transports", lambda: host.transport_tree, shutdown=20.0)


ENGINE_SERVICE = ServiceSpec("engine", _engine)
"""Store, agents, routes: first up, so the endpoint serves only what it recovered."""
TAPS_SERVICE = ServiceSpec("taps", _taps, after=("engine",))
CONTROL_SERVICE = ServiceSpec("control", _control, after=("taps",))
TEAMS_SERVICE = ServiceSpec("teams", _teams, after=("control",))
TRANSPORTS_SERVICE = ServiceSpec("transports", _transports, after=("teams", "control"))
"""Last up, first down: a chat's message finds every service it may ask already running."""

BUILTIN_SERVICES: tuple[HostService, ...] = (
    ENGINE_SERVICE,
    TAPS_SERVICE,
    CONTROL_SERVICE,
    TEAMS_SERVICE,
    TRANSPORTS_SERVICE,
)
"""The host's own children, in their documented order (``_host``'s tree)."""
