"""A quiet chat's route retired: forgotten by the engine, its agent session released.

A chat transport lets a quiet chat go (``robota.core.frontend``'s ``retire_quiet``) and asks
the engine to forget the chat's route too (issue 28 s.3: a host after a burst of chats keeps
nothing of them in memory). The route directory forgets it once the route is passive with
nothing waiting (``RouteDirectory.retire``), and only when ``may_retire`` says so: nothing of
the route under way in the store (a turn running, a prompt queued, a message whose reactions
are not settled), nothing kept beside its input count (an approval waiting or answered, a
surface joined, the ``/sessions`` list a ``/switch N`` would mean), and no front end holding
it (the port's word: a listener, or the host's own count of the inputs it told).

What goes with it: the route's saved ``Kept`` and the agent session of its current task
(``CloseSession``: the agent process keeps running, and the session table, the runtime's
session and its tracker go). The chat's next message activates the route afresh from the
store, and its first turn opens the task's session with ``resume_id`` (the agent's load or
resume), exactly as the first turn after a host restart does: no conversation is lost. The
route's input count (``RouteIdle.inputs``) starts again from 0, which is why a route whose
inputs the host counted is held.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..agents import CloseSession
from ..store import route_binding, route_loose_ends
from ..store import task as load_task
from ._context import EngineContext
from ._route_state import Kept

__all__ = ["keeps_something", "may_retire", "retire_route"]

logger = logging.getLogger("robota.core.engine")


def keeps_something(kept: Kept | None) -> bool:
    """Whether ``kept`` holds more than the route's input count: what the store cannot give
    back to the route's next incarnation."""
    if kept is None:
        return False
    return bool(
        kept.surfaces
        or kept.attended
        or kept.approvals
        or kept.answered
        or kept.resolved
        or kept.last_listing
    )


def may_retire(kept: Kept | None, loose_ends: frozenset[str], *, held: bool) -> bool:
    """Whether a passive route with nothing waiting may be forgotten: nothing of it under way
    in the store (``route_loose_ends``), nothing kept but its count, no front end holding it."""
    return not held and not loose_ends and not keeps_something(kept)


def retire_route(
    ctx: EngineContext,
    key: str,
    *,
    load: Callable[[str], Kept | None],
    forget: Callable[[str], None],
    held: Callable[[], bool],
) -> bool:
    """The directory's ``forget`` for ``key`` (called with its lock held, the route passive
    with nothing waiting): decide, then drop the saved state (``forget``) and release the
    current task's agent session. Whether the route goes."""
    with ctx.readers.reading() as db:
        loose_ends = route_loose_ends(db, key)
        binding = route_binding(db, key)
        task = None
        if binding is not None and binding.current_task_id is not None:
            task = load_task(db, binding.current_task_id)
    if not may_retire(load(key), loose_ends, held=held()):
        return False
    forget(key)
    if task is not None:
        agent = ctx.agents.get(task.agent)
        if agent is not None:
            # Told under the directory's lock: a later activation's ``OpenSession`` reaches
            # the agent after it, and opens the session again with ``resume_id``.
            agent.address.tell(CloseSession(task.id))
    logger.info("route %s retired", key, extra={"route": key})
    return True
