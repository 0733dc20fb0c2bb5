"""robota.core: the actor runtime and everything product-neutral.

Layering, bottom up (a module imports only from the layers below it):

1. ``_errors``        the exception tree, core-wide (every layer raises from it)
2. ``kernel``        the actor kernel: lazy facades, addresses, actors, the trio bridge,
   supervision, timers, routes, a trio run as a process's main (``robota.core.kernel``)
3. ``_capabilities``, ``_plugins``   what agents can do; what runtime and transport plugins
   offer, found by entry point
   ``_commands``      the engine's slash commands and their resolver (pure, no imports), low
   enough for ``config`` and ``policy`` to check team intents against
4. ``store``, ``config``, ``logs``     the SQLite store, configuration and paths, structured logs
   ``events``, ``agents``   the runtime-neutral turn events, and the messages routes and agents
   exchange
   ``presentation``   the turn view, its renderers (terminal, Feishu, Slack) and the card update
   throttle; pure (no I/O, no clock), importing only ``events``
   ``policy``         team groups' decisions: permissions, intents, the switch and
   acknowledgement detectors, confirmations, the dispatch scheduler, localised replies; pure,
   importing only ``config`` and ``_commands`` (nothing above ``store``/``config``)
   ``teams``          the team actor: one team's scheduler and confirmations, persisted before
   their effects are delivered (above ``policy`` and ``store``)
5. ``testing``        public helpers for tests of code built on the kernel
6. ``frontend``       the one port front ends reach the engine's routes through (above
   ``engine``, which it knows only as a ``RouteHub``: connect, disconnect, tell)

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
    from ._plugins import (
        AgentHost,
        AgentLaunch,
        PluginError,
        PrestartedAgent,
        ProbeReport,
        RuntimePlugin,
        runtime_kinds,
        runtime_plugins,
        transport_names,
    )
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
        LoopMailbox,
        LoopPort,
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
    "LoopMailbox": ".kernel",
    "LoopPort": ".kernel",
    "Outbox": ".kernel",
    "OutboxClosed": ".kernel",
    "Overflow": ".kernel",
    "Reply": ".kernel",
    "request": ".kernel",
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
    "Terminated": ".kernel",
    "run_main": ".kernel",
    "AgentHost": "._plugins",
    "AgentLaunch": "._plugins",
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
