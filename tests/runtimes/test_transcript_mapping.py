"""The protocol mappers on the real agents' recorded transcripts, without processes or sockets.

Every transcript in ``tests/transcripts`` is replayed through ``ThreadTracker`` (App Server) or
``SessionTracker`` (ACP) the way the clients drive them (``tests/support/replay.py``). Two kinds
of checks: invariants that hold for every transcript (turns bracket their events, tools end once,
approvals resolve), and per-scenario outcomes stated per agent, because the agents really do
differ (a declined tool ends codex-acp's turn; qwen survives a cut stream; gemini reports the
provider's HTTP status as its JSON-RPC code).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import pytest

from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    FileChange,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
    TurnStarted,
)

from ..support.replay import (
    APP_SERVER_AGENTS,
    Emitted,
    Replay,
    Wire,
    load,
    replay,
    replay_detailed,
    transcripts,
)

AGENTS = ["codex", "codex-acp", "claude-agent-acp", "gemini", "qwen", "opencode"]
ACP = [agent for agent in AGENTS if agent not in APP_SERVER_AGENTS]
LOADS = ["codex-acp", "claude-agent-acp", "qwen", "opencode"]  # gemini 0.61 cannot load
FAILS_500_AT_ONCE = ["codex", "codex-acp"]  # the others retry HTTP 500 for minutes
COMMAND_AT_START = {"codex", "codex-acp"}
"""Agents whose tool announcement already carries the command. The others announce the tool
before its input streams in (claude "Terminal", qwen "Shell", opencode "bash") or only through the
permission request (gemini, without ``rawInput``); ``ToolUpdated`` has no command field, so their
command reaches a card through the tool's title and the approval."""

T = TypeVar("T")

ALL = transcripts()
ALL_IDS = [f"{agent}/{scenario}" for agent, scenario in ALL]


# -- helpers -------------------------------------------------------------------------------------


@dataclass
class Turn:
    owner: str
    process: int | None
    started: TurnStarted
    events: list[Emitted] = field(default_factory=list)
    """Everything between ``started`` and ``completed``."""
    completed: TurnCompleted | None = None

    @property
    def inner(self) -> list[RuntimeEvent]:
        return [e.event for e in self.events]

    def text(self, item_id: str | None = None) -> str:
        return "".join(
            e.text
            for e in self.inner
            if isinstance(e, TextDelta) and (item_id is None or e.item_id == item_id)
        )

    @property
    def end(self) -> TurnCompleted:
        assert self.completed is not None, f"turn {self.started.turn_id} never completed"
        return self.completed


def turns_of(result: Replay) -> list[Turn]:
    """The turns, per owner, in order; asserts that every event sits inside exactly one turn."""
    running: dict[str, Turn] = {}
    done: list[Turn] = []
    for emitted in result.emitted:
        event, owner = emitted.event, emitted.owner
        turn = running.get(owner)
        if isinstance(event, TurnStarted):
            assert turn is None, f"{event} while {turn and turn.started.turn_id} runs in {owner}"
            running[owner] = Turn(owner, emitted.process, event)
            continue
        assert turn is not None, f"{event} outside any turn of {owner}"
        assert emitted.process == turn.process, f"{event} in another process than its turn"
        if isinstance(event, TurnCompleted):
            assert event.turn_id == turn.started.turn_id, (event, turn.started)
            turn.completed = event
            done.append(turn)
            del running[owner]
        else:
            turn.events.append(emitted)
    assert not running, f"turns never completed: {[t.started for t in running.values()]}"
    return done


def one_turn(result: Replay) -> Turn:
    turns = turns_of(result)
    assert len(turns) == 1, [t.started for t in turns]
    return turns[0]


def of_type(events: Sequence[RuntimeEvent], kind: type[T]) -> list[T]:
    return [event for event in events if isinstance(event, kind)]


def tool_titles(events: Sequence[RuntimeEvent], tool_id: str) -> list[str]:
    titles = [e.title for e in events if isinstance(e, ToolStarted) and e.tool_id == tool_id]
    titles += [
        e.title for e in events if isinstance(e, ToolUpdated) and e.tool_id == tool_id and e.title
    ]
    return titles


def tool_changes(events: Sequence[RuntimeEvent], tool_id: str) -> list[FileChange]:
    changes: list[FileChange] = []
    for event in events:
        if isinstance(event, ToolStarted | ToolUpdated) and event.tool_id == tool_id:
            changes.extend(event.changes or ())
    return changes


def only_tool(turn: Turn) -> ToolStarted:
    started = of_type(turn.inner, ToolStarted)
    assert len(started) == 1, started
    return started[0]


def only_approval(turn: Turn) -> tuple[ApprovalRequested, ApprovalResolved]:
    requested = of_type(turn.inner, ApprovalRequested)
    resolved = of_type(turn.inner, ApprovalResolved)
    assert len(requested) == 1, requested
    assert len(resolved) == 1, resolved
    assert resolved[0].approval_id == requested[0].approval_id
    return requested[0], resolved[0]


def index_of(turn: Turn, event: RuntimeEvent) -> int:
    return next(i for i, e in enumerate(turn.inner) if e is event)


def completion(turn: Turn, tool_id: str) -> ToolCompleted:
    ends = [e for e in of_type(turn.inner, ToolCompleted) if e.tool_id == tool_id]
    assert len(ends) == 1, ends
    return ends[0]


def wire_line(wires: list[Wire], direction: str, method: str, process: int | None = None) -> int:
    """Index of the first message sent in ``direction`` with ``method``."""
    return next(
        i
        for i, w in enumerate(wires)
        if w.direction == direction
        and w.msg.get("method") == method
        and (process is None or w.process == process)
    )


def response_line(wires: list[Wire], request: int) -> int:
    """Index of the answer to the request at ``request`` (same process, other direction)."""
    asked = wires[request]
    return next(
        i
        for i, w in enumerate(wires)
        if i > request
        and w.process == asked.process
        and w.direction != asked.direction
        and "method" not in w.msg
        and w.msg.get("id") == asked.msg["id"]
    )


def streamed_on_wire(wires: list[Wire]) -> str:
    """The assistant text the agent streamed, minus the history a ``session/load`` replays
    (which arrives before the load's response, outside any turn)."""
    history: set[int] = set()
    for i, wire in enumerate(wires):
        if wire.direction == "out" and wire.msg.get("method") == "session/load":
            history.update(range(i, response_line(wires, i)))
    out = []
    for i, wire in enumerate(wires):
        params = wire.msg.get("params")
        if wire.direction != "in" or i in history or not isinstance(params, dict):
            continue
        if wire.msg.get("method") == "item/agentMessage/delta":
            out.append(str(params.get("delta") or ""))
        update = params.get("update")
        if isinstance(update, dict) and update.get("sessionUpdate") == "agent_message_chunk":
            content = update.get("content")
            if isinstance(content, dict) and content.get("type") == "text":
                out.append(str(content.get("text") or ""))
    return "".join(out)


# -- the recorded set ----------------------------------------------------------------------------


def test_every_agent_was_recorded() -> None:
    recorded = {agent for agent, _ in ALL}
    assert recorded == set(AGENTS)
    assert len(ALL) >= 50


# -- invariants, every transcript ----------------------------------------------------------------


@pytest.mark.parametrize(("agent", "scenario"), ALL, ids=ALL_IDS)
def test_every_turn_brackets_its_events_and_ends_by_the_agents_word(
    agent: str, scenario: str
) -> None:
    result = replay_detailed(agent, scenario)
    turns = turns_of(result)  # no event outside a turn, none after its TurnCompleted
    assert turns, "the client prompted, so there is at least one turn"
    assert len({t.started.turn_id for t in turns}) == len(turns), "turn ids are unique"
    for turn in turns:
        end = turn.end
        assert (end.status == "failed") == (end.error is not None), end
        # Every recorded process outlived its turns: none was failed by the replayed close().
        assert end.error is None or end.error.category != "agent_exited", end.error
        if end.status != "completed":
            assert end.final_item_id is None and end.final_text is None, end


@pytest.mark.parametrize(("agent", "scenario"), ALL, ids=ALL_IDS)
def test_every_started_tool_completes_exactly_once_within_its_turn(
    agent: str, scenario: str
) -> None:
    for turn in turns_of(replay_detailed(agent, scenario)):
        open_tools: set[str] = set()
        ended: set[str] = set()
        for event in turn.inner:
            if isinstance(event, ToolStarted):
                assert event.tool_id not in open_tools | ended, f"started twice: {event}"
                open_tools.add(event.tool_id)
            elif isinstance(event, ToolUpdated):
                assert event.tool_id in open_tools, f"update outside the tool's life: {event}"
            elif isinstance(event, ToolCompleted):
                assert event.tool_id in open_tools, f"completed twice or never started: {event}"
                open_tools.remove(event.tool_id)
                ended.add(event.tool_id)
        assert not open_tools, f"still running when {turn.end} arrived: {open_tools}"


@pytest.mark.parametrize(("agent", "scenario"), ALL, ids=ALL_IDS)
def test_text_deltas_name_their_message_and_the_final_answer_is_the_last_message(
    agent: str, scenario: str
) -> None:
    for turn in turns_of(replay_detailed(agent, scenario)):
        deltas = of_type(turn.inner, TextDelta)
        for delta in deltas:
            assert delta.item_id, delta
            assert delta.text, f"empty deltas are dropped: {delta}"
        end = turn.end
        if end.status == "completed" and deltas:
            assert end.final_item_id == deltas[-1].item_id, end
            assert end.final_text == turn.text(end.final_item_id), end


@pytest.mark.parametrize(("agent", "scenario"), ALL, ids=ALL_IDS)
def test_every_approval_sits_on_a_running_tool_and_resolves_once(agent: str, scenario: str) -> None:
    result = replay_detailed(agent, scenario)
    seen_ids: set[tuple[int | None, str]] = set()
    for turn in turns_of(result):
        events = turn.inner
        for i, requested in enumerate(events):
            if not isinstance(requested, ApprovalRequested):
                continue
            key = (turn.process, requested.approval_id)
            assert key not in seen_ids, f"approval id reused in one process: {requested}"
            seen_ids.add(key)
            before, after = events[:i], events[i + 1 :]
            assert requested.tool_id is not None
            assert any(
                isinstance(e, ToolStarted) and e.tool_id == requested.tool_id for e in before
            ), f"{requested} names no announced tool"
            assert not any(
                isinstance(e, ToolCompleted) and e.tool_id == requested.tool_id for e in before
            ), f"{requested} for a tool that already ended"
            resolutions = [
                j
                for j, e in enumerate(after)
                if isinstance(e, ApprovalResolved) and e.approval_id == requested.approval_id
            ]
            assert len(resolutions) == 1, f"{requested} resolved {len(resolutions)} times"
            # After the decision the tool moves on (the turn's end would close it otherwise).
            assert any(
                isinstance(e, ToolUpdated | ToolCompleted) and e.tool_id == requested.tool_id
                for e in after[resolutions[0] :]
            ), f"nothing happened to {requested.tool_id} after the decision"


@pytest.mark.parametrize(("agent", "scenario"), ALL, ids=ALL_IDS)
def test_no_streamed_text_is_lost_or_invented(agent: str, scenario: str) -> None:
    deltas = of_type(replay(agent, scenario), TextDelta)
    assert "".join(d.text for d in deltas) == streamed_on_wire(load(agent, scenario))


@pytest.mark.parametrize(("agent", "scenario"), ALL, ids=ALL_IDS)
def test_replay_is_deterministic(agent: str, scenario: str) -> None:
    assert replay_detailed(agent, scenario) == replay_detailed(agent, scenario)


# -- text ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_text_turn(agent: str) -> None:
    result = replay_detailed(agent, "text")
    assert len(of_type(result.events, TurnStarted)) == 1
    assert len(of_type(result.events, TurnCompleted)) == 1
    turn = one_turn(result)
    assert turn.text() == "ECHO: hello from the recorder"
    end = turn.end
    assert end.status == "completed"
    assert end.error is None
    assert end.final_text == "ECHO: hello from the recorder"
    assert not of_type(turn.inner, ToolStarted)
    assert not of_type(turn.inner, ApprovalRequested)


# -- tools and approvals -------------------------------------------------------------------------


@pytest.mark.parametrize("agent", AGENTS)
def test_approved_command_runs(agent: str) -> None:
    turn = one_turn(replay_detailed(agent, "tool_approved"))
    tool = only_tool(turn)
    requested, resolved = only_approval(turn)
    done = completion(turn, tool.tool_id)

    assert tool.kind == "command"
    if agent in COMMAND_AT_START:
        # quoted as bash will run it, the same text over both protocols
        assert tool.command == "/bin/bash -lc 'echo approved > approved.txt && cat approved.txt'"
    else:
        assert tool.command is None
    assert "echo approved > approved.txt" in tool_titles(turn.inner, tool.tool_id)[-1]
    assert requested.kind == "command"
    assert requested.tool_id == tool.tool_id
    assert "echo approved > approved.txt" in requested.title
    assert resolved.decision == "accept"
    assert resolved.by == "user"
    assert done.status == "completed"
    if agent == "gemini":
        assert done.output is None  # gemini reports the output only to the model
    else:
        assert done.output is not None and done.output.strip() == "approved"
    if agent == "codex":
        assert done.exit_code == 0
    order = [index_of(turn, e) for e in (tool, requested, resolved, done)]
    assert order == sorted(order)
    assert turn.end.status == "completed"
    assert turn.end.final_text is not None and "approved" in turn.end.final_text


DECLINE_ANSWER = {
    # what the model was told and said, in the turn's final answer (None: it was not asked again)
    "codex": 'Rejected(\\"rejected by user\\")',
    "codex-acp": None,
    "claude-agent-acp": "User refused permission to run tool",
    "gemini": 'Tool "run_shell_command" was canceled by the user.',
    "qwen": None,
    "opencode": None,
}


@pytest.mark.parametrize("agent", AGENTS)
def test_declined_command_ends_declined(agent: str) -> None:
    turn = one_turn(replay_detailed(agent, "tool_declined"))
    tool = only_tool(turn)
    requested, resolved = only_approval(turn)
    done = completion(turn, tool.tool_id)

    assert tool.kind == "command"
    assert "echo declined > declined.txt" in tool_titles(turn.inner, tool.tool_id)[-1]
    assert requested.tool_id == tool.tool_id
    assert resolved.decision == "decline"
    # codex says "declined" itself; for ACP the tracker ends the tool at the decision and ignores
    # what the agent reports later (claude, qwen, opencode send "failed"; gemini nothing).
    assert done.status == "declined"
    assert index_of(turn, resolved) < index_of(turn, done)
    after = turn.inner[index_of(turn, done) + 1 :]
    assert not [e for e in after if isinstance(e, ToolUpdated) and e.tool_id == tool.tool_id]

    end = turn.end
    if agent == "codex-acp":
        # its only refusal is "abort": the prompt ends cancelled, the model is not asked again
        assert end.status == "interrupted"
    else:
        assert end.status == "completed"
    answer = DECLINE_ANSWER[agent]
    if answer is None:
        assert end.final_text is None
        assert not of_type(after, TextDelta)
    else:
        assert end.final_text is not None and answer in end.final_text


@pytest.mark.parametrize("agent", AGENTS)
def test_approved_write_is_a_file_change_on_written_txt(agent: str) -> None:
    turn = one_turn(replay_detailed(agent, "write_approved"))
    tool = only_tool(turn)
    requested, resolved = only_approval(turn)

    assert tool.kind == "file_change"
    changes = tool_changes(turn.inner, tool.tool_id)
    assert changes, "the path reaches the card"
    assert {(c.path, c.kind) for c in changes} == {("<cwd>/written.txt", "add")}
    assert all(c.diff and "hello from the fake model" in c.diff for c in changes)
    assert requested.kind == "file_change"
    assert requested.tool_id == tool.tool_id
    assert resolved.decision == "accept"
    assert completion(turn, tool.tool_id).status == "completed"
    assert turn.end.status == "completed"


# -- cancel / interrupt --------------------------------------------------------------------------


def _stopped_then_next(agent: str, scenario: str, stop_method: str) -> None:
    result = replay_detailed(agent, scenario)
    wires = load(agent, scenario)
    stop = wire_line(wires, "out", stop_method)
    first, second = turns_of(result)

    assert first.text().startswith("slow-00 ")
    assert first.end.status == "interrupted"
    assert first.end.error is None
    ended_at = next(e.line for e in result.emitted if e.event is first.completed)
    assert ended_at > stop, "the turn ends after the client stopped it, not before"
    assert second.end.status == "completed"
    assert second.end.final_text == f"ECHO: after the {stop_method.split('/')[1]}"


@pytest.mark.parametrize("agent", ACP)
def test_cancel_interrupts_the_turn_and_the_next_prompt_works(agent: str) -> None:
    _stopped_then_next(agent, "cancel", "session/cancel")


def test_opencode_streams_on_after_cancel_until_it_answers_cancelled() -> None:
    first = turns_of(replay_detailed("opencode", "cancel"))[0]
    assert first.text().count("slow-") > 1


def test_codex_interrupt_interrupts_the_turn_and_the_next_turn_works() -> None:
    _stopped_then_next("codex", "interrupt", "turn/interrupt")


# -- failures ------------------------------------------------------------------------------------

CODE_400 = {"codex": "other", "gemini": "400"}  # the others: JSON-RPC -32603


@pytest.mark.parametrize("agent", AGENTS)
def test_http_400_fails_the_turn_as_an_invalid_request(agent: str) -> None:
    end = one_turn(replay_detailed(agent, "error_400")).end
    assert end.status == "failed"
    assert end.error is not None
    assert end.error.category == "invalid_request"
    assert end.error.retryable is False
    assert end.error.code == CODE_400.get(agent, "-32603")
    assert "fake invalid request" in end.error.message


CATEGORY_500 = {
    "codex": "upstream_5xx",  # codexErrorInfo internalServerError
    "codex-acp": "overloaded",  # only the message, "high demand", is read
}


@pytest.mark.parametrize("agent", FAILS_500_AT_ONCE)
def test_http_500_fails_the_turn_retryably(agent: str) -> None:
    end = one_turn(replay_detailed(agent, "error_500")).end
    assert end.status == "failed"
    assert end.error is not None
    assert end.error.retryable is True
    assert end.error.category == CATEGORY_500[agent]
    assert "high demand" in end.error.message


STREAM_CUT = {
    "codex": "stream_interrupted",
    "codex-acp": "stream_interrupted",
    "claude-agent-acp": "stream_interrupted",  # ECONNRESET, after its own retries
    "gemini": "upstream_5xx",  # JSON-RPC code 500, message "terminated"
    "opencode": "stream_interrupted",
    "qwen": None,  # asks the model to resume and ends the turn normally
}


@pytest.mark.parametrize("agent", AGENTS)
def test_cut_stream(agent: str) -> None:
    turn = one_turn(replay_detailed(agent, "stream_cut"))
    # the part streamed before the cut reaches the client (claude's chunking cut it sooner)
    assert turn.text().startswith("This answer is ")
    if agent == "claude-agent-acp":
        # claude adds its error as a message of its own before failing the prompt
        assert turn.text().endswith(
            "API Error: Connection to the API was lost (ECONNRESET). "
            "This is usually temporary — try again."
        )
    end = turn.end
    category = STREAM_CUT[agent]
    if category is None:
        assert end.status == "completed"
        assert end.final_text == "This answer is cut short before (resumed after the cut)"
    else:
        assert end.status == "failed"
        assert end.error is not None
        assert end.error.category == category
        assert end.error.retryable is True


# -- threads and sessions across turns and processes ---------------------------------------------


def test_codex_steer_feeds_the_running_turn() -> None:
    result = replay_detailed("codex", "steer")
    wires = load("codex", "steer")
    steer = wire_line(wires, "out", "turn/steer")
    turn = one_turn(result)
    assert wires[steer].msg["params"]["expectedTurnId"] == turn.started.turn_id
    before = [e.event for e in turn.events if e.line < steer]
    after = [e.event for e in turn.events if e.line > steer]
    assert "".join(d.text for d in of_type(before, TextDelta)) == "slow-00 "
    assert "".join(d.text for d in of_type(after, TextDelta)) == "ECHO: steered: say this instead"
    end = turn.end
    assert end.status == "completed"
    # The SLOW message, left open when the steer arrived, is commentary; the answer is the
    # message that followed the steer.
    assert end.final_item_id != of_type(before, TextDelta)[0].item_id
    assert end.final_text == "ECHO: steered: say this instead"


def test_codex_fork_runs_its_turn_on_the_new_thread() -> None:
    result = replay_detailed("codex", "fork")
    wires = load("codex", "fork")
    asked = wire_line(wires, "out", "thread/fork")
    parent = wires[asked].msg["params"]["threadId"]
    child = wires[response_line(wires, asked)].msg["result"]["thread"]["id"]
    assert parent != child
    assert result.owners() == [parent, child]
    parent_turn, child_turn = turns_of(result)
    assert parent_turn.owner == parent
    assert parent_turn.end.final_text == "ECHO: remember the word PINEAPPLE"
    assert child_turn.owner == child
    assert child_turn.end.status == "completed"
    assert child_turn.end.final_text == "HISTORY: remember the word PINEAPPLE | HISTORY of the fork"


def test_codex_resume_in_a_new_process_continues_the_thread() -> None:
    result = replay_detailed("codex", "resume")
    first, second = turns_of(result)
    assert first.process == 1
    assert second.process == 2
    assert first.owner == second.owner, "the same thread, resumed"
    assert first.started.turn_id != second.started.turn_id
    assert second.end.status == "completed"
    assert second.end.final_text == (
        "HISTORY: remember the word PINEAPPLE | HISTORY after the resume"
    )


@pytest.mark.parametrize("agent", LOADS)
def test_loaded_session_ignores_the_replayed_history_and_answers_with_it(agent: str) -> None:
    result = replay_detailed(agent, "load")
    wires = load(agent, "load")
    loaded = response_line(wires, wire_line(wires, "out", "session/load", process=2))
    history = [w for w in wires[:loaded] if w.process == 2 and w.msg.get("method")]
    assert any(
        (w.msg["params"].get("update") or {}).get("sessionUpdate") == "agent_message_chunk"
        for w in history
        if w.msg["method"] == "session/update"
    ), "the agent replays its history before answering session/load"
    assert all(e.line > loaded for e in result.emitted if e.process == 2)

    first, second = turns_of(result)
    assert (first.process, second.process) == (1, 2)
    assert first.owner == second.owner, "the same session, loaded"
    assert first.started.turn_id != second.started.turn_id, "a reloaded session reuses no id"
    assert first.end.final_text == "ECHO: remember the word PINEAPPLE"
    assert second.text() == "HISTORY: remember the word PINEAPPLE | HISTORY of this conversation"
    assert second.end.final_text == second.text()


# -- reconciliation (App Server) -----------------------------------------------------------------


@pytest.mark.parametrize("scenario", sorted(s for a, s in ALL if a in APP_SERVER_AGENTS))
def test_codex_idle_status_just_before_turn_completed_asks_for_a_read(scenario: str) -> None:
    """Codex 0.171 sends ``thread/status/changed`` idle right before every ``turn/completed``
    of a turn that did not fail, so the tracker flags each for reconciliation; the
    ``turn/completed`` that follows ends the turn by itself, which is why the client waits a
    grace period before it reads (test_app_server_reconcile.py)."""
    result = replay_detailed("codex", scenario)
    wires = load("codex", scenario)
    turns = turns_of(result)
    assert len(result.reconciles) == sum(t.end.status != "failed" for t in turns)
    for reconcile in result.reconciles:
        status = wires[reconcile.line].msg
        assert status["method"] == "thread/status/changed"
        assert status["params"]["status"]["type"] == "idle"
        following = wires[reconcile.line + 1].msg
        assert following["method"] == "turn/completed"
        assert following["params"]["turn"]["id"] == reconcile.turn_id
        assert [
            e.line
            for e in result.emitted
            if isinstance(e.event, TurnCompleted) and e.event.turn_id == reconcile.turn_id
        ] == [reconcile.line + 1]


def test_events_are_grouped_by_the_session_or_thread_they_belong_to() -> None:
    # one owner per single-session scenario; the wire's session id is that owner
    for agent in AGENTS:
        result = replay_detailed(agent, "text")
        by_owner: dict[str, int] = defaultdict(int)
        for emitted in result.emitted:
            by_owner[emitted.owner] += 1
        assert len(by_owner) == 1, by_owner
        wires = load(agent, "text")
        new = "thread/start" if agent in APP_SERVER_AGENTS else "session/new"
        answer = wires[response_line(wires, wire_line(wires, "out", new))].msg["result"]
        owner = answer["thread"]["id"] if agent in APP_SERVER_AGENTS else answer["sessionId"]
        assert list(by_owner) == [owner]
