"""A click on one of a chat service's buttons: who may click, the click claimed once, and what
it does (docs/architecture/chat-transports.md §10).

``ChatService.clicked`` hands every click to its ``Clicks``, and the adapter gets back what
became of it (``Clicked``), which Slack logs and Feishu answers as a toast:

* the clicker is checked like a sender (the platform's owner filter), or, on a card in a team's
  thread, as one of the team's admins;
* a button that is not one of robota's (no token) is not ours; the click's event, when the
  platform names one, is claimed once (a redelivered click does nothing), then its token
  (``ClaimCardAction``: a token is spent by its first click, and the store says why a spent,
  expired or unknown one is refused);
* the claimed action is done by its kind (``action_kind``, pure): the platform's own (Feishu's
  Reset, ``/sessions``) is handed back to it claimed; a restart's cancel goes to the host;
  Stop interrupts the route; a queued prompt's Cancel leaves the queue (the note says
  cancelled and the message's reaction settles, or the note says the turn began); anything
  else answers the route's approval.

A card no route holds any more (a restart, a card that outlived its turn) is claimed on its
chat's route (``chat_route``). What the click acts through is named by two protocols, so
this module imports no shell: the routes and the queue (``ClickRoutes``: the service's
``ChatTurns``) and the service's nursery, card ids, reactions and notes (``ClickSite``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from ..engine import AnswerApproval, Interrupt
from ..store import CardAction, ClaimCardAction, Claimed, ClaimInboundEvent
from ._queue import QUEUE_CANCEL
from ._restarts import RESTART_CANCEL

if TYPE_CHECKING:
    import trio

    from ..teams import TeamDoor
    from ._chat_values import ChatRoute, Outcome
    from ._inbound import Ignore
    from ._queue import QueueNote
    from ._transport import TransportContext

__all__ = [
    "STOP",
    "ActionKind",
    "ClickPlatform",
    "ClickRoutes",
    "ClickSite",
    "ClickVerdict",
    "Clicked",
    "Clicks",
    "action_kind",
]

STORE_TIMEOUT = 10.0
STOP = "stop"
"""The ``approval_id`` of a turn card's Stop button."""

ClickVerdict = Literal[
    "not_admin",
    "not_owner",
    "not_ours",
    "duplicate",
    "refused",
    "restart_cancelled",
    "not_cancelled",
    "stopping",
    "queue_cancelled",
    "too_late",
    "answered",
    "claimed",
]

ActionKind = Literal["own", "restart_cancel", "stop", "queue_cancel", "approval"]


@dataclass(frozen=True, slots=True)
class Clicked:
    """What became of a click (``ChatService.clicked``): ``detail`` says why a refused one
    was; ``claimed``: an action of the platform's own, for it to act on (``action``, on
    ``route_key``)."""

    verdict: ClickVerdict
    detail: str | None = None
    route_key: str = ""
    action: CardAction | None = None


def action_kind(approval_id: str, own_actions: frozenset[str]) -> ActionKind:
    """What a claimed action does, by its ``approval_id``: the platform's own actions first
    (it may name its buttons as it likes), then robota's fixed ones; any other id is an
    approval's."""
    if approval_id in own_actions:
        return "own"
    fixed: dict[str, ActionKind] = {
        RESTART_CANCEL: "restart_cancel",
        STOP: "stop",
        QUEUE_CANCEL: "queue_cancel",
    }
    return fixed.get(approval_id, "approval")


class ClickPlatform(Protocol):
    """What of the platform's adapter a click needs (``Platform`` has it all)."""

    own_actions: frozenset[str]

    def allowed(self, user: str) -> Ignore | None: ...

    def team_of(self, route_key: str) -> TeamDoor | None: ...

    def chat_route(self, chat: str) -> str: ...


class ClickRoutes(Protocol):
    """What of the chat service's routes a click acts through (``ChatTurns`` is one)."""

    def route_of(self, route_key: str) -> ChatRoute | None: ...

    def cancel_queued(self, route: ChatRoute, prompt_id: int, note_id: str) -> QueueNote | None: ...


class ClickSite(Protocol):
    """What of the chat service a click acts through (``ChatService`` is one)."""

    card_routes: dict[str, str]
    """A posted card or note's message id -> its route key."""

    @property
    def nursery(self) -> trio.Nursery: ...

    async def settle(self, chat: str, message_id: str, outcome: Outcome) -> None: ...

    async def settle_note(self, note: QueueNote) -> None: ...


class Clicks:
    """See the module docstring: one per chat service."""

    def __init__(
        self,
        site: ClickSite,
        routes: ClickRoutes,
        platform: ClickPlatform,
        context: TransportContext,
        *,
        name: str,
        log: logging.Logger,
    ) -> None:
        self._site = site
        self._routes = routes
        self._platform = platform
        self._context = context
        self._store = context.store
        self._name = name
        self._log = log

    async def clicked(
        self, card: str, user: str, token: str | None, chat: str, *, event_key: str | None = None
    ) -> Clicked:
        """A button on ``card`` (a message id) clicked by ``user`` in ``chat``."""
        route_key = self._site.card_routes.get(card)
        door = self._platform.team_of(route_key or "")
        if door is not None:
            if not door.may_approve(user):
                return self._refused("not_admin", door.refusal("approval_admins_only"))
        else:
            refused = self._platform.allowed(user)
            if refused is not None:
                return self._refused("not_owner", refused.reason)
        if token is None:
            return self._refused("not_ours", "not one of robota's buttons")
        if event_key is not None:
            first = await self._store.write(
                ClaimInboundEvent(event_key, "card_action"), timeout=STORE_TIMEOUT
            )
            if not first:
                return self._refused("duplicate", "its event was handled")
        route_key = route_key or self._platform.chat_route(chat)
        outcome = await self._store.write(
            ClaimCardAction(token, card, route_key), timeout=STORE_TIMEOUT
        )
        if not isinstance(outcome, Claimed):
            return self._refused("refused", outcome.message, log=outcome.reason)
        return self._act(outcome.action, route_key, card)

    def _act(self, action: CardAction, route_key: str, card: str) -> Clicked:
        kind = action_kind(action.approval_id, self._platform.own_actions)
        if kind == "own":
            return Clicked("claimed", route_key=route_key, action=action)
        if kind == "restart_cancel":
            host = self._context.host
            if host is None or not host.cancel_restart(action.decision):
                return self._refused("not_cancelled", f"the restart {action.decision}")
            return Clicked("restart_cancelled")
        if kind == "stop":
            self._context.port.tell(route_key, Interrupt())
            return Clicked("stopping")
        if kind == "queue_cancel":
            return self._queue_cancel(route_key, card, action.decision)
        answer = AnswerApproval(action.approval_id, action.decision)  # type: ignore[arg-type]
        self._context.port.tell(route_key, answer)
        return Clicked("answered")

    def _refused(self, verdict: ClickVerdict, detail: str, *, log: str | None = None) -> Clicked:
        self._log.info("%s click %s: %s", self._name, verdict, log or detail)
        return Clicked(verdict, detail)

    def _queue_cancel(self, route_key: str, card: str, decision: str) -> Clicked:
        """A claimed Cancel (``ChatTurns.cancel_queued``): the note says cancelled and the
        message's reaction settles; nothing once the prompt's turn began (the note says so)."""
        site = self._site
        route = self._routes.route_of(route_key)
        if not decision.isdigit() or route is None:
            return self._refused("not_ours", f"a queue action names no prompt: {decision!r}")
        cancelled = self._routes.cancel_queued(route, int(decision), card)
        if cancelled is None:
            return Clicked("too_late")
        if cancelled.anchor is not None:
            site.nursery.start_soon(site.settle, route.channel, cancelled.anchor, "interrupted")
        site.nursery.start_soon(site.settle_note, cancelled)
        return Clicked("queue_cancelled")
