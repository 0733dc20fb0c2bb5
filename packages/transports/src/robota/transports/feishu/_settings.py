"""The ``transports.feishu`` section: what it holds, and every mistake it can have.

Validation goes through the config ``Reader`` core's validator uses, so errors name the file,
the key (``transports.feishu.appSecret``), what was found and what was expected, and a
credential is described, never quoted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from robota.core.config import ENABLED_KEY, REQUIRED, ConfigKey, Reader, credential_url, key_names

__all__ = [
    "CONFIG_KEYS",
    "DEFAULT_DOMAIN",
    "DOMAIN_EXPECTED",
    "THINKING_CARD_LAYOUTS",
    "FeishuSettings",
    "ThinkingCardLayout",
    "valid_domain",
    "validated",
]

DEFAULT_DOMAIN = "https://open.feishu.cn"
"""Feishu's Open Platform; Lark's is ``https://open.larksuite.com`` (same paths)."""

ThinkingCardLayout = Literal["grouped", "timeline"]
THINKING_CARD_LAYOUTS: tuple[ThinkingCardLayout, ...] = ("grouped", "timeline")

_PATH = "transports.feishu"
CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ENABLED_KEY,
    ConfigKey("appId", "text", REQUIRED, "The bot's app id (`${FEISHU_APP_ID}` from .env)."),
    ConfigKey(
        "appSecret",
        "text (a secret: masked in every log line, never quoted in an error)",
        REQUIRED,
        "The app's secret (`${FEISHU_APP_SECRET}` from .env).",
    ),
    ConfigKey(
        "userOpenId",
        "text",
        "required while respondToOwnerOnly is true",
        "The owner's open_id: the one person the bot answers, told of start-ups.",
    ),
    ConfigKey(
        "respondToOwnerOnly",
        "true or false",
        "true",
        "Off: anyone who can message the bot is answered (team groups have rules of their own).",
    ),
    ConfigKey(
        "respondToAllGroupMessages",
        "true or false",
        "true",
        "Off: mention-only everywhere (a group message must @mention the bot to be read).",
    ),
    ConfigKey(
        "thinkingCardLayout",
        "grouped or timeline",
        "grouped",
        "How the progress card shows a turn's activity.",
    ),
    ConfigKey(
        "domain",
        "an https URL (http only to a loopback test server)",
        DEFAULT_DOMAIN,
        "The Open Platform's one base URL: https://open.larksuite.com for Lark.",
    ),
    ConfigKey(
        "maxBusyChats",
        "a whole number from 1 to 1000",
        "32",
        "Chats served at once; another chat's messages are accepted and wait their turn, in order.",
    ),
)
"""``transports.feishu``: the keys ``validate`` allows, described for the reference."""
_KEYS = key_names(CONFIG_KEYS)


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
    max_busy_chats: int | None = None
    """Chats served at once (``None``: ``robota.core.frontend.MAX_BUSY_CHATS``); another
    chat's messages are accepted and wait their turn (``ChatGate``)."""


def validated(reader: Reader, section: object) -> FeishuSettings:
    """The section read and checked (``FeishuTransport.validate``)."""
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
        max_busy_chats=_busy_chats(reader, values.get("maxBusyChats")),
    )


def _busy_chats(reader: Reader, raw: object) -> int | None:
    return None if raw is None else reader.integer(raw, f"{_PATH}.maxBusyChats", 1, 1000)


DOMAIN_EXPECTED = (
    "the platform's base URL, such as https://open.feishu.cn or https://open.larksuite.com "
    "(http only for a loopback test server)"
)


def valid_domain(value: str) -> str | None:
    """``value`` without a trailing slash if it is a base URL the credentials may travel to
    (https, or http to this machine only), else ``None``."""
    return credential_url(value, with_path=False)
