"""The agent actor and its process: lazy start, sharing, faults, restarts, policy, shutdown.

Driven through ``robota.core.agents`` messages, the way routes will drive it, against
``tests/support/fault_agent.py``: a real subprocess speaking ACP over real pipes that misbehaves
on request (exits mid-turn, writes garbage or a 20 MiB line, never answers ``initialize``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from robota.core.agents import (
    AgentFailure,
    CloseSession,
    DecideApproval,
    InterruptTurn,
    OpenSession,
    SessionOpened,
    StartTurn,
    SteerRefused,
    SteerTurn,
    TurnAccepted,
    TurnRefused,
)
from robota.core.events import (
    ApprovalRequested,
    ApprovalResolved,
    TextDelta,
    TurnCompleted,
    TurnStarted,
)
from robota.core.testing import wait_until

from ..support.agent_actor import Chat, agent, alive, fault_launch, pids


async def test_a_turn_through_the_actor_and_the_process_starts_only_on_first_use(
    tmp_path: Path,
) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        await trio.sleep(0.3)
        assert pids(tmp_path) == []  # nothing spawned while nobody asked
        chat = Chat(host, "route-1", tmp_path)
        chat.open()
        opened = await chat.next(SessionOpened)
        assert (opened.resumed, opened.restarted) == (False, False)
        assert opened.agent_version == "1.0.0"
        chat.prompt("hello")
        started = await chat.next(TurnStarted)
        accepted = await chat.next(TurnAccepted)  # after the turn's first event, never before
        assert started.turn_id == accepted.turn_id
        done = await chat.next(TurnCompleted)
        assert (done.turn_id, done.status, done.final_text) == (
            accepted.turn_id,
            "completed",
            "echo: hello",
        )
        assert len(pids(tmp_path)) == 1


async def test_sessions_share_one_process_and_are_kept_apart(tmp_path: Path) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chats = [Chat(host, f"route-{n}", tmp_path) for n in range(3)]
        for chat in chats:
            chat.open()
        ids = {(await chat.next(SessionOpened)).session_id for chat in chats}
        assert len(ids) == 3
        for n, chat in enumerate(chats):
            chat.prompt(f"number {n}")
        for n, chat in enumerate(chats):
            done = await chat.next(TurnCompleted)
            assert done.final_text == f"echo: number {n}"
            assert chat.text() == f"echo: number {n}"
        assert len(pids(tmp_path)) == 1  # one process, one handshake, three sessions


async def test_agent_exiting_mid_turn_fails_the_turn_then_restarts_and_resumes(
    tmp_path: Path,
) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        first = await chat.next(SessionOpened)
        assert (await chat.turn("before the crash")).status == "completed"
        failed = await chat.turn("EXIT now")
        assert failed.status == "failed"
        assert failed.error is not None
        assert failed.error.category == "agent_exited"
        assert "exit code 3" in failed.error.message
        assert not alive(pids(tmp_path)[0])
        # The next prompt starts a new process, which resumes the same session.
        chat.prompt("HISTORY please")
        reopened = await chat.next(SessionOpened)
        answer = await chat.next(TurnCompleted)
        assert (reopened.session_id, reopened.resumed, reopened.restarted) == (
            first.session_id,
            True,
            True,
        )
        assert answer.status == "completed"
        assert answer.final_text == "history: before the crash | EXIT now | HISTORY please"
        assert len(pids(tmp_path)) == 2


async def test_a_few_garbage_lines_are_skipped_and_the_turn_completes(tmp_path: Path) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        done = await chat.turn("GARBAGE incoming")
        assert (done.status, done.final_text) == ("completed", "survived the garbage")
        assert len(pids(tmp_path)) == 1


@pytest.mark.parametrize(
    ("prompt", "reason"),
    [
        ("FLOOD", "lines in a row that are not JSON-RPC"),
        ("LONGLINE", "wrote a line longer than 16777216 bytes"),
    ],
)
async def test_output_that_cannot_be_trusted_fails_the_turn_and_restarts_the_agent(
    tmp_path: Path, prompt: str, reason: str
) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        failed = await chat.turn(prompt)
        assert failed.status == "failed"
        assert failed.error is not None
        assert failed.error.category == "agent_exited"
        assert reason in failed.error.message
        assert (await chat.turn("after")).final_text == "echo: after"
        first, second = pids(tmp_path)
        assert not alive(first) and alive(second)


async def test_an_agent_that_never_answers_initialize_fails_each_request_and_never_hangs(
    tmp_path: Path,
) -> None:
    launch = fault_launch(tmp_path, FAULT_AGENT_SILENT="1")
    async with agent(launch, handshake_timeout=0.5) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        failure = await chat.next(AgentFailure)
        assert failure.request == "open"
        assert "did not answer initialize within 0.5 s" in failure.message
        chat.prompt("anyone there?")
        refused = await chat.next(TurnRefused)
        assert refused.reason == "failed"
        assert "did not answer initialize" in refused.message
        spawned = pids(tmp_path)
        assert len(spawned) == 2  # a restart per attempt, each process ended
        await wait_until(lambda: not any(alive(pid) for pid in spawned))


async def test_interrupt_ends_the_turn_interrupted_and_steer_is_refused_on_acp(
    tmp_path: Path,
) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        chat.prompt("HANG around")
        accepted = await chat.next(TurnAccepted)
        await chat.next(TextDelta)
        chat.prompt("second prompt")
        busy = await chat.next(TurnRefused)
        assert (busy.reason, busy.text) == ("busy", "second prompt")
        host.address.tell(SteerTurn("route", accepted.turn_id, "more input"))
        refused = await chat.next(SteerRefused)
        assert (refused.reason, refused.text) == ("unsupported", "more input")
        host.address.tell(SteerTurn("route", "some-old-turn", "late"))
        assert (await chat.next(SteerRefused)).reason == "ended"
        host.address.tell(InterruptTurn("route"))
        done = await chat.next(TurnCompleted)
        assert (done.turn_id, done.status) == (accepted.turn_id, "interrupted")


async def test_approvals_reach_the_route_and_its_decision_reaches_the_agent(
    tmp_path: Path,
) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        chat.prompt("ASK me")
        request = await chat.next(ApprovalRequested)
        host.address.tell(DecideApproval("route", request.approval_id, "accept"))
        resolved = await chat.next(ApprovalResolved)
        assert (resolved.decision, resolved.by) == ("accept", "user")
        done = await chat.next(TurnCompleted)
        assert "permission: allow_once" in chat.text()
        assert done.status == "completed"


@pytest.mark.parametrize(
    ("spec", "decision", "kind"),
    [
        ({"human_approves": False}, "decline", "reject_once"),
        ({"permission_mode": "bypassPermissions"}, "accept", "allow_once"),
        ({"permission_mode": "acceptEdits", "human_approves": False}, "accept", "allow_once"),
    ],
)
async def test_policy_answers_approvals_nobody_can_or_needs_to_answer(
    tmp_path: Path, spec: dict[str, Any], decision: str, kind: str
) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open(**spec)
        chat.prompt("ASK me")
        resolved = await chat.next(ApprovalResolved)
        assert (resolved.decision, resolved.by) == (decision, "policy")
        assert (await chat.next(TurnCompleted)).status == "completed"
        assert f"permission: {kind}" in chat.text()


async def test_opening_an_open_session_again_rebinds_it_to_the_new_deliver(
    tmp_path: Path,
) -> None:
    """A restarted route opens its task's session again: the session carries on (no second
    open at the agent) and its notices go to the new incarnation."""
    async with agent(fault_launch(tmp_path)) as host:
        first = Chat(host, "route", tmp_path)
        first.open()
        opened = await first.next(SessionOpened)
        second = Chat(host, "route", tmp_path)
        second.open()
        assert (await second.turn("after the restart")).final_text == "echo: after the restart"
        assert not any(isinstance(n, SessionOpened) for n in second.notices.messages)
        assert not any(isinstance(n, AgentFailure) for n in second.notices.messages)
        assert len(first.notices.messages) == 1 and opened.session_id


async def test_closed_sessions_hear_nothing_and_unknown_keys_are_ignored(tmp_path: Path) -> None:
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        await chat.next(SessionOpened)
        host.address.tell(CloseSession("route"))
        host.address.tell(StartTurn("route", "into the void"))
        other = Chat(host, "other", tmp_path)
        other.open()
        assert (await other.turn("still serving")).final_text == "echo: still serving"
        assert not any(isinstance(n, TurnAccepted) for n in chat.notices.messages)


async def test_stopping_robota_ends_agents_that_ignore_eof_and_their_children(
    tmp_path: Path,
) -> None:
    launch = fault_launch(tmp_path, FAULT_AGENT_CHILD="1", FAULT_AGENT_IGNORE_EOF="1")
    async with agent(launch) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        chat.prompt("HANG on")
        await chat.next(TextDelta)
        leader, helper = pids(tmp_path)
        assert alive(leader) and alive(helper)
    # The supervisor has stopped: the running turn failed and the whole group is gone.
    ended = await chat.next(TurnCompleted)
    assert ended.status == "failed"
    assert ended.error is not None and "was stopped" in ended.error.message
    assert not alive(leader)
    await wait_until(lambda: not alive(helper))


async def test_a_request_the_session_table_fails_on_ends_the_process_and_its_turn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The table's "crash": its state is not trusted, so the process goes (the running turn
    fails, naming why) and the next prompt runs in a new process that resumes the session."""
    async with agent(fault_launch(tmp_path)) as host:
        chat = Chat(host, "route", tmp_path)
        chat.open()
        first = await chat.next(SessionOpened)
        chat.prompt("HANG until the process goes")
        await chat.next(TurnStarted)
        # A caller's bug: a request without a spec (the table reads its fields).
        host.address.tell(OpenSession("other", None, chat.add))  # type: ignore[arg-type]
        failed = await chat.next(TurnCompleted)
        assert failed.status == "failed"
        assert failed.error is not None
        assert "session table failed" in failed.error.message
        assert "handling OpenSession failed" in caplog.text
        await wait_until(lambda: not alive(pids(tmp_path)[0]), timeout=10)
        chat.prompt("HISTORY after the table failed")
        reopened = await chat.next(SessionOpened)
        answer = await chat.next(TurnCompleted)
        assert (reopened.session_id, reopened.resumed) == (first.session_id, True)
        assert (
            answer.final_text
            == "history: HANG until the process goes | HISTORY after the table failed"
        )
        assert len(pids(tmp_path)) == 2
