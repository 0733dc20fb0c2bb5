"""robota.transports.slack: Slack (Socket Mode), the ``transports.slack`` section of config.yaml.

The bot served by the host (``SlackTransport`` is a ``robota.core.ServedTransport``), as pure
cores with thin trio shells:

* ``_socket``     Socket Mode as a state machine: a fresh URL per connection, hello, ACK
  first, disconnect reasons, open-before-close, ping watchdog, back-off, fatal refusals; pure
* ``_policy``     Web API decisions: retries, ``Retry-After``, the per-method rate gate,
  latest-state-wins progress updates; pure
* ``_client``     Socket Mode on trio-websocket (``SocketModeClient``)
* ``_web``        the Web API under trio (``WebApi``): httpcore, httpx behind a proxy
* ``_settings``   the config section and its validation
* ``_inbound``    what an envelope is and what is done with it, in the pipeline's order; pure
* ``_card``       the progress message and the final answer in Block Kit, pure; ``_platform``
  is the renderer as a ``robota.core.cards.CardPlatform`` (what ``robota cards preview`` draws)
* ``_outbound``   the card sink over the Web API (``SlackSink``)
* ``_groups``     group channels: the ``GroupMaker`` (``SlackGroups``), a channel's name by
  Slack's rules (``channel_name``, pure)
* ``_adapter``    Slack as a chat platform (a ``robota.core.frontend.Platform``), served by
  core's ``ChatService``
* ``_plugin``     the plugin (``SlackTransport``), on top: the service loads when the host
  asks for it

Config loading imports this package for the section's validation alone, so httpcore (httpx
behind a proxy) and trio-websocket are imported by the shells when they first run, never here;
the renderer's names load on first use (PEP 562, ``lazy_attributes``).
"""

import typing

from robota.core import lazy_attributes as _lazy_attributes

from ._client import EnvelopeHandler, SocketModeClient
from ._errors import AUTH_ERRORS, ApiError, ConnectionRefused, RateLimited, SlackError
from ._inbound import (
    STALE_AFTER,
    Admit,
    ButtonClick,
    Ignore,
    InboundMessage,
    Malformed,
    Screen,
    Unsupported,
    bang,
    chat_route,
    freshness,
    parse_envelope,
    route_chat,
    screen,
)
from ._plugin import SlackTransport
from ._policy import BACKOFF, LatestWins, RateGate, decide, retry_after_seconds
from ._settings import DEFAULT_API_URL, SlackSettings
from ._socket import ENVELOPE_TYPES, Envelope, SocketMode, ack_text
from ._web import BotIdentity, WebApi

if typing.TYPE_CHECKING:
    from ._card import (
        SLACK_LIMITS,
        SlackLimits,
        SlackMessage,
        SlackRenderer,
        render_slack_progress,
        slack_final_answer,
    )
    from ._groups import SlackGroups, channel_name, name_candidates
    from ._platform import SlackPlatform

plugin = SlackTransport()
"""The entry point (``robota.transports``: ``slack``)."""

__all__ = [
    # the plugin and its settings
    "plugin",
    "SlackTransport",
    "SlackSettings",
    "DEFAULT_API_URL",
    # the cards
    "SlackPlatform",
    "SlackRenderer",
    "SlackMessage",
    "SlackLimits",
    "SLACK_LIMITS",
    "render_slack_progress",
    "slack_final_answer",
    # inbound decisions
    "parse_envelope",
    "screen",
    "bang",
    "freshness",
    "chat_route",
    "route_chat",
    "Screen",
    "Admit",
    "ButtonClick",
    "Ignore",
    "InboundMessage",
    "Malformed",
    "Unsupported",
    "STALE_AFTER",
    # Socket Mode
    "SocketModeClient",
    "EnvelopeHandler",
    "SocketMode",
    "Envelope",
    "ENVELOPE_TYPES",
    "ack_text",
    # the Web API
    "WebApi",
    "BotIdentity",
    "LatestWins",
    "RateGate",
    "BACKOFF",
    "decide",
    "retry_after_seconds",
    # group channels
    "SlackGroups",
    "channel_name",
    "name_candidates",
    # errors
    "SlackError",
    "ApiError",
    "RateLimited",
    "ConnectionRefused",
    "AUTH_ERRORS",
]

_HOMES = {
    "SLACK_LIMITS": "._card",
    "SlackLimits": "._card",
    "SlackMessage": "._card",
    "SlackRenderer": "._card",
    "render_slack_progress": "._card",
    "slack_final_answer": "._card",
    "SlackPlatform": "._platform",
    "SlackGroups": "._groups",
    "channel_name": "._groups",
    "name_candidates": "._groups",
}
"""The card renderer's and the group channels' names, loaded on first use (the host's
service, cards preview)."""

__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
