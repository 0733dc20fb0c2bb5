"""The ``transports.slack`` section: what it holds, and every mistake it can have.

Validation goes through the config ``Reader`` core's validator uses, so errors name the file,
the key (``transports.slack.botToken``), what was found and what was expected; a token is a
secret (masked in every log line, never quoted), and one of the wrong kind is described by
its missing prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from robota.core.config import ENABLED_KEY, REQUIRED, ConfigKey, Reader, key_names

__all__ = ["CONFIG_KEYS", "DEFAULT_API_URL", "SlackSettings", "validated"]

DEFAULT_API_URL = "https://slack.com/api/"

_PATH = "transports.slack"
CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ENABLED_KEY,
    ConfigKey(
        "botToken",
        "an xoxb-... token (a secret)",
        REQUIRED,
        "Every Web API call but `apps.connections.open` (`${SLACK_BOT_TOKEN}` from .env).",
    ),
    ConfigKey(
        "appToken",
        "an xapp-... token (a secret)",
        REQUIRED,
        "`apps.connections.open`, the start of every Socket Mode connection"
        " (`${SLACK_APP_TOKEN}` from .env).",
    ),
    ConfigKey(
        "userId",
        "text",
        "required while respondToOwnerOnly is true",
        "The owner's Slack user id: the one person the bot answers, told of start-ups.",
    ),
    ConfigKey(
        "apiUrl",
        "an https URL (http only to a loopback test server)",
        DEFAULT_API_URL,
        "The one base URL of every Web API call; methods are appended to it.",
    ),
    ConfigKey(
        "respondToOwnerOnly",
        "true or false",
        "true",
        "Off: anyone who can message the bot is answered (team channels have rules of their own).",
    ),
    ConfigKey(
        "respondToAllChannelMessages",
        "true or false",
        "false",
        "Off: in channels only messages that @mention the bot are answered (DMs always are).",
    ),
    ConfigKey(
        "maxBusyChats",
        "a whole number from 1 to 1000",
        "32",
        "Channels and threads served at once; another one's messages are accepted and wait"
        " their turn, in order.",
    ),
)
"""``transports.slack``: the keys ``validate`` allows, described for the reference."""
_KEYS = key_names(CONFIG_KEYS)


@dataclass(frozen=True, slots=True)
class SlackSettings:
    bot_token: str = field(repr=False)
    """``xoxb-...``: every Web API call but ``apps.connections.open``."""
    app_token: str = field(repr=False)
    """``xapp-...``: ``apps.connections.open``, the start of every Socket Mode connection."""
    user_id: str | None
    """The owner; required while ``respond_to_owner_only`` is on."""
    enabled: bool = True
    api_url: str = DEFAULT_API_URL
    """The one base URL of every Web API call, ``apps.connections.open`` included; ends in
    ``/`` (methods are appended: ``{api_url}chat.postMessage``)."""
    respond_to_owner_only: bool = True
    respond_to_all_channel_messages: bool = False
    """Off: in channels only messages that @mention the bot are answered (DMs always are)."""
    max_busy_chats: int | None = None
    """Chats served at once (``None``: ``robota.core.frontend.MAX_BUSY_CHATS``); another
    chat's messages are accepted and wait their turn (``ChatGate``)."""


def validated(reader: Reader, section: object) -> SlackSettings:
    """The section read and checked (``SlackTransport.validate``)."""
    values = reader.section(section, _PATH, _KEYS, nullable=False)
    owner_only = reader.boolean(
        values.get("respondToOwnerOnly"), f"{_PATH}.respondToOwnerOnly", True
    )
    bot_token = _token(reader, values, "botToken", "xoxb-")
    app_token = _token(reader, values, "appToken", "xapp-")
    user_id = reader.text(
        values.get("userId"),
        f"{_PATH}.userId",
        required=owner_only,
        expected="the owner's Slack user id (needed while respondToOwnerOnly is true)",
    )
    api_url = reader.base_url(
        values.get("apiUrl"), f"{_PATH}.apiUrl", _API_URL_EXPECTED, with_path=True
    )
    return SlackSettings(
        enabled=reader.boolean(values.get("enabled"), f"{_PATH}.enabled", True),
        bot_token=bot_token,
        app_token=app_token,
        user_id=user_id,
        # methods are appended to it: ``{apiUrl}chat.postMessage``
        api_url=api_url.rstrip("/") + "/" if api_url is not None else DEFAULT_API_URL,
        respond_to_owner_only=owner_only,
        respond_to_all_channel_messages=reader.boolean(
            values.get("respondToAllChannelMessages"),
            f"{_PATH}.respondToAllChannelMessages",
            False,
        ),
        max_busy_chats=_busy_chats(reader, values.get("maxBusyChats")),
    )


def _busy_chats(reader: Reader, raw: object) -> int | None:
    return None if raw is None else reader.integer(raw, f"{_PATH}.maxBusyChats", 1, 1000)


def _token(reader: Reader, values: Mapping[str, Any], key: str, prefix: str) -> str:
    token = reader.secret(values, key, _PATH, required=True)
    assert token is not None
    if not token.startswith(prefix):
        raise reader.error(
            f"{_PATH}.{key}", f"a value that does not start with {prefix}", f"a {prefix}... token"
        )
    return token


_API_URL_EXPECTED = (
    "the Web API's base URL, such as https://slack.com/api/ "
    "(http only for a loopback test server, such as http://127.0.0.1:8123/api/)"
)
