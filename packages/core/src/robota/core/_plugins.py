"""The typed meeting point of plugins: what runtime plugins offer, how every plugin is found.

Plugins (agent runtimes, chat transports, surface carriers) never import each other, and core
imports none of them. They are found through entry points (``robota.runtimes``,
``robota.transports``, ``robota.surfaces``) so a
third-party distribution can add one without touching robota. Their *names* are read from the
installed distributions' metadata without importing anything (``kinds``, ``transport_names``):
config validation checks ``agents.<name>.kind`` against them on every start, and a plugin is
imported only when it is used (a transport when config.yaml has its section, a runtime when
the CLI, the composition root, starts or probes its agents).

Each plugin contract lives beside the types it names, so that no layer of core names one above
it: the runtime contract (``RuntimePlugin``, its launch, probe report and host) here, over the
kernel's types only; the transport's section validation (``TransportPlugin``) in
``robota.core.config``, beside its ``Reader``; the transport the host runs (``ServedTransport``)
in ``robota.core.frontend``, beside its ``TransportContext``; the surface carrier
(``SurfacePlugin``) in ``robota.core.surfaces``, beside its ``SurfaceHub``. Discovery stays here
and deals in names and loaded objects (``named_plugin``); each contract's home checks what it
loaded. ``robota.core`` re-exports them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from ._capabilities import AgentCapabilities
from ._dists import entry_points
from ._errors import RobotaError
from ._records import Record
from ._records import field as record_field

if TYPE_CHECKING:
    # Type-only: the kernel's types would load pykka and trio, which print mode's prestart runs
    # without.
    from .kernel import Backoff, Mailbox, Service

__all__ = [
    "AgentHost",
    "AgentLaunch",
    "McpServer",
    "PluginError",
    "PrestartedAgent",
    "ProbeReport",
    "RuntimePlugin",
    "named_plugin",
    "runtime_kinds",
    "runtime_plugins",
    "transport_names",
]

RUNTIMES_GROUP = "robota.runtimes"
TRANSPORTS_GROUP = "robota.transports"
SURFACES_GROUP = "robota.surfaces"


@dataclass(frozen=True, slots=True)
class McpServer:
    """An MCP server offered to every agent's sessions (``mcpServers`` in config.yaml, in the
    shape MCP clients use): a command the agent starts and speaks to over stdio, or a URL
    (streamable HTTP, or SSE). Each runtime hands it over in its protocol's shape; a Restricted
    session gets none. ``env`` and ``headers`` may hold credentials: never in a repr."""

    name: str
    transport: Literal["stdio", "http", "sse"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True)
class AgentLaunch:
    """Everything needed to start one configured agent process."""

    name: str
    kind: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    """The agent's configured ``env``; the runtime applies it after scrubbing secrets."""
    home: Path = Path()
    config_path: Path = Path()
    cwd: Path | None = None
    secrets: frozenset[str] = field(default=frozenset(), repr=False)
    """Values to mask wherever the agent's own output is shown (its stderr's last lines): the
    configuration's secrets and the secret-named variables the agent inherits. Never passed to
    the agent."""
    mcp_servers: tuple[McpServer, ...] = ()
    """The MCP servers its sessions are offered (the profile's, then the agent's own)."""


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """The outcome of starting an agent, shaking hands (and opening a session) and stopping it.

    ``timings`` are seconds per step (``initialize``: spawn to handshake answer, ``session``,
    ``stop``); ``capabilities`` what the agent offers, in robota's words (``steer``, ``images``,
    ``resume``, ``fork``, ``modes``...)."""

    agent: str
    kind: str
    ok: bool
    detail: str
    version: str | None = None
    seconds: float = 0.0
    timings: Mapping[str, float] = field(default_factory=dict)
    capabilities: Mapping[str, object] = field(default_factory=dict)
    stderr_tail: tuple[str, ...] = ()
    """The last lines the agent wrote on stderr, cleaned and with secrets masked."""


class AgentHost(Record):
    """One configured agent, ready to be supervised.

    ``service`` is the agent's own supervision subtree: add it to a tree (its factory may hand
    back the same object on every restart, so ``address`` stays valid). ``address`` takes the
    requests of ``robota.core.agents``. Nothing starts until the first request: the agent
    process is spawned on first use."""

    name: str
    address: Mailbox
    service: Service
    pid: Callable[[], int | None] = record_field(default=lambda: None)
    """The pid of the agent's process while one runs, else ``None`` (``server status``)."""

    # Generated by tools/gen_records.py from the fields above: do not edit below.
    __slots__ = ("address", "name", "pid", "service")
    __match_args__ = ("name", "address", "service", "pid")

    def __init__(
        self,
        name: str,
        address: Mailbox,
        service: Service,
        pid: Callable[[], int | None] = lambda: None,
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "address", address)
        object.__setattr__(self, "service", service)
        object.__setattr__(self, "pid", pid)

    def __repr__(self) -> str:
        return (
            f"{type(self).__qualname__}(name={self.name!r}, address={self.address!r}, "
            f"service={self.service!r}, pid={self.pid!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AgentHost) or other.__class__ is not self.__class__:
            return NotImplemented
        return (self.name, self.address, self.service, self.pid) == (
            other.name,
            other.address,
            other.service,
            other.pid,
        )

    def __hash__(self) -> int:
        return hash((self.name, self.address, self.service, self.pid))

    del pid


class PrestartedAgent(Protocol):
    """An agent process a runtime plugin started before its host exists (``prestart``).

    Whoever called ``prestart`` owns it until a host adopts it, and calls ``close`` once the
    engine stopped, or never ran: a process no host adopted ends then. After an adoption
    ``close`` does nothing; the host's process service ends the process as it ends any."""

    @property
    def launch(self) -> AgentLaunch:
        """What the process was started from; a host adopts it only for the same launch."""
        ...

    @property
    def pid(self) -> int: ...

    def open_session(
        self,
        *,
        cwd: Path,
        permission_mode: str,
        model: str | None,
        developer_instructions: str | None,
    ) -> bool:
        """Write the opening of a new session with these settings now, before any host adopted
        the process, so the agent opens it while robota still loads; whether the protocol
        wrote any. The host's session takes it over only when it opens with the very same
        settings, and opens its own otherwise: a guess can only save time."""
        ...

    def close(self) -> None:
        """End the process unless a host adopted it; idempotent."""
        ...


@runtime_checkable
class RuntimePlugin(Protocol):
    """An agent protocol adapter, registered under the ``robota.runtimes`` entry point group
    with its ``kind`` (the value of ``agents.<name>.kind`` in config.yaml) as the name."""

    kind: str
    capabilities: AgentCapabilities
    """What the protocol offers at most; each session refines it (see ``AgentCapabilities``)."""

    async def probe(
        self, launch: AgentLaunch, *, timeout: float, session: bool = False
    ) -> ProbeReport:
        """Start the agent, complete the protocol handshake, read its version, optionally open
        and close a session, and stop it. ``timeout`` bounds the whole probe."""
        ...

    def prestart(self, launch: AgentLaunch) -> PrestartedAgent | None:
        """Spawn the agent's process now, the very process ``host`` would spawn on its first
        job, without a trio loop and with the standard library alone: a one-shot run's agent
        starts while the rest of robota loads. ``None`` when it cannot start (``host`` then
        spawns it and reports why)."""
        ...

    def host(
        self,
        launch: AgentLaunch,
        *,
        backoff: Backoff | None = None,
        handshake_timeout: float = 60.0,
        prestarted: PrestartedAgent | None = None,
    ) -> AgentHost:
        """The agent as a supervised actor with its process (see ``AgentHost``); its process
        service adopts ``prestarted`` (from this plugin's ``prestart``) on its first job
        instead of spawning one."""
        ...


class PluginError(RobotaError):
    """A registered plugin could not be loaded or is not what its group promises."""


def runtime_plugins() -> dict[str, RuntimePlugin]:
    """Every installed runtime plugin by kind. Loads (imports) them, so call it lazily."""
    plugins: dict[str, RuntimePlugin] = {}
    for entry in entry_points(RUNTIMES_GROUP):
        try:
            plugin = entry.load()
        except Exception as error:
            raise PluginError(
                f"runtime plugin {entry.name!r} ({entry.value}) failed to load: "
                f"{type(error).__name__}: {error}"
            ) from error
        if not isinstance(plugin, RuntimePlugin) or plugin.kind != entry.name:
            raise PluginError(
                f"runtime plugin {entry.name!r} ({entry.value}) is not a RuntimePlugin "
                f"of kind {entry.name!r}"
            )
        plugins[entry.name] = plugin
    return plugins


def runtime_kinds() -> tuple[str, ...]:
    """The kind of every installed runtime plugin, in the order they are found, without
    loading (importing) any of them."""
    return _names(RUNTIMES_GROUP)


def transport_names() -> tuple[str, ...]:
    """The name of every installed transport plugin, without loading any of them."""
    return _names(TRANSPORTS_GROUP)


def named_plugin(group: str, name: str, what: str) -> tuple[object, str]:
    """The plugin registered as ``name`` in the entry point ``group``, loaded (imported) now,
    and its entry point's value (``module:attribute``), for the caller to check it against its
    contract; ``KeyError`` when none of that name is installed, ``PluginError`` when it fails
    to load. ``what`` names the kind of plugin in that error (``transport``, ``surface``)."""
    for entry in entry_points(group):
        if entry.name != name:
            continue
        try:
            plugin = entry.load()
        except Exception as error:
            raise PluginError(
                f"{what} plugin {name!r} ({entry.value}) failed to load: "
                f"{type(error).__name__}: {error}"
            ) from error
        return plugin, entry.value
    raise KeyError(name)


def _names(group: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(entry.name for entry in entry_points(group)))
