"""The route core as tables: a state and a message in, the effects out. No threads, no actors,
no store: reads come from a dict-backed port, ids and clocks are counters."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from robota.core import AgentCapabilities, replace
from robota.core.agents import (
    AgentFailure,
    AgentSessionInfo,
    CloseSession,
    InterruptTurn,
    SessionEvent,
    SessionOpened,
    SessionsListed,
    SessionSpec,
    StartTurn,
    Steered,
    SteerRefused,
    SteerTurn,
    TurnRefused,
)
from robota.core.engine import (
    AgentEntry,
    AttemptNotRecorded,
    ClaimFinal,
    Effect,
    FinalClaimed,
    ForkTask,
    InputQueued,
    InputSteered,
    Interrupt,
    ListAgentSessions,
    MakeDirectory,
    Notify,
    OpenAgentSession,
    PromptQueued,
    QueuedTaken,
    Recover,
    RouteIdle,
    RouteReply,
    Running,
    SessionsEntry,
    SessionsListing,
    TaskOpened,
    Tell,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    UseTask,
    Write,
    recovery_prompt,
    retry_prompt,
)
from robota.core.events import TextDelta, TurnCompleted, TurnError, TurnStarted
from robota.core.store import (
    BindRouteTask,
    CancelPrompt,
    CreateTask,
    EnqueuePrompt,
    FinishTurnAttempt,
    InsertTurnAttempt,
    QueuedPrompt,
    ResetTaskToTurn,
    TakeQueuedTurn,
    Together,
    UpdateTask,
    UpdateTurnAttempt,
)

from ._route import (
    CODEX,
    CWD,
    GEMINI,
    KEY,
    QUEUES,
    WALL,
    Nowhere,
    Reads,
    attempt,
    of,
    route,
    running_turn,
    task,
)


def spec(**changes: Any) -> SessionSpec:
    """The current task's (``t0``) session, with ``changes``."""
    return replace(SessionSpec(cwd=CWD, resume_id="thread-0", task_id="t0"), **changes)


def reply(text: str, *, error: bool = False) -> Notify:
    return Notify(RouteReply(KEY, text, "error" if error else "info"))


def replies(effects: Sequence[Effect]) -> list[str]:
    return [
        e.notice.text for e in effects if isinstance(e, Notify) and isinstance(e.notice, RouteReply)
    ]


def dispatch(task_id: str, attempt_id: str, text: str, agent: str = "codex") -> tuple[Effect, ...]:
    return (
        Running(attempt_id, running=True),
        Notify(TurnBegan(KEY, task_id, attempt_id, text)),
        Tell(agent, StartTurn(task_id, text)),
    )


# -- prompts ---------------------------------------------------------------------------------------


def test_a_prompt_with_no_task_creates_one_records_the_attempt_and_sends_after_the_commit() -> None:
    core = route()
    effects = core.handle(UserInput("hello"))
    created = CreateTask(
        id="t1",
        agent="codex",
        cwd=str(CWD),
        runtime_kind="app-server",
        title=None,
        model=None,
        permission_mode="default",
        forked_from=None,
        fork_turn_id=None,
        developer_instructions=None,
        effort=None,
        provider=None,
        remote_id=None,
        at=WALL,
    )
    insert = InsertTurnAttempt(id="a1", task_id="t1", route_key=KEY, prompt="hello")
    assert effects == [
        Write(created),
        Write(BindRouteTask(KEY, "t1")),
        OpenAgentSession("codex", "t1", spec(resume_id=None, task_id="t1")),
        Write(insert, effects[3].ack, then=dispatch("t1", "a1", "hello")),  # type: ignore[union-attr]
    ]
    write = effects[3]
    assert isinstance(write, Write) and write.ack is not None
    ack = write.ack
    assert ack.message(1) is None  # a committed attempt goes on in the writer's thread
    failure = OSError("disk full")
    assert ack.message(failure) == AttemptNotRecorded("a1", failure)


@pytest.mark.parametrize(
    ("agent", "steers", "expected"),
    [
        (CODEX, True, [Tell("codex", SteerTurn("t0", "turn-1", "also this"))]),
        (GEMINI, False, "queue"),
        (CODEX, False, "queue"),  # the session said it cannot, whatever the plugin declared
    ],
)
def test_text_during_a_turn_steers_or_queues_by_what_the_session_can(
    agent: AgentEntry, steers: bool, expected: object
) -> None:
    core = route(agent, current=task(agent=agent.name))
    running_turn(core, steers=steers)
    effects = core.handle(UserInput("also this"))
    if expected == "queue":
        assert len(effects) == 1
        write = effects[0]
        assert isinstance(write, Write)
        assert write.op == EnqueuePrompt(KEY, "also this", task_id="t0")
        assert write.ack is not None and write.ack.message(7) == PromptQueued("also this", 7)
    else:
        assert effects == expected
        assert core.handle(Steered("t0", "turn-1")) == [
            Notify(InputSteered(KEY, core.state.turn.attempt_id, "also this"))  # type: ignore[union-attr]
        ]


@pytest.mark.parametrize("sender", [None, "surface:3", "om_message"])
def test_a_steer_and_a_queued_prompt_say_what_they_came_as(sender: str | None) -> None:
    """``UserInput.message_id`` rides with a steer until the agent takes it, and with a queued
    prompt through the queue's write: a surface names whose input each was."""
    core = route(CODEX, current=task(agent="codex"))
    running_turn(core, steers=True)
    core.handle(UserInput("also this", message_id=sender))
    attempt = core.state.turn.attempt_id  # type: ignore[union-attr]
    assert core.handle(Steered("t0", "turn-1")) == [
        Notify(InputSteered(KEY, attempt, "also this", sender))
    ]
    queued = route(GEMINI, current=task(agent="gemini"))
    running_turn(queued, steers=False)
    (write,) = queued.handle(UserInput("later", message_id=sender))
    assert isinstance(write, Write) and write.ack is not None
    assert write.op == EnqueuePrompt(KEY, "later", task_id="t0", message_id=sender)
    assert queued.handle(write.ack.message(5)) == [Notify(InputQueued(KEY, 5, "later", 0, sender))]


def test_a_queued_acknowledgement_counts_the_prompt_and_it_waits_for_the_turn() -> None:
    core = route(GEMINI, current=task(agent="gemini"))
    running_turn(core, steers=False)
    core.handle(UserInput("second"))
    assert core.handle(PromptQueued("second", 5)) == [Notify(InputQueued(KEY, 5, "second", 0))]
    assert core.handle(PromptQueued("third", 6)) == [Notify(InputQueued(KEY, 6, "third", 1))]
    assert core.state.queued == 2
    assert core.handle(PromptQueued("lost", error=OSError("full"))) == [
        reply("could not queue the prompt: full", error=True)
    ]
    assert core.state.queued == 2


def test_a_queued_prompt_is_taken_when_the_turn_ends_and_sent_at_once() -> None:
    core = route(GEMINI, current=task(agent="gemini"))
    running_turn(core, steers=False)
    core.handle(PromptQueued("queued text", 5))
    first = core.state.turn
    assert first is not None
    core.handle(SessionEvent("t0", TurnCompleted("turn-1", "completed", final_text="done")))
    finished = TurnFinished(
        KEY, "t0", first.attempt_id, "completed", "done", None, None, "turn-1", 500
    )
    effects = core.handle(FinalClaimed(finished, won=True))
    take = TakeQueuedTurn(KEY, "a2", "t0", parent_id=first.attempt_id)
    assert len(effects) == 1 and isinstance(effects[0], Write) and effects[0].op == take
    prompt = QueuedPrompt(5, KEY, "t0", "queued text", None, (), None, "pending", WALL)
    effects = core.handle(effects[0].ack.message(prompt))  # type: ignore[union-attr]
    assert effects == list(dispatch("t0", "a2", "queued text", "gemini"))
    assert core.state.queued == 0


def test_an_empty_take_clears_what_the_route_thought_was_queued_and_says_idle() -> None:
    core = route(current=task(), pending=(9,))
    core.handle(Recover("queue"))
    assert core.state.taking
    assert core.handle(QueuedTaken(None, "a1", "t0")) == [Notify(RouteIdle(KEY, 0))]
    assert core.state.queued == 0


# -- turn events, completion, retries, the final claim ---------------------------------------------


def test_turn_events_mark_the_attempt_running_and_reach_the_front_end() -> None:
    core = route(current=task())
    core.handle(SessionOpened("t0", "thread-0", resumed=True))
    core.handle(UserInput("go"))
    started = core.handle(SessionEvent("t0", TurnStarted("turn-9")))
    assert started == [
        Write(
            UpdateTurnAttempt(
                "a1", "running", remote_turn_id="turn-9", remote_session_id="thread-0"
            )
        ),
        Notify(TurnUpdate(KEY, "t0", "a1", TurnStarted("turn-9"))),
    ]
    delta = TextDelta("m", "hi")
    assert core.handle(SessionEvent("t0", delta)) == [Notify(TurnUpdate(KEY, "t0", "a1", delta))]
    assert core.handle(SessionEvent("other-task", delta))[0].level == "debug"  # type: ignore[union-attr]


def test_completion_writes_the_outcome_then_claims_the_final_with_the_last_update() -> None:
    core = route(current=task())
    running_turn(core)
    completed = TurnCompleted("turn-1", "completed", final_text="answer")
    effects = core.handle(SessionEvent("t0", completed))
    assert effects[:2] == [
        Running("a1", running=False),
        Write(FinishTurnAttempt("a1", "completed", remote_turn_id="turn-1", final_text="answer")),
    ]
    claim = effects[2]
    assert isinstance(claim, ClaimFinal) and len(effects) == 3
    assert claim.before == (TurnUpdate(KEY, "t0", "a1", completed),)
    assert (claim.finished.status, claim.finished.final_text) == ("completed", "answer")
    assert core.state.task is not None and core.state.task.head_attempt_id == "a1"
    # late events of the finishing turn are dropped
    assert of(core.handle(SessionEvent("t0", TextDelta("m", "late"))), Notify) == []
    assert core.handle(FinalClaimed(claim.finished, won=True)) == [Notify(RouteIdle(KEY, 1))]


@pytest.mark.parametrize(("retries", "retried"), [(0, True), (2, True), (3, False)])
def test_a_transient_failure_is_retried_up_to_three_times(retries: int, retried: bool) -> None:
    core = route(current=task())
    running_turn(core, "the request")
    assert core.state.turn is not None
    core.state.turn.retry_count = retries
    error = TurnError("rate limited", "rate_limit", retryable=True)
    effects = core.handle(SessionEvent("t0", TurnCompleted("turn-1", "failed", error)))
    claim = of(effects, ClaimFinal)[0]
    effects = core.handle(FinalClaimed(claim.finished, won=True))
    if not retried:
        assert effects == [Notify(RouteIdle(KEY, 1))]
        return
    attempt_no = retries + 1
    assert effects[0] == reply(f"rate limited: retrying ({attempt_no} of 3)")
    write = effects[1]
    assert isinstance(write, Write) and isinstance(write.op, InsertTurnAttempt)
    assert write.op.prompt == retry_prompt("the request", attempt_no)
    assert write.op.retry_count == attempt_no


def test_a_permanent_failure_is_not_retried() -> None:
    core = route(current=task())
    running_turn(core)
    error = TurnError("bad request", "invalid_request", retryable=False)
    claim = of(
        core.handle(SessionEvent("t0", TurnCompleted("turn-1", "failed", error))), ClaimFinal
    )[0]
    assert core.handle(FinalClaimed(claim.finished, won=True)) == [Notify(RouteIdle(KEY, 1))]


@pytest.mark.parametrize("won", [True, False])
def test_the_final_claim_ends_the_turn_won_or_lost(won: bool) -> None:
    core = route(current=task())
    running_turn(core)
    claim = of(core.handle(SessionEvent("t0", TurnCompleted("turn-1", "completed"))), ClaimFinal)[0]
    assert core.handle(FinalClaimed(claim.finished, won=won)) == [Notify(RouteIdle(KEY, 1))]
    assert core.state.turn is None


def test_a_failed_claim_is_logged_and_the_route_goes_on() -> None:
    core = route(current=task())
    running_turn(core)
    claim = of(core.handle(SessionEvent("t0", TurnCompleted("turn-1", "completed"))), ClaimFinal)[0]
    effects = core.handle(FinalClaimed(claim.finished, won=False, error=OSError("locked")))
    assert effects[0].level == "error" and "locked" in effects[0].text  # type: ignore[union-attr]
    assert effects[1:] == [Notify(RouteIdle(KEY, 1))]


def test_an_attempt_that_could_not_be_recorded_ends_failed_and_never_ran() -> None:
    core = route(current=task())
    core.handle(UserInput("go"))
    effects = core.handle(AttemptNotRecorded("a1", OSError("disk full")))
    claim = of(effects, ClaimFinal)[0]
    assert claim.finished.status == "failed"
    assert claim.finished.error is not None
    assert "could not be recorded: disk full" in claim.finished.error.message


def test_a_refused_turn_ends_failed_with_the_agents_reason() -> None:
    core = route(current=task())
    core.handle(UserInput("go"))
    effects = core.handle(TurnRefused("t0", "go", "busy", "thread is running a turn"))
    claim = of(effects, ClaimFinal)[0]
    assert claim.finished.error is not None
    assert claim.finished.error.message == "thread is running a turn"


@pytest.mark.parametrize(
    ("turn_waits", "said"),
    [(True, []), (False, ["agent: open failed: agent exited (exit code 4)"])],
    ids=["under-a-turn", "no-turn"],
)
def test_an_open_failure_is_said_once(turn_waits: bool, said: list[str]) -> None:
    """Under a waiting turn the turn's own failure carries the reason; else the route says it."""
    core = route(current=task())
    if turn_waits:
        core.handle(UserInput("go"))
    else:
        core.handle(UseTask("t0"))
    effects = core.handle(AgentFailure("t0", "open", "agent exited (exit code 4)"))
    assert replies(effects) == said
    if turn_waits:
        refused = core.handle(TurnRefused("t0", "go", "failed", "agent exited (exit code 4)"))
        claim = of(refused, ClaimFinal)[0]
        assert claim.finished.error is not None
        assert claim.finished.error.message == "agent exited (exit code 4)"


@pytest.mark.parametrize(("reason", "front"), [("ended", True), ("unsupported", False)])
def test_a_refused_steer_is_queued_first_when_it_lost_the_race(reason: Any, front: bool) -> None:
    core = route(current=task())
    running_turn(core)
    core.handle(UserInput("steer me"))
    effects = core.handle(SteerRefused("t0", "steer me", reason, "no"))
    assert [e.op for e in of(effects, Write)] == [
        EnqueuePrompt(KEY, "steer me", task_id="t0", front=front)
    ]
    assert core.state.policy_state().agent_steers is (reason == "ended")


def test_interrupt_tells_the_agent_or_says_nothing_runs() -> None:
    core = route(current=task())
    assert core.handle(Interrupt()) == [reply("no turn is running")]
    running_turn(core)
    assert core.handle(Interrupt()) == [Tell("codex", InterruptTurn("t0"))]


def test_a_turn_left_running_by_a_previous_incarnation_is_taken_back() -> None:
    left = attempt("a7", status="running", remote_turn_id="turn-7")
    core = route(current=task(), running=left)
    assert core.state.turn is not None and core.state.turn.attempt_id == "a7"
    assert core.state.policy_state().running_turn == "turn-7"
    assert core.state.policy_state().agent_steers  # as the plugin declares, until the session says


# -- recovery --------------------------------------------------------------------------------------


def test_recovery_continue_ends_the_old_attempt_with_the_new_ones_record() -> None:
    cut = attempt("old", status="running", prompt="build it")
    core = route(current=task())
    effects = core.handle(Recover("continue", cut))
    assert effects[0] == reply("robota restarted during a turn: continuing it in a new turn")
    write = of(effects, Write)[0]
    assert isinstance(write.op, Together)
    finish, _claim, insert = write.op.ops
    assert finish == FinishTurnAttempt(
        "old", "interrupted", error="robota stopped while this turn ran"
    )
    assert isinstance(insert, InsertTurnAttempt) and insert.prompt == recovery_prompt("build it")
    assert write.then[1] == Notify(TurnBegan(KEY, "t0", "a1", recovery_prompt("build it"), True))


def test_recovery_continue_of_a_task_that_is_gone_only_ends_the_old_attempt() -> None:
    core = route(current=task())
    effects = core.handle(Recover("continue", attempt("old", task_id="gone", status="running")))
    assert [type(e) for e in effects] == [Write, Notify]
    assert replies(effects) == ["cannot recover turn old: its task is gone"]


def test_recovery_deliver_claims_the_final_and_queue_takes_the_next_prompt() -> None:
    core = route(current=task(), pending=(3,))
    delivered = core.handle(Recover("deliver", attempt("done")))
    claim = delivered[0]
    assert isinstance(claim, ClaimFinal) and claim.finished.final_text == "answer of done"
    effects = core.handle(FinalClaimed(claim.finished, won=True))
    assert [e.op for e in of(effects, Write)] == [TakeQueuedTurn(KEY, "a1", "t0")]
    assert core.handle(Recover("queue")) == []  # already taking


# -- commands --------------------------------------------------------------------------------------


def test_new_with_a_directory_and_a_prompt() -> None:
    reads = Reads(dirs={CWD, CWD / "sub"})
    core = route(current=task(), reads=reads)
    effects = core.handle(UserInput("/new --dir sub fix it"))
    assert replies(effects) == [f"new task t1: codex in {CWD / 'sub'}"]
    assert [type(e.op).__name__ for e in of(effects, Write)] == [
        "CreateTask",
        "BindRouteTask",
        "InsertTurnAttempt",
    ]
    assert of(effects, OpenAgentSession)[0].spec.cwd == CWD / "sub"


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("/new --dir nowhere", f"/new: {CWD / 'nowhere'} is not a directory"),
        ("/new --agent", "/new: --agent needs a value"),
        ("/new --agent claude", "no agent 'claude' (configured: codex)"),
        ("/new 'unclosed", "/new: No closing quotation"),
    ],
)
def test_new_rejects_bad_input_clearly(line: str, error: str) -> None:
    core = route(current=task())
    effects = core.handle(UserInput(line))
    assert effects == [reply(error, error=True), Notify(RouteIdle(KEY, 1))]


def test_new_without_a_project_makes_todays_folder_first(tmp_path: Path) -> None:
    core = route(workspace=tmp_path)
    effects = core.handle(UserInput("/new --nodir"))
    folder = of(effects, MakeDirectory)[0].path
    assert folder.parent == tmp_path and not folder.exists()  # the shell creates it, not the core
    assert effects.index(of(effects, MakeDirectory)[0]) < effects.index(of(effects, Write)[0])


def test_status_shows_the_task_and_the_queue_from_what_is_known_pending() -> None:
    core = route(current=task(title="demo"), pending=(4, 5))
    text = replies(core.handle(UserInput("/status")))[0]
    assert text.splitlines()[0] == "task t0 (demo)"
    assert "agent codex (app-server), session thread-0" in text
    assert text.endswith("idle; 2 queued")
    assert replies(route().handle(UserInput("/status"))) == [
        "no task yet: type a prompt to start one, or /new"
    ]


def test_queue_lists_from_the_store_and_cancel_forgets_the_prompt() -> None:
    reads = Reads(
        pending=[QueuedPrompt(4, KEY, "t0", "first  one", None, (), None, "pending", WALL)]
    )
    core = route(current=task(), reads=reads, pending=(4, 5))
    listed = replies(core.handle(UserInput("/queue")))
    assert listed == ["4: first one\n/queue cancel N removes one"]
    assert core.state.queued == 1  # the store's view replaced the stale one
    effects = core.handle(UserInput("/queue cancel 4"))
    assert effects[0] == Write(CancelPrompt(4))
    assert core.state.queued == 0
    assert replies(core.handle(UserInput("/queue cancel x"))) == [
        "usage: /queue cancel N (N from /queue)"
    ]


@pytest.mark.parametrize(
    ("agent", "note"),
    [
        (CODEX, " (from the next turn, and in forks)"),
        (GEMINI, " (from the next time the task's session opens, and in forks)"),
        (
            replace(CODEX, capabilities=AgentCapabilities()),
            " (from the next time the task's session opens, and in forks)",
        ),
    ],
)
def test_model_applies_from_the_next_turn_only_where_the_agent_takes_it_per_turn(
    agent: AgentEntry, note: str
) -> None:
    core = route(agent, current=task(agent=agent.name))
    core.state.opened.add("t0")
    effects = core.handle(UserInput("/model gpt-x"))
    assert effects[0] == Write(UpdateTask("t0", model="gpt-x"))
    assert effects[1] == OpenAgentSession(agent.name, "t0", spec(model="gpt-x"))
    assert effects[2] == reply(f"model: default -> gpt-x{note}")


def test_settings_reject_values_outside_their_choices() -> None:
    core = route(current=task())
    assert replies(core.handle(UserInput("/thinking lots"))) == [
        "'lots' is not one of: minimal, low, medium, high, xhigh"
    ]


def test_rename() -> None:
    core = route(current=task())
    effects = core.handle(UserInput("/rename  New name "))
    assert effects[:2] == [
        Write(UpdateTask("t0", title="New name")),
        reply("task t0 is now 'New name'"),
    ]
    assert replies(core.handle(UserInput("/rename"))) == ["/rename needs a title"]


def test_sessions_asks_each_agent_that_lists_and_answers_when_all_did() -> None:
    reads = Reads()
    core = route(CODEX, GEMINI, current=task(title="mine"), reads=reads)
    asked = core.handle(UserInput("/sessions"))
    assert asked == [ListAgentSessions("codex", "r1", None, 6)]  # not idle: an agent is asked
    outside = AgentSessionInfo("thread-x", "from the desktop", None, WALL - 10)
    mine = AgentSessionInfo("thread-0", "mine", None, WALL - 50)
    effects = core.handle(SessionsListed("r1", "codex", (outside, mine)))
    text = replies(effects)[0].splitlines()
    assert text[0].startswith("1. thread-x ") and "external" in text[0]
    assert text[1].startswith("2. t0 ") and text[1].endswith("<- current")
    assert effects[-1] == Notify(RouteIdle(KEY, 1))
    assert len(core.state.last_listing) == 2


def test_a_sessions_page_comes_as_data_beside_its_text() -> None:
    """What a chat draws as a card: the page's entries numbered across pages, the search kept,
    whether a next page exists, and the same lines the terminal shows."""
    tasks = [task(f"t{n}", title=f"pear {n}", updated_at=WALL - n) for n in range(10)]
    reads = Reads(tasks_by_id={t.id: t for t in tasks})
    core = route(CODEX, current=tasks[0], reads=reads)
    core.handle(UserInput("/sessions pear 2"))
    thread = AgentSessionInfo("thread-x", "desktop pear", "/elsewhere", WALL + 10)
    effects = core.handle(SessionsListed("r1", "codex", (thread,)))
    (answer,) = [e.notice for e in of(effects, Notify) if isinstance(e.notice, RouteReply)]
    listing = answer.listing
    assert isinstance(listing, SessionsListing)
    assert (listing.page, listing.search, listing.more, listing.failures) == (2, "pear", True, ())
    assert [entry.number for entry in listing.entries] == [6, 7, 8, 9, 10]
    assert answer.text.splitlines()[0].startswith(f"6. {listing.entries[0].ref} ")
    assert answer.text.splitlines()[-2] == "more: /sessions pear 3"
    first = SessionsEntry(1, "codex", WALL + 10, "desktop pear", "external", "/elsewhere")
    (asked,) = of(core.handle(UserInput("/sessions pear")), ListAgentSessions)
    page_one = core.handle(SessionsListed(asked.ref, "codex", (thread,)))
    (answer,) = [e.notice for e in of(page_one, Notify) if isinstance(e.notice, RouteReply)]
    assert answer.listing is not None
    assert answer.listing.entries[0] == replace(first, session_id="thread-x")
    assert answer.listing.entries[0].ref == "thread-x"
    assert answer.listing.entries[1].current and answer.listing.entries[1].ref == "t0"


def test_sessions_follows_the_capability_not_the_kind() -> None:
    """A plugin-less capability set: an agent of kind app-server that cannot list is not
    asked, and an agent of a third-party kind that can is."""
    silent = AgentEntry("codex", "app-server", Nowhere(), AgentCapabilities())
    lister = AgentEntry("custom", "my-runtime", Nowhere(), AgentCapabilities(list_sessions=True))
    core = route(silent, current=task())
    effects = core.handle(UserInput("/sessions"))
    assert of(effects, ListAgentSessions) == []
    assert replies(effects)[0].startswith("1. t0 ")
    core = route(silent, lister, current=task())
    assert core.handle(UserInput("/sessions")) == [ListAgentSessions("custom", "r1", None, 6)]


def test_an_agent_that_fails_to_list_costs_a_line_not_the_listing() -> None:
    core = route(current=task())
    core.handle(UserInput("/sessions"))
    text = replies(core.handle(SessionsListed("r1", "codex", (), error="timed out")))[0]
    assert "codex: its threads could not be listed (timed out)" in text


def test_switch_to_a_task_and_to_an_agent_thread_robota_adopts() -> None:
    other = task("t9", remote_id="thread-9", title="other")
    reads = Reads(tasks_by_id={"t9": other}, dirs={CWD, Path("/elsewhere")})
    core = route(current=task(), reads=reads)
    core.state.opened.add("t0")
    effects = core.handle(UserInput("/switch t9"))
    assert effects[:3] == [
        Tell("codex", CloseSession("t0")),
        Write(BindRouteTask(KEY, "t9")),
        OpenAgentSession("codex", "t9", spec(resume_id="thread-9", task_id="t9")),
    ]
    assert replies(effects) == ["switched to task t9"]
    core.handle(UserInput("/sessions"))
    thread = AgentSessionInfo("thread-x", "desktop", "/elsewhere", WALL)
    core.handle(SessionsListed("r1", "codex", (thread,)))
    effects = core.handle(UserInput("/switch 1"))
    created = of(effects, Write)[0].op
    assert isinstance(created, CreateTask)
    assert (created.remote_id, created.cwd, created.title) == ("thread-x", "/elsewhere", "desktop")
    assert replies(effects) == ["switched to task t1 (codex's session thread-x)"]
    assert replies(core.handle(UserInput("/switch 7"))) == ["no entry 7 in the last /sessions"]


def test_switch_takes_a_number_for_an_entry_unless_it_is_a_whole_task_id_of_digits_only() -> None:
    # 12 hex digits have no letter about once in 280 tasks: such an id is still an id, and a
    # shorter number is an entry's, never an id's prefix.
    digits = task("768595097584", title="digits only")
    reads = Reads(tasks_by_id={"768595097584": digits}, dirs={CWD})
    core = route(current=task(), reads=reads)
    core.state.opened.add("t0")
    assert replies(core.handle(UserInput("/switch 768595097584"))) == [
        "switched to task 768595097584"
    ]
    assert replies(core.handle(UserInput("/switch 7"))) == ["no entry 7 in the last /sessions"]


def test_turns_reset_forks_the_thread_and_finishes_when_the_fork_opened() -> None:
    reads = Reads(attempts=[attempt("aaa1"), attempt("bbb2")])
    current = task(head_attempt_id="bbb2")
    core = route(current=current, reads=reads)
    core.state.opened.add("t0")
    effects = core.handle(UserInput("/turns reset aaa1"))
    assert effects == [
        Tell("codex", CloseSession("t0")),
        OpenAgentSession(
            "codex",
            "t0",
            spec(resume_id=None, fork_from="thread-0", fork_turn_id="turn-aaa1"),
        ),
    ]  # no idle: the reset waits for its fork
    opened = core.handle(SessionOpened("t0", "thread-fork", resumed=True))
    assert opened[0] == Write(ResetTaskToTurn("t0", "aaa1", "thread-fork"))
    assert replies(opened)[0].startswith("reset to turn aaa1 ")
    assert opened[-1] == Notify(RouteIdle(KEY, 1))
    assert core.state.task is not None
    assert (core.state.task.remote_id, core.state.task.head_attempt_id) == ("thread-fork", "aaa1")


def test_a_reset_whose_fork_failed_leaves_the_conversation_where_it_was() -> None:
    reads = Reads(attempts=[attempt("aaa1"), attempt("bbb2")])
    core = route(current=task(head_attempt_id="bbb2"), reads=reads)
    core.handle(UserInput("/turns reset aaa1"))
    effects = core.handle(AgentFailure("t0", "open", "no such thread"))
    assert replies(effects) == [
        "agent: open failed: no such thread",
        "reset failed: the conversation stays where it was",
    ]
    assert effects[-1] == Notify(RouteIdle(KEY, 1))


def test_turns_reset_follows_the_capability_not_the_kind() -> None:
    reads = Reads(attempts=[attempt("aaa1"), attempt("bbb2")])
    cannot = replace(CODEX, capabilities=AgentCapabilities(steer=True))
    core = route(cannot, current=task(head_attempt_id="bbb2"), reads=reads)
    text = replies(core.handle(UserInput("/turns reset aaa1")))[0]
    assert text.startswith("reset needs an App Server agent")
    custom = AgentEntry("custom", "my-runtime", Nowhere(), AgentCapabilities(fork_at_turn=True))
    core = route(custom, current=task(agent="custom", head_attempt_id="bbb2"), reads=reads)
    assert of(core.handle(UserInput("/turns reset aaa1")), OpenAgentSession) != []


def test_turns_lists_completed_turns_and_shows_one() -> None:
    reads = Reads(attempts=[attempt("aaa1"), attempt("bbb2")])
    core = route(current=task(head_attempt_id="bbb2"), reads=reads)
    lines = replies(core.handle(UserInput("/turns")))[0].splitlines()
    assert lines[1].startswith("bbb2 ") and lines[1].endswith("<- current")
    assert lines[2].endswith("/turns reset aaa1")
    shown = replies(core.handle(UserInput("/turns show aaa1")))[0]
    assert shown.endswith("answer of aaa1")


def test_fork_makes_a_new_task_from_the_latest_completed_turn() -> None:
    reads = Reads(attempts=[attempt("aaa1")])
    core = route(current=task(), reads=reads)
    effects = core.handle(UserInput("/fork try B"))
    created = of(effects, Write)[0].op
    assert isinstance(created, CreateTask)
    assert (created.id, created.forked_from, created.fork_turn_id, created.title) == (
        "t1",
        "t0",
        "turn-aaa1",
        "try B",
    )
    assert of(effects, OpenAgentSession)[0].spec == spec(
        resume_id=None, fork_from="thread-0", fork_turn_id="turn-aaa1", task_id="t1"
    )


@pytest.mark.parametrize(
    ("agent", "attempts", "turn", "forked_at", "said"),
    [
        # The head turn forks on any agent; an earlier one only where the agent forks at a turn.
        (GEMINI, ("aaa1", "bbb2"), "bbb2", "turn-bbb2", "continuing task t0 from its turn bbb2 "),
        (CODEX, ("aaa1", "bbb2"), "aaa1", "turn-aaa1", "continuing task t0 from its turn aaa1 "),
        (GEMINI, ("aaa1", "bbb2"), "aaa1", None, "gemini forks a conversation only at its "),
        (CODEX, ("aaa1",), "zzz9", None, "task t0 has no turn zzz9 to fork from"),
        (CODEX, ("aaa1", "fff3"), "fff3", None, "turn fff3 did not complete (failed)"),
    ],
)
def test_a_fork_at_a_turn_runs_its_prompt_on_the_fork_or_drops_it_with_the_reason(
    agent: AgentEntry, attempts: tuple[str, ...], turn: str, forked_at: str | None, said: str
) -> None:
    made = [attempt(a, status="failed" if a == "fff3" else "completed") for a in attempts]
    reads = Reads(tasks_by_id={"t0": task(agent=agent.name)}, attempts=made)
    core = route(agent, reads=reads)
    effects = core.handle(ForkTask("t0", turn_id=turn, prompt=UserInput("and then?")))
    assert replies(effects)[0].startswith(said)
    created = [e.op for e in of(effects, Write) if isinstance(e.op, CreateTask)]
    asked = [e.op for e in of(effects, Write) if isinstance(e.op, InsertTurnAttempt)]
    if forked_at is None:
        assert (created, asked, core.state.task) == ([], [], None)
        return
    assert [(c.forked_from, c.fork_turn_id) for c in created] == [("t0", forked_at)]
    assert [(a.task_id, a.prompt) for a in asked] == [("t1", "and then?")]


def test_fork_without_a_completed_turn_says_so_and_makes_nothing() -> None:
    core = route(current=task(), reads=Reads(attempts=[attempt("fff3", status="failed")]))
    effects = core.handle(UserInput("/fork"))
    assert replies(effects) == ["task t0 has no completed turn to fork from"]
    assert of(effects, Write) == [] and of(effects, OpenAgentSession) == []


def test_a_session_opened_tells_the_front_end_and_stores_a_new_session_id() -> None:
    core = route(current=task(remote_id=None))
    effects = core.handle(SessionOpened("t0", "thread-new", resumed=False, agent_version="1.2"))
    assert effects == [
        Write(UpdateTask("t0", remote_id="thread-new")),
        Notify(TaskOpened(KEY, "t0", "codex", str(CWD), "thread-new", False, None, "1.2")),
    ]


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("/frobnicate", "unknown command /frobnicate"),
        ("   ", "nothing to send"),
        ("/", "a slash needs a command name; /help lists them"),
        ("/nosteer", "/nosteer needs the text to queue"),
    ],
)
def test_bad_input_is_answered_and_never_reaches_the_agent(line: str, answer: str) -> None:
    core = route(current=task())
    effects = core.handle(UserInput(line))
    assert replies(effects)[0].startswith(answer)
    assert of(effects, Tell) == [] and of(effects, Write) == []
    assert effects[-1] == Notify(RouteIdle(KEY, 1))


def test_a_message_the_core_does_not_know_is_logged() -> None:
    effects = route().handle(object())
    assert [e.level for e in effects] == ["warning"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ({}, QUEUES),
        ({"steer": True, "images": False}, replace(QUEUES, steer=True, images=False)),
        ({"modes": ["plan"], "resume": 0}, replace(QUEUES, resume=False)),  # extras ignored
    ],
)
def test_a_sessions_report_refines_what_the_plugin_declared(
    reported: dict[str, object], expected: AgentCapabilities
) -> None:
    assert QUEUES.refined(reported) == expected
