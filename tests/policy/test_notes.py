"""Online/offline notes, /status and /queue texts, and a team task's instructions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from robota.core.policy import (
    Request,
    Running,
    SchedulerState,
    Waiting,
    context_bar,
    offline_note,
    online_note,
    queue_text,
    status_text,
    team_instructions,
)

from ._teams import make_team


@pytest.mark.parametrize(
    ("percent", "bar"),
    [
        (0, "░░░░░░░░░░ 0%"),
        (30, "███░░░░░░░ 30%"),
        (34.6, "███░░░░░░░ 35%"),
        (100, "██████████ 100%"),
        (140, "██████████ 100%"),
        (-5, "░░░░░░░░░░ 0%"),
    ],
)
def test_context_bar(percent: float, bar: str) -> None:
    assert context_bar(percent) == bar


def test_online_and_offline_notes_in_both_locales() -> None:
    assert online_note(
        "zh-CN",
        robota_version="0.1.0",
        agent="codex",
        agent_version="0.171.0",
        model="gpt-5",
        context_percent=30,
    ) == ("● 已上线\nrobota v0.1.0 · codex v0.171.0\n模型 · gpt-5\n上下文 · ███░░░░░░░ 30%")
    assert online_note("en-US", robota_version="0.1.0") == "● Online\nrobota v0.1.0"
    claude = online_note("en-US", robota_version="1", agent="claude")
    assert claude == "● Online\nrobota v1 · claude"
    assert offline_note("zh-CN") == "○ 已下线"
    assert offline_note("en-US", context_percent=80) == "○ Offline\nContext · ████████░░ 80%"


def test_status_and_queue_are_content_free_in_the_team_time_zone() -> None:
    team = make_team()  # Feishu: zh-CN, Asia/Shanghai
    # 2026-01-01 00:00 UTC is 08:00 in Shanghai.
    at = 1_767_225_600.0
    state = SchedulerState(
        (Running(Request("r1", "ou_a", "deploy", ("write:/srv/web",)), at),),
        (
            Waiting(Request("r2", "ou_b", "ask", ("read:/srv/web",)), at + 60, "conflict"),
            Waiting(Request("r3", "ou_c", "ask", ("read:/srv/web",)), at + 120, "user_serial"),
        ),
    )
    assert status_text(team, state, note="● 已上线") == (
        "● 已上线\n槽位 1/3 · 队列 2/10\n▶ deploy · ou_a · 08:00"
    )
    assert status_text(team, SchedulerState(), note="○ 已下线", paused=True) == (
        "○ 已下线\n已暂停\n槽位 0/3 · 队列 0/10"
    )
    assert queue_text(team, state) == "#1 ask · ou_b · 08:01\n#2 ask · ou_c · 08:02"
    english = replace(team, locale="en-US", time_zone="UTC")
    assert queue_text(english, SchedulerState()) == "Nothing is waiting"
    assert queue_text(english, state).startswith("#1 ask · ou_b · 00:01")


def test_instructions_carry_the_group_reply_rules() -> None:
    text = team_instructions(make_team())
    assert "/srv/web" in text and "Asia/Shanghai" in text
    for rule in ("conclusion", "One reply per request", "language the sender wrote in", "block"):
        assert rule in text
    assert "UTC" in team_instructions(make_team(transport="slack"))
