"""The switch detector and the acknowledgement detector, as tables."""

from __future__ import annotations

import pytest

from robota.core.policy import ack_reply, detect_ack, is_switch_request


@pytest.mark.parametrize(
    "text",
    [
        "/pause",
        "/resume",
        "/stop-bot",
        "/STOP-BOT now",
        "!pause",
        "/switch off",
        "关闭",
        "开启",
        "上线",
        "下线",
        "下线。",
        "关闭bot",
        "关闭 bot",
        "把bot下线吧",
        "请关掉机器人",
        "机器人下线",
        "帮我把机器人暂停一下",
        "启动机器人",
        "BOT 上线!",
        "turn off the bot",
        "Turn on the bot, please",
        "turn the bot off",
        "switch off bot",
        "shut down the bot",
        "stop the bot",
        "start bot",
        "launch bot",
        "pause the bot now",
        "please resume the bot",
        "close bot",
        "open bot",
        "go offline",
        "Go online!",
        "take the bot offline",
        "bring the bot back online",
        "bot off",
        "can you disable the bot",
    ],
)
def test_switch_requests(text: str) -> None:
    assert is_switch_request(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "/stop",
        "/status",
        "//pause",
        "/pauses",
        "停止",  # bare "stop" is the turn's business, not the bot's
        "暂停",
        "关闭这个 issue",
        "上线了吗",
        "新版本上线了吗?",
        "下线流程是什么",
        "the deploy bot stopped working",
        "turn off the lights",
        "stop the build",
        "go online docs",
        "why did the bot go offline yesterday?",
        "start the server",
        "please deploy to prod",
    ],
)
def test_not_switch_requests(text: str) -> None:
    assert not is_switch_request(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("ok", "ok"),
        ("OK", "ok"),
        ("okay!", "ok"),
        ("好", "ok"),
        ("好的", "ok"),
        ("好的。", "ok"),
        ("收到", "ok"),
        ("👍", "ok"),
        ("yes", "yes"),
        ("y", "yes"),
        ("嗯嗯", "yes"),
        ("可以", "yes"),
        ("是的", "yes"),
        ("继续", "continue"),
        ("继续吧", "continue"),
        ("好的\uff0c继续", "continue"),
        ("OK, continue", "continue"),
        ("go ahead", "continue"),
        ("ok go on", "continue"),
        ("thanks", "thanks"),
        ("thank you!", "thanks"),
        ("谢谢", "thanks"),
        ("辛苦了", "thanks"),
        ("ok thanks", "thanks"),
        ("好的谢谢", "thanks"),
        ("yes ok", "yes"),
        ("ok yes", "ok"),
    ],
)
def test_acknowledgements(text: str, kind: str) -> None:
    assert detect_ack(text) == kind


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no",
        "No.",
        "nope",
        "cancel",
        "wait",
        "ok wait",
        "ok, cancel",
        "yes but wait",
        "不",
        "不好",
        "好不好",
        "取消",
        "好的取消",
        "等一下",
        "别继续",
        "okra",
        "ok fix the login page",
        "continue with the migration please",
        "好的\uff0c顺便看看日志",
        "这个 bug 修好了吗",
        "ok ok ok ok ok ok ok ok ok",  # too long to be a short acknowledgement
    ],
)
def test_not_acknowledgements(text: str) -> None:
    assert detect_ack(text) is None


@pytest.mark.parametrize(
    ("kind", "zh", "en"),
    [
        ("ok", "好", "OK"),
        ("yes", "好", "OK"),
        ("continue", "继续中", "Continuing"),
        ("thanks", None, None),
    ],
)
def test_ack_replies(kind: str, zh: str | None, en: str | None) -> None:
    assert ack_reply("zh-CN", kind) == zh  # type: ignore[arg-type]
    assert ack_reply("en-US", kind) == en  # type: ignore[arg-type]
