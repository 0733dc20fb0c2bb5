"""robota.transports.feishu: Feishu/Lark, the ``transports.feishu`` section of config.yaml.

The bot served by the host (``FeishuTransport`` is a ``robota.core.ServedTransport``), as
pure cores with thin trio shells:

* ``_frames``       the pbbp2 frame codec (protobuf wire format by hand), pure
* ``_connection``   the long connection as a state machine: ping, pong config, ACK with
  ``biz_rt``, fragments, watchdog, reconnect, fatal refusals; pure
* ``_endpoint``     what the endpoint call's and the handshake's answers mean; pure
* ``_policy``       REST decisions: retries, token refresh, the PATCH limiter; pure
* ``_client``       the long connection on trio-websocket (``LongConnectionClient``)
* ``_wire``         a JSON call's request bytes, built once; pure
* ``_rest``         the REST API under trio (``RestClient``): the calls on an httpcore pool,
  on httpx only behind a proxy (``robota.transports._direct``)
* ``_settings``     the config section and its validation
* ``_inbound``      what an event is and what is done with it, in the pipeline's order; pure
* ``_card``         the progress card (Card JSON 2.0) and the final answer's cards, pure;
  ``_card_pages`` keeps the card's activity and pages across updates; ``_platform`` is the
  renderer as a ``robota.core.cards.CardPlatform`` (what ``robota cards preview`` draws)
* ``_outbound``     messages, cards and reactions over REST; the card sink and platform
* ``_adapter``      Feishu as a chat platform (a ``robota.core.frontend.Platform``), served by
  core's ``ChatService``: its clients, identity and link, its screen, commands, reactions,
  cards, notes and card actions
* ``_device_flow``  one-click app registration (the device flow) as decisions; pure
* ``_app_audit``    what the bot needs of its app, and what a published version lacks; pure
* ``_onboarding``   ``register_app`` and ``audit_app``: the httpx shells ``robota init`` runs
* ``_init_step``    the plugin's part in ``robota init``: when to register or check, the link
  and QR code, the credentials stored in the profile, the report
* ``_plugin``       the plugin (``FeishuTransport``), on top: the service loads when the host
  asks for it

Config loading imports this package for the section's validation alone, so httpx, httpcore and
trio-websocket (about 0.2 s of imports) are imported by the shells when they first run, and
``_inbound``, ``_outbound`` and ``_adapter`` (the card renderer) when the host asks for the
service, never here: the renderer's names load on first use (PEP 562, ``lazy_attributes``).
"""

import typing

from robota.core import lazy_attributes as _lazy_attributes

from ._app_audit import REQUIREMENTS, AppAudit, Requirement, addons_manifest, assess
from ._client import EventHandler, LongConnectionClient
from ._connection import ACK_WITHIN, ClientConfig, Delivery, LongConnection
from ._device_flow import (
    LARK_DOMAIN,
    SLOW_DOWN_STEP,
    AppGrant,
    Brand,
    DeviceFlow,
    accounts_url,
    verification_url,
)
from ._endpoint import Endpoint, Refusal, endpoint_outcome, handshake_outcome
from ._errors import ApiError, ConnectionRefused, FeishuError, FrameError, RegistrationFailed
from ._frames import METHOD_CONTROL, METHOD_DATA, Frame, Header, decode, encode
from ._onboarding import Registered, audit_app, register_app
from ._plugin import FeishuTransport
from ._policy import BACKOFF, PatchLimiter, TokenCache, decide
from ._rest import RestClient
from ._settings import (
    DEFAULT_DOMAIN,
    DOMAIN_EXPECTED,
    THINKING_CARD_LAYOUTS,
    FeishuSettings,
    ThinkingCardLayout,
    valid_domain,
)

if typing.TYPE_CHECKING:
    from ._card import (
        DECISION_LABELS,
        FeishuBudget,
        FeishuCard,
        FeishuRenderer,
        Layout,
        card_components,
        feishu_final_answer,
        render_feishu_card,
    )
    from ._platform import FeishuPlatform

plugin = FeishuTransport()
"""The entry point (``robota.transports``: ``feishu``)."""

__all__ = [
    # the plugin and its settings
    "plugin",
    "FeishuTransport",
    "FeishuSettings",
    "DEFAULT_DOMAIN",
    "DOMAIN_EXPECTED",
    "valid_domain",
    "THINKING_CARD_LAYOUTS",
    "ThinkingCardLayout",
    # the cards
    "FeishuPlatform",
    "FeishuRenderer",
    "FeishuCard",
    "FeishuBudget",
    "Layout",
    "DECISION_LABELS",
    "card_components",
    "render_feishu_card",
    "feishu_final_answer",
    # the long connection
    "LongConnectionClient",
    "EventHandler",
    "Delivery",
    "LongConnection",
    "ClientConfig",
    "ACK_WITHIN",
    "Endpoint",
    "Refusal",
    "endpoint_outcome",
    "handshake_outcome",
    # frames
    "Frame",
    "Header",
    "METHOD_CONTROL",
    "METHOD_DATA",
    "encode",
    "decode",
    # REST
    "RestClient",
    "TokenCache",
    "PatchLimiter",
    "BACKOFF",
    "decide",
    # robota init: registration and the app audit
    "register_app",
    "Registered",
    "AppGrant",
    "Brand",
    "DeviceFlow",
    "RegistrationFailed",
    "LARK_DOMAIN",
    "SLOW_DOWN_STEP",
    "accounts_url",
    "verification_url",
    "audit_app",
    "AppAudit",
    "Requirement",
    "REQUIREMENTS",
    "addons_manifest",
    "assess",
    # errors
    "FeishuError",
    "FrameError",
    "ApiError",
    "ConnectionRefused",
]

_HOMES = {
    "DECISION_LABELS": "._card",
    "FeishuBudget": "._card",
    "FeishuCard": "._card",
    "FeishuRenderer": "._card",
    "Layout": "._card",
    "card_components": "._card",
    "feishu_final_answer": "._card",
    "render_feishu_card": "._card",
    "FeishuPlatform": "._platform",
}
"""The card renderer's names, loaded on first use (the host's service, cards preview)."""

__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
