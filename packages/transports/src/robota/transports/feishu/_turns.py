"""The Feishu service's turns: a turn's card opened, posted, settled; after a restart.

One of ``FeishuService``'s layers, each a concept of the one service: ``_replies`` (the
state) < ``_turns`` < ``_notices`` < ``_clicks`` < ``_admission`` < ``_service``.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping, Sequence

from robota.core.frontend import (
    ChatRoute,
    Opening,
    Outcome,
    RecoveredTurn,
    recovery_notes,
)
from robota.core.store import (
    ActionBinding,
    BindCardActions,
    CardAction,
    InboxRow,
    TurnAttempt,
    message_reactions,
    open_reader,
)

from ._outbound import RESET, STOP, FeishuCards, ResetButton
from ._replies import Replies, _Turn

__all__ = ["Turns"]

_REACTIONS: Mapping[Outcome, str] = {
    "completed": "DONE",
    "failed": "ERROR",
    "interrupted": "CrossMark",
}

log = logging.getLogger("robota.transports.feishu")


class Turns(Replies):
    """A turn's card: opened, bound to its buttons, settled; the turns after a restart."""

    def open_turn(self, route: ChatRoute, opening: Opening) -> _Turn:
        assert self._sink is not None
        stop_token = secrets.token_urlsafe(18)
        agent = route.agent or self.context.config.defaults.agent
        layout = self.settings.thinking_card_layout
        stop_label = self.notes["stop"]
        forks = self._declared(agent).fork_at_turn
        reset_token = secrets.token_urlsafe(18) if forks else None
        reset = (
            ResetButton(reset_token, self.notes["reset"], self.notes["reset_warning"])
            if reset_token
            else None
        )
        if opening.anchor is not None:
            self._sink.anchors[opening.card_id] = opening.anchor
        address = self.open_card(
            route,
            opening,
            lambda: FeishuCards(
                agent=agent,
                layout=layout,
                stop_token=stop_token,
                stop_label=stop_label,
                reset=reset,
            ),
        )
        messages = list(opening.messages)
        return _Turn(
            opening.card_id, route.key, address, stop_token, messages, reset_token=reset_token
        )

    # -- after a restart (``ChatTurns.recover``) -------------------------------------------

    def recovering(self, unsettled: Sequence[tuple[TurnAttempt, str | None]]) -> None:
        anchors = [a.anchor_message_id for a, _ in unsettled]
        self._reactions.update(self._read_reactions(anchors))
        # The last run may have added a reaction it never recorded (killed in between).
        self._unsure.update(filter(None, anchors))

    def recovered(self, plan: Sequence[RecoveredTurn]) -> None:
        """Tell each chat what became of its unsettled turns (``_recovery_notes``)."""
        assert self._nursery is not None
        for item, text in recovery_notes(plan, self.context.locale):
            turn = self._turns.get(item.attempt.id)
            anchor = self._sink.anchors.get(turn.card_id) if turn and self._sink else None
            if anchor is not None:  # said beside the message it concerns
                self._nursery.start_soon(self._say, item.attempt.route_key, anchor, text)

    def _read_reactions(self, message_ids: list[str | None]) -> dict[tuple[str, str], str]:
        found: dict[tuple[str, str], str] = {}
        db = open_reader(self.context.db_path)
        try:
            for message_id in filter(None, message_ids):
                for emoji, reaction_id in message_reactions(db, message_id).items():
                    if reaction_id is not None:
                        found[(message_id, emoji)] = reaction_id
        finally:
            db.close()
        return found

    def card_posted(self, attempt_id: str, turn: _Turn, message_id: str) -> None:
        self._card_routes[message_id] = turn.route_key
        bindings = [ActionBinding(turn.stop_token, CardAction(turn.card_id, STOP, "cancel"))]
        if turn.reset_token is not None:
            # Its own turn id: a turn's tokens end with its answer, Reset is for after it.
            action = CardAction(f"{turn.card_id}:reset", RESET, attempt_id)
            bindings.append(ActionBinding(turn.reset_token, action))
        self._store.submit(
            BindCardActions(message_id, turn.route_key, tuple(bindings)), self.logged
        )

    async def settle_left(self, row: InboxRow, outcome: Outcome) -> None:
        self._unsure.add(row.message_id)
        await self._settle_reaction(row.message_id, _REACTIONS[outcome])

    def answer_done(self, turn: _Turn, outcome: Outcome) -> None:
        assert self._nursery is not None
        if self._sink is not None:
            self._sink.anchors.pop(turn.card_id, None)
        for message_id in turn.messages:
            self._nursery.start_soon(self._settle_reaction, message_id, _REACTIONS[outcome])
