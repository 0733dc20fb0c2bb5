"""The Feishu service's card actions: Stop, Reset, approvals, Cancel, ``/sessions``.

One of ``FeishuService``'s layers, each a concept of the one service: ``_replies`` (the
state) < ``_turns`` < ``_notices`` < ``_clicks`` < ``_admission`` < ``_service``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from robota.core.engine import (
    AnswerApproval,
    Interrupt,
    UserInput,
)
from robota.core.frontend import (
    QUEUE_CANCEL,
    RESTART_CANCEL,
    Pending,
    queue_texts,
)
from robota.core.store import (
    ClaimCardAction,
    Claimed,
    ClaimInboundEvent,
)

from ._groups import group_notes, open_group
from ._inbound import (
    CardClick,
    allowed,
    chat_route,
)
from ._notices import Notices
from ._outbound import RESET, STOP
from ._replies import SESSIONS, STORE_TIMEOUT
from ._sessions_card import sessions_notes
from ._texts import _toast

__all__ = ["Clicks"]

log = logging.getLogger("robota.transports.feishu")


class Clicks(Notices):
    """A card's button, answered in the long connection's ACK (a toast)."""

    async def _on_click(self, click: CardClick) -> Mapping[str, Any]:
        notes = self.notes
        door = self._team_door(self._card_routes.get(click.message_id, ""))
        if door is not None:  # a team thread's card: admins answer its approvals
            if not door.may_approve(click.operator_open_id):
                log.info("feishu card action refused: not an admin of team %s", door.team.name)
                return _toast("error", door.refusal("approval_admins_only"))
        else:
            refused = allowed(click.operator_open_id, self.screen)
            if refused is not None:
                log.info("feishu card action refused: %s", refused.reason)
                return _toast("error", notes["owner_only"])
        if click.token is None:
            return _toast("warning", notes["not_ours"])
        first = await self._store.write(
            ClaimInboundEvent(click.event_id, "card_action"), timeout=STORE_TIMEOUT
        )
        if not first:
            return _toast("info", notes["duplicate"])
        route_key = self._card_routes.get(click.message_id, chat_route(click.chat_id))
        outcome = await self._store.write(
            ClaimCardAction(click.token, click.message_id, route_key), timeout=STORE_TIMEOUT
        )
        if not isinstance(outcome, Claimed):
            log.info("feishu card action refused: %s", outcome.reason)
            return _toast("warning", outcome.message)
        action = outcome.action
        if action.approval_id == RESTART_CANCEL:
            host = self.context.host
            if host is None or not host.cancel_restart(action.decision):
                return _toast("warning", notes["not_cancelled"])
            return _toast("success", notes["restart_cancelled"])
        if action.approval_id == STOP:
            self.context.port.tell(route_key, Interrupt())
            return _toast("info", notes["stopping"])
        if action.approval_id == QUEUE_CANCEL:
            return self._queue_click(route_key, click, action.decision)
        if action.approval_id == SESSIONS:
            return self._sessions_click(route_key, click, action.decision)
        if action.approval_id == RESET:  # the engine's /turns reset; its reply to the card
            self._route(route_key).commands.append(Pending(click.message_id, ""))
            self.context.port.tell(route_key, UserInput(f"/turns reset {action.decision}"))
            return _toast("info", notes["resetting"])
        self.context.port.tell(route_key, AnswerApproval(action.approval_id, action.decision))  # type: ignore[arg-type]
        return _toast("success", notes["answered"])

    def _queue_click(self, route_key: str, click: CardClick, decision: str) -> Mapping[str, Any]:
        """A claimed Cancel (``ChatTurns.cancel_queued``): the note says cancelled and the
        message gets CrossMark; too late once the prompt's turn began."""
        assert self._nursery is not None
        texts = queue_texts(self.context.locale)
        if not decision.isdigit():
            log.warning("feishu: a queue action names no prompt: %r", decision)
            return _toast("warning", self.notes["not_ours"])
        cancelled = self.cancel_queued(self._route(route_key), int(decision), click.message_id)
        if cancelled is None:
            return _toast("warning", texts["too_late"])
        if cancelled.anchor is not None:
            self._nursery.start_soon(self._settle_reaction, cancelled.anchor, "CrossMark")
        self._nursery.start_soon(self.settle_note, cancelled)
        return _toast("success", texts["cancelling"])

    def _sessions_click(self, route_key: str, click: CardClick, decision: str) -> Mapping[str, Any]:
        """A ``/sessions`` card's button (claimed): the engine's command on the route, its
        reply to the card (a page: the card redrawn), or a group made of the entry."""
        assert self._nursery is not None
        notes = sessions_notes(self.context.locale)
        kind, _, value = decision.partition(":")
        route = self._route(route_key)
        if kind in ("page", "switch"):
            text = value if kind == "page" else f"/switch {value}"
            if kind == "page":
                self._repaints.add(click.message_id)
            route.commands.append(Pending(click.message_id, text))
            self.context.port.tell(route_key, UserInput(text))
            return _toast("info", notes["paging" if kind == "page" else "switching"])
        if kind in ("newgroup", "forkgroup"):
            self._nursery.start_soon(
                self._group_of_entry, route_key, click, value, kind == "forkgroup"
            )
            return _toast("info", notes["grouping"])
        log.warning("feishu: a sessions action of unknown kind %r refused", kind)
        return _toast("warning", self.notes["not_ours"])

    async def _group_of_entry(
        self, route_key: str, click: CardClick, task_id: str, fork: bool
    ) -> None:
        maker = self._groups.inviting(click.operator_open_id) if self._groups else None
        _, reply = await open_group(
            self.context.host,
            maker,
            route_key,
            fork=fork,
            title=None,
            notes=group_notes(self.context.locale),
            task=task_id,
        )
        await self._say(route_key, click.message_id, reply)
