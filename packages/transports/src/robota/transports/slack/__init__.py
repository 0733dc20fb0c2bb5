"""robota.transports.slack: Slack (Socket Mode), the ``transports.slack`` section of config.yaml."""

from ._settings import DEFAULT_API_URL, SlackSettings, SlackTransport

plugin = SlackTransport()
"""The entry point (``robota.transports``: ``slack``)."""

__all__ = ["DEFAULT_API_URL", "SlackSettings", "SlackTransport", "plugin"]
