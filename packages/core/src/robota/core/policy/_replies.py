"""The team's fixed, localised replies (zh-CN, en-US), and the transport defaults of a team.

System text follows the team's locale; what the agent answers follows the sender's language,
which is the agent's business (its developer instructions say so). Every reply here is
content-free: it may name an intent, a number or a time, never what someone wrote.

A team without ``locale`` or ``timeZone`` gets its transport's default, which the transport
plugin declares and the team carries (``TeamConfig.defaults``): Feishu groups are zh-CN on
Asia/Shanghai time, a transport that declares none en-US on UTC.
"""

from __future__ import annotations

from collections.abc import Mapping

from .._commands import COMMANDS
from ..config import BUILTIN_INTENTS, Locale, TeamConfig
from ._acks import AckKind
from ._permissions import Check
from ._scheduler import Queued

__all__ = [
    "REPLIES",
    "ack_reply",
    "decision_reply",
    "help_text",
    "queued_reply",
    "reply",
    "team_locale",
    "team_time_zone",
]

_NOT_COMMANDS_HERE = frozenset(BUILTIN_INTENTS)
"""In a team group these names are the team's built-ins (``/switch`` is the bot switch)."""

REPLIES: Mapping[str, Mapping[Locale, str]] = {
    "requires_admin": {
        "zh-CN": "该操作需要管理员授权。",
        "en-US": "This operation requires administrator authorization.",
    },
    "switch_rejected": {
        "zh-CN": "开关指令请在运维终端执行(robota team pause / resume),"
        "不接受来自群消息的开关操作。",
        "en-US": "Switching the bot on or off is done from the operator's terminal"
        " (robota team pause / resume); switch requests from the group are rejected.",
    },
    "unknown_intent": {
        "zh-CN": "本项目没有这个操作。发送 /help 查看可用操作。",
        "en-US": "This project has no such action. /help lists the actions.",
    },
    "confirm_ask": {
        "zh-CN": "确认执行 {intent}?请在 {minutes} 分钟内回复 Y 或 确认;回复其他内容将取消。",
        "en-US": "Run {intent}? Reply Y, yes or confirm within {minutes} minutes;"
        " anything else cancels it.",
    },
    "confirm_cancelled": {
        "zh-CN": "已取消 {intent}。",
        "en-US": "{intent} cancelled.",
    },
    "confirm_expired": {
        "zh-CN": "{intent} 的确认已超时({minutes} 分钟),已取消。",
        "en-US": "No confirmation for {intent} within {minutes} minutes; it is cancelled.",
    },
    "queue_full": {
        "zh-CN": "队列已满,请稍后再试。",
        "en-US": "Queue full, try again later.",
    },
    "queued": {
        "zh-CN": "已排队(第 {position} 位),前面有 {ahead} 个请求正在运行;轮到时会自动开始。",
        "en-US": "Queued (position {position}): {ahead} requests are running ahead of yours;"
        " it starts by itself.",
    },
    "operator_busy": {
        "zh-CN": "开发者正在终端处理本项目,你的请求已排队(第 {position} 位),完成后会自动开始。",
        "en-US": "The developer is working on this project from the terminal; your request is"
        " queued (position {position}) and starts by itself when they finish.",
    },
    "timed_out": {
        "zh-CN": "已超时({minutes} 分钟),请求已结束。",
        "en-US": "Timed out after {minutes} minutes; the request was ended.",
    },
    "approval_admins_only": {
        "zh-CN": "只有管理员可以处理这个授权请求。",
        "en-US": "Only an admin can answer this approval.",
    },
    "paused_summary": {
        "zh-CN": "暂停期间收到 {count} 条消息,未执行;如仍需要请重新发送。",
        "en-US": "{count} messages arrived while paused and were not run; send again if needed.",
    },
    "ack_yes": {"zh-CN": "好", "en-US": "OK"},
    "ack_ok": {"zh-CN": "好", "en-US": "OK"},
    "ack_continue": {"zh-CN": "继续中", "en-US": "Continuing"},
    "help_commands": {"zh-CN": "命令", "en-US": "Commands"},
    "help_intents": {"zh-CN": "本项目的操作", "en-US": "This project's actions"},
    "help_builtins": {
        "zh-CN": "/status 状态 · /queue 队列 · /help 帮助;直接发消息即为提问",
        "en-US": "/status status · /queue the queue · /help this list; plain text asks",
    },
}


def team_locale(team: TeamConfig) -> Locale:
    return team.locale or team.defaults.locale


def team_time_zone(team: TeamConfig) -> str:
    return team.time_zone or team.defaults.time_zone


def reply(locale: Locale, key: str, **fields: object) -> str:
    return REPLIES[key][locale].format(**fields)


def decision_reply(locale: Locale, check: Check, *, minutes: int = 15) -> str | None:
    """What the thread is told for a decision; ``None`` for ``allow`` (the request runs)."""
    if check.decision == "reject":
        return reply(locale, "requires_admin")
    if check.decision == "group-rejected":
        return reply(locale, "switch_rejected")
    if check.decision == "confirm-needed":
        return reply(locale, "confirm_ask", intent=check.intent, minutes=minutes)
    return None


def queued_reply(locale: Locale, queued: Queued, *, operator_busy: bool = False) -> str:
    """A queued request's one reply: its position, or the busy placeholder when it waits for
    the operator's own turn (``_busy``)."""
    if operator_busy:
        return reply(locale, "operator_busy", position=queued.position)
    return reply(locale, "queued", position=queued.position, ahead=queued.running_ahead)


def ack_reply(locale: Locale, kind: AckKind) -> str | None:
    """The immediate reply to an acknowledgement; none for thanks (no reply storms)."""
    return None if kind == "thanks" else reply(locale, f"ack_{kind}")


def help_text(team: TeamConfig, prefix: str = "/") -> str:
    """``/help`` in a team group: the built-ins, the engine's commands, the project's intents."""
    locale = team_locale(team)
    lines = [
        reply(locale, "help_builtins").replace("/", prefix),
        "",
        reply(locale, "help_commands"),
    ]
    lines += [
        f"{prefix}{spec.name} {spec.usage}".rstrip() + f" - {spec.summary}"
        for spec in COMMANDS
        if spec.name not in _NOT_COMMANDS_HERE
    ]
    if team.intents:
        lines += ["", reply(locale, "help_intents")]
        lines += [
            f"{prefix}{intent.key}" + (f" - {intent.description}" if intent.description else "")
            for intent in team.intents.values()
        ]
    return "\n".join(lines)
