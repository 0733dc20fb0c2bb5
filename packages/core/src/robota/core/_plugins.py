"""The typed meeting point of plugins: what runtime and transport plugins offer, how they are found.

Plugins (agent runtimes, chat transports, surface carriers) never import each other, and core
imports none of them. They are found through entry points (``robota.runtimes``,
``robota.transports``, ``robota.surfaces``) so a
third-party distribution can add one without touching robota. Their *names* are read from the
installed distributions' metadata without importing anything (``kinds``, ``transport_names``):
config validation checks ``agents.<name>.kind`` against them on every start, and a plugin is
imported only when it is used (a transport when config.yaml has its section, a runtime when
the CLI, the composition root, starts or probes its agents).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ._capabilities import AgentCapabilities
from ._dists import entry_points
from ._errors import RobotaError

if TYPE_CHECKING:
    # Type-only: the reader is how a transport plugin reports a bad section (see below); the
    # kernel's types would load pykka and trio, which print mode's prestart runs without.
    from .config import Reader
    from .frontend import TransportContext
    from .kernel import Backoff, Mailbox, Service
    from .surfaces import SurfaceHub

__all__ = [
    "AgentHost",
    "AgentLaunch",
    "PluginError",
    "PrestartedAgent",
    "ProbeReport",
    "RuntimePlugin",
    "ServedTransport",
    "SurfacePlugin",
    "TransportPlugin",
    "runtime_kinds",
    "runtime_plugins",
    "surface_plugin",
    "transport_names",
    "transport_plugin",
]

RUNTIMES_GROUP = "robota.runtimes"
TRANSPORTS_GROUP = "robota.transports"
SURFACES_GROUP = "robota.surfaces"


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


@dataclass(frozen=True, slots=True)
class AgentHost:
    """One configured agent, ready to be supervised.

    ``service`` is the agent's own supervision subtree: add it to a tree (its factory may hand
    back the same object on every restart, so ``address`` stays valid). ``address`` takes the
    requests of ``robota.core.agents``. Nothing starts until the first request: the agent
    process is spawned on first use."""

    name: str
    address: Mailbox
    service: Service
    pid: Callable[[], int | None] = field(default=lambda: None)
    """The pid of the agent's process while one runs, else ``None`` (``server status``)."""


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


@runtime_checkable
class TransportPlugin(Protocol):
    """A chat transport, registered under the ``robota.transports`` entry point group with
    its ``name`` (the key of its ``transports.<name>`` section in config.yaml) as the name.

    Its first duty is its own configuration: ``validate`` turns the section, as loaded from
    YAML, into the transport's settings object, and reports every mistake through ``reader``
    (``reader.error(key, found, expected)`` and the typed readers), so a bad section reads
    like any other config error: file, key, found, expected, credentials described and never
    quoted. Values read with ``reader.secret`` join the secrets no log line may carry.

    The environment variables named ``<NAME>_*`` (the name in upper case, ``-`` as ``_``)
    are the transport's credentials: ``--profile`` drops inherited ones so that only the
    profile's ``.env`` provides them.
    """

    name: str

    def validate(self, reader: Reader, section: object) -> object:
        """``transports.<name>`` -> this transport's settings, or a ``ConfigError``."""
        ...


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


def transport_names() -> tuple[str, ...]:
    """The name of every installed transport plugin, without loading any of them."""
    return _names(TRANSPORTS_GROUP)


def transport_plugin(name: str) -> TransportPlugin:
    """The installed transport plugin ``name``, loaded (imported) now; ``KeyError`` when none
    of that name is installed, ``PluginError`` when it is broken."""
    for entry in entry_points(TRANSPORTS_GROUP):
        if entry.name != name:
            continue
        try:
            plugin = entry.load()
        except Exception as error:
            raise PluginError(
                f"transport plugin {name!r} ({entry.value}) failed to load: "
                f"{type(error).__name__}: {error}"
            ) from error
        if not isinstance(plugin, TransportPlugin) or plugin.name != name:
            raise PluginError(
                f"transport plugin {name!r} ({entry.value}) is not a TransportPlugin named {name!r}"
            )
        return plugin
    raise KeyError(name)


@runtime_checkable
class SurfacePlugin(Protocol):
    """A carrier for surface clients (``robota --serve``'s WebSocket), registered under the
    ``robota.surfaces`` entry point group with its ``name``. It moves text only: every rule of
    the protocol is the ``SurfaceHub``'s (``robota.core.surfaces``)."""

    name: str

    async def serve(
        self,
        hub: SurfaceHub,
        *,
        port: int,
        token: str,
        task_status: object,
    ) -> None:
        """Listen on 127.0.0.1:``port`` (0: any free port) and serve clients that present
        ``token``, until cancelled; ``task_status.started(url)`` once it accepts connections,
        with the URL a client connects to (it carries the token: show it to no one else)."""
        ...


def surface_plugin(name: str) -> SurfacePlugin:
    """The installed surface plugin ``name``, loaded now; ``KeyError`` when none of that name
    is installed, ``PluginError`` when it is broken."""
    for entry in entry_points(SURFACES_GROUP):
        if entry.name != name:
            continue
        try:
            plugin = entry.load()
        except Exception as error:
            raise PluginError(
                f"surface plugin {name!r} ({entry.value}) failed to load: "
                f"{type(error).__name__}: {error}"
            ) from error
        if not isinstance(plugin, SurfacePlugin) or plugin.name != name:
            raise PluginError(
                f"surface plugin {name!r} ({entry.value}) is not a SurfacePlugin named {name!r}"
            )
        return plugin
    raise KeyError(name)


def _names(group: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(entry.name for entry in entry_points(group)))
