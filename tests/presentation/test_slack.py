"""Slack Block Kit: the progress message and the final answer, within Slack's limits."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from robota.core.events import (
    ApprovalRequested,
    ReasoningDelta,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
)
from robota.transports.slack import render_slack_progress, slack_final_answer

from ..support.platform_limits import check_slack_message
from ..support.turn_streams import Input, reduce, turns


def test_progress_message_shape() -> None:
    view = reduce(
        [
            ReasoningDelta("r", "**Running tests**"),
            ToolStarted("c", "command", "t", command="/bin/bash -lc 'pytest -q'"),
            ToolUpdated("c", output_delta="a\nb\nc\nd\n"),
            TextDelta("m", "x < y & z"),
        ]
    )
    message = render_slack_progress(view, agent="codex", elapsed=61)
    payload = message.payload()
    check_slack_message(payload)
    header, context, group, text = payload["blocks"]
    assert header["text"]["text"] == "⏳ codex · Working"
    assert context["elements"][0]["text"].startswith("1m 01s · 1 tool")
    assert "*Running tests*" in group["text"]["text"]
    assert "`pytest -q`" in group["text"]["text"]
    assert "b\nc\nd" in group["text"]["text"]  # a running tool shows its last lines
    assert text["text"]["text"] == "x &lt; y &amp; z"
    assert payload["text"].startswith("codex: Working")


def test_approval_buttons_use_the_callers_tokens() -> None:
    view = reduce([ApprovalRequested("a1", "command", "rm -rf build", command="rm -rf build")])
    tokens = {"a1": {"accept": "T1", "decline": "T3"}}
    blocks = render_slack_progress(view, agent="codex", approval_tokens=tokens).blocks
    (actions,) = [b for b in blocks if b["type"] == "actions"]
    assert [(b["text"]["text"], b["value"], b.get("style")) for b in actions["elements"]] == [
        ("Allow once", "T1", "primary"),
        ("Decline", "T3", "danger"),
    ]
    bare = render_slack_progress(view, agent="codex").blocks
    assert not [b for b in bare if b["type"] == "actions"]


def test_long_turns_keep_the_newest_activity_within_50_blocks() -> None:
    events: list[Input] = []
    for i in range(200):
        events.append(TextDelta(f"m{i}", f"step {i} " + "words " * 100))
        events.append(ToolStarted(f"c{i}", "command", "x", command=f"cmd {i}"))
        events.append(ToolCompleted(f"c{i}", "completed", output="o" * 5000))
    view = reduce(events)
    payload = render_slack_progress(view, agent="codex", elapsed=5).payload()
    check_slack_message(payload)
    texts = [b["text"]["text"] for b in payload["blocks"] if b["type"] == "section"]
    assert "cmd 199" in texts[-1]
    assert "earlier items not shown" in payload["blocks"][2]["elements"][0]["text"]


def test_final_answer_messages() -> None:
    answer = ("A paragraph of the answer. " * 30 + "\n\n") * 40 + "```\ncode\n```\n"
    messages = slack_final_answer(answer)
    assert len(messages) > 1
    assert "".join(m.blocks[0]["text"] for m in messages) == answer
    for message in messages:
        check_slack_message(message.payload())
    assert slack_final_answer("  ") == []


def test_terminal_card_has_no_current_title() -> None:
    view = reduce([ReasoningDelta("r", "**Thinking hard**"), TurnCompleted("t", "completed")])
    payload = render_slack_progress(view, agent="codex").payload()
    assert payload["blocks"][0]["text"]["text"] == "✅ codex · Completed"
    assert "Thinking hard" not in payload["text"]


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(turns())
def test_every_slack_message_is_within_limits(events: list[Input]) -> None:
    view = reduce(events)
    tokens = {a.approval_id: {"accept": "x" * 2000, "decline": "d"} for a in view.pending_approvals}
    check_slack_message(
        render_slack_progress(view, agent="codex", elapsed=3, approval_tokens=tokens).payload()
    )
    for message in slack_final_answer(view.final_text or "answer"):
        check_slack_message(message.payload())
