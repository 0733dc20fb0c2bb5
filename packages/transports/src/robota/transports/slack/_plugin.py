"""The Slack transport plugin: what the ``robota.transports`` entry point names.

The top of the package: the section and its validation (``_settings``) are below it, and the
host's service (``_adapter``: httpcore, trio-websocket, the card renderer) is imported only when
the host asks for it, never with the config; nothing below imports this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._settings import CONFIG_KEYS, SlackSettings, validated

if TYPE_CHECKING:
    from robota.core import Service
    from robota.core.cards import CardPlatform
    from robota.core.config import Reader
    from robota.core.frontend import TransportContext

__all__ = ["SlackTransport"]


class SlackTransport:
    """A ``robota.core.ServedTransport``: the section's settings, the owner's id for the
    agents, and the host's service (see the module docstring). It declares its cards
    (``robota.core.cards.CardRenderers``); its teams get core's defaults."""

    name = "slack"
    config_keys = CONFIG_KEYS
    """The section's keys, described (``robota.core.config.DescribesKeys``)."""
    card_layouts: tuple[str, ...] = ()
    """``robota.core.cards.CardRenderers``: one layout only."""

    def agent_env(self, settings: object) -> dict[str, str]:
        """The non-secret ids agents see (the owner's user id); never a token."""
        assert isinstance(settings, SlackSettings), settings
        return {"ROBOTA_SLACK_USER_ID": settings.user_id} if settings.user_id else {}

    def service(self, context: TransportContext) -> Service:
        from ._adapter import service  # noqa: PLC0415 (lazy, see the module docstring)

        return service(context)

    def validate(self, reader: Reader, section: object) -> SlackSettings:
        return validated(reader, section)

    def card_platform(self, *, agent: str, layout: str | None = None) -> CardPlatform:
        """The card renderer as it is, with no Stop button (``robota cards preview``)."""
        from ._platform import SlackPlatform  # noqa: PLC0415 (lazy, see the module docstring)

        if layout is not None:
            raise ValueError(f"Slack's messages have one layout, not {layout!r}")
        return SlackPlatform(agent=agent)
