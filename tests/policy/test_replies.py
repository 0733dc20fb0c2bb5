"""The fixed replies: both locales for every key, what each decision says, transport defaults."""

from __future__ import annotations

from dataclasses import replace

import pytest

from robota.core.policy import REPLIES, Check, decision_reply, reply, team_locale, team_time_zone

from ._teams import make_team


def test_every_reply_has_both_locales_and_the_same_fields() -> None:
    for key, texts in REPLIES.items():
        assert set(texts) == {"zh-CN", "en-US"}, key
        fields = [
            sorted(part.split("}")[0] for part in text.split("{")[1:]) for text in texts.values()
        ]
        assert fields[0] == fields[1], key


@pytest.mark.parametrize(
    ("decision", "en", "zh"),
    [
        ("allow", None, None),
        (
            "reject",
            "This operation requires administrator authorization.",
            "该操作需要管理员授权。",
        ),
        (
            "group-rejected",
            "Switching the bot on or off is done from the operator's terminal",
            "开关指令",
        ),
        (
            "confirm-needed",
            "Run drop_db? Reply Y, yes or confirm within 15 minutes",
            "确认执行 drop_db",
        ),
    ],
)
def test_decision_replies(decision: str, en: str | None, zh: str | None) -> None:
    check = Check(decision, "member", "admin", "drop_db")  # type: ignore[arg-type]
    for locale, wanted in (("en-US", en), ("zh-CN", zh)):
        said = decision_reply(locale, check)  # type: ignore[arg-type]
        assert said == wanted if wanted is None else said is not None and said.startswith(wanted)


def test_fixed_texts_the_issue_names() -> None:
    assert reply("en-US", "unknown_intent").startswith("This project has no such action.")
    assert reply("en-US", "queue_full") == "Queue full, try again later."
    assert reply("zh-CN", "confirm_expired", intent="drop_db", minutes=15) == (
        "drop_db 的确认已超时(15 分钟),已取消。"
    )


@pytest.mark.parametrize(
    ("transport", "locale", "zone"),
    [("feishu", "zh-CN", "Asia/Shanghai"), ("slack", "en-US", "UTC"), ("other", "en-US", "UTC")],
)
def test_transport_defaults(transport: str, locale: str, zone: str) -> None:
    team = make_team(transport=transport)
    assert (team_locale(team), team_time_zone(team)) == (locale, zone)


def test_a_configured_locale_and_zone_win() -> None:
    team = replace(make_team(), locale="en-US", time_zone="Europe/Paris")
    assert (team_locale(team), team_time_zone(team)) == ("en-US", "Europe/Paris")
