"""robota.core.kernel: the actor kernel, the bottom of robota.core.

Actors on pykka threads, the trio loop that owns all I/O, and the one module where the two meet
(``docs/architecture/threads.md`` §2). It imports nothing of robota but itself, the exception tree,
``robota.core._errors``, and the value classes, ``robota.core._records``, which stay one level
below it because every layer of core raises from that one tree (``KernelError`` and its
subclasses included) and declares values with them; ``tests/packaging/test_layers.py``
holds it to that.

Layering, bottom up (a module imports only from the ones before it):

1. ``_lazy``         the lazy facades' ``__getattr__`` (PEP 562), standard library only
   ``_memory``       giving freed heap back to the system (``malloc_trim``), standard library only
   ``_main``         a trio run as a process's main (termination signals end it cleanly)
2. ``_address``      stable addresses, stashes and dead letters
3. ``_actor``        the actor base class and its crash semantics
4. ``_bridge``       every crossing between actor threads and the trio loop
5. ``_supervisor``   supervision trees as trio tasks
   ``_timers``       delays as messages, on the loop
6. ``_routes``       the route directory with passivation
   ``_loop_actor``   actors on the trio loop, each restarted without a task of its own
   ``_main``         a trio run as a process's main (termination signals end it cleanly)

The facade is lazy (PEP 562) like ``robota.core``'s: importing it loads this file and ``_lazy``
only, and each name loads its module on first use, so whoever needs an ``Address`` or
``lazy_attributes`` does not load trio. Every name here is also ``robota.core``'s, except
``RequestCrash`` (``robota.core.testing``'s crash message) and ``release_free_memory`` (the
engine's hook after a wave of passivations), which core's own layers use.
"""

import typing

from ._lazy import lazy_attributes

if typing.TYPE_CHECKING:
    from ._actor import Actor, Crashed, ExitReason, RequestCrash, Stopped
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
    from ._loop_actor import LoopActor, LoopChild
    from ._main import Terminated, run_main
    from ._memory import release_free_memory
    from ._routes import (
        LoopRouteActor,
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
    "RequestCrash",
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
    "release_free_memory",
    # running as a process's main
    "Terminated",
    "run_main",
    # lazy facades
    "lazy_attributes",
]

_HOMES = {
    "Actor": "._actor",
    "Crashed": "._actor",
    "ExitReason": "._actor",
    "RequestCrash": "._actor",
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
    "LoopActor": "._loop_actor",
    "LoopChild": "._loop_actor",
    "LoopRouteActor": "._routes",
    "Terminated": "._main",
    "run_main": "._main",
    "release_free_memory": "._memory",
    "MemoryRouteStates": "._routes",
    "RouteActor": "._routes",
    "RouteDirectory": "._routes",
    "RouteStates": "._routes",
    "passivation_due": "._routes",
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
