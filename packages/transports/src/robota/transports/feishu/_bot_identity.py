"""The bot's open_id for the agents' environment, known on a first start too.

The host builds its agents' launch environment (``FeishuTransport.agent_env``) before its
transports start, so the open_id the service reads at start (``/open-apis/bot/v3/info``) comes
too late for the first run of a profile. ``bot_open_id`` reads it then, once per process and
app, synchronously and bounded (``TIMEOUT`` for the token and the info together): a platform
that does not answer in time leaves ``ROBOTA_LARK_BOT_OPEN_ID`` out, logged, and the host
starts as before. The app secret goes only in the token request's body and is never logged.
The calls take ``robota.transports._direct``'s ``Http``: httpcore, httpx only behind a proxy.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ._rest import TOKEN_PATH, _code_and_msg

if TYPE_CHECKING:
    from .._direct import Reply

__all__ = ["TIMEOUT", "bot_open_id"]

log = logging.getLogger("robota.transports.feishu")

TIMEOUT = 3.0
"""Seconds the whole look-up may take before the host goes on without it."""


def bot_open_id(domain: str, app_id: str, app_secret: str) -> str | None:
    """The bot's open_id as the platform says it, or ``None`` (logged) when it cannot."""
    from .._direct import Http, Unanswered, json_bytes  # noqa: PLC0415 (only the host, only here)

    base = domain.rstrip("/")
    body = json_bytes({"app_id": app_id, "app_secret": app_secret})
    try:
        with Http(base, timeout=TIMEOUT / 2) as http:
            token = _field(
                http.request(
                    "POST",
                    base + TOKEN_PATH,
                    headers={"Content-Type": "application/json"},
                    content=body,
                ),
                "tenant_access_token",
            )
            if not isinstance(token, str) or not token:
                return None
            info = http.request(
                "GET", base + "/open-apis/bot/v3/info", headers={"Authorization": f"Bearer {token}"}
            )
            bot = _field(info, "bot")
    except Unanswered as error:
        log.warning("feishu: the bot's open_id could not be read at start: %s", error.name)
        return None
    open_id = bot.get("open_id") if isinstance(bot, Mapping) else None
    return open_id if isinstance(open_id, str) and open_id else None


def _field(response: Reply, name: str) -> object:
    parsed, code, msg = _code_and_msg(response.content)
    if parsed is None or code != 0:
        log.warning(
            "feishu: the bot's open_id could not be read at start: HTTP %s, code %s: %s",
            response.status,
            code,
            msg,
        )
        return None
    return parsed.get(name)
