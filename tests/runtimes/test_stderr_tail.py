"""An agent's last words, as pure functions: cleaning, redaction, bounds, the reason's text."""

from __future__ import annotations

import pytest

from robota.core.logs import Redactor
from robota.runtimes import (
    StderrTail,
    agent_secrets,
    clean_line,
    scrubbed_names,
    with_last_words,
)

SECRETS = ("hunter2-very-secret", "tok")
"""``tok`` is short, but a secret robota was told of is masked whatever its length."""

WIDTH = 40

CLEANING: list[tuple[str, bytes, str | None]] = [
    ("plain text is kept", b"Error: something broke", "Error: something broke"),
    ("blank lines are dropped", b"   \t  ", None),
    ("an empty line is dropped", b"", None),
    ("trailing space and CR go", b"done  \r", "done"),
    ("tabs become spaces", b"a\tb", "a    b"),
    ("colours are stripped", b"\x1b[1;31mError:\x1b[0m bad", "Error: bad"),
    ("cursor moves are stripped", b"\x1b[2K\x1b[1Gprogress", "progress"),
    ("a window title is stripped", b"\x1b]0;codex\x07started", "started"),
    ("a hyperlink keeps its text", b"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("an 8-bit CSI is stripped", "\x9b31mred".encode(), "red"),
    ("other controls go", b"bell\x07 and nul\x00", "bell and nul"),
    ("only escapes: nothing left", b"\x1b[0m\x1b[K", None),
    ("bad UTF-8 is replaced", b"caf\xc3 ok", "caf\ufffd ok"),
    ("UTF-8 is kept", "naïve — ok".encode(), "naïve — ok"),
    ("a known secret is masked", b"key=hunter2-very-secret!", "key=***!"),
    ("a short known secret is masked", b"got tok back", "got *** back"),
    ("an OpenAI-shaped key is masked", b"bad key sk-abcdefghijklmnop1234", "bad key ***"),
    ("a Slack bot token is masked", b"xoxb-123456-abcdef rejected", "*** rejected"),
    ("a Slack app token is masked", b"using xapp-1-A0-123456", "using ***"),
    (
        "a bearer token keeps its scheme",
        b"Authorization: Bearer abc.def-123",
        "Authorization: Bearer ***",
    ),
    ("a long line is cut", b"x" * 100, "x" * (WIDTH - 1) + "…"),
    ("a line of exactly the width is whole", b"y" * WIDTH, "y" * WIDTH),
    (
        "a secret across the cut is masked, not half shown",
        b"." * 30 + b"hunter2-very-secret" + b"." * 30,
        "." * 30 + "***" + "." * (WIDTH - 34) + "…",
    ),
    (
        "a token across the cut is masked, not half shown",
        b"." * 30 + b"sk-abcdefghijklmnopqrstuvwxyz",
        "." * 30 + "***",
    ),
    ("a secret wrapped in colours is masked", b"\x1b[1mhunter2-very-secret\x1b[0m", "***"),
]


@pytest.mark.parametrize(
    ("raw", "expected"), [c[1:] for c in CLEANING], ids=[c[0] for c in CLEANING]
)
def test_clean_line(raw: bytes, expected: str | None) -> None:
    assert clean_line(raw, Redactor(SECRETS), width=WIDTH) == expected


def test_the_tail_keeps_the_last_lines() -> None:
    tail = StderrTail(lines=3)
    for n in range(10):
        tail.add(f"line {n}".encode())
    assert tail.lines() == ("line 7", "line 8", "line 9")


def test_the_tail_keeps_at_most_its_bytes_but_always_the_last_line() -> None:
    tail = StderrTail(lines=100, max_bytes=25, width=20)
    for n in range(5):
        tail.add(f"{n}".encode() * 9)  # 9 characters, 10 bytes with the newline
    assert tail.lines() == ("333333333", "444444444")
    tail.add(b"z" * 50)
    assert tail.lines() == ("z" * 19 + "…",)  # over the budget alone, and still shown


def test_the_tail_skips_blank_lines_and_stores_only_redacted_text() -> None:
    tail = StderrTail(["s3cret-value"])
    assert tail.add(b"   ") is None
    assert tail.add(b"token s3cret-value used") == "token *** used"
    assert tail.lines() == ("token *** used",)


SECRET_SOURCES: list[tuple[str, dict[str, str], list[str], list[str], set[str]]] = [
    ("nothing known, nothing scrubbed", {"PATH": "/bin"}, [], [], set()),
    ("the known ones, whatever their length", {}, [], ["ab", "long-secret"], {"ab", "long-secret"}),
    (
        "scrubbed values of 8 characters or more",
        {"SLACK_BOT_TOKEN": "xoxb-a-long-one", "ROBOTA_LOG": "debug", "PATH": "/usr/bin/longer"},
        ["SLACK_BOT_TOKEN", "ROBOTA_LOG"],
        [],
        {"xoxb-a-long-one"},
    ),
    ("a scrubbed name not inherited is skipped", {}, ["FEISHU_APP_SECRET"], [], set()),
]


@pytest.mark.parametrize(
    ("inherited", "scrubbed", "known", "expected"),
    [c[1:] for c in SECRET_SOURCES],
    ids=[c[0] for c in SECRET_SOURCES],
)
def test_agent_secrets(
    inherited: dict[str, str], scrubbed: list[str], known: list[str], expected: set[str]
) -> None:
    assert agent_secrets(inherited, scrubbed, known) == expected


def test_scrubbed_names_are_the_reserved_ones_robota_does_not_set_again() -> None:
    inherited = {
        "PATH": "/bin",
        "SLACK_BOT_TOKEN": "x",
        "feishu_app_secret": "y",
        "ROBOTA_HOME": "/home/u/.robota",
        "ROBOTA_CONFIG": "/c.yaml",
        "ROBOTA_TOKEN": "z",
        "ROBOTA": "1",
    }
    assert scrubbed_names(inherited) == ["SLACK_BOT_TOKEN", "feishu_app_secret", "ROBOTA_TOKEN"]


REASONS: list[tuple[str, tuple[str, ...], str]] = [
    ("agent x exited (exit code 1)", (), "agent x exited (exit code 1)"),
    (
        "agent x exited (exit code 1)",
        ("Error: bad config", "see docs"),
        "agent x exited (exit code 1); its stderr ended with:\n  Error: bad config\n  see docs",
    ),
]


@pytest.mark.parametrize(("reason", "lines", "expected"), REASONS)
def test_with_last_words(reason: str, lines: tuple[str, ...], expected: str) -> None:
    assert with_last_words(reason, lines) == expected
