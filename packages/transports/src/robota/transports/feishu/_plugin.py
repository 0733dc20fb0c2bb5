"""The Feishu transport plugin: what the ``robota.transports`` entry point names.

The top of the package: the section and its validation (``_settings``) are below it, and the
host's service (``_adapter``: httpcore, trio-websocket, the card renderer) is imported only when
the host asks for it, never with the config. The service is handed what it needs of the plugin
(``bot_read``: where the bot's open_id it reads at start goes), so nothing below imports this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from robota.core.config import TeamDefaults

from ._settings import (
    CONFIG_KEYS,
    THINKING_CARD_LAYOUTS,
    FeishuSettings,
    ThinkingCardLayout,
    validated,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core import Service
    from robota.core.cards import CardPlatform
    from robota.core.config import InitOutcome, InitRequest, Profile, Reader
    from robota.core.frontend import TransportContext

__all__ = ["FeishuTransport"]


class FeishuTransport:
    """A ``robota.core.ServedTransport``: the section's settings, the agents' ids (the bot's
    open_id among them, read once per process and app), and the host's service. It declares
    what core asks of a platform: its teams' defaults (``SetsTeamDefaults``), its cards
    (``CardRenderers``) and its part in ``robota init`` (``SetsUpOnInit``)."""

    name = "feishu"
    config_keys = CONFIG_KEYS
    """The section's keys, described (``robota.core.config.DescribesKeys``)."""
    team_defaults = TeamDefaults(locale="zh-CN", time_zone="Asia/Shanghai")
    """``robota.core.config.SetsTeamDefaults``: a team group that names neither."""
    card_layouts: tuple[str, ...] = THINKING_CARD_LAYOUTS
    """``robota.core.cards.CardRenderers``: the card's layouts, ``grouped`` first."""

    def __init__(self) -> None:
        self._bot_open_ids: dict[str, str] = {}
        """The bot's open_id by app id, as ``/open-apis/bot/v3/info`` said in this process
        (the host asks ``agent_env`` before its transports start: on a first start
        ``agent_env`` reads it)."""

    def agent_env(self, settings: object) -> dict[str, str]:
        """The non-secret ids agents see; the bot's open_id once the service has read it."""
        assert isinstance(settings, FeishuSettings), settings
        env = {"ROBOTA_LARK_APP_ID": settings.app_id}
        if settings.user_open_id:
            env["ROBOTA_LARK_USER_OPEN_ID"] = settings.user_open_id
        bot = self._bot_open_ids.get(settings.app_id)
        if bot is None and settings.enabled:  # a first start: the service has not read it yet
            from ._bot_identity import bot_open_id  # noqa: PLC0415 (lazy: the host only)

            bot = bot_open_id(settings.domain, settings.app_id, settings.app_secret)
            if bot:
                self._bot_open_ids[settings.app_id] = bot
        if bot:
            env["ROBOTA_LARK_BOT_OPEN_ID"] = bot
        return env

    def service(self, context: TransportContext) -> Service:
        from ._adapter import service  # noqa: PLC0415 (lazy, see the module docstring)

        return service(context, bot_read=self._bot_read)

    def validate(self, reader: Reader, section: object) -> FeishuSettings:
        return validated(reader, section)

    def init_step(
        self, profile: Profile, request: InitRequest, *, on_wait: Callable[[int | None], None]
    ) -> InitOutcome:
        """Register the bot's app (the device flow), store it, check what it may do."""
        from ._init_step import init_step  # noqa: PLC0415 (lazy: init only)

        return init_step(profile, request, on_wait=on_wait)

    def card_platform(self, *, agent: str, layout: str | None = None) -> CardPlatform:
        """The card renderer as it is, with no transport buttons (``robota cards preview``)."""
        from ._platform import FeishuPlatform  # noqa: PLC0415 (lazy, see the module docstring)

        chosen = cast("ThinkingCardLayout", layout or THINKING_CARD_LAYOUTS[0])
        return FeishuPlatform(agent=agent, layout=chosen)

    def _bot_read(self, app_id: str, open_id: str) -> None:
        """The service read the bot's open_id of ``app_id`` (at its start)."""
        self._bot_open_ids[app_id] = open_id
