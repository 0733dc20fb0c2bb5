"""What the bot posts about itself in a team group: online and offline notes, ``/status`` and
``/queue``, and the developer instructions a team task starts with.

Notes (cc-bot's format; the status symbols are shared: ● online, ○ offline)::

    ● 已上线                         ● Online
    robota v0.1.0 · codex v0.171.0   robota v0.1.0 · codex v0.171.0
    模型 · gpt-5                      Model · gpt-5
    上下文 · ███░░░░░░░ 30%           Context · ███░░░░░░░ 30%

The offline note is the symbol line and the context line only. A line whose facts are unknown is
left out (no agent version, no model, no context yet). ``/status`` is the online note's lines
plus slots and queue and what runs; ``/queue`` lists what waits. Content-free: intents, senders,
times, never what anyone wrote. Times are the team's time zone's (``team_time_zone``).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from ..config import Locale, TeamConfig
from ._replies import team_locale, team_time_zone
from ._scheduler import SchedulerState

__all__ = [
    "context_bar",
    "context_percent",
    "offline_note",
    "online_note",
    "queue_text",
    "status_text",
    "team_instructions",
]

_WORDS: dict[str, dict[Locale, str]] = {
    "online": {"zh-CN": "● 已上线", "en-US": "● Online"},
    "offline": {"zh-CN": "○ 已下线", "en-US": "○ Offline"},
    "model": {"zh-CN": "模型", "en-US": "Model"},
    "context": {"zh-CN": "上下文", "en-US": "Context"},
    "slots": {"zh-CN": "槽位", "en-US": "Slots"},
    "queue": {"zh-CN": "队列", "en-US": "Queue"},
    "empty_queue": {"zh-CN": "队列为空", "en-US": "Nothing is waiting"},
    "paused": {"zh-CN": "已暂停", "en-US": "Paused"},
}


def context_bar(percent: float, width: int = 10) -> str:
    """``███░░░░░░░ 30%``: the share of the context window used, clamped to 0-100."""
    share = min(max(percent, 0.0), 100.0)
    filled = round(share / 100 * width)
    return "█" * filled + "░" * (width - filled) + f" {share:.0f}%"


def context_percent(usage: object) -> float | None:
    """The share of the context window a task's last reported usage fills (the store's
    ``usage_json``: ``total_tokens``, else ``input_tokens``, over ``context_window``); ``None``
    when the agent did not say both."""
    if not isinstance(usage, dict):
        return None
    window = usage.get("context_window")
    used = usage.get("total_tokens")
    if not isinstance(used, int) or isinstance(used, bool):
        used = usage.get("input_tokens")
    if not isinstance(window, int) or not isinstance(used, int) or window <= 0:
        return None
    if isinstance(window, bool) or isinstance(used, bool):
        return None
    return min(100.0, 100.0 * used / window)


def _context_line(locale: Locale, percent: float | None) -> list[str]:
    return [] if percent is None else [f"{_WORDS['context'][locale]} · {context_bar(percent)}"]


def online_note(
    locale: Locale,
    *,
    robota_version: str,
    agent: str | None = None,
    agent_version: str | None = None,
    model: str | None = None,
    context_percent: float | None = None,
) -> str:
    versions = f"robota v{robota_version}"
    if agent is not None:
        versions += f" · {agent}" + (f" v{agent_version}" if agent_version else "")
    lines = [_WORDS["online"][locale], versions]
    if model:
        lines.append(f"{_WORDS['model'][locale]} · {model}")
    return "\n".join(lines + _context_line(locale, context_percent))


def offline_note(locale: Locale, *, context_percent: float | None = None) -> str:
    return "\n".join([_WORDS["offline"][locale], *_context_line(locale, context_percent)])


def _clock(at: float, zone: str) -> str:
    return datetime.fromtimestamp(at, ZoneInfo(zone)).strftime("%H:%M")


def status_text(team: TeamConfig, state: SchedulerState, *, note: str, paused: bool = False) -> str:
    """``/status``: the online note (``note``), then slots, queue and what runs."""
    locale, zone = team_locale(team), team_time_zone(team)
    lines = [note] if not paused else [note, _WORDS["paused"][locale]]
    lines.append(
        f"{_WORDS['slots'][locale]} {len(state.running)}/{team.slots} · "
        f"{_WORDS['queue'][locale]} {len(state.queue)}/{team.queue_limit}"
    )
    lines += [
        f"▶ {r.request.intent} · {r.request.sender} · {_clock(r.started_at, zone)}"
        for r in state.running
    ]
    return "\n".join(lines)


def queue_text(team: TeamConfig, state: SchedulerState) -> str:
    """``/queue``: what waits, in the order it will run."""
    locale, zone = team_locale(team), team_time_zone(team)
    if not state.queue:
        return _WORDS["empty_queue"][locale]
    return "\n".join(
        f"#{position} {w.request.intent} · {w.request.sender} · {_clock(w.queued_at, zone)}"
        for position, w in enumerate(state.queue, start=1)
    )


def team_instructions(team: TeamConfig) -> str:
    """The developer instructions a team task starts with (for agents that take them)."""
    return (
        f"You are answering requests from a team's group chat about the project in "
        f"{team.project}. Each request is its own thread; what you write is posted there.\n"
        "- Start with the conclusion, in one sentence ('fixed', 'deployed', 'failed: <reason>');"
        " details only when they help. Be concise.\n"
        "- One reply per request: no running commentary, no internal narration of your steps.\n"
        "- Answer in the language the sender wrote in.\n"
        f"- Give times people read in the {team_time_zone(team)} time zone.\n"
        "- Never block on a question to the terminal: nobody is there. If you need something,"
        " say so in your reply and stop."
    )
