"""What the host hands a chat transport it starts, and what the transport reports back.

A chat transport (a ``robota.transports`` plugin) is a front end like the TUI: it reaches its
routes through the ``FrontEndPort`` and nothing else of the engine. The host builds one
``TransportContext`` per enabled ``transports.<name>`` section and asks the plugin for the
transport's supervised service (``ServedTransport.service``, the contract of a transport
plugin the host runs, here beside the context it is handed); the service reports its
connection through ``context.report`` (what ``robota server status`` shows and what the
host's readiness waits for) and asks for host-level actions through ``context.host``. A
service that also implements ``RestartNotes`` is told about a safe restart its conversations
asked for (``RestartNote``): the host knows no platform, so the transport shows the note; one
that implements ``PendingFinals`` says how many final answers of ended turns it has still to
deliver (a safe restart waits for them); one that implements ``ServesRoutes`` is asked to
follow a route of its kind before the host speaks to it on its own (``robota task send`` to a
chat's task), so that turn shows in its chat like a typed one. A
transport that can create group chats offers that to the host once connected
(``context.offer_groups(maker)``, a ``GroupMaker``): ``robota task newgroup | forkgroup`` go
through it. ``teams`` holds the team doors (``robota.core.teams.TeamDoor``) of the teams
configured on this transport, by chat id: the transport hands those chats' messages to them.

Why a context object and not constructor arguments: the host's offer grows (restart, group
creation), and a frozen dataclass with defaults lets a third-party plugin built against an
older robota keep working.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from .._errors import RobotaError
from ..config import TransportPlugin

if TYPE_CHECKING:
    from ..config import Config, Profile
    from ..kernel import Service
    from ..store import StoreClient
    from ..teams import TeamDoor
    from ._port import FrontEndPort

__all__ = [
    "GroupChat",
    "GroupMaker",
    "GroupRefused",
    "HostActions",
    "PendingFinals",
    "RestartNote",
    "RestartNotes",
    "RestartPhase",
    "ServedTransport",
    "ServesRoutes",
    "TransportContext",
    "TransportState",
    "TransportStatus",
]

TransportState = Literal["connecting", "connected", "failed"]


@dataclass(frozen=True, slots=True)
class TransportStatus:
    """One transport's connection as ``robota server status`` shows it.

    ``connected`` means a real connection: the platform's connection is up *and* an outbound
    call succeeded (the host is ready once every enabled transport says so). ``failed`` is
    final for this run (refused credentials): ``detail`` says why, never quoting a secret.
    ``connecting`` may carry a ``detail`` too: the last error and when the next attempt is."""

    state: TransportState
    detail: str | None = None


class HostActions(Protocol):
    """What a transport may ask of the host beyond its routes (a chat's ``/restart``). Call
    these on the trio thread, where the transports' services run."""

    def request_restart(self, route_key: str, *, force: bool) -> str:
        """Schedule the host's safe restart (``force``: skip the waits) and enroll ``route_key``
        (it hears the restart's notes); the schedule's id."""
        ...

    def cancel_restart(self, schedule_id: str) -> bool:
        """Cancel the pending restart if it is ``schedule_id``; whether one was cancelled."""
        ...

    def note_inbound(self, route_key: str) -> None:
        """A person's message reached ``route_key`` (slash commands too): a pending safe restart
        waits another quiet window. Cheap; call it for every inbound message."""
        ...

    async def open_group(
        self,
        maker: GroupMaker,
        route_key: str,
        *,
        fork: bool,
        title: str | None,
        task: str | None = None,
    ) -> str:
        """A chat's ``/newgroup`` (``fork``: ``/forkgroup``): the host's group steps through
        ``maker`` (a transport's, bound to the person who asked), with the task current on
        ``route_key`` as the source (its agent and settings; the fork's turn), or ``task`` when
        set (a ``/sessions`` entry's button); the new task's id. ``GroupRefused`` says why
        not."""
        ...


RestartPhase = Literal["scheduled", "cancelled", "restarting", "restarted"]


@dataclass(frozen=True, slots=True)
class RestartNote:
    """A safe restart's news for one conversation that asked for it (it is *enrolled*).

    ``scheduled``: the restart waits (for running turns, their finals, a quiet window); offer
    a cancel action naming ``schedule_id`` (``HostActions.cancel_restart``) where the platform
    has actions. ``cancelled``: it will not happen (remove the action). ``restarting``: the
    host is being replaced now (irreversible). ``restarted``: told by the new host once it is
    ready. ``reason`` is the one this conversation gave, if any."""

    route_key: str
    schedule_id: str
    phase: RestartPhase
    reason: str | None = None
    forced: bool = False


@runtime_checkable
class RestartNotes(Protocol):
    """Implemented by a transport's service that shows restart notes in its conversations."""

    def restart_note(self, note: RestartNote) -> None:
        """Show ``note`` in ``note.route_key``'s conversation. Called on the trio thread: it
        must not block (queue the platform call); an error is logged and dropped."""
        ...


@runtime_checkable
class PendingFinals(Protocol):
    """Implemented by a transport's service that delivers final answers after the engine's turn
    ended (a chat card's answer): a safe restart waits until none is pending."""

    def pending_finals(self) -> int:
        """How many ended turns' final answers are not delivered yet (trio thread, cheap)."""
        ...


@runtime_checkable
class ServesRoutes(Protocol):
    """Implemented by a transport's service that shows its routes' turns: the host may tell
    such a route a prompt no chat message brought (``robota task send``), and the route's
    answers go where they always go, to its chat, only if the service follows it."""

    def serve_route(self, route_key: str) -> bool:
        """Follow ``route_key`` (subscribed before anything more is told to it) when it is one
        of this transport's routes; whether it is (trio thread)."""
        ...


@dataclass(frozen=True, slots=True)
class GroupChat:
    """A group chat a ``GroupMaker`` made."""

    route_key: str
    """The route of the group's main timeline, of the transport's kind (``feishu:oc_1``)."""
    chat_id: str
    """The platform's id of the chat, as ``task newgroup --json`` shows it."""
    title: str


class GroupRefused(RobotaError):
    """The platform would not make the group; the message says why (never a secret)."""


class GroupMaker(Protocol):
    """What a transport that can create group chats offers the host (``offer_groups``).

    The host drives it, on its trio loop, in two steps around the engine's own messages:

    1. ``new_group(title)``: create the chat with the profile's owner in it (a CLI request
       has no chat user: the transport invites the owner its settings name) and return it,
       *without* subscribing to its route yet; raise ``GroupRefused`` to refuse;
    2. the host tells the group's route ``NewTask`` or ``ForkTask`` through the port and
       follows it until the task opened, then lets go of the route;
    3. ``group_opened(group, task_id)``: from now on the route is the transport's; subscribe
       to it and greet the group (the task's settings are in the store).
    """

    async def new_group(self, title: str) -> GroupChat: ...

    async def group_opened(self, group: GroupChat, task_id: str) -> None: ...


@dataclass(frozen=True, slots=True)
class TransportContext:
    """See the module docstring. Everything here is safe to use from the trio loop; ``port``
    and ``report`` from any thread."""

    name: str
    """The plugin's name, the kind of its route keys (``feishu:oc_1``)."""
    settings: object
    """What the plugin's ``validate`` made of its ``transports.<name>`` section."""
    port: FrontEndPort
    store: StoreClient
    db_path: Path
    config: Config
    profile: Profile
    report: Callable[[TransportStatus], None]
    started_at: float
    """The host's start (``time.time()``): messages older than it are stale candidates."""
    locale: str = "en"
    """The profile's locale (``zh*`` -> Chinese notes, else English)."""
    host: HostActions | None = None
    """The host's actions; ``None`` where nothing can restart (a test without a host)."""
    groups: Callable[[str, GroupMaker | None], None] | None = None
    """Where ``offer_groups`` goes (the host's group registry); ``None`` without a host."""
    teams: Mapping[str, TeamDoor] = field(default_factory=dict)
    """The team doors of this transport's team groups, by chat id."""
    restricted_task: Callable[[str], bool] | None = None
    """Whether a task's directory runs Restricted (the host's workspace trust decision; the
    engine already runs it with ``plan``): the turn's card says so. ``None``: never."""

    def restricted(self, task_id: str) -> bool:
        """Whether the turns of ``task_id`` run Restricted (a card shows "Restricted")."""
        return self.restricted_task is not None and self.restricted_task(task_id)

    def offer_groups(self, maker: GroupMaker | None) -> None:
        """Offer the host group creation through ``maker`` (trio loop), or withdraw the offer
        with ``None`` (the connection is lost). Without a host, nothing happens."""
        if self.groups is not None:
            self.groups(self.name, maker)


@runtime_checkable
class ServedTransport(TransportPlugin, Protocol):
    """A transport plugin the host can run: every chat transport robota ships is one; a
    plugin that only validates its section is reported ``failed`` by the host, not started.

    ``agent_env`` is asked before any agent starts: the non-secret variables (ids, never a
    credential) every agent the host drives should see, e.g. ``ROBOTA_LARK_APP_ID``.
    ``service`` is the transport's supervised child of the host's ``transports`` supervisor
    (restarted with backoff when it crashes; built anew from the same context each time)."""

    def agent_env(self, settings: object) -> dict[str, str]:
        """Variables for the agents' environment; names start with ``ROBOTA_``."""
        ...

    def service(self, context: TransportContext) -> Service:
        """The transport as a service of the host's tree (see ``TransportContext``)."""
        ...
