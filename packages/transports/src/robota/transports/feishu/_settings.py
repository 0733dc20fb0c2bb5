"""The ``transports.feishu`` section: what it holds, and every mistake it can have.

Validation goes through the config ``Reader`` core's validator uses, so errors name the file,
the key (``transports.feishu.appSecret``), what was found and what was expected, and a
credential is described, never quoted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, cast

from robota.core.config import Reader, TeamDefaults, credential_url

if TYPE_CHECKING:
    from robota.core import Service
    from robota.core.cards import CardPlatform
    from robota.core.frontend import TransportContext

__all__ = [
    "DEFAULT_DOMAIN",
    "DOMAIN_EXPECTED",
    "THINKING_CARD_LAYOUTS",
    "FeishuSettings",
    "FeishuTransport",
    "ThinkingCardLayout",
    "valid_domain",
]

DEFAULT_DOMAIN = "https://open.feishu.cn"
"""Feishu's Open Platform; Lark's is ``https://open.larksuite.com`` (same paths)."""

ThinkingCardLayout = Literal["grouped", "timeline"]
THINKING_CARD_LAYOUTS: tuple[ThinkingCardLayout, ...] = ("grouped", "timeline")

_BOT_OPEN_IDS: dict[str, str] = {}
"""The bot's open_id by app id, as ``/open-apis/bot/v3/info`` said in this process (the host
asks ``agent_env`` before its transports start: on a first start ``agent_env`` reads it)."""

_PATH = "transports.feishu"
_KEYS = (
    "enabled",
    "appId",
    "appSecret",
    "userOpenId",
    "respondToOwnerOnly",
    "respondToAllGroupMessages",
    "thinkingCardLayout",
    "domain",
)


@dataclass(frozen=True, slots=True)
class FeishuSettings:
    app_id: str
    app_secret: str = field(repr=False)
    user_open_id: str | None
    """The owner; required while ``respond_to_owner_only`` is on."""
    respond_to_owner_only: bool = True
    respond_to_all_group_messages: bool = True
    """Off: mention-only everywhere (a group message must @mention the bot to be read)."""
    thinking_card_layout: ThinkingCardLayout = "grouped"
    domain: str = DEFAULT_DOMAIN
    """The one base URL of REST calls and the long connection's endpoint call."""
    enabled: bool = True
    """``false`` keeps the section (and its validation) but the host does not start it."""


class FeishuTransport:
    """The Feishu transport plugin: its settings, and the host's service (``robota.core.
    ServedTransport``). The service's modules (httpx, trio-websocket, the card renderer) load
    when the host asks for it, never with the config."""

    name = "feishu"
    team_defaults = TeamDefaults(locale="zh-CN", time_zone="Asia/Shanghai")
    """``robota.core.config.SetsTeamDefaults``: a team group that names neither."""
    card_layouts: tuple[str, ...] = THINKING_CARD_LAYOUTS
    """``robota.core.cards.CardRenderers``: the card's layouts, ``grouped`` first."""

    def card_platform(self, *, agent: str, layout: str | None = None) -> CardPlatform:
        """The card renderer as it is, with no transport buttons (``robota cards preview``)."""
        from ._platform import FeishuPlatform  # noqa: PLC0415 (lazy, see the class docstring)

        chosen = cast("ThinkingCardLayout", layout or THINKING_CARD_LAYOUTS[0])
        return FeishuPlatform(agent=agent, layout=chosen)

    def agent_env(self, settings: object) -> dict[str, str]:
        """The non-secret ids agents see; the bot's open_id once the service has read it."""
        assert isinstance(settings, FeishuSettings), settings
        env = {"ROBOTA_LARK_APP_ID": settings.app_id}
        if settings.user_open_id:
            env["ROBOTA_LARK_USER_OPEN_ID"] = settings.user_open_id
        bot = _BOT_OPEN_IDS.get(settings.app_id)
        if bot is None and settings.enabled:  # a first start: the service has not read it yet
            from ._bot_identity import bot_open_id  # noqa: PLC0415 (lazy: the host only)

            bot = bot_open_id(settings.domain, settings.app_id, settings.app_secret)
            if bot:
                _BOT_OPEN_IDS[settings.app_id] = bot
        if bot:
            env["ROBOTA_LARK_BOT_OPEN_ID"] = bot
        return env

    def service(self, context: TransportContext) -> Service:
        from ._service import FeishuService  # noqa: PLC0415 (lazy, see the class docstring)

        return FeishuService(context)

    def validate(self, reader: Reader, section: object) -> FeishuSettings:
        values = reader.section(section, _PATH, _KEYS, nullable=False)
        owner_only = reader.boolean(
            values.get("respondToOwnerOnly"), f"{_PATH}.respondToOwnerOnly", True
        )
        app_id = reader.text(values.get("appId"), f"{_PATH}.appId", required=True)
        app_secret = reader.secret(values, "appSecret", _PATH, required=True)
        owner = reader.text(
            values.get("userOpenId"),
            f"{_PATH}.userOpenId",
            required=owner_only,
            expected="the owner's open_id (needed while respondToOwnerOnly is true)",
        )
        assert app_id is not None and app_secret is not None
        domain = reader.base_url(
            values.get("domain"), f"{_PATH}.domain", DOMAIN_EXPECTED, with_path=False
        )
        return FeishuSettings(
            domain=domain.rstrip("/") if domain is not None else DEFAULT_DOMAIN,
            app_id=app_id,
            app_secret=app_secret,
            user_open_id=owner,
            respond_to_owner_only=owner_only,
            respond_to_all_group_messages=reader.boolean(
                values.get("respondToAllGroupMessages"),
                f"{_PATH}.respondToAllGroupMessages",
                True,
            ),
            enabled=reader.boolean(values.get("enabled"), f"{_PATH}.enabled", True),
            thinking_card_layout=reader.choice(
                values.get("thinkingCardLayout"),
                f"{_PATH}.thinkingCardLayout",
                THINKING_CARD_LAYOUTS,
                "grouped",
            ),
        )


DOMAIN_EXPECTED = (
    "the platform's base URL, such as https://open.feishu.cn or https://open.larksuite.com "
    "(http only for a loopback test server)"
)


def valid_domain(value: str) -> str | None:
    """``value`` without a trailing slash if it is a base URL the credentials may travel to
    (https, or http to this machine only), else ``None``."""
    return credential_url(value, with_path=False)
