"""The ``transports.slack`` section: what it holds, and every mistake it can have.

Validation goes through the config ``Reader`` core's validator uses, so errors name the file,
the key (``transports.slack.botToken``), what was found and what was expected; a token of the
wrong kind is described by its missing prefix, never quoted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from robota.core.config import Reader

__all__ = ["SlackSettings", "SlackTransport"]

_PATH = "transports.slack"
_KEYS = ("botToken", "appToken", "signingSecret", "userId")


@dataclass(frozen=True, slots=True)
class SlackSettings:
    bot_token: str = field(repr=False)
    app_token: str = field(repr=False)
    user_id: str
    """The owner: the Slack user robota answers."""
    signing_secret: str | None = field(default=None, repr=False)


class SlackTransport:
    """The Slack transport plugin (for now: its settings)."""

    name = "slack"

    def validate(self, reader: Reader, section: object) -> SlackSettings:
        values = reader.section(section, _PATH, _KEYS, nullable=False)
        bot_token = _token(reader, values, "botToken", "xoxb-")
        app_token = _token(reader, values, "appToken", "xapp-")
        user_id = reader.text(
            values.get("userId"),
            f"{_PATH}.userId",
            required=True,
            expected="the owner's Slack user id",
        )
        assert user_id is not None
        return SlackSettings(
            bot_token=bot_token,
            app_token=app_token,
            user_id=user_id,
            signing_secret=reader.secret(values, "signingSecret", _PATH, required=False),
        )


def _token(reader: Reader, values: Mapping[str, Any], key: str, prefix: str) -> str:
    token = reader.secret(values, key, _PATH, required=True)
    assert token is not None
    if not token.startswith(prefix):
        raise reader.error(
            f"{_PATH}.{key}", f"a value that does not start with {prefix}", f"a {prefix}... token"
        )
    return token
