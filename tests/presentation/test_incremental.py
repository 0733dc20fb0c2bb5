"""Renderers held across a turn draw exactly what a fresh one draws, after every event.

The held renderers (``TerminalRenderer``, ``SlackRenderer``, ``FeishuRenderer``) and the grouper
they share (``StreamGrouper``) cache by activity versions; a cache keyed on the wrong thing
shows stale content, which only a comparison with a full re-render at every step catches.
"""

from __future__ import annotations

from typing import Any, Literal

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
    ToolUpdated,
    TurnCompleted,
    TurnStarted,
)
from robota.core.presentation import (
    Block,
    StreamGrouper,
    TerminalRenderer,
    ToolGroup,
    TurnView,
    UserSteer,
    group_stream,
    render_terminal,
)
from robota.transports.feishu import FeishuBudget, FeishuRenderer
from robota.transports.slack import SlackRenderer, render_slack_progress

from ..support.platform_limits import components, dumps, utf8
from ..support.turn_streams import Input, reduce, turns


@st.composite
def _renamed(draw: st.DrawFn) -> list[Input]:
    """Turns whose tools are sometimes renamed later (an agent refines a tool's title as it
    learns more): a group no reasoning titles shows its last tool's name in every sub-panel."""
    events = list(draw(turns(max_steps=30, max_burst=15)))
    # Commands are shown by their command line, not their title: rename the others.
    started = [
        (i, e.tool_id)
        for i, e in enumerate(events)
        if isinstance(e, ToolStarted) and e.kind != "command"
    ]
    renames: list[tuple[int, Input]] = []
    for index, tool_id in draw(st.lists(st.sampled_from(started), max_size=3)) if started else []:
        at = draw(st.integers(index + 1, len(events)))
        title = draw(st.sampled_from(["renamed", "renamed <again>", ""]))
        renames.append((at, ToolUpdated(tool_id, title=title)))
    for at, event in sorted(renames, key=lambda rename: rename[0], reverse=True):
        events.insert(at, event)  # from the end: the positions before stay valid
    return events


# Bursts stay small: each step renders the whole turn afresh, so a long stream costs its square.
STREAMS = _renamed()
SLOW = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def described(blocks: list[tuple[str, Block]]) -> list[Any]:
    """Blocks compared by content: groups by their members and title, others by identity."""
    out: list[Any] = []
    for key, block in blocks:
        if isinstance(block, ToolGroup):
            members = [id(m) for m in block.members]
            tools = [id(t) for t in block.tools]
            reasoning = [id(r) for r in block.reasoning]
            out.append((key, members, tools, reasoning, block.title, block.display_title))
        else:
            out.append((key, id(block)))
    return out


def tokens(view: TurnView) -> dict[str, dict[Any, str]]:
    return {
        a.approval_id: {"accept": f"ok-{a.approval_id}", "cancel": "x"}
        for a in view.pending_approvals
    }


@SLOW
@given(STREAMS)
def test_the_grouper_equals_group_stream_after_every_event(events: list[Input]) -> None:
    view = TurnView()
    grouper = StreamGrouper()
    before: list[Any] = []
    for event in events:
        view.apply(event)
        now = described(grouper.blocks(view))
        assert now == described(group_stream(view))
        # The blocks the grouper calls settled have the members and title they had (what they
        # show, the display title included, may have changed).
        grouping = [d[:5] if len(d) == 6 else d for d in now]
        assert grouping[: grouper.settled] == before[: grouper.settled]
        assert grouper.settled <= len(before)
        before = grouping


Options = dict[str, Any]
_TERMINAL_OPTIONS = st.fixed_dictionaries(
    {
        "width": st.sampled_from([None, None, 24, 80]),
        "color": st.booleans(),
        "last": st.sampled_from([None, None, 1, 3]),
        "output_lines": st.sampled_from([3, 3, 1]),
    }
)


def expansions(events: list[Input]) -> st.SearchStrategy[Any]:
    tools = sorted({e.tool_id for e in events if isinstance(e, ToolStarted)})
    some = st.sets(st.sampled_from(tools)) if tools else st.just(frozenset[str]())
    return st.one_of(st.just(()), st.just("all"), some)


@SLOW
@given(STREAMS, _TERMINAL_OPTIONS, st.data())
def test_the_terminal_renderer_equals_a_full_render_after_every_event(
    events: list[Input], options: Options, data: st.DataObject
) -> None:
    # What the user expands changes once during the turn, as in a TUI.
    first, then = data.draw(expansions(events)), data.draw(expansions(events))
    switch = data.draw(st.integers(0, len(events)))
    view = TurnView()
    renderer = TerminalRenderer(agent="codex")
    for step, event in enumerate(events):
        view.apply(event)
        expanded = first if step < switch else then
        held = renderer.render(view, elapsed=float(step), expanded=expanded, **options)
        fresh = render_terminal(
            view, agent="codex", elapsed=float(step), expanded=expanded, **options
        )
        assert held == fresh


@SLOW
@given(STREAMS, st.booleans())
def test_the_slack_renderer_equals_a_full_render_after_every_event(
    events: list[Input], with_tokens: bool
) -> None:
    view = TurnView()
    renderer = SlackRenderer(agent="codex")
    for step, event in enumerate(events):
        view.apply(event)
        offered = tokens(view) if with_tokens else None
        held = renderer.render(view, elapsed=float(step), approval_tokens=offered).payload()
        fresh = render_slack_progress(
            view, agent="codex", elapsed=float(step), approval_tokens=offered
        ).payload()
        assert held == fresh


_BUDGETS = st.sampled_from(
    [
        FeishuBudget(),
        # Small pages and sub-panels: many pages and splits from few events; a tight request
        # body: the card is paginated again with a smaller activity budget.
        FeishuBudget(activity_bytes=6000, timeline_page=5, tools_per_panel=3),
        FeishuBudget(card_bytes=9000, activity_components=30, activity_tables=1),
    ]
)


@SLOW
@given(STREAMS, _BUDGETS, st.data())
def test_the_feishu_renderer_equals_a_full_render_after_every_event(
    events: list[Input], budget: FeishuBudget, data: st.DataObject
) -> None:
    # Both layouts at every step, on whichever page the user looks at (they page back and
    # forth during the turn).
    view = TurnView()
    layouts: tuple[Literal["grouped", "timeline"], ...] = ("grouped", "timeline")
    renderers = {
        layout: FeishuRenderer(agent="codex", layout=layout, budget=budget) for layout in layouts
    }
    pager = {"older": "older-token", "newer": "newer-token"}
    for step, event in enumerate(events):
        view.apply(event)
        page = data.draw(st.sampled_from([0, 0, 0, 1, 3]))
        for layout, renderer in renderers.items():
            options: dict[str, Any] = {
                "elapsed": float(step),
                "page": page,
                "approval_tokens": tokens(view),
                "page_tokens": pager,
            }
            held = renderer.render(view, **options)
            fresh = FeishuRenderer(agent="codex", layout=layout, budget=budget).render(
                view, **options
            )
            assert held.json == fresh.json
            assert held.json == dumps(held.card)  # joined from cached parts, yet the same bytes
            assert held.activity == fresh.activity
            assert (held.page, held.pages) == (fresh.page, fresh.pages)
            assert held.activity_bytes == fresh.activity_bytes == utf8(held.activity)
            assert held.activity_components == components(held.activity)


# -- the changes a version alone would miss ------------------------------------------------------


def test_a_message_turned_final_by_an_empty_delta_leaves_the_activity() -> None:
    # The view reports "unchanged" (no text, no version bump) but the message is now the final
    # answer: a cache keyed on versions alone would keep showing it.
    view = reduce([TurnStarted("t"), TextDelta("m", "the answer"), ToolStarted("c", "read", "a")])
    renderers = (TerminalRenderer(agent="a"), SlackRenderer(agent="a"), StreamGrouper())
    before = [_draw(r, view) for r in renderers]
    assert view.apply(TextDelta("m", "", "final")) == "unchanged"
    after = [_draw(r, view) for r in renderers]
    assert after != before
    assert after[0] == render_terminal(view, agent="a")
    assert "the answer" not in "\n".join(after[0])
    assert after[1] == render_slack_progress(view, agent="a").payload()
    assert after[2] == described(group_stream(view))


def test_a_group_titled_by_its_last_tool_shows_its_new_name_in_every_sub_panel() -> None:
    # No reasoning titles the group, so its title is its last tool's name, which the agent
    # changes: the first sub-panel's heading changes though none of its tools did.
    view = reduce(
        [TurnStarted("t"), *(ToolStarted(f"c{i}", "read", f"file {i}") for i in range(10))]
    )
    renderer = FeishuRenderer(agent="a")
    renderer.render(view)
    view.apply(ToolUpdated("c9", title="renamed"))
    held = renderer.render(view)
    assert held.json == FeishuRenderer(agent="a").render(view).json
    headings = [group["header"]["title"]["content"] for group in held.activity]
    assert len(headings) == 2 and all("renamed" in heading for heading in headings)


def test_an_approval_moves_into_its_tool_when_the_tool_is_announced_later() -> None:
    view = reduce([TurnStarted("t"), ApprovalRequested("a1", "command", "Run ls", tool_id="c")])
    terminal = TerminalRenderer(agent="a")
    grouper = StreamGrouper()
    assert [key for key, _ in grouper.blocks(view)] == ["apv:a1"]
    terminal.render(view)
    view.apply(ApprovalResolved("a1", "accept"))
    view.apply(ToolStarted("c", "command", "ls", command="ls"))
    assert [key for key, _ in grouper.blocks(view)] == ["tool:c"]
    assert terminal.render(view) == render_terminal(view, agent="a")
    assert "      approval: allowed once" in terminal.render(view)


def test_a_message_that_gains_text_splits_the_group_around_it() -> None:
    view = reduce(
        [
            TurnStarted("t"),
            ReasoningDelta("r", "**Looking**"),
            ToolStarted("c1", "read", "a"),
            TextDelta("m", ""),
            ToolStarted("c2", "read", "b"),
        ]
    )
    grouper = StreamGrouper()
    terminal = TerminalRenderer(agent="a")
    slack = SlackRenderer(agent="a")
    assert len(grouper.blocks(view)) == 1
    terminal.render(view)
    slack.render(view)
    view.apply(TextDelta("m", "Found it."))
    assert [key for key, _ in grouper.blocks(view)] == ["rsn:r:0", "msg:m", "tool:c2"]
    assert terminal.render(view) == render_terminal(view, agent="a")
    assert slack.render(view).payload() == render_slack_progress(view, agent="a").payload()


def test_a_renderer_given_another_view_starts_over() -> None:
    events: list[Input] = [TurnStarted("t"), ToolStarted("c", "read", "a"), UserSteer("hi")]
    view = reduce(events)
    terminal = TerminalRenderer(agent="a")
    terminal.render(view)
    # The same activity keys with other content: a restored snapshot, then a different turn.
    restored = TurnView.from_json(view.to_json())
    restored.apply(ToolCompleted("c", "failed", exit_code=3))
    assert terminal.render(restored) == render_terminal(restored, agent="a")
    other = reduce(
        [TurnStarted("u"), ToolStarted("c", "read", "zzz"), TurnCompleted("u", "completed")]
    )
    assert terminal.render(other) == render_terminal(other, agent="a")
    assert any("zzz" in line for line in terminal.render(other))


@pytest.mark.parametrize("layout", ["grouped", "timeline"])
def test_a_feishu_renderer_given_another_view_starts_over(
    layout: Literal["grouped", "timeline"],
) -> None:
    # Tool "c" has the same key and version in both turns: only the view tells them apart.
    view = reduce([TurnStarted("t"), ToolStarted("c", "read", "aaa"), UserSteer("hi")])
    other = reduce(
        [TurnStarted("u"), ToolStarted("c", "read", "zzz"), TurnCompleted("u", "completed")]
    )
    restored = TurnView.from_json(view.to_json())
    renderer = FeishuRenderer(agent="a", layout=layout)
    for shown in (view, other, restored, view):
        card = renderer.render(shown)
        assert card.json == FeishuRenderer(agent="a", layout=layout).render(shown).json
    assert "aaa" in card.json and "zzz" not in card.json


@pytest.mark.parametrize("kind", ["terminal", "slack"])
def test_terminal_and_slack_renderers_given_another_view_start_over(kind: str) -> None:
    # Tool "c" has the same key and version in both turns: only the view tells them apart.
    def fresh() -> TerminalRenderer | SlackRenderer:
        return TerminalRenderer(agent="a") if kind == "terminal" else SlackRenderer(agent="a")

    view = reduce([TurnStarted("t"), ToolStarted("c", "read", "aaa"), UserSteer("hi")])
    other = reduce(
        [TurnStarted("u"), ToolStarted("c", "read", "zzz"), TurnCompleted("u", "completed")]
    )
    restored = TurnView.from_json(view.to_json())
    renderer = fresh()
    for shown in (view, other, restored, view):
        assert _draw(renderer, shown) == _draw(fresh(), shown)
    assert "aaa" in str(_draw(renderer, view)) and "zzz" not in str(_draw(renderer, view))


def _draw(renderer: TerminalRenderer | SlackRenderer | StreamGrouper, view: TurnView) -> Any:
    if isinstance(renderer, TerminalRenderer):
        return renderer.render(view)
    if isinstance(renderer, SlackRenderer):
        return renderer.render(view).payload()
    return described(renderer.blocks(view))
