"""Which route of the host a task is driven through, as pure functions.

A route key is ``KIND:REST``. The host serves the ``cli`` kind (tasks made by ``robota task
new``) and one kind per configured chat transport (its plugin name); ``print`` and ``tui``
routes belong to the terminal process that made them and are never adopted, neither by
``task send`` nor by recovery (that process may still run, and recovers its own turns).

A task is driven through the route it is current on, newest binding first, when the host
serves that route's kind or made it (a print run's ``print:`` route on the host, which holds its
task's agent session until another route of the host binds it): its answers then go where that
route's answers go (a chat). Which print routes a host made is read from the key itself
(``MadeHere``: the process's own prefix, ``print:<process>-<run>``), so a host that served a
million print runs remembers none of them, and a print route of another process (print mode's
own, a host that ran before) is never one of them. A task current on no such route gets the
host's own ``cli:<task id>`` route, which must first be bound to it (``UseTask``). So one route
of the host drives a task's agent session: a second route opening it would only be rebound to
it at the agent.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Container, Sequence
from dataclasses import dataclass

__all__ = [
    "CLI_KIND",
    "MadeHere",
    "TaskRoute",
    "cli_route",
    "route_for_task",
    "route_kind",
    "serves",
]

CLI_KIND = "cli"


def route_kind(route_key: str) -> str:
    """``feishu:oc_1:t_2`` -> ``feishu``; a key without a colon is its own kind."""
    return route_key.split(":", 1)[0]


def serves(kinds: Collection[str], route_key: str) -> bool:
    return route_kind(route_key) in kinds


def cli_route(name: str) -> str:
    return f"{CLI_KIND}:{name}"


@dataclass(frozen=True, slots=True)
class TaskRoute:
    route_key: str
    bind: bool
    """The route is not yet on the task: tell it ``UseTask`` first."""


@dataclass(frozen=True, slots=True)
class MadeHere:
    """The routes of ``kind`` one process makes, told by their key alone: ``KIND:PREFIX-RUN``,
    ``prefix`` being the process's own (random, so a process that ran before has another)."""

    kind: str
    prefix: str

    @classmethod
    def for_this_process(cls, kind: str) -> MadeHere:
        return cls(kind, uuid.uuid4().hex[:8])

    def new_route(self) -> str:
        """A route key of a run of this process's, unlike any other's."""
        return f"{self.kind}:{self.prefix}-{uuid.uuid4().hex[:12]}"

    def __contains__(self, route_key: object) -> bool:
        return isinstance(route_key, str) and route_key.startswith(f"{self.kind}:{self.prefix}-")


def route_for_task(
    task_id: str,
    current_on: Sequence[str],
    kinds: Collection[str],
    made: Container[str] = (),
) -> TaskRoute:
    """The route to drive ``task_id`` through; ``current_on`` lists the routes the task is
    current on, most recently bound first; ``made``: routes of other kinds this process made
    (its print runs': ``MadeHere``)."""
    for route_key in current_on:
        if serves(kinds, route_key) or route_key in made:
            return TaskRoute(route_key, bind=False)
    return TaskRoute(cli_route(task_id), bind=True)
