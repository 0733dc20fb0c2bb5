"""robota.transports.slack: Slack (Socket Mode), the ``transports.slack`` section of config.yaml."""

from ._settings import SlackSettings, SlackTransport

plugin = SlackTransport()
"""The entry point (``robota.transports``: ``slack``)."""

__all__ = ["SlackSettings", "SlackTransport", "plugin"]
