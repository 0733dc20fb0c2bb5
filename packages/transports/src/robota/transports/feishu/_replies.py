"""The Feishu service's state and its replies: reactions, texts, the ``/sessions`` card.

One of ``FeishuService``'s layers, each a concept of the one service: ``_replies`` (the
state) < ``_turns`` < ``_notices`` < ``_clicks`` < ``_admission`` < ``_service``.
"""

from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from robota.core.engine import (
    RouteReply,
    SessionsListing,
)
from robota.core.frontend import (
    ChatRoute,
    ChatTurn,
    ChatTurns,
    RestartDesk,
    TransportContext,
)
from robota.core.store import (
    ActionBinding,
    BindCardActions,
    CardAction,
    ChatContext,
    ForgetReaction,
    RecordReaction,
)
from robota.core.teams import LoopReplies, TeamDoor

from ._agents import declared
from ._errors import ApiError
from ._groups import FeishuGroups
from ._inbound import Screen, team_chat
from ._outbound import FeishuSink, Messenger
from ._sessions_card import sessions_card, sessions_notes
from ._settings import FeishuSettings
from ._texts import _notes
from ._threads import ThreadForks

if TYPE_CHECKING:
    from robota.core import AgentCapabilities

__all__ = ["CARD_SUFFIX", "SESSIONS", "STORE_TIMEOUT", "Replies", "message_key"]

log = logging.getLogger("robota.transports.feishu")


STORE_TIMEOUT = 10.0
CARD_SUFFIX = ":feishu"
"""A card's turn id is the engine's attempt id and this (see ``_service``'s docstring)."""
_MUTE = "mention_only"
SESSIONS = "sessions"
"""The ``approval_id`` of a ``/sessions`` card's buttons; the ``decision`` is ``kind:value``
(``SessionsAction``). One drawing's buttons share a turn id, so one click retires them all."""


def message_key(message_id: str) -> str:
    """A message's claim key, and its inbox row's (``robota.core.store._inbox``)."""
    return f"feishu-message:{message_id}"


@dataclass(slots=True)
class _Turn(ChatTurn):
    """A running turn's card and the person's messages it answers."""

    reset_token: str | None = None
    """The completed card's Reset button (``None``: the agent cannot fork through a turn)."""


class Replies(ChatTurns[_Turn]):
    """The service's state and its replies: reactions, texts, the ``/sessions`` card."""

    _restarts: RestartDesk
    """Set by ``FeishuService`` (its ``send`` is the service's restart note)."""

    def __init__(self, context: TransportContext) -> None:
        super().__init__(
            context, name="feishu", route_prefix="feishu:", card_suffix=CARD_SUFFIX, log=log
        )
        settings = context.settings
        assert isinstance(settings, FeishuSettings), settings
        self.settings = settings
        self.notes = _notes(context.locale)
        self.screen = Screen(
            owner=settings.user_open_id,
            owner_only=settings.respond_to_owner_only,
            all_group_messages=settings.respond_to_all_group_messages,
        )
        self._card_routes: dict[str, str] = {}
        """Card message id -> route key, for clicks (a topic's route is not the chat's)."""
        self._reactions: dict[tuple[str, str], str] = {}
        self._unsure: set[str] = set()
        """Messages whose reactions the last run may have changed unrecorded (fed again,
        settled late): their settling reads the bot's reactions on the platform first."""
        self._muted: dict[str, bool] = {}
        self._known: list[ChatContext] = []
        self._messenger: Messenger | None = None
        self._sink: FeishuSink | None = None
        self._outbound_ok = False
        self._groups: FeishuGroups | None = None
        """The ``GroupMaker`` (``_groups``), inviting the owner; a chat's binds its sender."""
        self._teams: list[LoopReplies] = []
        """The team groups' doors this service is attached to (``_team``)."""
        self._repaints: set[str] = set()
        """``/sessions`` cards whose Previous / Next was clicked: the reply redraws them."""
        self._threads = ThreadForks(context.db_path, CARD_SUFFIX)
        self._capabilities: dict[str | None, AgentCapabilities] = {}

    def _declared(self, agent: str | None) -> AgentCapabilities:
        """``declared``, asked once per agent: the config and the installed runtimes stay
        what they were while this runs, and the lookup stats every ``sys.path`` entry on the
        way to each card."""
        found = self._capabilities.get(agent)
        if found is None:
            found = self._capabilities[agent] = declared(self.context.config, agent)
        return found

    def _route(self, route_key: str) -> ChatRoute:
        return self.route(route_key)

    def _team_door(self, route_key: str) -> TeamDoor | None:
        chat = team_chat(route_key)
        return None if chat is None else self.context.teams.get(chat)

    # -- outbound helpers ------------------------------------------------------------------

    async def _react(self, message_id: str, emoji: str) -> None:
        assert self._messenger is not None
        try:
            reaction_id = await self._messenger.react(message_id, emoji)
        except ApiError as error:
            log.warning("feishu: the %s reaction failed: %s", emoji, error)
            return
        if reaction_id is not None:
            self._reactions[(message_id, emoji)] = reaction_id
            self._store.submit(RecordReaction(message_id, emoji, reaction_id), self.logged)

    def _reacted(self, message_id: str, emoji: str) -> bool:
        """The bot's ``emoji`` on ``message_id`` is known (this run's, or recorded)."""
        return (message_id, emoji) in self._reactions

    async def _settle_reaction(self, message_id: str, emoji: str) -> None:
        """``OnIt`` on ``message_id`` replaced by ``emoji``, and its inbox row marked."""
        assert self._messenger is not None
        if message_id in self._unsure or (message_id, "OnIt") not in self._reactions:
            # Its OnIt is not this run's (a message queued before a restart), or unknown.
            await self._settle_unsure(message_id, emoji)
        else:
            await self._react(message_id, emoji)
            await self._unreact_onit(message_id, self._reactions.pop((message_id, "OnIt"), None))
        self.inbox.settled(message_key(message_id))

    async def _settle_unsure(self, message_id: str, emoji: str) -> None:
        """``_settle_reaction`` after a restart: the bot's reactions on the message read
        first, so ``emoji`` is not added twice and no ``OnIt`` is left (one the last run added
        unrecorded, or added again when the message was fed again)."""
        assert self._messenger is not None
        self._unsure.discard(message_id)
        try:
            own = await self._messenger.own_reactions(message_id)
        except ApiError as error:
            log.warning("feishu: the reactions could not be read: %s", error)
            own = [(rid, e) for (m, e), rid in self._reactions.items() if m == message_id]
        if emoji not in {e for _, e in own}:
            await self._react(message_id, emoji)
        self._reactions.pop((message_id, "OnIt"), None)
        for reaction_id, found in own:
            if found == "OnIt":
                await self._unreact_onit(message_id, reaction_id)

    async def _unreact_onit(self, message_id: str, reaction_id: str | None) -> None:
        assert self._messenger is not None
        if reaction_id is None:
            return
        try:
            await self._messenger.unreact(message_id, reaction_id)
        except ApiError as error:
            log.warning("feishu: the OnIt reaction could not be removed: %s", error)
            return
        self._store.submit(ForgetReaction(message_id, "OnIt"), self.logged)

    async def _say(self, route_key: str, anchor: str | None, text: str) -> None:
        assert self._messenger is not None
        try:
            await self._messenger.to_route(route_key, anchor, "text", {"text": text})
        except ApiError as error:
            log.warning("feishu: a reply could not be sent: %s", error)

    async def _reply_notice(self, route_key: str, anchor: str | None, reply: RouteReply) -> None:
        # /sessions: its page as a card; the text when the card could not go out.
        listing = reply.listing
        if listing is None or not await self._sessions_card(
            route_key, anchor, listing, replace=False
        ):
            await self._say(route_key, anchor, reply.text)
        if anchor is not None:
            await self._settle_reaction(anchor, "ERROR" if reply.level == "error" else "DONE")

    # -- the /sessions card (``_sessions_card``) ------------------------------------------

    async def _sessions_card(
        self, route_key: str, anchor: str | None, listing: SessionsListing, *, replace: bool
    ) -> bool:
        """The listing drawn as a card, a reply to ``anchor`` (``replace``: ``anchor`` is the
        card, redrawn); its buttons bound before anyone can click them. Whether it went out."""
        assert self._messenger is not None
        drawn = sessions_card(
            listing, sessions_notes(self.context.locale), lambda: secrets.token_urlsafe(18)
        )

        async def bind(message_id: str) -> None:
            drawing = f"{SESSIONS}:{message_id}:{secrets.token_hex(6)}"
            bindings = tuple(
                ActionBinding(a.token, CardAction(drawing, SESSIONS, f"{a.kind}:{a.value}"))
                for a in drawn.actions
            )
            self._card_routes[message_id] = route_key
            await self._store.write(
                BindCardActions(message_id, route_key, bindings), timeout=STORE_TIMEOUT
            )

        try:
            if replace and anchor is not None:
                await bind(anchor)
                await self._messenger.patch_card(anchor, drawn.card)
            else:
                message_id = await self._messenger.to_route(
                    route_key, anchor, "interactive", drawn.card
                )
                await bind(message_id)
        except ApiError as error:
            log.warning("feishu: the sessions card could not be sent: %s", error)
            return False
        return True
