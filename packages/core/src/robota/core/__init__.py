"""robota.core: the actor runtime and everything product-neutral.

Layering, bottom up (a module imports only from the layers below it):

1. ``_errors``        the exception tree
   ``_lazy``          the lazy facades' ``__getattr__`` (PEP 562), standard library only
   ``_records``       ``Record``: frozen slotted value classes whose methods
   tools/gen_records.py writes into their source (no class creation work at import)
2. ``_address``       stable addresses, stashes and dead letters
3. ``_actor``         the actor base class and its crash semantics
4. ``_bridge``        every crossing between actor threads and the trio loop
5. ``_supervisor``    supervision trees as trio tasks
6. ``_routes``        the route directory with passivation
   ``_capabilities``, ``_plugins``, ``_main``   what agents can do; what runtime and
   transport plugins offer, found by entry point; a trio run as a process's main
   ``_commands``      the engine's slash commands and their resolver (pure, no imports), low
   enough for ``config`` and ``policy`` to check team intents against
7. ``store``, ``config``, ``logs``     the SQLite store, configuration and paths, structured logs
   ``events``, ``agents``   the runtime-neutral turn events, and the messages routes and agents
   exchange
   ``presentation``   the turn view, its renderers (terminal, Feishu, Slack) and the card update
   throttle; pure (no I/O, no clock), importing only ``events``
   ``policy``         team groups' decisions: permissions, intents, the switch and
   acknowledgement detectors, confirmations, the dispatch scheduler, localised replies; pure,
   importing only ``config`` and ``_commands`` (nothing above ``store``/``config``)
   ``teams``          the team actor: one team's scheduler and confirmations, persisted before
   their effects are delivered (above ``policy`` and ``store``)
8. ``testing``        public helpers for tests of code built on the kernel
9. ``frontend``       the one port front ends reach the engine's routes through (above
   ``engine``, which it knows only as a ``RouteHub``: connect, disconnect, tell)

Heavy third-party modules (trio, pykka, ruamel) are imported by the modules that need
them. The facade is lazy (PEP 562): importing ``robota.core`` loads nothing but this file, and
each name loads its module on first use, so print mode reads its configuration and spawns its
agent before trio and pykka load (``robota.cli._prestart``). ``__all__`` and the imports for
type checkers below are the surface; ``_HOMES`` says where each name lives.
"""

import typing

from ._lazy import lazy_attributes

if typing.TYPE_CHECKING:
    from ._actor import Actor, Crashed, ExitReason, Stopped
    from ._address import Address, DeadLetters, Mailbox
    from ._bridge import (
        Coalescer,
        LoopMailbox,
        LoopPort,
        Outbox,
        OutboxClosed,
        Overflow,
        Reply,
        request,
    )
    from ._capabilities import AgentCapabilities
    from ._dists import robota_version
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
    from ._main import Terminated, run_main
    from ._plugins import (
        AgentHost,
        AgentLaunch,
        PluginError,
        PrestartedAgent,
        ProbeReport,
        RuntimePlugin,
        ServedTransport,
        SurfacePlugin,
        TransportPlugin,
        runtime_kinds,
        runtime_plugins,
        surface_plugin,
        transport_names,
        transport_plugin,
    )
    from ._records import FACTORY, Record, field, fields_of, is_value, replace
    from ._routes import (
        MemoryRouteStates,
        RouteActor,
        RouteDirectory,
        RouteStates,
        passivation_due,
    )
    from ._supervisor import Backoff, ChildSpec, Restart, Service, Strategy, Supervisor
    from ._timers import TimerHandle, TimerLimitExceeded, Timers

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
    "Actor": "._actor",
    "Crashed": "._actor",
    "ExitReason": "._actor",
    "Stopped": "._actor",
    "Address": "._address",
    "DeadLetters": "._address",
    "Mailbox": "._address",
    "Coalescer": "._bridge",
    "LoopMailbox": "._bridge",
    "LoopPort": "._bridge",
    "Outbox": "._bridge",
    "OutboxClosed": "._bridge",
    "Overflow": "._bridge",
    "Reply": "._bridge",
    "request": "._bridge",
    "AgentCapabilities": "._capabilities",
    "robota_version": "._dists",
    "AgentError": "._errors",
    "ConfigError": "._errors",
    "CrashRequested": "._errors",
    "KernelError": "._errors",
    "RequestTimeout": "._errors",
    "RobotaError": "._errors",
    "StoreError": "._errors",
    "SupervisorFailed": "._errors",
    "FACTORY": "._records",
    "field": "._records",
    "Record": "._records",
    "replace": "._records",
    "fields_of": "._records",
    "is_value": "._records",
    "Terminated": "._main",
    "run_main": "._main",
    "AgentHost": "._plugins",
    "AgentLaunch": "._plugins",
    "PluginError": "._plugins",
    "PrestartedAgent": "._plugins",
    "ProbeReport": "._plugins",
    "RuntimePlugin": "._plugins",
    "ServedTransport": "._plugins",
    "SurfacePlugin": "._plugins",
    "surface_plugin": "._plugins",
    "TransportPlugin": "._plugins",
    "runtime_kinds": "._plugins",
    "runtime_plugins": "._plugins",
    "transport_names": "._plugins",
    "transport_plugin": "._plugins",
    "MemoryRouteStates": "._routes",
    "RouteActor": "._routes",
    "RouteDirectory": "._routes",
    "passivation_due": "._routes",
    "RouteStates": "._routes",
    "Backoff": "._supervisor",
    "ChildSpec": "._supervisor",
    "Restart": "._supervisor",
    "Service": "._supervisor",
    "Strategy": "._supervisor",
    "Supervisor": "._supervisor",
    "TimerHandle": "._timers",
    "TimerLimitExceeded": "._timers",
    "Timers": "._timers",
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""


__getattr__, __dir__ = lazy_attributes(__name__, _HOMES)
