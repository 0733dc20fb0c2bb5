"""Feishu/Lark Card JSON 2.0: validity, budgets, stable element ids, both layouts."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    ReasoningDelta,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    TurnCompleted,
    TurnStarted,
)
from robota.core.presentation import ToolCall, TurnView, UserSteer, strip_launcher
from robota.core.presentation._text import element_id
from robota.transports.feishu import FeishuRenderer, feishu_final_answer, render_feishu_card

from ..support.platform_limits import check_feishu_activity, check_feishu_card, tables, utf8
from ..support.turn_streams import Input, reduce, turns


def panels(elements: list[dict]) -> list[dict]:
    found = []
    for element in elements:
        if element.get("tag") == "collapsible_panel":
            found.append(element)
            found.extend(panels(element["elements"]))
    return found


def tools(n: int, *, prefix: str = "c", status: str = "completed") -> list[Input]:
    events: list[Input] = []
    for i in range(n):
        events.append(ToolStarted(f"{prefix}{i}", "command", "x", command=f"echo {i}"))
        if status != "in_progress":
            events.append(ToolCompleted(f"{prefix}{i}", status, output=f"{i}\n", exit_code=0))
    return events


# -- launchers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("/bin/bash -lc 'echo hi && ls'", "echo hi && ls"),
        ('/bin/zsh -lc "pytest -q"', "pytest -q"),
        ("/usr/bin/env sh -c 'cat a.txt'", "cat a.txt"),
        ("sh -c 'make test'", "make test"),
        ("bash -c ls", "ls"),
        ('powershell.exe -NoProfile -Command "Get-ChildItem"', "Get-ChildItem"),
        ("pwsh -Command Get-Date", "Get-Date"),
        ("/bin/bash -lc 'echo '\"'\"'quoted'\"'\"''", "echo 'quoted'"),
        ("git status", "git status"),
        ("/bin/bash -lc echo hi", "/bin/bash -lc echo hi"),  # not one word: left alone
        ("bashful -c x", "bashful -c x"),
    ],
)
def test_shell_launchers_are_stripped_for_display(command: str, shown: str) -> None:
    assert strip_launcher(command) == shown


def test_titles_and_command_text_hide_the_launcher() -> None:
    view = reduce([ToolStarted("c", "command", "t", command="/bin/bash -lc 'npm test'")])
    card = render_feishu_card(view, agent="codex")
    text = json.dumps(card.card, ensure_ascii=False)
    assert "npm test" in text
    assert "/bin/bash" not in text


# -- the grouped layout -------------------------------------------------------------------------


def test_commentary_is_the_only_group_boundary_and_reasoning_titles_groups() -> None:
    view = reduce(
        [
            TurnStarted("t"),
            ReasoningDelta("r1", "**Exploring**\nlooking around"),
            *tools(2, prefix="a"),
            UserSteer("also check the docs"),
            *tools(1, prefix="b"),
            TextDelta("m1", "I found the bug."),
            ReasoningDelta("r2", "**Fixing**"),
            *tools(1, prefix="c", status="in_progress"),
        ]
    )
    elements = render_feishu_card(view, agent="codex").activity
    kinds = [
        (e["tag"], e["header"]["title"]["content"] if "header" in e else e["content"])
        for e in elements
    ]
    assert kinds[0][0] == "collapsible_panel" and "Exploring" in kinds[0][1]
    assert kinds[1] == ("markdown", "🗣️ **You:** also check the docs")
    # The steer split the panel, not the group: the title carries over.
    assert kinds[2][0] == "collapsible_panel" and "Exploring" in kinds[2][1]
    assert kinds[3] == ("markdown", "I found the bug.")
    assert "Fixing" in kinds[4][1]
    # Running group: running treatment; settled group: neutral even with a failed tool.
    assert kinds[4][1].startswith("⏳")
    assert kinds[0][1].startswith("🔹")


def test_failed_tools_keep_their_icon_in_a_neutral_group() -> None:
    view = reduce([*tools(1, prefix="ok"), *tools(1, prefix="bad", status="failed")])
    (group,) = render_feishu_card(view, agent="codex").activity
    assert group["header"]["title"]["content"].startswith("🔹")
    titles = [p["header"]["title"]["content"] for p in group["elements"]]
    assert titles[0].startswith("✅") and titles[1].startswith("❌")


def test_panels_are_collapsed_with_ids_from_the_tool_id() -> None:
    view = reduce(tools(3))
    (group,) = render_feishu_card(view, agent="codex").activity
    assert group["expanded"] is False
    assert [p["element_id"] for p in group["elements"]] == [
        element_id("t", f"c{i}") for i in range(3)
    ]
    assert all(p["expanded"] is False for p in group["elements"])


def test_groups_of_more_than_eight_tools_split_into_stable_sub_panels() -> None:
    view = reduce(tools(8))
    renderer = FeishuRenderer(agent="codex")
    (first,) = renderer.render(view).activity
    for event in tools(12)[16:]:
        view.apply(event)
    sub_panels = renderer.render(view).activity
    assert [len(p["elements"]) for p in sub_panels] == [8, 4]
    assert sub_panels[0]["element_id"] == first["element_id"]  # the first one keeps its id
    assert "tools 1-8 of 12" in sub_panels[0]["header"]["title"]["content"]
    assert "tools 9-12 of 12" in sub_panels[1]["header"]["title"]["content"]


def test_final_answer_is_not_in_the_activity() -> None:
    view = reduce(
        [
            TextDelta("m1", "commentary"),
            TextDelta("m2", "the answer"),
            TurnCompleted("t", "completed", final_item_id="m2"),
        ]
    )
    card = render_feishu_card(view, agent="codex")
    text = json.dumps(card.card, ensure_ascii=False)
    assert "commentary" in text and "the answer" not in text
    assert card.card["header"]["template"] == "green"


def test_header_shows_status_agent_and_the_injected_elapsed_time() -> None:
    view = reduce([TurnStarted("t"), ApprovalRequested("a", "command", "rm")])
    header = render_feishu_card(view, agent="claude", elapsed=125.0).card["header"]
    assert header["title"]["content"] == "claude · Waiting for approval"
    assert header["subtitle"]["content"].startswith("2m 05s")
    assert header["template"] == "orange"


def test_approval_buttons_carry_only_the_callers_tokens() -> None:
    view = reduce(
        [
            ToolStarted("c", "command", "rm", command="rm -rf x"),
            ApprovalRequested("a1", "command", "rm", tool_id="c"),
        ]
    )
    tokens = {
        "a1": {
            "accept": "tok-1",
            "accept_for_session": "tok-2",
            "decline": "tok-3",
            "cancel": "tok-4",
        }
    }
    card = render_feishu_card(view, agent="codex", approval_tokens=tokens).card
    buttons = [e for e in card["body"]["elements"] if e["tag"] == "button"]
    assert [b["text"]["content"] for b in buttons] == [
        "Allow once",
        "Allow for this session",
        "Decline",
        "Cancel the turn",
    ]
    assert [b["behaviors"][0]["value"] for b in buttons] == [
        {"token": f"tok-{i}"} for i in range(1, 5)
    ]
    # No token, no button: the renderer never invents a payload.
    partial = render_feishu_card(view, agent="codex", approval_tokens={"a1": {"decline": "t"}})
    assert [
        e["text"]["content"] for e in partial.card["body"]["elements"] if e["tag"] == "button"
    ] == ["Decline"]
    bare = render_feishu_card(view, agent="codex").card
    assert not [e for e in bare["body"]["elements"] if e["tag"] == "button"]


def test_resolved_approval_shows_in_its_tool() -> None:
    view = reduce(
        [
            ToolStarted("c", "command", "rm", command="rm x"),
            ApprovalRequested("a1", "command", "rm", tool_id="c"),
            ApprovalResolved("a1", "accept_for_session"),
        ]
    )
    (group,) = render_feishu_card(view, agent="codex").activity
    assert "allowed for this session" in group["elements"][0]["elements"][0]["content"]


def test_pagination_from_the_newest_end_with_history_pages_within_budget() -> None:
    big = "x" * 3000
    events: list[Input] = []
    for i in range(60):
        events.append(TextDelta(f"m{i}", f"step {i}"))
        events.append(ToolStarted(f"c{i}", "command", "x", command=f"cmd {i}"))
        events.append(ToolCompleted(f"c{i}", "completed", output=big))
    view = reduce(events)
    renderer = FeishuRenderer(agent="codex")
    newest = renderer.render(view, elapsed=1.0)
    assert newest.pages > 1
    assert "step 59" in json.dumps(newest.activity)
    seen = []
    for page in range(newest.pages):
        card = renderer.render(view, elapsed=1.0, page=page)
        check_feishu_card(card.card)
        check_feishu_activity(card.activity)
        assert card.activity_bytes == utf8(card.activity)
        seen.extend(e["element_id"] for e in card.activity)
    assert len(seen) == len(set(seen)) == 120  # every element on exactly one page


def test_timeline_layout_pages_of_40_activities() -> None:
    events: list[Input] = []
    for i in range(50):
        events.append(TextDelta(f"m{i}", f"note {i}"))
    events.extend(tools(50))
    view = reduce(events)
    renderer = FeishuRenderer(agent="codex", layout="timeline")
    card = renderer.render(view)
    assert len(card.activity) == 40
    assert card.pages == 3
    last = renderer.render(view, page=2)
    assert len(last.activity) == 20
    assert last.activity[0]["content"] == "note 0"


def test_too_many_tables_in_commentary_are_shown_as_code() -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    view = reduce([TextDelta("m1", table * 6), TextDelta("m2", "done")])
    card = render_feishu_card(view, agent="codex")
    check_feishu_card(card.card)
    assert sum(tables(e["content"]) for e in card.activity if e["tag"] == "markdown") <= 3


def test_final_answer_cards_split_on_markdown_boundaries() -> None:
    answer = "# Report\n\n" + ("Some text that goes on. " * 40 + "\n\n") * 60 + "```\ncode\n```\n"
    cards = feishu_final_answer(answer)
    assert len(cards) > 1
    assert "".join(c["body"]["elements"][0]["content"] for c in cards) == answer
    for card in cards:
        check_feishu_card(card, header=False)
    quotes = '"' * 20_000
    for card in feishu_final_answer(quotes):
        check_feishu_card(card, header=False)


def test_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="layout"):
        FeishuRenderer(agent="x", layout="fancy")  # type: ignore[arg-type]


# -- properties over generated turns ------------------------------------------------------------


def checkpoints(events: list[Input], count: int = 25) -> list[int]:
    step = max(1, len(events) // count)
    return sorted({*range(step, len(events), step), len(events)})


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(turns(), st.sampled_from(["grouped", "timeline"]))
def test_every_card_is_valid_within_budget_with_stable_ids(
    events: list[Input], layout: str
) -> None:
    view = TurnView()
    renderer = FeishuRenderer(agent="codex", layout=layout)  # type: ignore[arg-type]
    identity: dict[str, str] = {}
    done = 0
    for point in checkpoints(events):
        for event in events[done:point]:
            view.apply(event)
        done = point
        card = renderer.render(view, elapsed=float(point))
        ids = check_feishu_card(card.card)
        check_feishu_activity(card.activity)
        assert json.loads(card.json) == card.card
        for eid, tag in ids.items():
            assert identity.setdefault(eid, tag) == tag, "an element_id changed its element"
        tool_ids = {element_id("t", a.tool_id) for a in view.activities if isinstance(a, ToolCall)}
        for panel in panels(card.activity):
            if panel["element_id"].startswith("t_"):
                assert panel["element_id"] in tool_ids
        # The incremental renderer draws exactly what a fresh one does.
        fresh = FeishuRenderer(agent="codex", layout=layout).render(view, elapsed=float(point))  # type: ignore[arg-type]
        assert fresh.json == card.json
    for page in range(1, min(card.pages, 4)):
        history = renderer.render(view, elapsed=0.0, page=page)
        check_feishu_card(history.card)
        check_feishu_activity(history.activity)
