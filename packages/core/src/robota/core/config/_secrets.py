"""Which values are secrets, so that logs and error messages can leave them out.

The rule is by name (``appSecret``, ``BOT_TOKEN``, ``OPENAI_API_KEY``) plus one by place:
every value in .env is treated as a secret, since that file exists to hold them. Very short
values are exempt: redacting ``info`` or ``8080`` everywhere would turn logs into asterisks,
and no real credential is that short.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = [
    "MIN_ENV_VALUE_LENGTH",
    "MIN_SECRET_LENGTH",
    "is_secret_value",
    "looks_secret",
    "secrets_from_dotenv",
]

MIN_SECRET_LENGTH = 4
"""Shortest value of a secret-named key that is redacted."""
MIN_ENV_VALUE_LENGTH = 8
"""Shortest value of any other .env variable that is redacted."""

_SECRET_WORDS = frozenset(
    {
        "secret",
        "token",
        "password",
        "passwd",
        "passphrase",
        "key",
        "apikey",
        "credential",
        "credentials",
        "auth",
        "authorization",
        "cookie",
        "pat",
        "dsn",
    }
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def looks_secret(name: str) -> bool:
    """Whether a key or variable name says its value is a credential.

    Names are split into words (``appSecret``, ``BOT_TOKEN``, ``api-key``) so that ``key``
    matches ``OPENAI_API_KEY`` but not ``keyboardLayout``.
    """
    return any(word.lower() in _SECRET_WORDS for word in _WORD.findall(name))


def is_secret_value(name: str, value: str) -> bool:
    """Whether ``value`` of a config key called ``name`` must be kept out of logs."""
    return looks_secret(name) and len(value) >= MIN_SECRET_LENGTH


def secrets_from_dotenv(values: Mapping[str, str]) -> frozenset[str]:
    """The values of a .env file that count as secrets."""
    return frozenset(_dotenv_secrets(values.items()))


def _dotenv_secrets(items: Iterable[tuple[str, str]]) -> Iterable[str]:
    for name, value in items:
        if len(value) >= MIN_ENV_VALUE_LENGTH or is_secret_value(name, value):
            yield value
