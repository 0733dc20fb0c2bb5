"""robota.transports.feishu: Feishu/Lark, the ``transports.feishu`` section of config.yaml."""

from ._settings import THINKING_CARD_LAYOUTS, FeishuSettings, FeishuTransport, ThinkingCardLayout

plugin = FeishuTransport()
"""The entry point (``robota.transports``: ``feishu``)."""

__all__ = [
    "THINKING_CARD_LAYOUTS",
    "FeishuSettings",
    "FeishuTransport",
    "ThinkingCardLayout",
    "plugin",
]
