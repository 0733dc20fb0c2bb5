"""robota.transports: the chat transports robota ships, one plugin package each.

Each subpackage is a ``robota.core.TransportPlugin`` registered under the ``robota.transports``
entry point group with the name of its config section (``transports.feishu``,
``transports.slack``), and is imported only when config.yaml has that section. A plugin holds
its settings and their validation, and its connection to the platform (Feishu: long connection
and REST; Slack: Socket Mode and the Web API). Feishu is also served by the host (a
``robota.core.ServedTransport``: the inbound pipeline, the cards), Slack not yet. Transports
import ``robota.core`` facades only, never a runtime, and never each other.
"""

__all__: list[str] = []
