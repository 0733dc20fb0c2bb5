"""robota.core: the actor runtime and everything product-neutral.

Its layers, bottom up. A module imports from its own layer and the layers below it, never from
one above (nor this facade, which is above them all), and no modules import each other in a
circle, directly or through others; imports under ``TYPE_CHECKING`` and inside functions count.
``tests/packaging/test_layers.py`` reads this list and holds the code to it, and
``docs/architecture/layers.md`` §1 lists the same. A unit is the name right after ``robota.core``:

1. ``_errors``, ``_records``: the one exception tree; ``Record``, frozen slotted value classes
   whose methods tools/gen_records.py writes into their source (no class creation work at
   import). Core-wide (every layer raises and declares values with them), so they stay here
   below the kernel rather than in it.
2. ``kernel``: the actor kernel (``robota.core.kernel``): lazy facades, addresses and stashes,
   actors and their crash semantics, the trio bridge, supervision, timers, the route directory
   with passivation, a trio run as a process's main. It imports nothing of robota but
   ``_errors`` and ``_records``.
3. ``_capabilities``, ``_dists``, ``_commands``, ``_plugins``: what agents can do; the
   installed distributions and their entry points, read without importing; the engine's slash
   commands and their resolver (pure, low enough for ``config`` and ``policy`` to check team
   intents against); the runtime plugin contract and every plugin's discovery by name (each
   other plugin contract lives beside the types it names, in ``config``, ``frontend`` and
   ``surfaces``).
4. ``store``, ``config``, ``logs``, ``events``, ``agents``, ``trust``: the SQLite store,
   configuration and paths (and ``TransportPlugin``, a transport's section validation),
   structured logs, the runtime-neutral turn events, the messages routes and agents exchange,
   workspace trust (standard library only).
5. ``engine``, ``presentation``, ``cards``, ``policy``, ``protocol``, ``control``:
   conversations as actors; the turn view, its renderers and the card update throttle (pure,
   importing only ``events``); one card actor per turn and its delivery; team groups'
   decisions (pure, importing only ``config`` and ``_commands``); the one wire protocol,
   sans-IO (here beside the engine because its notice encoding names the engine's notices;
   its envelope, framing and ``seq`` modules are stdlib only and its facade lazy, so a control
   client loads them alone); the host's control socket and its lock, which speak it.
6. ``teams``: the team actor and its door, what a chat transport hands a team's messages to
   (it tells routes through a port it names itself, ``RouteTeller``).
7. ``frontend``: the one port front ends reach the engine's routes through (the engine is a
   ``RouteHub`` to it), what the host hands a chat transport (``TransportContext``,
   ``ServedTransport``) and the chat transports' shared shell.
8. ``surfaces``: what a surface client and its host say, the hub, the carrier plugin's
   contract (``SurfacePlugin``).
9. ``testing``: public helpers for tests of code built on the kernel.

Heavy third-party modules (trio, pykka, ruamel) are imported by the modules that need
them. The facade is lazy (PEP 562): importing ``robota.core`` loads nothing but this file, and
each name loads its module on first use, so print mode reads its configuration and spawns its
agent before trio and pykka load (``robota.cli._prestart``). ``__all__`` and the imports for
type checkers below are the surface; ``_HOMES`` says where each name lives.
"""

import typing

from .kernel import lazy_attributes

if typing.TYPE_CHECKING:
    from ._capabilities import AgentCapabilities
    from ._dists import EntryPoint, entry_points, robota_version
    from ._errors import (
        AgentError,
        ConfigError,
        CrashRequested,
        KernelError,
        RequestTimeout,
        RobotaError,
        StoreError,
        SupervisorFailed,
    )
    from ._plugins import (
        AgentHost,
        AgentLaunch,
        McpServer,
        PluginError,
        PrestartedAgent,
        ProbeReport,
        RuntimePlugin,
        runtime_kinds,
        runtime_plugins,
        transport_names,
    )
    from ._records import FACTORY, Record, field, fields_of, is_value, replace
    from .config import TransportPlugin, transport_plugin
    from .frontend import ServedTransport
    from .kernel import (
        Actor,
        Address,
        Backoff,
        ChildSpec,
        Coalescer,
        Crashed,
        DeadLetters,
        ExitReason,
        LoopActor,
        LoopChild,
        LoopMailbox,
        LoopPort,
        LoopRouteActor,
        Mailbox,
        MemoryRouteStates,
        Outbox,
        OutboxClosed,
        Overflow,
        Reply,
        Restart,
        RouteActor,
        RouteDirectory,
        RouteStates,
        Service,
        Stopped,
        Strategy,
        Supervisor,
        Terminated,
        TimerHandle,
        TimerLimitExceeded,
        Timers,
        passivation_due,
        request,
        run_main,
    )
    from .surfaces import SurfacePlugin, surface_plugin

__all__ = [
    # actors and addresses
    "Actor",
    "Address",
    "Crashed",
    "DeadLetters",
    "ExitReason",
    "Mailbox",
    "Stopped",
    # supervision
    "Backoff",
    "ChildSpec",
    "Restart",
    "Service",
    "Strategy",
    "Supervisor",
    # actors on the loop
    "LoopActor",
    "LoopChild",
    "LoopRouteActor",
    # the trio bridge
    "Coalescer",
    "LoopMailbox",
    "LoopPort",
    "Outbox",
    "OutboxClosed",
    "Overflow",
    "Reply",
    "request",
    # timers
    "TimerHandle",
    "TimerLimitExceeded",
    "Timers",
    # routes
    "MemoryRouteStates",
    "RouteActor",
    "RouteDirectory",
    "RouteStates",
    "passivation_due",
    # plugins
    "AgentCapabilities",
    "AgentHost",
    "AgentLaunch",
    "McpServer",
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
    "robota_version",
    "entry_points",
    "EntryPoint",
    "lazy_attributes",
    # records: value classes whose methods tools/gen_records.py writes
    "FACTORY",
    "Record",
    "field",
    "fields_of",
    "is_value",
    "replace",
    # running as a process's main
    "Terminated",
    "run_main",
    # errors
    "ConfigError",
    "CrashRequested",
    "KernelError",
    "RequestTimeout",
    "RobotaError",
    "StoreError",
    "SupervisorFailed",
    "AgentError",
]

_HOMES = {
    "Actor": ".kernel",
    "Crashed": ".kernel",
    "ExitReason": ".kernel",
    "Stopped": ".kernel",
    "Address": ".kernel",
    "DeadLetters": ".kernel",
    "Mailbox": ".kernel",
    "Coalescer": ".kernel",
    "LoopActor": ".kernel",
    "LoopChild": ".kernel",
    "LoopRouteActor": ".kernel",
    "LoopMailbox": ".kernel",
    "LoopPort": ".kernel",
    "Outbox": ".kernel",
    "OutboxClosed": ".kernel",
    "Overflow": ".kernel",
    "Reply": ".kernel",
    "request": ".kernel",
    "AgentCapabilities": "._capabilities",
    "robota_version": "._dists",
    "entry_points": "._dists",
    "EntryPoint": "._dists",
    "AgentError": "._errors",
    "ConfigError": "._errors",
    "CrashRequested": "._errors",
    "KernelError": "._errors",
    "RequestTimeout": "._errors",
    "RobotaError": "._errors",
    "StoreError": "._errors",
    "SupervisorFailed": "._errors",
    "Terminated": ".kernel",
    "run_main": ".kernel",
    "FACTORY": "._records",
    "field": "._records",
    "Record": "._records",
    "replace": "._records",
    "fields_of": "._records",
    "is_value": "._records",
    "AgentHost": "._plugins",
    "AgentLaunch": "._plugins",
    "McpServer": "._plugins",
    "PluginError": "._plugins",
    "PrestartedAgent": "._plugins",
    "ProbeReport": "._plugins",
    "RuntimePlugin": "._plugins",
    "ServedTransport": ".frontend",
    "SurfacePlugin": ".surfaces",
    "surface_plugin": ".surfaces",
    "TransportPlugin": ".config",
    "runtime_kinds": "._plugins",
    "runtime_plugins": "._plugins",
    "transport_names": "._plugins",
    "transport_plugin": ".config",
    "MemoryRouteStates": ".kernel",
    "RouteActor": ".kernel",
    "RouteDirectory": ".kernel",
    "passivation_due": ".kernel",
    "RouteStates": ".kernel",
    "Backoff": ".kernel",
    "ChildSpec": ".kernel",
    "Restart": ".kernel",
    "Service": ".kernel",
    "Strategy": ".kernel",
    "Supervisor": ".kernel",
    "TimerHandle": ".kernel",
    "TimerLimitExceeded": ".kernel",
    "Timers": ".kernel",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""


__getattr__, __dir__ = lazy_attributes(__name__, _HOMES)
