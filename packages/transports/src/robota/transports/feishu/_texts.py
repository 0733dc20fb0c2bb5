"""The Feishu service's own texts: its notes in the profile's locale, note cards and toasts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["_note_card", "_notes", "_toast"]


def _notes(locale: str) -> Mapping[str, str]:
    if locale.startswith("zh"):
        return {
            "online": "robota 已上线。可以开始对话。",
            "title": "robota",
            "stop": "停止",
            "stopping": "正在停止",
            "answered": "已提交",
            "owner_only": "只有机器人的主人可以操作",
            "duplicate": "已处理",
            "muted": "本群已开启仅 @ 时回复",
            "unmuted": "本群所有消息都会回复",
            "restart": "已安排重启",
            "no_restart": "此处无法重启",
            "not_ours": "这不是 robota 的按钮",
            "restart_scheduled": "已安排重启。当前任务结束、回复送达且 15 秒内没有新消息后进行。",
            "restart_forced": "已安排立即重启。",
            "restart_cancel": "取消重启",
            "restart_cancelled": "重启已取消。",
            "restart_restarting": "正在重启……",
            "restart_restarted": "重启完成。robota 已重新上线。",
            "reason": "原因",
            "not_cancelled": "这次重启已无法取消",
            "reset": "重置到这一轮",
            "reset_warning": "会话回到这一轮之后; 磁盘上的文件不会还原。",
            "resetting": "正在重置",
        }
    return {
        "online": "robota is online: write here to start.",
        "title": "robota",
        "stop": "Stop",
        "stopping": "Stopping",
        "answered": "Answered",
        "owner_only": "Only the bot's owner can do that",
        "duplicate": "Already handled",
        "muted": "Mention-only in this group: @mention the bot to talk to it",
        "unmuted": "Every message in this group is read",
        "restart": "Restart scheduled",
        "no_restart": "Nothing can restart from here",
        "not_ours": "Not one of robota's buttons",
        "restart_scheduled": (
            "Restart scheduled: once running turns end, their answers are delivered and "
            "15 s pass without a message."
        ),
        "restart_forced": "Immediate restart scheduled.",
        "restart_cancel": "Cancel the restart",
        "restart_cancelled": "Restart cancelled.",
        "restart_restarting": "Restarting now...",
        "restart_restarted": "Restarted: robota is back online.",
        "reason": "Reason",
        "not_cancelled": "This restart can no longer be cancelled",
        "reset": "Reset to this turn",
        "reset_warning": "The conversation goes back to just after this turn; files on disk "
        "are not reverted.",
        "resetting": "Resetting",
    }


def _toast(kind: str, content: str) -> Mapping[str, Any]:
    return {"toast": {"type": kind, "content": content}}


def _note_card(
    title: str, text: str, *, button: tuple[str, str | None] | None = None
) -> dict[str, Any]:
    """A note card; ``button`` (label, token) adds a callback button when the token is set."""
    elements: list[dict[str, Any]] = [{"tag": "markdown", "element_id": "note", "content": text}]
    if button is not None and button[1] is not None:
        elements.append(
            {
                "tag": "button",
                "element_id": "note_action",
                "text": {"tag": "plain_text", "content": button[0]},
                "type": "default",
                "behaviors": [{"type": "callback", "value": {"token": button[1]}}],
            }
        )
    return {
        "schema": "2.0",
        "config": {"update_multi": True, "width_mode": "fill"},
        "header": {"title": {"tag": "plain_text", "content": title}, "template": "blue"},
        "body": {"elements": elements},
    }
